"""Recordings for `ch09-training-with-attention.md`: d2l's two masked losses on a batch
with no real token, `LambdaLR`'s first rate, `nn.GRU`'s parameter names, and what
`torch.load` makes of a safetensors file."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from recorder import Recorder  # noqa: E402

# d2l 0.17, *Sequence to Sequence Learning* (PyTorch), copied as written: the loss of each
# example is the mean over all its steps of the masked per-token losses.
D2L_017_LOSS = '''
def sequence_mask(X, valid_len, value=0):
    maxlen = X.size(1)
    mask = torch.arange((maxlen), dtype=torch.float32,
                        device=X.device)[None, :] < valid_len[:, None]
    X[~mask] = value
    return X

class MaskedSoftmaxCELoss(nn.CrossEntropyLoss):
    def forward(self, pred, label, valid_len):
        weights = torch.ones_like(label)
        weights = sequence_mask(weights, valid_len)
        self.reduction='none'
        unweighted_loss = super(MaskedSoftmaxCELoss, self).forward(
            pred.permute(0, 2, 1), label)
        weighted_loss = (unweighted_loss * weights).mean(dim=1)
        return weighted_loss
'''

# d2l 1.0, §10.7 *Sequence-to-Sequence Learning for Machine Translation* (PyTorch):
# `Seq2Seq.loss`, with `Classifier.loss(averaged=False)` written out; the sum of the masked
# per-token losses divided by the number of real tokens.
D2L_10_LOSS = '''
def loss(Y_hat, Y, tgt_pad):
    l = F.cross_entropy(Y_hat.reshape((-1, Y_hat.shape[-1])), Y.reshape((-1,)),
                        reduction='none')
    mask = (Y.reshape(-1) != tgt_pad).type(torch.float32)
    return (l * mask).sum() / mask.sum()
'''

rec = Recorder(__file__)
# A batch of 2 targets of 4 steps over 13 tokens, every position padding (id 0, length 0).
batch = [
    "import torch",
    "import torch.nn.functional as F",
    "from torch import nn",
    "logits = torch.randn(2, 4, 13)",
    "labels = torch.zeros(2, 4, dtype=torch.long)",
]
rec.setup(*batch, D2L_017_LOSS)
rec.value(
    "d2l_017_loss_no_real_token",
    "MaskedSoftmaxCELoss()(logits, labels, torch.tensor([0, 0])).sum().item()",
)
rec.setup(*batch, D2L_10_LOSS)
rec.value("d2l_10_loss_no_real_token", "loss(logits, labels, tgt_pad=0).item()")

# Warmup with LambdaLR: the rate of the first step.
rec.setup(
    "import torch",
    "p = torch.nn.Parameter(torch.zeros(1))",
    "optimizer = torch.optim.Adam([p], lr=1e-3)",
    "W = 100",
    "schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda t: min(t, W) / W)",
)
rec.value("lambda_lr_step_0", "optimizer.param_groups[0]['lr']")

rec.setup("import torch", "from torch import nn")
rec.value("gru_names", "', '.join(nn.GRU(4, 8).state_dict())")

# A safetensors file, written by hand: an 8-byte little-endian header length, the JSON
# header, then the raw bytes of one float32 tensor [2].
rec.setup(
    "import io",
    "import json",
    "import struct",
    "import torch",
    "header = json.dumps({'w': {'dtype': 'F32', 'shape': [2], 'data_offsets': [0, 8]}}).encode()",
    "data = struct.pack('<Q', len(header)) + header + struct.pack('<2f', 1.0, 2.0)",
    "def raised(call):\n    try:\n        call()\n    except Exception as error:\n"
    "        return type(error).__name__",
)
rec.value("torch_load_safetensors", "raised(lambda: torch.load(io.BytesIO(data)))")
rec.error("torch_load_safetensors_unsafe", "torch.load(io.BytesIO(data), weights_only=False)")
rec.write()
