"""Records what PyTorch does, for the sentences of the book that say so.

Each page's script (`ch15.py`, `ch16.py`, ...) builds a `Recorder`, runs every call its
page makes a claim about, and writes what happened to the JSON file of the same name:

    rec = Recorder(__file__)
    rec.setup("import torch", "x = torch.ones(2, 2, dtype=torch.float16)")
    rec.value("sum_dtype", "x.sum().dtype", show=dtype_name)
    rec.error("fill_overflow", "x.masked_fill(x > 0, -1e9)")
    rec.write()

A recording keeps the exact source of the call (`setup` lines, then the call), its
outcome (`value`, or the exception's type) and what it gave, written the way the page
writes it (`show`). `tests/claims.rs` reads the JSON and checks the page's sentence
against it, so a page cannot say what PyTorch does without PyTorch having done it here.

Every call runs in a fresh namespace holding only the setup's names, on the CPU unless its
setup fakes CUDA (`FAKE_CUDA`, for autocast's CUDA dtypes). A setup line `enter(cm)` stands
for `with cm:` around the call. The output is deterministic: running a script twice writes
the same bytes.
"""

import json
import pathlib
import sys
import traceback

import torch


# Setup lines for a call that asks what autocast does on CUDA, on a machine without a GPU:
# tensors made under FakeTensorMode carry a CUDA device and a dtype but no storage, and the
# dispatcher runs PyTorch's real AutocastCUDA rules on them, so the output's dtype is the
# one a GPU would give. Values are not computed (use the CPU for those), and autocast is told
# that CUDA is available, since otherwise it turns itself off.
FAKE_CUDA = [
    "import torch",
    "from torch._subclasses.fake_tensor import FakeTensorMode",
    "torch.cuda.is_available = lambda: True",
    "enter(FakeTensorMode())",
]


def dtype_name(dtype):
    """`torch.float16` -> `float16`, as the pages name dtypes."""
    return str(dtype).removeprefix("torch.")


def first_line(message):
    """The first line of an exception's message, without PyTorch's C++ trace."""
    return str(message).strip().splitlines()[0]


class Recorder:
    """Runs calls and records what they gave, for one page's JSON file."""

    def __init__(self, script):
        self.path = pathlib.Path(script).with_suffix(".json")
        self.setup_lines = []
        self.recordings = {}

    def setup(self, *lines):
        """Replaces the lines run before each following call (imports, inputs)."""
        self.setup_lines = list(lines)

    def _run(self, key, call):
        if key in self.recordings:
            raise ValueError(f"{self.path.name}: key {key!r} recorded twice")
        entered = []

        def enter(context):
            """`with context:` around the call: entered now, left after it."""
            entered.append(context)
            return context.__enter__()

        namespace = {"enter": enter}
        source = "\n".join(self.setup_lines)
        # The CPU generator only: torch.manual_seed would also queue a CUDA seeding, which a
        # faked CUDA device would then try to run.
        torch.random.default_generator.manual_seed(0)
        available = torch.cuda.is_available
        try:
            exec(source, namespace)  # noqa: S102 - the script's own lines
            try:
                return "value", eval(call, namespace)  # noqa: S307
            except Exception as error:  # noqa: BLE001 - the exception is the recording
                return type(error).__name__, error
        finally:
            for context in reversed(entered):
                context.__exit__(None, None, None)
            torch.cuda.is_available = available

    def value(self, key, call, show=str):
        """Records the value of `call`, written by `show`; fails if the call raises."""
        outcome, result = self._run(key, call)
        if outcome != "value":
            traceback.print_exception(result)
            raise SystemExit(f"{self.path.name}: {key}: `{call}` raised {outcome}")
        self._store(key, call, outcome, show(result))

    def error(self, key, call):
        """Records the exception `call` raises (type and first line of the message); fails
        if it raises none."""
        outcome, result = self._run(key, call)
        if outcome == "value":
            raise SystemExit(f"{self.path.name}: {key}: `{call}` raised nothing, gave {result!r}")
        self._store(key, call, outcome, first_line(result))

    def _store(self, key, call, outcome, shown):
        if not isinstance(shown, str):
            raise TypeError(f"{key}: show must return a str, gave {shown!r}")
        self.recordings[key] = {
            "setup": self.setup_lines,
            "call": call,
            "outcome": outcome,
            "value": shown,
        }

    def write(self):
        """Writes the recordings, with the PyTorch version that made them."""
        document = {
            "torch": torch.__version__.split("+")[0],
            "recordings": dict(sorted(self.recordings.items())),
        }
        text = json.dumps(document, indent=1, ensure_ascii=False) + "\n"
        self.path.write_text(text, encoding="utf-8")
        print(f"{self.path.name}: {len(self.recordings)} recordings (torch {document['torch']})")


if __name__ == "__main__":
    sys.exit("run a page's script (ch15.py, ...), or tests/golden/generate.py")
