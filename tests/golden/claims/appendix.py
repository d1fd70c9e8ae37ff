"""What PyTorch does, for the "From PyTorch" appendix (`book/src/appendix-pytorch.md`):
the dtypes of its indices and masks, the errors its ops raise, the defaults of the calls the
appendix pairs with the engine's, and the conventions (layouts, mask senses, gate order,
clipping formula) in which the engine's calls differ or agree.

Run with `python3 tests/golden/claims/appendix.py`; writes `appendix.json`.
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from recorder import FAKE_CUDA, Recorder, dtype_name  # noqa: E402

rec = Recorder(__file__)


def shape(size):
    """`torch.Size([2, 3])` -> `[2, 3]`, as the page writes shapes."""
    return str(list(size))


def values(tensor):
    """A tensor's values, flattened, as `0.0, 2.0`."""
    return ", ".join(str(v) for v in tensor.flatten().tolist())


# `sig(f, "bias")` -> `bias=True`: an argument's default as source writes it (a function by
# its name, `activation=relu`).
SIGNATURE = (
    "import inspect; sig = lambda f, n: (lambda d: f'{n}={getattr(d, \"__name__\", None) or repr(d)}')"
    "(inspect.signature(f).parameters[n].default)"
)

# --- Element types: indices are int64, comparisons bool, and float indices are refused.
rec.setup("import torch", "import torch.nn.functional as F", "x = torch.tensor([[1.0, 3.0, 2.0]])")
rec.value("argmax_dtype", "torch.argmax(x, 1).dtype", show=dtype_name)
rec.value("comparison_dtype", "(x > 1.5).dtype", show=dtype_name)
rec.error("embedding_float_ids", "F.embedding(torch.tensor([0.0]), torch.ones(3, 2))")
rec.error("masked_fill_float_mask", "x.masked_fill(torch.tensor([1.0, 0.0, 0.0]), 0.0)")
rec.error("where_float_condition", "torch.where(torch.tensor([1.0, 0.0, 0.0]), x, x)")

# --- Errors come from inside the op, as exceptions.
rec.setup("import torch")
rec.error("matmul_shapes", "torch.ones(2, 3) @ torch.ones(2, 3)")

# --- Broadcasting and reductions.
rec.setup("import torch")
rec.value("broadcast_shape", "(torch.ones(2, 1, 3) + torch.ones(4, 1)).shape", show=shape)
rec.error("broadcast_shapes_mismatch", "torch.broadcast_shapes((2, 3), (4,))")
rec.value("sum_empty_dims", "torch.ones(2, 3).sum(dim=[]).shape", show=shape)
rec.value("squeeze_not_one", "torch.ones(2, 3).squeeze(0).shape", show=shape)
rec.setup("import torch", "x = torch.tensor([1.0, 3.0, 3.0], requires_grad=True)")
rec.value("amax_tie_grad", "(torch.amax(x, 0).backward(), x.grad)[1]", show=values)
rec.setup("import torch", "x = torch.tensor([1.0, 3.0, 3.0], requires_grad=True)")
rec.value("max_dim_tie_grad", "(torch.max(x, 0).values.backward(), x.grad)[1]", show=values)
rec.setup("import torch", "x = torch.tensor([1.0, 3.0, 3.0])")
rec.value("max_dim_tie_index", "torch.max(x, 0).indices.item()", show=str)

# --- Random numbers: PyTorch's generator, for comparison with the engine's.
rec.setup("import torch", "torch.manual_seed(0)")
rec.value("randn_seed_0", "torch.randn(3)", show=lambda t: ", ".join(f"{v:.4f}" for v in t.tolist()))

# --- Activations and dropout.
rec.setup("import torch", "from torch import nn", SIGNATURE)
rec.value("gelu_default", "nn.GELU().approximate", show=repr)
rec.setup("import torch", "x = torch.tensor([float('nan'), -0.0, -1.0, 2.0], requires_grad=True)")
rec.value("relu_nan_forward", "torch.relu(x)", show=values)
rec.value("relu_nan_grad", "torch.autograd.grad(torch.relu(x), x, torch.full((4,), 3.0))[0]", show=values)
rec.setup("import torch", "import torch.nn.functional as F")
rec.value("dropout_values", "F.dropout(torch.ones(1000), 0.5, True).unique()", show=values)

# --- Losses.
rec.setup("import torch", "import torch.nn.functional as F")
rec.error(
    "cross_entropy_classes_last",
    "F.cross_entropy(torch.zeros(2, 5, 3), torch.zeros(2, 5, dtype=torch.long))",
)
rec.setup("from torch import nn", SIGNATURE)
rec.value("cross_entropy_ignore_index", "sig(nn.CrossEntropyLoss, 'ignore_index')")
rec.value("cross_entropy_label_smoothing", "sig(nn.CrossEntropyLoss, 'label_smoothing')")

# --- Autograd.
# The first sentence of the error a second backward raises (its message goes on).
rec.setup(
    "import torch",
    "x = torch.ones(2, requires_grad=True)",
    "y = (x * x).sum()",
    "y.backward()",
    "def first_sentence(f):",
    "    try:",
    "        f()",
    "    except RuntimeError as error:",
    "        return 'RuntimeError: ' + str(error).split(' (')[0]",
)
rec.value("backward_twice", "first_sentence(y.backward)")
# The gradient of an op's result after backward (a tensor that is not a leaf).
rec.setup(
    "import torch",
    "import warnings; warnings.simplefilter('ignore')",
    "x = torch.ones(2, requires_grad=True)",
    "y = x * 2.0",
    "y.sum().backward()",
)
rec.value("grad_of_non_leaf", "y.grad", show=str)
rec.setup("import torch", "x = torch.ones(2)")
rec.value("requires_grad_same", "x.requires_grad_() is x", show=str)
rec.setup("import torch", SIGNATURE)
rec.value("zero_grad_set_to_none", "sig(torch.optim.Optimizer.zero_grad, 'set_to_none')")
rec.setup(
    "import torch",
    "import warnings; warnings.simplefilter('ignore')",
    "x = torch.tensor([1.0, 0.0], requires_grad=True)",
    "enter(torch.autograd.detect_anomaly())",
)
rec.value("anomaly_forward_inf", "x.log()", show=values)
rec.setup(
    "import torch",
    "import warnings; warnings.simplefilter('ignore')",
    "x = torch.tensor([0.0], requires_grad=True)",
    "enter(torch.autograd.detect_anomaly())",
)
rec.error("anomaly_backward_nan", "(x.sqrt() * 0.0).sum().backward()")
rec.setup(
    "import torch",
    "import warnings; warnings.simplefilter('ignore')",
    "x = torch.tensor([0.0], requires_grad=True)",
    "enter(torch.autograd.detect_anomaly())",
)
rec.value("anomaly_backward_inf", "(x.sqrt().sum().backward(), x.grad)[1]", show=values)
# What gradcheck says of float32 inputs: the first sentence of the first warning it gives.
rec.setup(
    "import torch",
    "import warnings",
    "x = torch.tensor([1.0], requires_grad=True)",
    "def first_warning():",
    "    with warnings.catch_warnings(record=True) as caught:",
    "        warnings.simplefilter('always')",
    "        torch.autograd.gradcheck(torch.sin, (x,), raise_exception=False)",
    "    return str(caught[0].message).split('. ')[0] + '.'",
)
rec.value("gradcheck_float32_warning", "first_warning()")
rec.setup("import torch", SIGNATURE)
rec.value(
    "gradcheck_defaults",
    "', '.join(sig(torch.autograd.gradcheck, n) for n in ['eps', 'atol', 'rtol'])",
)

# --- Precision.
rec.setup("import torch", "x = torch.tensor([1.0001], requires_grad=True)")
rec.value("half_float_value", "x.half().float().item()", show=str)
rec.setup("import torch", "x = torch.tensor([1.0], requires_grad=True)")
rec.value(
    "half_float_grad",
    "(x.half().float().backward(torch.tensor([1.0001])), x.grad.item())[1]",
    show=str,
)
rec.setup(*FAKE_CUDA, "a = torch.empty(2, 4, device='cuda')", "b = torch.empty(4, 3, device='cuda')",
          "enter(torch.autocast('cuda', dtype=torch.float16))")
rec.value("autocast_matmul_dtype", "(a @ b).dtype", show=dtype_name)
rec.setup("import torch", SIGNATURE)
rec.value(
    "grad_scaler_defaults",
    "', '.join(sig(torch.amp.GradScaler, n) for n in "
    "['init_scale', 'growth_factor', 'backoff_factor', 'growth_interval'])",
)

# --- Layers.
rec.setup("import torch", "from torch import nn", SIGNATURE)
rec.value("linear_weight_shape", "nn.Linear(3, 2).weight.shape", show=shape)
rec.value("linear_bias_default", "sig(nn.Linear, 'bias')")
rec.value("gru_batch_first_default", "'batch_first=' + repr(nn.GRU(2, 3).batch_first)")
rec.value("gru_names", "', '.join(n for n, _ in nn.GRU(2, 3).named_parameters())")
rec.value("gru_weight_ih_shape", "nn.GRU(2, 3).weight_ih_l0.shape", show=shape)
# The gate order of the stacked weights, read from behaviour. Every weight is 0, h0 = 0.5,
# and the hidden bias of the new gate's block is 1, so with gates r, z and candidate
# n = tanh(b_in + r · b_hn), h' = (1 - z) · n + z · h0. A bias of 20 on one block of
# `bias_ih_l0` saturates that block's gate: if it is r, n = tanh(1) and h' = 0.631; if z,
# h' = h0 = 0.5; if n, n = 1 and h' = 0.75. Each block is named by the h' it gives.
rec.setup(
    "import math",
    "import torch",
    "from torch import nn",
    "s = lambda x: 1 / (1 + math.exp(-x))",
    "PREDICTED = {'r': 0.5 * math.tanh(1.0) + 0.25, 'z': 0.5, 'n': 0.5 + 0.25}",
    "def gate_order():",
    "    names = []",
    "    for block in range(3):",
    "        gru = nn.GRU(1, 1)",
    "        with torch.no_grad():",
    "            for p in gru.parameters(): p.zero_()",
    "            gru.bias_ih_l0[block] = 20.0",
    "            gru.bias_hh_l0[2] = 1.0",
    "            h = gru(torch.zeros(1, 1, 1), torch.full((1, 1, 1), 0.5))[0].item()",
    "        names += [g for g, p in PREDICTED.items() if abs(h - p) < 1e-3]",
    "    return ', '.join(names)",
)
rec.value("gru_gate_order", "gate_order()")
rec.setup("import torch", "from torch import nn", "import warnings; warnings.simplefilter('ignore')")
rec.value(
    "weight_norm_names",
    "', '.join(n for n, _ in nn.utils.parametrizations.weight_norm(nn.Linear(3, 2), dim=0)"
    ".named_parameters())",
)
rec.value(
    "old_weight_norm_names",
    "', '.join(n for n, _ in nn.utils.weight_norm(nn.Linear(3, 2), dim=0).named_parameters())",
)
rec.setup("import torch", "from torch import nn")
rec.value("state_dict_type", "type(nn.Linear(2, 2).state_dict()).__name__")
rec.error("load_state_dict_strict", "nn.Linear(2, 2).load_state_dict({})")
rec.setup("import torch", "from torch import nn", "t = torch.empty(2, 3)")
rec.value("init_in_place", "nn.init.uniform_(t, -1.0, 1.0) is t", show=str)

# --- Optimizers and schedules.
rec.setup(
    "import torch",
    "w = torch.nn.Parameter(torch.zeros(2))",
    "w.grad = torch.tensor([3.0, 4.0])",
    "torch.nn.utils.clip_grad_norm_([w], 1.0)",
)
rec.value(
    "clip_formula",
    "bool((w.grad == torch.tensor([3.0, 4.0]) * (1.0 / (5.0 + 1e-6))).all())",
    show=str,
)
rec.setup("import torch", "p = torch.nn.Parameter(torch.ones(2))")
rec.error("adam_nan_lr", "torch.optim.Adam([p], lr=float('nan'))")
rec.setup(
    "import torch",
    "p = torch.nn.Parameter(torch.ones(2))",
    "opt = torch.optim.Adam([p], lr=0.1)",
    "opt.param_groups[0]['lr'] = float('nan')",
    "p.sum().backward()",
    "opt.step()",
)
rec.value("adam_nan_lr_after_the_fact", "p.detach()", show=values)
rec.setup("import torch", SIGNATURE)
rec.value("linear_lr_start_factor", "sig(torch.optim.lr_scheduler.LinearLR, 'start_factor')")

# --- Attention.
rec.setup(
    "import torch",
    "import torch.nn.functional as F",
    "q = torch.zeros(1, 1, 1, 4)",
    "k = torch.zeros(1, 1, 3, 4)",
    "v = torch.tensor([1.0, 2.0, 3.0]).reshape(1, 1, 3, 1)",
)
rec.value("sdpa_is_causal_first_key", "F.scaled_dot_product_attention(q, k, v, is_causal=True).item()", show=str)
rec.value(
    "sdpa_bool_mask_true_attends",
    "F.scaled_dot_product_attention(q, k, v, attn_mask=torch.tensor([[True, False, False]])).item()",
    show=str,
)
rec.value(
    "sdpa_fully_masked",
    "F.scaled_dot_product_attention(q, k, v, attn_mask=torch.zeros(1, 3, dtype=torch.bool)).item()",
    show=str,
)
rec.setup("import torch", "from torch import nn", "mha = nn.MultiheadAttention(4, 2)", SIGNATURE,
          "x = torch.ones(3, 1, 4)")
rec.value("mha_batch_first_default", "'batch_first=' + repr(mha.batch_first)")
rec.value("mha_bias_default", "sig(nn.MultiheadAttention, 'bias')")
rec.value("mha_in_proj_shape", "mha.in_proj_weight.shape", show=shape)
rec.value("mha_weights_shape", "mha(x, x, x)[1].shape", show=shape)
rec.value(
    "mha_key_padding_true_ignores",
    "mha(x[:1], x[:2], x[:2], key_padding_mask=torch.tensor([[False, True]]))[1]",
    show=values,
)
rec.setup("import torch", "from torch import nn", SIGNATURE)
rec.value(
    "encoder_layer_defaults",
    "', '.join(sig(nn.TransformerEncoderLayer, n) for n in "
    "['dim_feedforward', 'dropout', 'activation', 'layer_norm_eps', 'batch_first', 'norm_first', 'bias'])",
)
rec.value("tgt_mask_first_row", "nn.Transformer.generate_square_subsequent_mask(3)[0]", show=values)
rec.setup("import torch", "from torch import nn")
rec.value("encoder_layer_dropout_in_attention", "nn.TransformerEncoderLayer(4, 2, dropout=0.3).self_attn.dropout", show=str)
rec.write()
