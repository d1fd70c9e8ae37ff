"""What chapter 14's page (`ch14-attention-on-the-gpu.md`) says PyTorch does with devices:
where creation functions put a tensor, the error of an op whose inputs live on two devices,
and the 0-dimensional CPU tensor that goes with a tensor on any device. The CUDA cases run
on fake tensors (`FAKE_CUDA`), which carry a device but no values. Writes `ch14.json`."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from recorder import FAKE_CUDA, Recorder  # noqa: E402

rec = Recorder(__file__)
rec.setup("import torch")
rec.value("creation_device", "torch.zeros(2, 3).device", show=lambda d: f"`{d}`")

rec.setup(*FAKE_CUDA)
rec.error("two_devices", "torch.ones(2, 3) + torch.ones(2, 3, device='cuda')")
rec.value(
    "cpu_scalar_with_cuda",
    "(torch.ones(2, 3, device='cuda') * torch.tensor(2.0)).device",
    show=lambda d: f"`{d}`",
)
rec.write()
