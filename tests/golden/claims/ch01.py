"""Recordings for `ch01-tensors-and-shapes.md`: negative dimensions and broadcasting."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from recorder import Recorder  # noqa: E402


def shape(tensor):
    """`torch.Size([2, 3, 4])` -> `[2, 3, 4]`, as the page writes shapes."""
    return str(list(tensor.shape))


rec = Recorder(__file__)
rec.setup("import torch")
rec.value("size_minus_one", "torch.ones(2, 3, 4).size(-1)")
rec.value(
    "narrow_is_slice",
    "torch.equal(torch.arange(6).reshape(2, 3).narrow(1, 0, 1),"
    " torch.arange(6).reshape(2, 3)[:, 0:1])",
)
rec.value("broadcast_bias", "torch.ones(2, 3, 4) + torch.ones(4)", show=shape)
rec.value("broadcast_both_sides", "torch.ones(2, 3, 1) + torch.ones(1, 5)", show=shape)
rec.error("broadcast_mismatch", "torch.ones(4, 64) + torch.ones(4, 10, 64)")
rec.write()
