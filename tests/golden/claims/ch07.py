"""Recordings for `ch07-multi-head-attention.md`: `nn.Linear`'s layout, d2l's
`MultiHeadAttention` run as d2l wrote it, `nn.MultiheadAttention`'s averaged weights, and
repeating valid lengths for the heads."""

import ast
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from recorder import Recorder  # noqa: E402


def d2l_source(*names):
    """The source of d2l's functions and classes `names`, as `tests/golden/attention.py`
    copies them from d2l (PyTorch; its `nn.LazyLinear` given the input sizes, which builds
    the same parameters)."""
    text = (HERE.parent / "attention.py").read_text(encoding="utf-8")
    found = {
        node.name: ast.get_source_segment(text, node)
        for node in ast.parse(text).body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef))
    }
    return [found[name] for name in names]


def names_and_shapes(state):
    """A state dict as `W_q.weight: [12, 10], ...`."""
    return ", ".join(f"{name}: {list(value.shape)}" for name, value in state.items())


D2L = [
    "import math",
    "import torch",
    "from torch import nn",
    *d2l_source("_sequence_mask", "masked_softmax", "DotProductAttention", "MultiHeadAttention"),
]
rec = Recorder(__file__)
rec.setup("import torch", "from torch import nn")
rec.value("linear_weight_shape", "list(nn.Linear(3, 5).weight.shape)")

# The chapter's side-by-side sizes: queries of 10 features, keys and values of 8,
# num_hiddens 12, 3 heads.
rec.setup(*D2L, "mha = MultiHeadAttention(10, 8, 8, 12, 3, 0.0)")
rec.value("d2l_state_dict", "mha.state_dict()", show=names_and_shapes)
rec.value("d2l_parameters", "sum(p.numel() for p in mha.parameters())")
rec.setup(*D2L, "mha = MultiHeadAttention(12, 12, 12, 12, 3, 0.0, bias=True)")
rec.value("d2l_parameters_square_with_bias", "sum(p.numel() for p in mha.parameters())")

# nn.MultiheadAttention's weights: 2 heads, a batch of 3 sequences of 5 tokens.
rec.setup(
    "import torch",
    "from torch import nn",
    "mha = nn.MultiheadAttention(8, 2, batch_first=True)",
    "x = torch.randn(3, 5, 8)",
)
rec.value("mha_weights_default", "list(mha(x, x, x)[1].shape)")
rec.value("mha_weights_per_head", "list(mha(x, x, x, average_attn_weights=False)[1].shape)")
rec.value(
    "mha_default_is_mean",
    "torch.allclose(mha(x, x, x)[1], mha(x, x, x, average_attn_weights=False)[1].mean(1))",
)

# Valid lengths [7, 3] for 3 heads.
rec.setup("import torch", "valid_lens = torch.tensor([7, 3])")
rec.value("repeat_interleave", "torch.repeat_interleave(valid_lens, repeats=3, dim=0).tolist()")
rec.value("tile", "valid_lens.tile(3).tolist()")
rec.value("repeat", "valid_lens.repeat(3).tolist()")
rec.write()
