"""What chapter 10's page (`ch10-pitfalls.md`) says PyTorch does: weight normalisation's
parameters, the two senses of a padding mask, where anomaly mode stops, and what
`clip_grad_norm_` divides by. Writes `ch10.json`."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from recorder import Recorder  # noqa: E402

rec = Recorder(__file__)

# Weight normalisation: the parameters' names, and `g` (original0) starting at each row's norm.
rec.setup(
    "import torch",
    "from torch import nn",
    "layer = torch.nn.utils.parametrizations.weight_norm(nn.Linear(3, 2), dim=0)",
    "weight = layer.parametrizations.weight",
)
rec.value(
    "weight_norm_names",
    "[name for name, _ in layer.named_parameters()]",
    show=lambda names: ", ".join(f"`{n}`" for n in names),
)
rec.value(
    "weight_norm_g_is_the_row_norm",
    "torch.equal(weight.original0, torch.linalg.vector_norm(weight.original1, dim=1, keepdim=True))",
    show=lambda same: "`g` starts at `‖v‖`" if same else "`g` does not start at `‖v‖`",
)

# The two senses of a mask: True is padding (ignored) for nn.MultiheadAttention's
# key_padding_mask; True is kept for F.scaled_dot_product_attention's boolean attn_mask.
rec.setup(
    "import torch",
    "from torch import nn",
    "mha = nn.MultiheadAttention(4, 1, batch_first=True)",
    "x = torch.randn(1, 3, 4)",
)
rec.value(
    "mha_key_padding_true_gets",
    "mha(x, x, x, key_padding_mask=torch.tensor([[False, False, True]]))[1][0, :, 2].max().item()",
    show=lambda w: f"weight {w:g}",
)
rec.setup(
    "import torch",
    "import torch.nn.functional as F",
    "q, k = torch.zeros(1, 1, 2), torch.zeros(1, 2, 2)",
    "v = torch.tensor([[[1.0], [2.0]]])",
)
rec.value(
    "sdpa_bool_mask_true_keeps",
    "F.scaled_dot_product_attention(q, k, v, attn_mask=torch.tensor([[True, False]])).item()",
    show=lambda out: "the key whose mask is True" if out == 1.0 else f"{out}",
)

# Anomaly mode: the forward pass of an empty row makes NaN without a report; backward
# stops at the first derivative that returns NaN, the square of the loss.
rec.setup(
    "import torch",
    "scores = torch.tensor([[0.5, -1.0], [0.3, 0.2]], requires_grad=True)",
    "keep = torch.tensor([[1, 1], [0, 0]])",
    "enter(torch.autograd.detect_anomaly())",
    "weights = scores.masked_fill(keep == 0, float('-inf')).softmax(-1)",
    "loss = ((weights * torch.tensor([[1.0, 2.0], [3.0, 4.0]])).sum(-1) - 1).square().sum()",
)
rec.value(
    "anomaly_forward_empty_row",
    "weights[1].tolist()",
    show=lambda row: "[" + ", ".join(str(x) for x in row) + "]",
)
rec.error("anomaly_backward", "loss.backward()")

# clip_grad_norm_: the factor is max_norm / (total_norm + eps); eps read back from a
# gradient of norm 5 clipped to 5, in float64.
rec.setup(
    "import torch",
    "w = torch.zeros(2, dtype=torch.float64, requires_grad=True)",
    "w.grad = torch.tensor([3.0, 4.0], dtype=torch.float64)",
    "total = torch.nn.utils.clip_grad_norm_([w], max_norm=5.0).item()",
)
rec.value(
    "clip_grad_norm_eps",
    "3.0 * 5.0 / w.grad[0].item() - total",
    show=lambda eps: f"{eps:.0e}".replace("e-0", "e-"),
)
rec.write()
