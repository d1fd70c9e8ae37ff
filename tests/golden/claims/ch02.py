"""Recordings for `ch02-autograd.md`: leaves accumulate, and a parameter updated outside
`torch.no_grad()` stops being a leaf."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from recorder import Recorder  # noqa: E402


def leaf_grads(leaves):
    """`{"a": tensor(12.), ...}` -> `a 12, b -8, ...`, as the tour prints gradients."""
    return ", ".join(f"{name} {value.grad.item():g}" for name, value in leaves.items())


rec = Recorder(__file__)
# The chapter's running example, L = (a·b + c)·f at a = 2, b = −3, c = 10, f = −2.
example = [
    "import torch",
    "leaves = {n: torch.tensor(v, requires_grad=True)"
    " for n, v in dict(a=2.0, b=-3.0, c=10.0, f=-2.0).items()}",
    "a, b, c, f = leaves.values()",
    "L = (a * b + c) * f",
]
rec.setup(*example, "L.backward()")
rec.value("backward_once", "leaves", show=leaf_grads)
rec.setup(*example, "L.backward(retain_graph=True)", "L.backward()")
rec.value("backward_twice", "leaves", show=leaf_grads)

# A hand-written update while the graph is recorded, then the next step's backward.
by_hand = [
    "import torch",
    "w = torch.ones(3, requires_grad=True)",
    "(2 * w).sum().backward()",
    "w = w - 0.1 * w.grad",
]
rec.setup(*by_hand)
rec.value("update_is_leaf", "w.is_leaf")
rec.value("update_grad_fn", "type(w.grad_fn).__name__")
rec.setup(
    *by_hand,
    "import warnings",
    "warnings.simplefilter('ignore')",
    "(2 * w).sum().backward()",
)
rec.value("update_next_grad", "w.grad")
rec.setup(
    "import torch",
    "w = torch.ones(3, requires_grad=True)",
    "(2 * w).sum().backward()",
    "enter(torch.no_grad())",
    "w -= 0.1 * w.grad",
)
rec.value("no_grad_update_is_leaf", "w.is_leaf")
rec.write()
