"""Recordings for `ch06-scaled-dot-product.md`: how `F.scaled_dot_product_attention` takes
its options, and dropout's training and evaluation modes."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from recorder import Recorder  # noqa: E402

rec = Recorder(__file__)
rec.setup(
    "import torch",
    "import torch.nn.functional as F",
    "q, k, v = torch.randn(1, 2, 4), torch.randn(1, 3, 4), torch.randn(1, 3, 4)",
)
rec.error("sdpa_scale_by_position", "F.scaled_dot_product_attention(q, k, v, None, 0.0, True, 0.5)")
rec.value(
    "sdpa_is_causal_by_position",
    "torch.equal(F.scaled_dot_product_attention(q, k, v, None, 0.0, True),"
    " F.scaled_dot_product_attention(q, k, v, is_causal=True))",
)

rec.setup("import torch", "from torch import nn", "dropout = nn.Dropout(0.5)")
rec.value("dropout_starts_training", "dropout.training")
rec.value("dropout_training_values", "sorted(set(dropout(torch.ones(1000)).tolist()))")
rec.setup("import torch", "from torch import nn", "dropout = nn.Dropout(0.5)", "dropout.eval()")
rec.value("dropout_eval_values", "sorted(set(dropout(torch.ones(1000)).tolist()))")
rec.write()
