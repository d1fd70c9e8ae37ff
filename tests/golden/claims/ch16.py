"""What PyTorch does, for the sentences of `book/src/ch16-transformer.md` that say so.

Run `python3 tests/golden/claims/ch16.py`; it rewrites `ch16.json` beside itself. The
numbers the layers compute are not here: `tests/golden/transformer.py` writes those, and
`tests/attention/transformer_parity.rs` checks the layers against them.
"""

import inspect
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from recorder import Recorder  # noqa: E402

rec = Recorder(__file__)


def code(value):
    """`value` as the page writes code: in backticks."""
    return f"`{value}`"


def both_layers(show=str):
    """The one default the encoder and the decoder layer share, written by `show`; fails
    if the two layers' defaults differ."""

    def shown(defaults):
        if len(defaults) != 1:
            raise SystemExit(f"the two layers' defaults differ: {defaults}")
        (default,) = defaults
        if default is inspect.Parameter.empty:
            return "required"
        return show(default)

    return shown


def same(label_same, label_other):
    """`label_same` for True, `label_other` for False."""
    return lambda equal: label_same if equal else label_other


# --- The layers' defaults (the configuration table) --------------------------------------

rec.setup("import inspect", "from torch import nn")
for argument in ["d_model", "nhead", "dim_feedforward", "dropout", "layer_norm_eps",
                 "norm_first", "batch_first", "bias"]:
    rec.value(
        f"layer_default_{argument}",
        "{inspect.signature(layer).parameters[%r].default"
        " for layer in (nn.TransformerEncoderLayer, nn.TransformerDecoderLayer)}" % argument,
        show=both_layers(),
    )
rec.value(
    "layer_default_activation",
    "{inspect.signature(layer).parameters['activation'].default"
    " for layer in (nn.TransformerEncoderLayer, nn.TransformerDecoderLayer)}",
    show=both_layers(lambda f: f"{f.__module__.replace('torch.nn.functional', 'F')}.{f.__name__}"),
)
rec.setup("import torch", "from torch import nn")
rec.value(
    "layer_gelu_by_name",
    'nn.TransformerEncoderLayer(8, 2, activation="gelu").activation',
    show=lambda f: f"F.{f.__name__}",
)

# --- The feed-forward network and the dropouts ------------------------------------------

rec.setup("import inspect", "from torch import nn")
rec.value(
    "ffn_block",
    'inspect.getsource(nn.TransformerEncoderLayer._ff_block).split("x = ")[1].splitlines()[0]',
)
rec.value(
    "ffn_block_return",
    "inspect.getsource(nn.TransformerEncoderLayer._ff_block).strip().splitlines()[-1].strip()",
)
rec.value(
    "self_attention_block_return",
    "inspect.getsource(nn.TransformerEncoderLayer._sa_block).strip().splitlines()[-1].strip()",
)
rec.value(
    "encoder_layer_dropouts",
    "[n for n, m in nn.TransformerEncoderLayer(64, 4, 128).named_modules()"
    " if isinstance(m, nn.Dropout)]",
    show=lambda names: ", ".join(map(code, names)),
)
rec.value(
    "attention_dropout",
    "nn.TransformerEncoderLayer(64, 4, 128).self_attn.dropout",
)

# --- LayerNorm ------------------------------------------------------------------------------

rec.setup(
    "import torch",
    "from torch import nn",
    "y = nn.LayerNorm(4)(torch.tensor([[1.0, 2.0, 3.0, 10.0]]))",
)
rec.value(
    "layer_norm_moments",
    "(y.mean().item(), y.var(unbiased=False).item())",
    show=lambda m: f"mean {abs(m[0]):.0f} and variance {m[1]:.0f}",
)
rec.setup("from torch import nn")
rec.value(
    "layer_norm_parameters",
    "[name for name, _ in nn.LayerNorm(4).named_parameters()]",
    show=" and ".join,
)

# --- The decoder's causal mask --------------------------------------------------------------

rec.setup(
    "import torch",
    "from torch import nn",
    "layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True)",
    "tgt, memory = torch.randn(1, 4, 8), torch.randn(1, 3, 8)",
    "later = tgt.clone()",
    "later[0, 3] += 1.0",
    "causal = nn.Transformer.generate_square_subsequent_mask(4)",
)
rec.value(
    "decoder_without_tgt_mask",
    "torch.equal(layer(tgt, memory)[0, 0], layer(later, memory)[0, 0])",
    show=same("reads only what precedes", "reads ahead"),
)
rec.value(
    "decoder_with_tgt_mask",
    "torch.equal(layer(tgt, memory, tgt_mask=causal)[0, 0],"
    " layer(later, memory, tgt_mask=causal)[0, 0])",
    show=same("the same output", "another output"),
)
rec.setup("from torch import nn")
rec.value(
    "square_subsequent_mask",
    "nn.Transformer.generate_square_subsequent_mask(3).tolist()",
)

# --- Key padding masks ----------------------------------------------------------------------
# A query and three keys that all score 0 (the projections' biases start at 0), so the
# weights are what the mask makes of equal scores.

rec.setup(
    "import torch",
    "from torch import nn",
    "mha = nn.MultiheadAttention(4, 1, batch_first=True)",
    "q, k = torch.zeros(1, 1, 4), torch.zeros(1, 3, 4)",
)
rec.value(
    "bool_padding_weight",
    "mha(q, k, k, key_padding_mask=torch.tensor([[False, False, True]]))[1][0, 0, 2].item()",
)
rec.value(
    "float_padding_added",
    "torch.allclose(mha(q, k, k, key_padding_mask=torch.tensor([[0.0, 0.0, 1.0]]))[1][0, 0],"
    " torch.softmax(torch.tensor([0.0, 0.0, 1.0]), -1))",
    show=same("`softmax([0, 0, 1])`", "other weights"),
)

# --- Parameter names and counts -------------------------------------------------------------

rec.setup("from torch import nn")
rec.value(
    "decoder_layer_modules",
    "list(dict.fromkeys(name.split('.')[0] for name, _ in"
    " nn.TransformerDecoderLayer(64, 4, 128).named_parameters()))",
    show=lambda names: ", ".join(map(code, names)),
)
rec.value(
    "encoder_layer_parameters",
    "sum(p.numel() for p in nn.TransformerEncoderLayer(64, 4, 128).parameters())",
)
rec.value(
    "decoder_layer_parameters",
    "sum(p.numel() for p in nn.TransformerDecoderLayer(64, 4, 128).parameters())",
)
rec.value(
    "encoder_layer_attention_state",
    "[(k, list(v.shape)) for k, v in"
    " nn.TransformerEncoderLayer(64, 4, 128, batch_first=True).state_dict().items()"
    " if k.startswith('self_attn.')]",
    show=lambda items: ", ".join(f"`{k}` `{shape}`" for k, shape in items),
)

# --- Final norms ----------------------------------------------------------------------------

for norm_first in (False, True):
    rec.setup("from torch import nn", f"model = nn.Transformer(norm_first={norm_first})")
    rec.value(
        f"transformer_final_norms_norm_first_{str(norm_first).lower()}",
        "(type(model.encoder.norm).__name__, type(model.decoder.norm).__name__)",
        show=lambda names: " and ".join(map(code, names)),
    )
rec.setup("from torch import nn")
rec.value(
    "stack_norm_default",
    "(nn.TransformerEncoder(nn.TransformerEncoderLayer(64, 4, 128, batch_first=True), 2).norm,"
    " nn.TransformerDecoder(nn.TransformerDecoderLayer(64, 4, 128, batch_first=True), 2).norm)",
    show=lambda norms: " and ".join(code(n) for n in norms),
)

# --- Sampling -------------------------------------------------------------------------------

rec.setup(
    "import torch",
    "logits = torch.tensor([1.0, 3.0, 2.0, 0.5])",
    "k = 2",
    "v, _ = torch.topk(logits, k)",
    'logits[logits < v[-1]] = -float("inf")',
)
rec.value("top_k_filter", "logits.tolist()")

# --- The generator's state ------------------------------------------------------------------

rec.setup("import torch")
rec.value("rng_state", "torch.get_rng_state()", show=lambda s: f"`{str(s.dtype).removeprefix('torch.')}` tensor of {s.numel()}")
rec.setup(
    "import torch",
    "state = torch.get_rng_state()",
    "first = torch.rand(3)",
    "torch.set_rng_state(state)",
)
rec.value(
    "rng_state_restored",
    "torch.equal(first, torch.rand(3))",
    show=same("the same numbers", "other numbers"),
)

# --- Label smoothing (the paper's recipe) ------------------------------------------------
# The logits and targets of `chapter16::recipe::LABEL_SMOOTHING_EXAMPLE`, whose smoothed
# loss the tour prints and `chapters/chapter16/tests/recipe.rs` compares with this value.

rec.setup(
    "import torch",
    "import torch.nn.functional as F",
    "z = torch.tensor([[2.0, 0.0, -1.0], [0.5, 0.5, 3.0]])",
    "t = torch.tensor([0, 1])",
)
rec.value(
    "label_smoothing_value",
    "F.cross_entropy(z, t, label_smoothing=0.1).item()",
    show=lambda v: f"{v:.4f}",
)
rec.value(
    "label_smoothing_mixture",
    "torch.allclose(F.cross_entropy(z, t, label_smoothing=0.1),"
    " 0.9 * F.cross_entropy(z, t) + 0.1 * (-F.log_softmax(z, -1).mean()))",
    show=same("0.9 times the cross-entropy plus 0.1 times the mean over classes of",
              "something else than the mixture"),
)

rec.write()
