"""What PyTorch does, for chapter 15 (mixed precision): autocast's dtypes on CUDA and on the
CPU, masked_fill's fills on float16 scores, float16's underflow, GradScaler's defaults.

Run with `python3 tests/golden/claims/ch15.py`; writes `ch15.json`.
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from recorder import FAKE_CUDA, Recorder, dtype_name  # noqa: E402

rec = Recorder(__file__)

# The first article's additive scoring, as it writes it: `v` a float32 parameter, the
# features tanh(W_q q + W_k k) from two linear layers (`F.linear`, which `nn.Linear`
# calls, with bias-free weights: the faked device cannot run `nn.Linear`'s random init). On the faked CUDA device tensors have
# no storage to draw into, so they are made empty there (only dtypes are asked of them).
def additive(device):
    """Setup lines for the additive scoring on `device` ("cuda": faked; "cpu": computed)."""
    if device == "cuda":
        # Plain tensors for the weights there: autocast's cache of cast weights (for
        # tensors that require grad) reaches for a real device. Dtypes do not depend on it.
        head = [*FAKE_CUDA, "new = torch.empty", "param = lambda t: t"]
    else:
        head = ["import torch", "from torch import nn", "new = torch.randn", "param = nn.Parameter"]
    return [
        *head,
        "import torch.nn.functional as F",
        f"DEVICE = {device!r}",
        "W_q = param(new(8, 8, device=DEVICE))",
        "W_k = param(new(8, 8, device=DEVICE))",
        "v = param(new(8, device=DEVICE))",
        "q = new(2, 1, 8, device=DEVICE)",
        "k = new(2, 5, 8, device=DEVICE)",
    ]


FEATURES = "features = torch.tanh(F.linear(q, W_q) + F.linear(k, W_k))"


# Autocast's dtypes: on CUDA (PyTorch's real CUDA rules on storage-less tensors) the
# whole path; on the CPU, computed, what differs from CUDA and what the page uses.
CALLS = {
    "linear_dtype": "F.linear(q, W_q).dtype",
    "features_dtype": "features.dtype",
    "v_times_features_dtype": "(v * features).dtype",
    "additive_scores_dtype": "(v * features).sum(-1).dtype",
    "weight_dtype": "W_q.dtype",
    "bmm_scores_dtype": "torch.bmm(q, k.transpose(1, 2)).dtype",
    "softmax_of_f16_dtype": "torch.softmax(torch.bmm(q, k.transpose(1, 2)), dim=-1).dtype",
    "sum_of_f16_dtype": "torch.bmm(q, k.transpose(1, 2)).sum(-1).dtype",
}
ON_CPU = ["additive_scores_dtype", "weight_dtype", "softmax_of_f16_dtype", "sum_of_f16_dtype"]
for device, names in [("cuda", list(CALLS)), ("cpu", ON_CPU)]:
    rec.setup(
        *additive(device),
        f"enter(torch.autocast({device!r}, dtype=torch.float16))",
        FEATURES,
    )
    for name in names:
        rec.value(f"{device}_{name}", CALLS[name], show=dtype_name)

# On the CPU, computed: the two paths of the article's -1e9 under autocast.
rec.setup(
    *additive("cpu"),
    "enter(torch.autocast('cpu', dtype=torch.float16))",
    FEATURES,
    "mask = torch.tensor([[True, True, True, False, False]] * 2)",
)
rec.value(
    "cpu_additive_masked_fill_minus_1e9",
    "(v * features).sum(-1).masked_fill(~mask, -1e9).min().item()",
    show=lambda x: f"{x:.0e}".replace("e+0", "e"),
)
rec.error(
    "cpu_bmm_masked_fill_minus_1e9",
    "torch.bmm(q, k.transpose(1, 2)).squeeze(1).masked_fill(~mask, -1e9)",
)

# masked_fill on float16 scores, outside autocast: which fills it takes.
rec.setup(
    "import torch",
    "scores = torch.tensor([2.0, 1.0, 0.5, -1.0], dtype=torch.float16)",
    "masked = torch.tensor([False, False, True, True])",
)
rec.error("f16_masked_fill_minus_1e9", "scores.masked_fill(masked, -1e9)")
rec.error("f16_masked_fill_minus_1e6", "scores.masked_fill(masked, -1e6)")
rec.value(
    "f16_masked_fill_minus_1e4",
    "scores.masked_fill(masked, -1e4)[3].item()",
    show=lambda x: f"{x:g}",
)
rec.value(
    "f16_masked_fill_finfo_min",
    "scores.masked_fill(masked, torch.finfo(torch.float16).min)[3].item()",
    show=lambda x: f"{x:g}",
)
rec.value(
    "f16_masked_fill_minus_inf_full_row",
    "torch.softmax(scores.masked_fill(torch.ones(4, dtype=torch.bool), float('-inf')).float(), -1)[0].item()",
    show=str,
)
# The silent path: the fill written in float32, the tensor then stored in float16.
rec.value(
    "f32_fill_then_half",
    "scores.float().masked_fill(masked, -1e9).half()[3].item()",
    show=str,
)
rec.value(
    "f32_finfo_min_as_bf16",
    "torch.tensor(torch.finfo(torch.float32).min).bfloat16().item()",
    show=str,
)

# float16's underflow: the smallest subnormal, and what rounds to zero.
rec.setup("import torch")
rec.value("f16_two_to_minus_25", "torch.tensor(2.0 ** -25).half().item()", show=str)
rec.value(
    "f16_three_e_minus_8",
    "torch.tensor(3e-8).half().item()",
    show=lambda x: f"{x:.2e}".replace("e-08", "e-8"),
)

# GradScaler's defaults.
rec.setup("import torch", "scaler = torch.amp.GradScaler('cpu')")
rec.value("grad_scaler_init_scale", "scaler.get_scale()", show=lambda x: f"{x:g}")
rec.value("grad_scaler_growth_factor", "scaler.get_growth_factor()", show=lambda x: f"{x:g}")
rec.value("grad_scaler_backoff_factor", "scaler.get_backoff_factor()", show=lambda x: f"{x:g}")
rec.value("grad_scaler_growth_interval", "scaler.get_growth_interval()", show=str)

# Master weights: under autocast the parameters and their gradients stay float32.
# The forward pass inside autocast, the backward pass outside it, as PyTorch advises.
rec.setup(
    *additive("cpu"),
    "with torch.autocast('cpu', dtype=torch.float16):\n"
    "    loss = (v * torch.tanh(F.linear(q, W_q) + F.linear(k, W_k))).sum()",
    "loss.backward()",
)
rec.value("cpu_weight_grad_dtype", "W_q.grad.dtype", show=dtype_name)

rec.write()
