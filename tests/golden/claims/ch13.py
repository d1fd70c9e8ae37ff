"""What chapter 13's page (`ch13-making-it-fast.md`) says PyTorch does on a CPU: the
threads it computes with, the library its matrix products call, and the switch that holds
its own kernels to AVX2. Writes `ch13.json`."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from recorder import Recorder  # noqa: E402

rec = Recorder(__file__)
rec.setup("import torch")
rec.value(
    "parallel_backend",
    "[line for line in torch.__config__.parallel_info().splitlines() if 'parallel backend' in line][0]",
    show=lambda line: f"`{line.strip()}`",
)
rec.value(
    "blas",
    "[part.strip() for part in torch.__config__.show().replace(',', '\\n').splitlines() if 'BLAS_INFO' in part][0].split()[-1]",
    show=lambda info: f"`{info}`",
)
# ATEN_CPU_CAPABILITY is read when torch is imported: a fresh interpreter with it set.
rec.setup("import os", "import subprocess", "import sys")
rec.value(
    "aten_cpu_capability_avx2",
    "subprocess.run([sys.executable, '-c', 'import torch; print(torch.backends.cpu.get_cpu_capability())'],"
    " env={**os.environ, 'ATEN_CPU_CAPABILITY': 'avx2'}, capture_output=True, text=True, check=True).stdout.strip()",
    show=lambda capability: f"`{capability}`",
)
rec.write()
