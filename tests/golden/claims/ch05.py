"""Recordings for `ch05-additive-attention.md`: d2l's `AdditiveAttention` run as d2l wrote
it (its parameter names and layout, its own example), and `nn.Linear`'s default range."""

import ast
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from recorder import Recorder  # noqa: E402


def d2l_source(*names):
    """The source of d2l's functions and classes `names`, as `tests/golden/attention.py`
    copies them from d2l (PyTorch)."""
    text = (HERE.parent / "attention.py").read_text(encoding="utf-8")
    found = {
        node.name: ast.get_source_segment(text, node)
        for node in ast.parse(text).body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef))
    }
    return [found[name] for name in names]


def names_and_shapes(state):
    """A state dict as `W_k.weight: [8, 6], ...`."""
    return ", ".join(f"{name}: {list(value.shape)}" for name, value in state.items())


D2L = [
    "import torch",
    "from torch import nn",
    *d2l_source("_sequence_mask", "masked_softmax", "AdditiveAttention"),
]
rec = Recorder(__file__)
rec.setup(*D2L)
rec.value(
    "d2l_state_dict",
    "AdditiveAttention(query_size=5, key_size=6, num_hiddens=8, dropout=0.0).state_dict()",
    show=names_and_shapes,
)

# d2l's own example: ten copies of one key, valid lengths 2 and 6.
rec.setup(
    *D2L,
    "attention = AdditiveAttention(query_size=20, key_size=2, num_hiddens=8, dropout=0.1)",
    "attention.eval()",
    "queries, keys = torch.normal(0, 1, (2, 1, 20)), torch.ones((2, 10, 2))",
    "values = torch.arange(40, dtype=torch.float32).reshape(1, 10, 4).repeat(2, 1, 1)",
    "output = attention(queries, keys, values, torch.tensor([2, 6]))",
)
rec.value(
    "d2l_example_weights_0",
    "[round(w, 4) for w in attention.attention_weights[0, 0, :3].tolist()]",
)
rec.value(
    "d2l_example_weights_1",
    "[round(w, 4) for w in attention.attention_weights[1, 0, :7].tolist()]",
)
rec.value("d2l_example_output", "[[round(v, 4) for v in row] for row in output[:, 0, :].tolist()]")

# nn.Linear's default initialisation, measured against 1/√fan_in on a million weights.
rec.setup("import torch", "from torch import nn", "layer = nn.Linear(1000, 1000)")
rec.value("linear_weight_bound", "f'{layer.weight.abs().max().item() * 1000 ** 0.5:.3f}'")
rec.value("linear_bias_bound", "f'{layer.bias.abs().max().item() * 1000 ** 0.5:.3f}'")
rec.value("linear_weight_std", "f'{layer.weight.std().item() * 1000 ** 0.5:.3f}'")
rec.write()
