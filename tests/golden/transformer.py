"""Reference values for Transformer encoder and decoder layers, computed with PyTorch.

Regenerate with `python3 tests/golden/transformer.py` (from anywhere). It rewrites
`transformer.json` next to this file; everything is computed in float64 from fixed seeds, so
the file only changes when this script does. Read by `tests/attention/transformer_parity.rs`.

The layers are PyTorch's own `nn.TransformerEncoderLayer` and `nn.TransformerDecoderLayer`
(`batch_first=True`, `dropout=0.0`, `bias=True`, `layer_norm_eps=1e-5`, `d_model=8`,
`nhead=2`, `dim_feedforward=12`), each in four forms: post-norm and pre-norm
(`norm_first`), with ReLU or the exact (erf) GELU. Batch 2, source length 5, target
length 4. Every parameter is overwritten with float32-exact random values (LayerNorm
weights near 1 and biases near 0, so they matter). The masks come from valid lengths:
source [5, 3] (`src_key_padding_mask`, `memory_key_padding_mask`), target [4, 2]
(`tgt_key_padding_mask`), and the decoder's self-attention is causal as well (`tgt_mask`).
A padded position is masked as a key only: its query row is still computed, and is finite.

The modules run in training mode: with dropout 0 it is the same computation as evaluation
mode (checked), and it never takes PyTorch's fused inference path. Each layer is also
checked against a plain-operations version of the same formulas (`encoder_reference`,
`decoder_reference` below).

Each case holds the configuration, the `state_dict()` under PyTorch's own names, the inputs,
the valid lengths, the upstream gradient, the output, and the gradients of
`sum(output * upstream)` with respect to every input and every parameter. Inputs and
parameters are rounded to float32 first, so the engine starts from exactly the numbers
PyTorch saw. Values are stored with 9 significant digits (enough to give back every float32
exactly).
"""

import json
import math
import pathlib

import torch
from torch import nn

torch.set_default_dtype(torch.float64)
OUT = pathlib.Path(__file__).with_name("transformer.json")

D_MODEL, NHEAD, DIM_FEEDFORWARD, EPS = 8, 2, 12, 1e-5
BATCH, SRC_LEN, TGT_LEN = 2, 5, 4
SRC_LENGTHS, TGT_LENGTHS = [5, 3], [4, 2]
FORMS = [(False, "relu"), (True, "relu"), (False, "gelu"), (True, "gelu")]


# ---------------------------------------------------------------------------------------
# Storage helpers
# ---------------------------------------------------------------------------------------


# The storage helpers are attention.py's (importing it runs nothing; it sets float64 as
# the default dtype, as this script does too).
from attention import close, dumps, f32, leaf, rand, t  # noqa: E402


def randomize(layer):
    """Float32-exact random values for every parameter: weights N(0, 0.5^2), biases
    N(0, 0.1^2), LayerNorm weights 1 + N(0, 0.1^2)."""
    with torch.no_grad():
        for name, p in layer.named_parameters():
            if name.startswith("norm") and name.endswith("weight"):
                p.copy_(f32(1.0 + 0.1 * torch.randn(*p.shape)))
            elif name.endswith("weight"):
                p.copy_(rand(*p.shape, scale=0.5))
            else:
                p.copy_(rand(*p.shape, scale=0.1))
    return layer


def padding_mask(lengths, length):
    """PyTorch's key padding mask: True where the position is at or past the valid length."""
    return torch.arange(length).reshape(1, length) >= torch.tensor(lengths).reshape(-1, 1)


# ---------------------------------------------------------------------------------------
# The same layers written with plain operations
# ---------------------------------------------------------------------------------------


def linear(x, p, name):
    return x @ p[f"{name}.weight"].T + p[f"{name}.bias"]


def layer_norm(x, p, name):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + EPS) * p[f"{name}.weight"] + p[f"{name}.bias"]


def activate(x, activation):
    if activation == "relu":
        return torch.clamp(x, min=0.0)
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def attention(queries, keys, p, name, keep):
    """Multi-head attention with packed `in_proj_*`; `keep` `[B or 1, Q or 1, K]`."""
    w_q, w_k, w_v = p[f"{name}.in_proj_weight"].chunk(3)
    b_q, b_k, b_v = p[f"{name}.in_proj_bias"].chunk(3)

    def heads(x, w, b):
        batch, length, _ = x.shape
        return (x @ w.T + b).reshape(batch, length, NHEAD, -1).transpose(1, 2)

    q, k, v = heads(queries, w_q, b_q), heads(keys, w_k, b_k), heads(keys, w_v, b_v)
    scores = q @ k.transpose(-2, -1) / math.sqrt(D_MODEL // NHEAD)
    weights = torch.softmax(scores.masked_fill(~keep.unsqueeze(1), float("-inf")), dim=-1)
    out = (weights @ v).transpose(1, 2).reshape(queries.shape)
    return linear(out, p, f"{name}.out_proj")


def feed_forward(x, p, activation):
    return linear(activate(linear(x, p, "linear1"), activation), p, "linear2")


def encoder_reference(p, src, src_keep, activation, norm_first):
    x = src
    if norm_first:
        h = layer_norm(x, p, "norm1")
        x = x + attention(h, h, p, "self_attn", src_keep)
        return x + feed_forward(layer_norm(x, p, "norm2"), p, activation)
    x = layer_norm(x + attention(x, x, p, "self_attn", src_keep), p, "norm1")
    return layer_norm(x + feed_forward(x, p, activation), p, "norm2")


def decoder_reference(p, tgt, memory, tgt_keep, memory_keep, activation, norm_first):
    x = tgt
    if norm_first:
        h = layer_norm(x, p, "norm1")
        x = x + attention(h, h, p, "self_attn", tgt_keep)
        x = x + attention(layer_norm(x, p, "norm2"), memory, p, "multihead_attn", memory_keep)
        return x + feed_forward(layer_norm(x, p, "norm3"), p, activation)
    x = layer_norm(x + attention(x, x, p, "self_attn", tgt_keep), p, "norm1")
    x = layer_norm(x + attention(x, memory, p, "multihead_attn", memory_keep), p, "norm2")
    return layer_norm(x + feed_forward(x, p, activation), p, "norm3")


# ---------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------


def config(activation, norm_first):
    return {
        "d_model": D_MODEL,
        "nhead": NHEAD,
        "dim_feedforward": DIM_FEEDFORWARD,
        "activation": activation,
        "norm_first": norm_first,
        "layer_norm_eps": EPS,
    }


def record(name, kind, layer, inputs, lengths, forward, reference, activation, norm_first):
    """Runs `forward` in training and evaluation mode (with dropout 0 they must agree),
    checks it against `reference`, and records the case with its gradients."""
    layer.eval()
    eval_output = forward()
    layer.train()
    output = forward()
    assert torch.equal(output, eval_output), name
    params = dict(layer.named_parameters())
    assert close(reference(params), output), name
    assert torch.isfinite(output).all(), name
    upstream = rand(*output.shape)
    named = {**inputs, **params}
    grads = torch.autograd.grad(output, list(named.values()), grad_outputs=upstream)
    for key, g in zip(named, grads):
        assert g is not None and torch.isfinite(g).all(), (name, key)
    state_dict = layer.state_dict()
    assert list(state_dict) == list(params), name
    return {
        "name": name,
        "kind": kind,
        "config": config(activation, norm_first),
        "state_dict": {k: t(v) for k, v in state_dict.items()},
        "inputs": {k: t(v) for k, v in inputs.items()},
        "lengths": lengths,
        "upstream": t(upstream),
        "output": t(output),
        "grads": {k: t(g) for k, g in zip(named, grads)},
    }


def form_name(kind, norm_first, activation):
    return f"{kind}_{'pre' if norm_first else 'post'}_{activation}"


def encoder_cases():
    cases = []
    src_padding = padding_mask(SRC_LENGTHS, SRC_LEN)
    for seed, (norm_first, activation) in enumerate(FORMS, start=1000):
        torch.manual_seed(seed)
        layer = nn.TransformerEncoderLayer(
            D_MODEL,
            NHEAD,
            DIM_FEEDFORWARD,
            dropout=0.0,
            activation=activation,
            layer_norm_eps=EPS,
            batch_first=True,
            norm_first=norm_first,
            bias=True,
        )
        randomize(layer)
        inputs = {"src": leaf(BATCH, SRC_LEN, D_MODEL)}

        def forward(layer=layer, inputs=inputs):
            return layer(inputs["src"], src_key_padding_mask=src_padding)

        def reference(p, inputs=inputs, activation=activation, norm_first=norm_first):
            src_keep = (~src_padding).unsqueeze(1)
            return encoder_reference(p, inputs["src"], src_keep, activation, norm_first)

        cases.append(
            record(
                form_name("encoder", norm_first, activation),
                "encoder",
                layer,
                inputs,
                {"src": SRC_LENGTHS},
                forward,
                reference,
                activation,
                norm_first,
            )
        )
    return cases


def decoder_cases():
    cases = []
    tgt_padding = padding_mask(TGT_LENGTHS, TGT_LEN)
    memory_padding = padding_mask(SRC_LENGTHS, SRC_LEN)
    # True = masked, as the padding masks (a float -inf mask gives the same numbers, but
    # mixing mask types is deprecated).
    causal = torch.ones(TGT_LEN, TGT_LEN, dtype=torch.bool).triu(1)
    for seed, (norm_first, activation) in enumerate(FORMS, start=1100):
        torch.manual_seed(seed)
        layer = nn.TransformerDecoderLayer(
            D_MODEL,
            NHEAD,
            DIM_FEEDFORWARD,
            dropout=0.0,
            activation=activation,
            layer_norm_eps=EPS,
            batch_first=True,
            norm_first=norm_first,
            bias=True,
        )
        randomize(layer)
        inputs = {
            "tgt": leaf(BATCH, TGT_LEN, D_MODEL),
            "memory": leaf(BATCH, SRC_LEN, D_MODEL),
        }

        def forward(layer=layer, inputs=inputs, is_causal=False):
            return layer(
                inputs["tgt"],
                inputs["memory"],
                tgt_mask=causal,
                tgt_key_padding_mask=tgt_padding,
                memory_key_padding_mask=memory_padding,
                tgt_is_causal=is_causal,
            )

        # The causal hint changes nothing here.
        assert torch.equal(forward(), forward(is_causal=True))

        def reference(p, inputs=inputs, activation=activation, norm_first=norm_first):
            tgt_keep = ~causal.unsqueeze(0) & (~tgt_padding).unsqueeze(1)
            memory_keep = (~memory_padding).unsqueeze(1)
            return decoder_reference(
                p, inputs["tgt"], inputs["memory"], tgt_keep, memory_keep, activation, norm_first
            )

        cases.append(
            record(
                form_name("decoder", norm_first, activation),
                "decoder",
                layer,
                inputs,
                {"tgt": TGT_LENGTHS, "memory": SRC_LENGTHS},
                forward,
                reference,
                activation,
                norm_first,
            )
        )
    return cases


# ---------------------------------------------------------------------------------------


def main():
    cases = encoder_cases() + decoder_cases()
    meta = {
        "generator": "tests/golden/transformer.py",
        "torch_version": torch.__version__.split("+")[0],
        "dtype": "float64",
        "cases": len(cases),
    }
    OUT.write_text(dumps({"meta": meta, "cases": cases}) + "\n")


if __name__ == "__main__":
    main()
