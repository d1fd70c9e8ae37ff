"""Recordings for `ch04-masked-softmax.md`: d2l's masked softmax run as d2l wrote it, what
PyTorch does with a fully masked row, in `float16`, and with causal and padding masks."""

import ast
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from recorder import Recorder  # noqa: E402


def d2l_source(*names):
    """The source of d2l's functions and classes `names`, as `tests/golden/attention.py`
    copies them from d2l's *Attention Scoring Functions* (PyTorch)."""
    path = HERE.parent / "attention.py"
    text = path.read_text(encoding="utf-8")
    found = {
        node.name: ast.get_source_segment(text, node)
        for node in ast.parse(text).body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef))
    }
    return [found[name] for name in names]


def rounded(tensor):
    """A tensor's values as a flat list rounded to 4 places: `[0.3333, 0.3333, 0.3333]`."""
    return str([round(v, 4) for v in tensor.flatten().tolist()])


def exponent(value):
    """`3.3895313892515355e+38` -> `3.3895e38`, as the page writes ranges."""
    return f"{value:.4e}".replace("e+", "e")


D2L = ["import torch", "from torch import nn", *d2l_source("_sequence_mask", "masked_softmax")]
rec = Recorder(__file__)

# d2l's own code: the comparison, the fill value, the empty row, the extreme row.
rec.setup("import torch")
rec.value(
    "d2l_positions_against_lengths",
    "(torch.arange((4), dtype=torch.float32)[None, :] < torch.tensor([2, 3])[:, None])"
    ".int().tolist()",
)
rec.setup(*D2L)
rec.value(
    "d2l_fill_ties_minus_1e6",
    "masked_softmax(torch.tensor([[[-1e6, 3.0]]]), torch.tensor([1]))",
    show=rounded,
)
rec.value(
    "d2l_empty_row",
    "masked_softmax(torch.tensor([[[1.0, 2.0, 3.0]]]), torch.tensor([0]))",
    show=rounded,
)
rec.value(
    "d2l_extreme_row",
    "masked_softmax(torch.tensor([[[-2e6, -2e6 - 1, 0.0]]]), torch.tensor([2]))",
    show=rounded,
)

# A fully masked row in PyTorch: NaN, in the forward pass and in a shared gradient.
rec.setup("import torch")
rec.value("softmax_all_minus_inf", "torch.full((1, 3), float('-inf')).softmax(-1)", show=rounded)
rec.value(
    "safe_softmax_all_minus_inf",
    "torch._safe_softmax(torch.full((1, 3), float('-inf')), -1)",
    show=rounded,
)
rec.setup(
    "import torch",
    "scores = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True)",
    "w = torch.tensor(1.0, requires_grad=True)",
    "values = w * torch.tensor([[4.0], [5.0], [6.0]])",
    "weights = scores.masked_fill(torch.ones(1, 3, dtype=torch.bool), float('-inf')).softmax(-1)",
    "loss = 0 * (weights @ values).sum()",
    "loss.backward()",
)
rec.value("times_zero_loss_and_grad", "f'loss {loss.item()}, w.grad {w.grad.item()}'")

# Sentinels in 16-bit floats.
rec.setup("import torch", "x = torch.zeros(2, 3, dtype=torch.float16)")
rec.error("f16_masked_fill_minus_1e9", "x.masked_fill(x == 0, -1e9)")
rec.error("f16_fill__minus_1e9", "x.fill_(-1e9)")
rec.error("f16_full_minus_1e9", "torch.full((2, 3), -1e9, dtype=torch.float16)")
rec.value("f16_tensor_minus_1e9", "torch.tensor(-1e9, dtype=torch.float16).item()")
rec.value("f16_half_minus_1e6", "torch.tensor(-1e6).half().item()")
rec.value("f16_half_minus_1e9", "torch.tensor(-1e9).half().item()")
rec.value("f16_add_minus_1e9", "(x + -1e9)[0, 0].item()")
rec.value("f16_max", "int(torch.finfo(torch.float16).max)")
rec.value("bf16_max", "torch.finfo(torch.bfloat16).max", show=exponent)
rec.value("f32_max", "torch.finfo(torch.float32).max", show=exponent)

# Causal order: 2 queries against 4 keys. The keys and queries are zeros and the values
# the identity, so each row of the output is the row of weights.
rec.setup(
    "import torch",
    "import torch.nn.functional as F",
    "q, k, v = torch.zeros(1, 2, 4), torch.zeros(1, 4, 4), torch.eye(4)[None]",
)
rec.value(
    "is_causal_pattern",
    "(F.scaled_dot_product_attention(q, k, v, is_causal=True)[0] > 0).int().tolist()",
)
rec.value("tril_pattern", "torch.ones(2, 4).tril().int().tolist()")

# The sense of a boolean mask: the same [True, False] in the two APIs.
rec.setup(
    "import torch",
    "import torch.nn.functional as F",
    "from torch import nn",
    "mha = nn.MultiheadAttention(2, 1, batch_first=True)",
    "kv = torch.randn(1, 2, 2)",
)
rec.value(
    "sdpa_bool_mask_weights",
    "F.scaled_dot_product_attention(torch.zeros(1, 1, 2), torch.zeros(1, 2, 2),"
    " torch.eye(2)[None], attn_mask=torch.tensor([[True, False]]))",
    show=rounded,
)
rec.value(
    "mha_key_padding_mask_weights",
    "mha(torch.zeros(1, 1, 2), kv, kv, key_padding_mask=torch.tensor([[True, False]]))[1]",
    show=rounded,
)
rec.write()
