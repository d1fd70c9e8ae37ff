"""Recordings for `ch08-kv-caching.md`: what `nn.Conv1d(d, d, 3, padding=1)` computes, and
that `torch.cat` of a cache copies it."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from recorder import Recorder  # noqa: E402

rec = Recorder(__file__)
# The chapter's convolution: the sequence x [B, n, d] zero-padded by one position on each
# side, and output t = b + Σⱼ x[t + j − 1] · W[j], with W[j] = weight[:, :, j]ᵀ.
rec.setup(
    "import torch",
    "from torch import nn",
    "B, n, d = 2, 7, 5",
    "conv = nn.Conv1d(d, d, 3, padding=1)",
    "x = torch.randn(B, n, d)",
    "padded = torch.cat([torch.zeros(B, 1, d), x, torch.zeros(B, 1, d)], 1)",
    "by_products = conv.bias + sum(padded[:, j:j + n] @ conv.weight[:, :, j].T for j in range(3))",
)
rec.value(
    "conv1d_is_shifted_products",
    "torch.allclose(conv(x.transpose(1, 2)).transpose(1, 2), by_products, atol=1e-6)",
)
rec.setup(
    "import torch",
    "cache = torch.randn(1, 2, 6, 4)",
    "new = torch.randn(1, 2, 1, 4)",
)
rec.value(
    "cat_shares_storage",
    "torch.cat([cache, new], 2).untyped_storage().data_ptr() == cache.untyped_storage().data_ptr()",
)
rec.write()
