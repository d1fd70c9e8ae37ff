"""What chapter 11's page (`ch11-long-sequences.md`) says PyTorch does: which kernel
`scaled_dot_product_attention` picks on a CPU, and that `nn.MultiheadAttention` called with
`need_weights=False` runs it. Writes `ch11.json`."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from recorder import Recorder  # noqa: E402

rec = Recorder(__file__)

# The kernels PyTorch's scaled_dot_product_attention can dispatch to.
rec.setup("import torch", "from torch.nn.attention import SDPBackend")
rec.value(
    "sdpa_backends",
    "[name for name in SDPBackend.__members__ if name not in ('ERROR', 'OVERRIDEABLE')]",
    show=lambda names: ", ".join(f"`{n}`" for n in names),
)

# What it picks on a CPU: the blocked (flash) kernel for plain float32 attention, the plain
# formula (MATH) when it cannot, e.g. with dropout.
rec.setup(
    "import torch",
    "from torch.nn.attention import SDPBackend",
    "q = torch.randn(1, 8, 1024, 32)",
)
rec.value(
    "sdpa_cpu_choice",
    "SDPBackend(torch._fused_sdp_choice(q, q, q)).name",
    show=lambda name: f"`{name}`",
)
rec.value(
    "sdpa_cpu_choice_with_dropout",
    "SDPBackend(torch._fused_sdp_choice(q, q, q, dropout_p=0.1)).name",
    show=lambda name: f"`{name}`",
)

# nn.MultiheadAttention with need_weights=False, as benchmarks/pytorch_side_by_side.py
# builds it: the aten ops its forward pass runs that compute attention.
rec.setup(
    "import torch",
    "from torch import nn",
    "from torch.utils._python_dispatch import TorchDispatchMode",
    "class Ops(TorchDispatchMode):",
    "    def __init__(self):",
    "        super().__init__()",
    "        self.seen = []",
    "    def __torch_dispatch__(self, func, types, args=(), kwargs=None):",
    "        self.seen.append(func.overloadpacket.__name__)",
    "        return func(*args, **(kwargs or {}))",
    "mha = nn.MultiheadAttention(256, 8, bias=False, batch_first=True)",
    "x = torch.randn(2, 1024, 256, requires_grad=True)",
    "ops = Ops()",
    "with ops:",
    "    mha(x, x, x, need_weights=False)",
)
rec.value(
    "mha_need_weights_false_runs",
    "sorted({op for op in ops.seen if 'attention' in op or op in ('softmax', '_softmax', 'bmm', 'baddbmm')})",
    show=lambda ops: ", ".join(f"`{op}`" for op in ops),
)
rec.write()
