"""The engine beside PyTorch: the same cases, timed alternately in one run.

    pip install torch numpy
    python3 benchmarks/pytorch_side_by_side.py --quick        # a few small cases, minutes
    python3 benchmarks/pytorch_side_by_side.py                # every case that fits
    python3 benchmarks/pytorch_side_by_side.py --only decode  # names containing "decode"
    python3 benchmarks/pytorch_side_by_side.py --json         # also write benchmarks/results.json
    python3 benchmarks/pytorch_side_by_side.py --kernel avx2  # as on a CPU with AVX2 only

The cases, their names and sizes come from the Rust side (`time_case --list`, defined in
`benchmarks/src/lib.rs`); this script builds the same computation in PyTorch for each:

- `matmul/N`: `a @ b` on `[N, N]` matrices.
- `sdpa/PASS/T`: `softmax(q kᵀ / √d) v` written out, as the engine computes it (the weights
  are materialised); `--fused-sdpa` times `F.scaled_dot_product_attention` instead.
- `multi_head/PASS/T`: d2l's `MultiHeadAttention` (no bias, dropout 0); `--torch-mha` times
  `nn.MultiheadAttention(256, 8, bias=False, batch_first=True)` called with
  `need_weights=False` instead, which runs PyTorch's fused attention kernel
  (`F.scaled_dot_product_attention`, computed in blocks without the weights).
- `additive/PASS/T` and `additive_broadcast/PASS/T`: d2l's `AdditiveAttention`, with
  `LazyLinear` replaced by `Linear` of explicit sizes, for both (the engine computes the
  first with its fused scores, the second as d2l writes it). PyTorch's form needs the
  `[B, T, T, h]` tensors, so where they would exceed `TORCH_MEMORY_LIMIT` only the engine
  is timed and the row says so.
- `decode/MODE/bB`: a causal multi-head self-attention layer (biases, as
  `CausalSelfAttention`) decoding 256 tokens, with a key/value cache (`prefill` of one token,
  then one `step` per token) or recomputing the prefix for every token.

`forward` runs under `torch.no_grad()`, `forward_backward` runs `output.sum().backward()`
with inputs and parameters requiring gradients (cleared before each run); decoding runs under
`torch.no_grad()` in evaluation mode. Everything is `float32` on one CPU thread (`--threads N`
runs N on each side).

`--memory` adds PyTorch's peak memory: each case runs once more in a fresh Python process,
which reports how far its resident memory rose above what it held after building the
inputs (Linux's `VmHWM`; allocator caches included), beside the engine's count of live
tensor bytes.

For each case, each round runs the engine's `time_case` binary (a fresh process: set-up, one
warm-up run, then `--runs` timed runs) and PyTorch's timing of the same case (a warm-up, then
the same number of runs), in alternating order. The tables give two ratios for each case:
the ratio of the medians of all runs, and the ratio of the fastest runs. On a machine shared
with other work, interference only ever adds time, and it comes and goes between rounds, so
medians of the two sides can be disturbed differently; the fastest run of each side is the
estimate least affected by it (the `timeit` module's advice). When the two ratios differ
much, the machine was busy: run again with more rounds.

`--kernel avx2` compares the two as they run on a CPU with AVX2 but not AVX-512, on any
x86-64 CPU: the engine runs with `ENGINE_KERNEL=avx2`, and PyTorch with its own switches
to the same instructions, set before it loads: `ATEN_CPU_CAPABILITY=avx2` (its element-wise
kernels), `MKL_ENABLE_INSTRUCTIONS=AVX2` (MKL's matrix products) and
`DNNL_MAX_CPU_ISA=AVX2` (oneDNN's). The output names the engine's kernel path and these
settings above its tables.
"""

import argparse
import json
import math
import os
import pathlib
import statistics
import subprocess
import sys
import textwrap
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results.json"

# Threads. PyTorch is limited with torch.set_num_threads(N) below (N = --threads, default 1);
# the engine's matrix products read MATMUL_NUM_THREADS and its element-wise
# kernels ENGINE_NUM_THREADS, both set to N for its process.
ENGINE_THREAD_VARIABLES = ["MATMUL_NUM_THREADS", "ENGINE_NUM_THREADS"]
ENGINE_THREAD_ENV = {v: "1" for v in ENGINE_THREAD_VARIABLES}

# PyTorch's switches that hold it to AVX2 (`--kernel avx2`), read when it loads.
TORCH_AVX2_ENV = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
    "DNNL_MAX_CPU_ISA": "AVX2",
}

# Seconds to wait before each side's round when several threads run: OpenMP's workers
# (PyTorch's) spin after a parallel region, by default for a few milliseconds, before they
# sleep.
PAUSE_S = 0.1

# The cases `--quick` runs: the smallest size of each family and both decoding modes at batch 1.
QUICK_CASES = [
    "matmul/256",
    "matmul/512",
    "sdpa/forward/64",
    "sdpa/forward_backward/64",
    "sdpa/forward/256",
    "multi_head/forward/64",
    "multi_head/forward_backward/64",
    "additive/forward/64",
    "additive/forward_backward/64",
    "decode/kv_cache/b1",
    "decode/recompute/b1",
]

# The sizes shared with `benchmarks/src/lib.rs`.
BATCH, NUM_HIDDENS, NUM_HEADS, DECODE_TOKENS, SEED = 8, 256, 8, 256, 0

# PyTorch's additive attention builds `[B, T, T, h]` tensors; cases whose estimate (the
# engine's formula for its own broadcast form) is above this are not run on PyTorch's side.
TORCH_MEMORY_LIMIT = 4 << 30


def torch_estimated_bytes(name):
    family, rest = name.split("/", 1)
    if not family.startswith("additive"):
        return 0
    pass_, length = rest.split("/")
    copies = 2 if pass_ == "forward" else 5
    return copies * BATCH * int(length) ** 2 * NUM_HIDDENS * 4


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add = parser.add_argument
    add("--quick", action="store_true", help="only the cases in QUICK_CASES")
    add("--only", default="", help="only the cases whose name contains this")
    add("--rounds", type=int, default=3, help="alternations per case (default 3)")
    add("--runs", type=int, default=3, help="timed runs per round and side (default 3)")
    add("--fused-sdpa", action="store_true",
        help="time PyTorch's sdpa cases with F.scaled_dot_product_attention")
    add("--torch-mha", action="store_true",
        help="time PyTorch's multi_head cases with nn.MultiheadAttention(need_weights=False)")
    add("--threads", type=int, default=1,
        help="threads on each side (default 1): torch.set_num_threads and the engine's variables")
    add("--memory", action="store_true", help="also measure PyTorch's peak memory per case")
    add("--kernel", choices=["avx512", "avx2", "portable"],
        help="the engine's kernel path (ENGINE_KERNEL); with avx2, PyTorch is held to AVX2 too")
    add("--torch-peak", metavar="CASE", help=argparse.SUPPRESS)  # internal: one measurement
    add("--json", nargs="?", const=RESULTS, type=pathlib.Path, metavar="PATH",
        help=f"write the results as JSON (default path {RESULTS.relative_to(ROOT)})")
    args = parser.parse_args()

    if args.kernel:
        ENGINE_THREAD_ENV["ENGINE_KERNEL"] = args.kernel
    if args.kernel == "avx2":
        for variable, value in TORCH_AVX2_ENV.items():
            os.environ.setdefault(variable, value)
    try:
        import torch
    except ImportError:
        sys.exit("PyTorch is not installed: pip install torch numpy")
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    ENGINE_THREAD_ENV.update({v: str(args.threads) for v in ENGINE_THREAD_VARIABLES})
    if args.torch_peak:
        print(json.dumps({"peak_bytes": torch_peak_bytes(torch, args.torch_peak, args.torch_mha)}))
        return

    binary = build_time_case()
    cases = [c for c in run_json([binary, "--list"]) if args.only in c["case"]]
    if args.quick:
        cases = [c for c in cases if c["case"] in QUICK_CASES]
    skipped = [c["case"] for c in cases if not c["fits"]]
    cases = [c["case"] for c in cases if c["fits"]]

    kernel = run_json([binary, "matmul/256", "--runs", "1", "--warmup", "1"])["kernel"]
    torch_isa = {v: os.environ[v] for v in TORCH_AVX2_ENV if v in os.environ}
    print(f"PyTorch {torch.__version__} (CPU capability {torch.backends.cpu.get_cpu_capability()}, "
          f"{torch_isa or 'its default instructions'}), {torch.get_num_threads()} thread(s); "
          f"engine: {binary.name} on the {kernel} kernel path with {ENGINE_THREAD_ENV}; "
          f"{args.rounds} rounds of {args.runs} runs per side",
          file=sys.stderr)
    results = []
    for name in cases:
        ours, theirs, peak = [], [], None
        torch_fits = torch_estimated_bytes(name) <= TORCH_MEMORY_LIMIT
        torch_run = torch_case(torch, name, args.fused_sdpa, args.torch_mha) if torch_fits else None
        for r in range(args.rounds):
            # Alternate which side goes first, so neither always runs on a cooler machine.
            for side in (("ours", "torch") if r % 2 == 0 else ("torch", "ours")):
                # With several threads, PyTorch's OpenMP workers keep spinning for a while
                # after its last product; a short pause keeps them off the engine's cores.
                if args.threads > 1:
                    time.sleep(PAUSE_S)
                if side == "ours":
                    out = run_json([binary, name, "--runs", str(args.runs), "--warmup", "1"])
                    ours += out["seconds"]
                    peak = out["peak_bytes"]
                elif torch_fits:
                    theirs += time_torch(torch_run, args.runs)
        torch_run = None  # free PyTorch's tensors before the next case
        row = {
            "case": name,
            "ours_median_s": statistics.median(ours),
            "pytorch_median_s": statistics.median(theirs) if theirs else None,
            "ours_best_s": min(ours),
            "pytorch_best_s": min(theirs) if theirs else None,
            "ours_seconds": ours,
            "pytorch_seconds": theirs,
            "ours_peak_bytes": peak,
            "pytorch_peak_bytes": None,
        }
        if args.memory and torch_fits:
            out = subprocess.run([sys.executable, __file__, "--torch-peak", name]
                                 + (["--torch-mha"] if args.torch_mha else []), check=True,
                                 capture_output=True, text=True).stdout
            row["pytorch_peak_bytes"] = json.loads(out)["peak_bytes"]
        row["ratio"] = row["ours_median_s"] / row["pytorch_median_s"] if theirs else None
        row["best_ratio"] = row["ours_best_s"] / row["pytorch_best_s"] if theirs else None
        results.append(row)
        ratio = (f"{row['ratio']:.2f}x (medians), {row['best_ratio']:.2f}x (fastest runs)"
                 if theirs else "PyTorch cannot run it")
        print(f"  {name}: {ratio}", file=sys.stderr)

    print(f"engine kernel path: {kernel}")
    print(f"PyTorch {torch.__version__}, CPU capability "
          f"{torch.backends.cpu.get_cpu_capability()}, {instructions(torch_isa)}")
    print_table(results, skipped)
    if args.json:
        settings = {
            "torch": torch.__version__,
            "torch_threads": torch.get_num_threads(),
            "engine_thread_env": ENGINE_THREAD_ENV,
            "rounds": args.rounds,
            "runs": args.runs,
            "fused_sdpa": args.fused_sdpa,
            "engine_kernel": kernel,
            "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "torch_isa_env": torch_isa,
        }
        payload = {"settings": settings, "cases": results, "skipped": skipped}
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
        print(f"wrote {args.json}", file=sys.stderr)


# ---------------------------------------------------------------------------------------
# The engine's side
# ---------------------------------------------------------------------------------------


def build_time_case():
    """Builds `time_case` in release mode once and returns the path of the executable."""
    command = ["cargo", "build", "--release", "--quiet", "-p", "benchmarks", "--bin", "time_case",
               "--message-format=json"]
    out = subprocess.run(command, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        message = json.loads(line)
        if message.get("reason") == "compiler-artifact" and message.get("executable"):
            if message["target"]["name"] == "time_case":
                return pathlib.Path(message["executable"])
    sys.exit("cargo built no time_case executable")


def run_json(command):
    env = {**os.environ, **ENGINE_THREAD_ENV}
    command = [str(c) for c in command]
    out = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


# ---------------------------------------------------------------------------------------
# PyTorch's side: d2l's definitions (dropout 0, no valid lengths), as in tests/golden
# ---------------------------------------------------------------------------------------


def time_torch(run, runs):
    run()  # warm-up
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - start)
    return seconds


def torch_peak_bytes(torch, name, torch_mha=False):
    """How far this process's resident memory rises above its current size during one run:
    the high-water mark `VmHWM` minus `VmRSS` before the run, from /proc/self/status (a
    fresh process's own, unlike `ru_maxrss`, which Linux carries over from the parent)."""
    def status_bytes(field):
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
        raise RuntimeError(f"/proc/self/status has no {field}")

    run = torch_case(torch, name, fused_sdpa=False, torch_mha=torch_mha)
    before = status_bytes("VmRSS")
    run()
    return status_bytes("VmHWM") - before


def torch_case(torch, name, fused_sdpa, torch_mha=False):
    """Seeded inputs and modules for the case `name`; returns a function that runs it once."""
    from torch import nn
    import torch.nn.functional as F

    class DotProductAttention(nn.Module):
        """Scaled dot-product attention (d2l), without masking."""

        def forward(self, queries, keys, values):
            d = queries.shape[-1]
            scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
            self.attention_weights = torch.softmax(scores, dim=-1)
            return torch.bmm(self.attention_weights, values)

    class MultiHeadAttention(nn.Module):
        """Multi-head attention (d2l)."""

        def __init__(self, num_hiddens, num_heads, bias=False):
            super().__init__()
            self.num_heads = num_heads
            self.attention = DotProductAttention()
            self.W_q = nn.Linear(num_hiddens, num_hiddens, bias=bias)
            self.W_k = nn.Linear(num_hiddens, num_hiddens, bias=bias)
            self.W_v = nn.Linear(num_hiddens, num_hiddens, bias=bias)
            self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)

        def forward(self, queries, keys, values):
            queries = self.transpose_qkv(self.W_q(queries))
            keys = self.transpose_qkv(self.W_k(keys))
            values = self.transpose_qkv(self.W_v(values))
            output = self.attention(queries, keys, values)
            return self.W_o(self.transpose_output(output))

        def transpose_qkv(self, X):
            X = X.reshape(X.shape[0], X.shape[1], self.num_heads, -1)
            X = X.permute(0, 2, 1, 3)
            return X.reshape(-1, X.shape[2], X.shape[3])

        def transpose_output(self, X):
            X = X.reshape(-1, self.num_heads, X.shape[1], X.shape[2])
            X = X.permute(0, 2, 1, 3)
            return X.reshape(X.shape[0], X.shape[1], -1)

    class TorchMultiheadAttention(nn.Module):
        """`nn.MultiheadAttention` without the weights: its fused path."""

        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, queries, keys, values):
            return self.inner(queries, keys, values, need_weights=False)[0]

    class AdditiveAttention(nn.Module):
        """Additive attention (d2l), with explicit input sizes."""

        def __init__(self, query_size, key_size, num_hiddens):
            super().__init__()
            self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
            self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
            self.w_v = nn.Linear(num_hiddens, 1, bias=False)

        def forward(self, queries, keys, values):
            queries, keys = self.W_q(queries), self.W_k(keys)
            features = torch.tanh(queries.unsqueeze(2) + keys.unsqueeze(1))
            scores = self.w_v(features).squeeze(-1)
            self.attention_weights = torch.softmax(scores, dim=-1)
            return torch.bmm(self.attention_weights, values)

    class CausalSelfAttention(nn.Module):
        """Causal multi-head self-attention with a key/value cache (`torch.cat` per token)."""

        def __init__(self, d_model, num_heads):
            super().__init__()
            self.num_heads = num_heads
            self.W_q = nn.Linear(d_model, d_model)
            self.W_k = nn.Linear(d_model, d_model)
            self.W_v = nn.Linear(d_model, d_model)
            self.W_o = nn.Linear(d_model, d_model)

        def heads(self, w, x):
            b, length, d = x.shape
            return w(x).reshape(b, length, self.num_heads, d // self.num_heads).transpose(1, 2)

        def attend(self, q, k, v):
            b, _, length, _ = q.shape
            keys = k.shape[2]
            scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
            # Query i (the last `length` of `keys` tokens) sees keys 0..=keys-length+i.
            causal = torch.ones(length, keys, dtype=torch.bool).tril(keys - length)
            weights = torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1)
            return self.W_o((weights @ v).transpose(1, 2).reshape(b, length, -1))

        def forward(self, x):
            q, k, v = (self.heads(w, x) for w in (self.W_q, self.W_k, self.W_v))
            return self.attend(q, k, v)

        def extend(self, x, cache):
            k, v = self.heads(self.W_k, x), self.heads(self.W_v, x)
            if cache:
                k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)
            cache[:] = [k, v]
            return self.attend(self.heads(self.W_q, x), k, v)

    torch.manual_seed(SEED)
    family, *rest = name.split("/")
    if family == "matmul":
        n = int(rest[0])
        a, b = torch.randn(n, n), torch.randn(n, n)
        return no_grad(torch, lambda: a @ b)
    if family == "decode":
        mode, batch = rest[0], int(rest[1].removeprefix("b"))
        layer = CausalSelfAttention(NUM_HIDDENS, NUM_HEADS).eval()
        x = torch.randn(batch, DECODE_TOKENS, NUM_HIDDENS)
        if mode == "kv_cache":
            def decode():
                cache = []
                for t in range(DECODE_TOKENS):  # t = 0 is the prefill of one token
                    layer.extend(x[:, t:t + 1], cache)
        else:
            def decode():
                for t in range(1, DECODE_TOKENS + 1):
                    layer(x[:, :t])[:, t - 1:t]
        return no_grad(torch, decode)

    pass_, length = rest[0], int(rest[1])
    if family == "sdpa":
        module, params = None, []

        def forward(q, k, v):
            if fused_sdpa:
                return F.scaled_dot_product_attention(q, k, v)
            weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
            return weights @ v
    else:
        if family == "multi_head" and torch_mha:
            module = TorchMultiheadAttention(
                nn.MultiheadAttention(NUM_HIDDENS, NUM_HEADS, bias=False, batch_first=True))
        elif family == "multi_head":
            module = MultiHeadAttention(NUM_HIDDENS, NUM_HEADS)
        elif family in ("additive", "additive_broadcast"):
            module = AdditiveAttention(NUM_HIDDENS, NUM_HIDDENS, NUM_HIDDENS)
        else:
            raise ValueError(f"no PyTorch definition for {name}")
        module.eval()
        params, forward = list(module.parameters()), module
    inputs = [torch.randn(BATCH, length, NUM_HIDDENS) for _ in range(3)]
    if pass_ == "forward":
        return no_grad(torch, lambda: forward(*inputs))
    inputs = [t.requires_grad_() for t in inputs]

    def forward_backward():
        for t in inputs + params:
            t.grad = None
        forward(*inputs).sum().backward()

    return forward_backward


def no_grad(torch, f):
    def run():
        with torch.no_grad():
            f()

    return run


# ---------------------------------------------------------------------------------------


def instructions(torch_isa):
    """The switches that held PyTorch's instructions (`--kernel avx2`), in words."""
    if not torch_isa:
        return "its default instructions"
    if torch_isa == TORCH_AVX2_ENV:
        # ATEN_CPU_CAPABILITY shows as PyTorch's CPU capability, printed beside this.
        return "MKL and oneDNN held to AVX2"
    return ", ".join(f"{variable}={value}" for variable, value in torch_isa.items())


def print_table(results, skipped):
    """Three markdown tables, each narrow enough for a terminal or a page's code block: the
    medians of all runs, the fastest runs, and the peak memory."""
    def ms(s):
        return f"{s * 1e3:.3f}"

    def table(header, rows):
        print(f"| case | {' | '.join(header)} |")
        print("|---|" + "---:|" * len(header))
        for case, cells in rows:
            print(f"| {case} | {' | '.join(cells)} |")
        for name in skipped:
            print(f"| {name} | skipped (over the memory limit) |" + " |" * (len(header) - 1))

    def timed(side, ratio):
        for r in results:
            if r["pytorch_median_s"] is None:
                yield r["case"], [ms(r[f"ours_{side}_s"]), "cannot run (over the memory limit)", ""]
            else:
                yield r["case"], [ms(r[f"ours_{side}_s"]), ms(r[f"pytorch_{side}_s"]),
                                  f"{r[ratio]:.2f}"]

    table(["engine median (ms)", "PyTorch median (ms)", "ratio of medians"],
          timed("median", "ratio"))
    print()
    table(["engine fastest (ms)", "PyTorch fastest (ms)", "ratio of fastest"],
          timed("best", "best_ratio"))
    print()
    table(["engine peak", "PyTorch peak"],
          ((r["case"], [human(r["ours_peak_bytes"]),
                        "" if r["pytorch_peak_bytes"] is None else human(r["pytorch_peak_bytes"])])
           for r in results))
    print()
    print(textwrap.fill(
        "ratios are engine / PyTorch time, of the medians and of the fastest runs of all "
        f"rounds; {ENGINE_THREAD_ENV['MATMUL_NUM_THREADS']} thread(s) each; engine peak: "
        "bytes of live tensors beyond inputs and parameters, as the engine counts them; "
        "PyTorch peak (--memory): rise of the process's resident memory during one run",
        width=86))


def human(n):
    for unit in ["bytes", "KiB", "MiB", "GiB"]:
        if n < 1024 or unit == "GiB":
            return f"{n} bytes" if unit == "bytes" else f"{n:.2f} {unit}"
        n /= 1024


if __name__ == "__main__":
    main()
