"""Reference values for the `attention` crate, computed with PyTorch.

Regenerate with `python3 tests/golden/attention.py` (from anywhere). It rewrites
`attention.json` next to this file; everything is computed in float64 from fixed seeds, so
the file only changes when this script does. Read by `tests/attention/parity.rs`.

The references are written the way their sources write them:
- d2l's `masked_softmax`, `AdditiveAttention`, `DotProductAttention` and
  `MultiHeadAttention` (PyTorch edition), copied with dropout 0. d2l builds its layers with
  `nn.LazyLinear`; here the input sizes are given (`nn.Linear`), so the weights can be set
  before the first call. The computation is the same.
- The first article's single-query additive attention (`BahdanauAttention`: biases, a score
  vector `v`, a value projection `W_o` after pooling, masked scores at -1e9) and its
  multi-head form (independent heads, contexts concatenated, one more `W_o`).
- The safe fill policy: masked scores at -inf, then fully masked rows set to 0, as
  PyTorch's `_safe_softmax` does.
- Causal multi-head self-attention, checked against `F.scaled_dot_product_attention`.
- `torch.nn.MultiheadAttention` itself, as an independent check of the d2l layout.
- Two state dicts under PyTorch's own names, which the Rust modules load as they are: the
  first article's single-query module written with its names (`query_proj`, `key_proj`,
  `value_proj`, `v`), and `nn.MultiheadAttention(embed_dim, num_heads, bias=True,
  batch_first=True)` (`in_proj_weight`, `in_proj_bias`, `out_proj.*`). These cases store
  `state_dict` instead of `params`, and the gradients of the inputs only.

Each case holds its inputs, parameters (named as PyTorch's `named_parameters()` names them,
which the Rust modules follow), the mask and fill policy, the upstream gradients, the
outputs, the attention weights, and the gradients of
`sum(output * upstream.output) [+ sum(weights * upstream.weights)]` with respect to every
input and every parameter. Inputs and parameters are rounded to float32 first, so the engine
starts from exactly the numbers PyTorch saw. Values are stored with 9 significant digits
(enough to give back every float32 exactly).
"""

import json
import math
import pathlib

import torch
import torch.nn.functional as F
from torch import nn

torch.set_default_dtype(torch.float64)
OUT = pathlib.Path(__file__).with_name("attention.json")

D2L_FILL = -1e6
ARTICLE_FILL = -1e9


# ---------------------------------------------------------------------------------------
# Storage helpers
# ---------------------------------------------------------------------------------------


def t(x):
    x = x.detach().double()
    return {"shape": list(x.shape), "data": [float(f"{v:.9g}") for v in x.reshape(-1).tolist()]}


def f32(x):
    """`x` rounded to float32 (and held as float64), so the engine can represent it exactly."""
    return x.float().double()


def rand(*shape, scale=1.0):
    return f32(torch.randn(*shape) * scale)


def leaf(*shape, scale=1.0):
    return rand(*shape, scale=scale).requires_grad_()


def set_linear(layer, scale=0.5):
    """Overwrites a `Linear`'s weights with float32-exact random values."""
    with torch.no_grad():
        layer.weight.copy_(rand(*layer.weight.shape, scale=scale))
        if layer.bias is not None:
            layer.bias.copy_(rand(*layer.bias.shape, scale=scale))
    return layer


def close(a, b, tol=1e-10):
    return torch.allclose(a, b, atol=tol, rtol=tol)


def gradients(outputs, upstreams, named):
    """Gradients of sum(output * upstream) over the given pairs, for each named tensor."""
    grads = torch.autograd.grad(
        outputs, list(named.values()), grad_outputs=upstreams, retain_graph=True
    )
    for name, g in zip(named, grads):
        assert g is not None, f"no gradient for {name}"
        assert torch.isfinite(g).all(), f"non-finite gradient for {name}"
    return {name: t(g) for name, g in zip(named, grads)}


def fill_spec(policy):
    """JSON for a fill policy: "d2l", "safe", "default" (the Rust default, safe) or a number."""
    if isinstance(policy, float):
        return {"policy": "constant", "value": policy}
    return {"policy": policy}


# ---------------------------------------------------------------------------------------
# Masks and softmax policies
# ---------------------------------------------------------------------------------------


def mask_spec(kind, tensor=None, offset=0):
    if kind == "none":
        return {"kind": "none"}
    if kind == "valid_lens":
        return {"kind": "valid_lens", "lens": t(tensor)}
    if kind == "keep":
        return {"kind": "keep", "keep": t(tensor)}
    if kind == "causal":
        return {"kind": "causal", "offset": offset}
    raise ValueError(kind)


def keep_of(kind, shape, tensor=None, offset=0):
    """The boolean keep mask for scores `[B, ..., Q, K]`, broadcastable to them."""
    q, k = shape[-2], shape[-1]
    if kind == "none":
        return torch.ones(q, k, dtype=torch.bool)
    if kind == "valid_lens":
        positions = torch.arange(k, dtype=torch.float64)
        lens = tensor
        if lens.dim() == 1:
            lens = lens.reshape(-1, *([1] * (len(shape) - 1)))
        else:
            lens = lens.reshape(lens.shape[0], *([1] * (len(shape) - 3)), q, 1)
        return positions < lens
    if kind == "keep":
        return tensor != 0
    if kind == "causal":
        rows = torch.arange(q).reshape(q, 1) + offset
        return torch.arange(k).reshape(1, k) <= rows
    raise ValueError(kind)


# d2l, "Attention Scoring Functions" (PyTorch), copied as written.
def _sequence_mask(X, valid_len, value=0):
    """Mask irrelevant entries in sequences."""
    maxlen = X.size(1)
    mask = torch.arange((maxlen), dtype=torch.float32, device=X.device)[None, :] < valid_len[:, None]
    X[~mask] = value
    return X


def masked_softmax(X, valid_lens):
    """Perform softmax operation by masking elements on the last axis."""
    # X: 3D tensor, valid_lens: 1D or 2D tensor
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    else:
        shape = X.shape
        if valid_lens.dim() == 1:
            valid_lens = torch.repeat_interleave(valid_lens, shape[1])
        else:
            valid_lens = valid_lens.reshape(-1)
        # On the last axis, replace masked elements with a very large negative
        # value, whose exponentiation outputs 0
        X = _sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
        return nn.functional.softmax(X.reshape(shape), dim=-1)


def filled_softmax(scores, keep, value):
    """`scores.masked_fill(mask == 0, value)` then softmax: the article's form."""
    return torch.softmax(scores.masked_fill(~keep, value), dim=-1)


def safe_softmax(scores, keep):
    """Masked scores at -inf; a fully masked row becomes all zeros instead of NaN."""
    probs = torch.softmax(scores.masked_fill(~keep, float("-inf")), dim=-1)
    all_masked = (~keep).expand(scores.shape).all(dim=-1, keepdim=True)
    return torch.where(all_masked, torch.zeros_like(probs), probs)


def policy_softmax(scores, keep, policy):
    if policy == "d2l":
        return filled_softmax(scores, keep, D2L_FILL)
    if policy in ("safe", "default"):
        return safe_softmax(scores, keep)
    return filled_softmax(scores, keep, policy)


# ---------------------------------------------------------------------------------------
# (a) masked softmax: every mask kind x every fill policy
# ---------------------------------------------------------------------------------------

MASKS = {
    # kind, scores shape, mask tensor, offset
    "none": ("none", (3, 3, 4), None, 0),
    # example 1 has length 0 (fully masked), example 2 a length past K (clamped)
    "valid_lens_per_example": ("valid_lens", (3, 3, 4), torch.tensor([2.0, 0.0, 6.0]), 0),
    "valid_lens_per_query": (
        "valid_lens",
        (3, 3, 4),
        torch.tensor([[1.0, 2.0, 3.0], [0.0, 4.0, 2.0], [5.0, 1.0, 0.0]]),
        0,
    ),
    "keep_full": (
        "keep",
        (3, 3, 4),
        torch.tensor(
            [
                [[1.0, 0, 1, 1], [0, 0, 0, 0], [1, 1, 0, 0]],
                [[0, 1, 0, 1], [1, 1, 1, 1], [0, 0, 1, 0]],
                [[1, 0, 0, 0], [0, 1, 1, 0], [1, 1, 1, 0]],
            ]
        ),
        0,
    ),
    "keep_broadcast": (
        "keep",
        (3, 3, 4),
        torch.tensor([[[1.0, 0, 1, 1]], [[1, 1, 0, 0]], [[0, 0, 0, 0]]]),
        0,
    ),
    "causal": ("causal", (3, 4, 4), None, 0),
    # three queries at positions 2, 3, 4 against five keys (two already cached)
    "causal_offset": ("causal", (3, 3, 5), None, 2),
}

FILLS = {"d2l": "d2l", "constant": ARTICLE_FILL, "safe": "safe"}


def masked_softmax_cases():
    cases = []
    seed = 100
    for mask_name, (kind, shape, tensor, offset) in MASKS.items():
        for fill_name, policy in FILLS.items():
            seed += 1
            torch.manual_seed(seed)
            scores = leaf(*shape, scale=2.0)
            keep = keep_of(kind, shape, tensor, offset)
            weights = policy_softmax(scores, keep, policy)
            if policy == "d2l" and kind in ("none", "valid_lens"):
                # d2l's own function takes these masks: it must agree.
                d2l = masked_softmax(scores.clone(), tensor)
                assert close(d2l, weights), (mask_name, "d2l")
            if policy == "safe":
                # PyTorch's own safe softmax on the -inf-filled scores.
                filled = scores.masked_fill(~keep, float("-inf"))
                assert close(torch._safe_softmax(filled, -1), weights), mask_name
                fully_masked = ~keep.expand(shape).any(-1)
                assert (weights[fully_masked] == 0).all()
            upstream = rand(*shape)
            cases.append(
                {
                    "name": f"{mask_name}/{fill_name}",
                    "mask": mask_spec(kind, tensor, offset),
                    "fill": fill_spec(policy),
                    "inputs": {"scores": t(scores)},
                    "upstream": {"weights": t(upstream)},
                    "weights": t(weights),
                    "grads": gradients(weights, upstream, {"scores": scores}),
                }
            )
    return cases


# ---------------------------------------------------------------------------------------
# (b) d2l AdditiveAttention
# ---------------------------------------------------------------------------------------


class AdditiveAttention(nn.Module):
    """Additive attention (d2l)."""

    def __init__(self, query_size, key_size, num_hiddens, dropout, **kwargs):
        super().__init__(**kwargs)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        queries, keys = self.W_q(queries), self.W_k(keys)
        # After dimension expansion, shape of queries: (batch_size, no. of
        # queries, 1, num_hiddens) and shape of keys: (batch_size, 1, no. of
        # key-value pairs, num_hiddens). Sum them up with broadcasting
        features = queries.unsqueeze(2) + keys.unsqueeze(1)
        features = torch.tanh(features)
        # There is only one output of self.w_v, so we remove the last
        # one-dimensional entry from the shape. Shape of scores: (batch_size,
        # no. of queries, no. of key-value pairs)
        scores = self.w_v(features).squeeze(-1)
        self.attention_weights = masked_softmax(scores, valid_lens)
        # Shape of values: (batch_size, no. of key-value pairs, value
        # dimension)
        return torch.bmm(self.dropout(self.attention_weights), values)


def run_forward(module, forward):
    """Runs `forward(module) -> (output, weights, differentiable_weights)` and draws the
    upstream gradients: the output's, and the weights' when they are part of the graph.
    Returns the output, the weights, the tensors and upstreams to differentiate, and the
    upstreams as recorded."""
    output, weights, weights_in_graph = forward(module)
    up_output = rand(*output.shape)
    outputs, upstreams = [output], [up_output]
    upstream = {"output": t(up_output)}
    if weights_in_graph:
        up_weights = rand(*weights.shape)
        outputs.append(weights)
        upstreams.append(up_weights)
        upstream["weights"] = t(up_weights)
    return output, weights, outputs, upstreams, upstream


def module_case(name, module, inputs, mask, fill, forward, extra_config=None):
    """Runs `forward(module) -> (output, weights, differentiable_weights)` and records it."""
    output, weights, outputs, upstreams, upstream = run_forward(module, forward)
    params = dict(module.named_parameters())
    case = {
        "name": name,
        "config": extra_config or {},
        "mask": mask,
        "fill": fill_spec(fill),
        "inputs": {k: t(v) for k, v in inputs.items()},
        "params": {k: t(v) for k, v in params.items()},
        "upstream": upstream,
        "output": t(output),
        "weights": t(weights),
        "grads": gradients(outputs, upstreams, {**inputs, **params}),
    }
    return case


def additive_cases():
    cases = []
    b, q, k, query_size, key_size, hidden, dv = 2, 3, 5, 4, 6, 7, 3
    lens_cases = {
        "valid_lens_per_example": torch.tensor([2.0, 7.0]),
        "valid_lens_per_query": torch.tensor([[1.0, 0.0, 5.0], [4.0, 2.0, 6.0]]),
    }
    for seed, (name, lens) in enumerate(lens_cases.items(), start=200):
        torch.manual_seed(seed)
        module = AdditiveAttention(query_size, key_size, hidden, dropout=0.0)
        for layer in (module.W_q, module.W_k, module.w_v):
            set_linear(layer)
        inputs = {
            "queries": leaf(b, q, query_size),
            "keys": leaf(b, k, key_size),
            "values": leaf(b, k, dv),
        }

        def forward(m, inputs=inputs, lens=lens):
            out = m(inputs["queries"], inputs["keys"], inputs["values"], lens)
            return out, m.attention_weights, False

        cases.append(
            module_case(
                name, module, inputs, mask_spec("valid_lens", lens), "d2l", forward
            )
        )
    return cases


# ---------------------------------------------------------------------------------------
# (c) single-query additive attention (the first article) and (g) its multi-head form
# ---------------------------------------------------------------------------------------


class BahdanauAttention(nn.Module):
    """score(q, k) = v . f(W_q q + W_k k), f = tanh unless given; the context is projected
    by W_o."""

    def __init__(self, query_size, key_size, value_size, hidden, fill=ARTICLE_FILL, activation=torch.tanh):
        super().__init__()
        self.activation = activation
        self.W_q = nn.Linear(query_size, hidden)
        self.W_k = nn.Linear(key_size, hidden)
        bound = 1.0 / math.sqrt(hidden)
        self.v = nn.Parameter(torch.empty(hidden).uniform_(-bound, bound))
        self.W_o = nn.Linear(value_size, value_size)
        self.fill = fill

    def forward(self, query, keys, values, mask=None):
        # query: [B, query_size]; keys: [B, K, key_size]; values: [B, K, value_size]
        scores = self.activation(self.W_q(query).unsqueeze(1) + self.W_k(keys)) @ self.v  # [B, K]
        if self.fill in ("safe", "default"):
            keep = torch.ones_like(scores, dtype=torch.bool) if mask is None else mask != 0
            weights = safe_softmax(scores, keep)
        else:
            if mask is not None:
                scores = scores.masked_fill(mask == 0, self.fill)
            weights = torch.softmax(scores, dim=-1)
        context = torch.bmm(weights.unsqueeze(1), values).squeeze(1)
        return self.W_o(context), weights


class MultiHeadAdditiveAttention(nn.Module):
    """Independent additive heads of hidden size hidden / heads; contexts concatenated."""

    def __init__(self, query_size, key_size, value_size, hidden, num_heads, fill=ARTICLE_FILL):
        super().__init__()
        self.heads = nn.ModuleList(
            BahdanauAttention(query_size, key_size, value_size, hidden // num_heads, fill)
            for _ in range(num_heads)
        )
        self.W_o = nn.Linear(num_heads * value_size, value_size)

    def forward(self, query, keys, values, mask=None):
        contexts, weights = zip(*(head(query, keys, values, mask) for head in self.heads))
        return self.W_o(torch.cat(contexts, dim=-1)), torch.stack(weights, dim=1)


def randomize(module, scale=0.5):
    """Float32-exact random values for every parameter."""
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(rand(*p.shape, scale=scale))
    return module


KEEP_BK = torch.tensor([[1.0, 1, 0, 1], [1, 0, 0, 0], [1, 1, 1, 1]])
LENS_WITH_EMPTY = torch.tensor([2.0, 0.0, 6.0])


def bahdanau_cases():
    b, k, query_size, key_size, value_size, hidden = 3, 4, 5, 3, 4, 6
    variants = [
        # name, mask kind, mask tensor, fill
        ("keep_mask_article_fill", "keep", KEEP_BK, ARTICLE_FILL),
        ("keep_mask_default_fill", "keep", KEEP_BK, "default"),
        ("valid_lens_with_empty_example_safe_fill", "valid_lens", LENS_WITH_EMPTY, "safe"),
        ("valid_lens_with_empty_example_article_fill", "valid_lens", LENS_WITH_EMPTY, ARTICLE_FILL),
        ("no_mask", "none", None, "default"),
        # ReLU in the energies (a config setting of the library's additive modules).
        ("relu_energies_keep_mask_default_fill", "keep", KEEP_BK, "default"),
    ]
    cases = []
    for name, kind, tensor, fill in variants:
        # One seed for all variants: the same module and inputs under each mask and fill.
        torch.manual_seed(300)
        relu = name.startswith("relu")
        activation = torch.relu if relu else torch.tanh
        module = randomize(
            BahdanauAttention(query_size, key_size, value_size, hidden, fill, activation)
        )
        inputs = {
            "query": leaf(b, query_size),
            "keys": leaf(b, k, key_size),
            "values": leaf(b, k, value_size),
        }
        keep = None if kind == "none" else keep_of(kind, (b, 1, k), tensor).reshape(b, k)

        def forward(m, inputs=inputs, keep=keep):
            mask = None if keep is None else keep.double()
            context, weights = m(inputs["query"], inputs["keys"], inputs["values"], mask)
            return context, weights, True

        cases.append(
            module_case(
                name,
                module,
                inputs,
                mask_spec(kind, tensor),
                fill,
                forward,
                {"hidden": hidden, "activation": "relu" if relu else "tanh"},
            )
        )
    by_name = {c["name"]: c for c in cases}
    # ReLU gives other weights than tanh on the same module and inputs.
    assert by_name["relu_energies_keep_mask_default_fill"]["weights"] != by_name["keep_mask_default_fill"]["weights"]
    # No example is fully masked: the safe fill gives the article's numbers.
    assert by_name["keep_mask_article_fill"]["output"] == by_name["keep_mask_default_fill"]["output"]
    # An empty example: the safe fill gives zero weights, the article's fill uniform ones.
    safe = by_name["valid_lens_with_empty_example_safe_fill"]["weights"]["data"]
    article = by_name["valid_lens_with_empty_example_article_fill"]["weights"]["data"]
    assert safe[k : 2 * k] == [0.0] * k and article[k : 2 * k] == [1.0 / k] * k
    return cases


def multi_head_additive_cases():
    b, k, query_size, key_size, value_size, hidden, heads = 2, 5, 5, 4, 3, 6, 3
    variants = [
        ("keep_mask_article_fill", "keep", torch.tensor([[1.0, 1, 1, 0, 0], [1, 0, 1, 1, 1]]), ARTICLE_FILL),
        ("valid_lens_with_empty_example_default_fill", "valid_lens", torch.tensor([3.0, 0.0]), "default"),
    ]
    cases = []
    for seed, (name, kind, tensor, fill) in enumerate(variants, start=700):
        torch.manual_seed(seed)
        module = randomize(
            MultiHeadAdditiveAttention(query_size, key_size, value_size, hidden, heads, fill)
        )
        inputs = {
            "query": leaf(b, query_size),
            "keys": leaf(b, k, key_size),
            "values": leaf(b, k, value_size),
        }
        keep = keep_of(kind, (b, 1, k), tensor).reshape(b, k)

        def forward(m, inputs=inputs, keep=keep):
            context, weights = m(inputs["query"], inputs["keys"], inputs["values"], keep.double())
            return context, weights, True

        cases.append(
            module_case(
                name,
                module,
                inputs,
                mask_spec(kind, tensor),
                fill,
                forward,
                {"num_heads": heads, "hidden": hidden},
            )
        )
    return cases


# ---------------------------------------------------------------------------------------
# (d) scaled dot-product attention
# ---------------------------------------------------------------------------------------


class DotProductAttention(nn.Module):
    """Scaled dot product attention (d2l)."""

    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    # Shape of queries: (batch_size, no. of queries, d)
    # Shape of keys: (batch_size, no. of key-value pairs, d)
    # Shape of values: (batch_size, no. of key-value pairs, value dimension)
    # Shape of valid_lens: (batch_size,) or (batch_size, no. of queries)
    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        # Swap the last two dimensions of keys with keys.transpose(1, 2)
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


def sdpa_cases():
    variants = [
        # name, q shape, k shape, v shape, mask kind, mask tensor, fill, scale
        ("no_mask_heads_as_leading_dim", (2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 3), "none", None, "default", None),
        ("valid_lens_d2l", (2, 3, 4), (2, 5, 4), (2, 5, 3), "valid_lens", torch.tensor([2.0, 4.0]), "d2l", None),
        ("causal", (2, 4, 4), (2, 4, 4), (2, 4, 3), "causal", None, "default", None),
        ("explicit_scale", (2, 3, 4), (2, 5, 4), (2, 5, 2), "none", None, "default", 0.3),
    ]
    cases = []
    for seed, (name, qs, ks, vs, kind, tensor, fill, scale) in enumerate(variants, start=400):
        torch.manual_seed(seed)
        q, k, v = leaf(*qs), leaf(*ks), leaf(*vs)
        keep = keep_of(kind, qs[:-1] + (ks[-2],), tensor)
        s = 1.0 / math.sqrt(qs[-1]) if scale is None else scale
        if kind == "valid_lens" and fill == "d2l":
            attention = DotProductAttention(dropout=0.0)
            output = attention(q, k, v, tensor)
            weights = attention.attention_weights
        else:
            weights = policy_softmax(q @ k.transpose(-2, -1) * s, keep, fill)
            output = weights @ v
        # PyTorch's fused function must agree (no row here is fully masked).
        attn_mask = None if kind in ("none", "causal") else keep
        torch_out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=attn_mask, is_causal=kind == "causal", scale=scale
        )
        assert close(torch_out, output), name
        up_output, up_weights = rand(*output.shape), rand(*weights.shape)
        named = {"queries": q, "keys": k, "values": v}
        cases.append(
            {
                "name": name,
                "config": {"scale": scale},
                "mask": mask_spec(kind, tensor),
                "fill": fill_spec(fill),
                "inputs": {n: t(x) for n, x in named.items()},
                "upstream": {"output": t(up_output), "weights": t(up_weights)},
                "output": t(output),
                "weights": t(weights),
                # The function returns the weights in the graph: both upstreams.
                "grads": gradients([output, weights], [up_output, up_weights], named),
                # The module keeps detached weights: the output's upstream only.
                "module_grads": gradients(output, up_output, named),
            }
        )
    return cases


# ---------------------------------------------------------------------------------------
# (e) d2l MultiHeadAttention and (f) torch.nn.MultiheadAttention
# ---------------------------------------------------------------------------------------


class MultiHeadAttention(nn.Module):
    """Multi-head attention (d2l)."""

    def __init__(self, query_size, key_size, value_size, num_hiddens, num_heads, dropout, bias=False, **kwargs):
        super().__init__()
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=bias)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=bias)
        self.W_v = nn.Linear(value_size, num_hiddens, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)

    def forward(self, queries, keys, values, valid_lens, repeat=torch.repeat_interleave):
        # Shape of queries, keys, or values:
        # (batch_size, no. of queries or key-value pairs, num_hiddens)
        # Shape of valid_lens: (batch_size,) or (batch_size, no. of queries)
        # After transposing, shape of output queries, keys, or values:
        # (batch_size * num_heads, no. of queries or key-value pairs,
        # num_hiddens / num_heads)
        queries = self.transpose_qkv(self.W_q(queries))
        keys = self.transpose_qkv(self.W_k(keys))
        values = self.transpose_qkv(self.W_v(values))

        if valid_lens is not None:
            # On axis 0, copy the first item (scalar or vector) for num_heads
            # times, then copy the next item, and so on
            valid_lens = repeat(valid_lens, repeats=self.num_heads, dim=0)

        # Shape of output: (batch_size * num_heads, no. of queries,
        # num_hiddens / num_heads)
        output = self.attention(queries, keys, values, valid_lens)
        # Shape of output_concat: (batch_size, no. of queries, num_hiddens)
        output_concat = self.transpose_output(output)
        return self.W_o(output_concat)

    def transpose_qkv(self, X):
        """Transposition for parallel computation of multiple attention heads."""
        # Shape of input X: (batch_size, no. of queries or key-value pairs,
        # num_hiddens). Shape of output X: (batch_size, no. of queries or
        # key-value pairs, num_heads, num_hiddens / num_heads)
        X = X.reshape(X.shape[0], X.shape[1], self.num_heads, -1)
        # Shape of output X: (batch_size, num_heads, no. of queries or key-value
        # pairs, num_hiddens / num_heads)
        X = X.permute(0, 2, 1, 3)
        # Shape of output: (batch_size * num_heads, no. of queries or key-value
        # pairs, num_hiddens / num_heads)
        return X.reshape(-1, X.shape[2], X.shape[3])

    def transpose_output(self, X):
        """Reverse the operation of transpose_qkv."""
        X = X.reshape(-1, self.num_heads, X.shape[1], X.shape[2])
        X = X.permute(0, 2, 1, 3)
        return X.reshape(X.shape[0], X.shape[1], -1)


def tiled(valid_lens, repeats, dim):
    """The mistake the test must catch: [a, b] -> [a, b, a, b] instead of [a, a, b, b]."""
    return valid_lens.repeat(repeats, *([1] * (valid_lens.dim() - 1)))


def multi_head_cases():
    variants = [
        # name, B, Q, K, query/key/value sizes, hiddens, heads, bias, lens
        ("different_valid_lens_per_example", 3, 4, 5, (5, 6, 7), 8, 2, False, torch.tensor([1.0, 4.0, 3.0])),
        (
            "valid_lens_per_query_with_bias",
            2,
            3,
            4,
            (6, 6, 6),
            6,
            3,
            True,
            torch.tensor([[1.0, 2.0, 4.0], [3.0, 0.0, 2.0]]),
        ),
    ]
    cases = []
    for seed, (name, b, q, k, sizes, hiddens, heads, bias, lens) in enumerate(variants, start=500):
        torch.manual_seed(seed)
        module = randomize(MultiHeadAttention(*sizes, hiddens, heads, dropout=0.0, bias=bias))
        inputs = {
            "queries": leaf(b, q, sizes[0]),
            "keys": leaf(b, k, sizes[1]),
            "values": leaf(b, k, sizes[2]),
        }

        def forward(m, inputs=inputs, lens=lens, heads=heads):
            out = m(inputs["queries"], inputs["keys"], inputs["values"], lens)
            weights = m.attention.attention_weights
            return out, weights.reshape(-1, heads, *weights.shape[1:]), False

        case = module_case(
            name,
            module,
            inputs,
            mask_spec("valid_lens", lens),
            "d2l",
            forward,
            {"num_heads": heads, "num_hiddens": hiddens, "bias": bias},
        )
        # The case tells repeat_interleave from tiling.
        with torch.no_grad():
            wrong = module(inputs["queries"], inputs["keys"], inputs["values"], lens, repeat=tiled)
        assert not close(wrong, torch.tensor(case["output"]["data"]).reshape(wrong.shape), 1e-3)
        cases.append(case)
    return cases


def torch_multihead_cases():
    b, q, k, e, heads = 2, 3, 5, 8, 2
    torch.manual_seed(600)
    mha = nn.MultiheadAttention(e, heads, bias=False, batch_first=True, dropout=0.0)
    randomize(mha)
    # True = ignore this key (PyTorch's sense); no query is left without keys.
    key_padding_mask = torch.tensor(
        [[False, False, False, True, True], [False, True, False, False, True]]
    )
    inputs = {"queries": leaf(b, q, e), "keys": leaf(b, k, e), "values": leaf(b, k, e)}
    output, weights = mha(
        inputs["queries"],
        inputs["keys"],
        inputs["values"],
        key_padding_mask=key_padding_mask,
        need_weights=True,
        average_attn_weights=False,
    )
    w_q, w_k, w_v = mha.in_proj_weight.chunk(3, dim=0)
    # The d2l layout with the same weights gives the same numbers.
    d2l = MultiHeadAttention(e, e, e, e, heads, dropout=0.0)
    with torch.no_grad():
        for layer, w in zip((d2l.W_q, d2l.W_k, d2l.W_v, d2l.W_o), (w_q, w_k, w_v, mha.out_proj.weight)):
            layer.weight.copy_(w)
    up_output = rand(*output.shape)
    grads = torch.autograd.grad(
        output,
        [*inputs.values(), mha.in_proj_weight, mha.out_proj.weight],
        grad_outputs=up_output,
    )
    named_grads = dict(zip(inputs, grads[:3]))
    for name, g in zip(("W_q.weight", "W_k.weight", "W_v.weight"), grads[3].chunk(3, dim=0)):
        named_grads[name] = g
    named_grads["W_o.weight"] = grads[4]
    # Reference check through the safe softmax with the keep mask, in the d2l layout.
    keep = (~key_padding_mask).reshape(b, 1, k)
    qh = d2l.transpose_qkv(d2l.W_q(inputs["queries"]))
    kh = d2l.transpose_qkv(d2l.W_k(inputs["keys"]))
    vh = d2l.transpose_qkv(d2l.W_v(inputs["values"]))
    ref_weights = safe_softmax(
        qh @ kh.transpose(1, 2) / math.sqrt(e // heads), keep.repeat_interleave(heads, dim=0)
    )
    ref_output = d2l.W_o(d2l.transpose_output(ref_weights @ vh))
    assert close(ref_output, output) and close(ref_weights.reshape(b, heads, q, k), weights)
    return [
        {
            "name": "key_padding_mask",
            "config": {"num_heads": heads, "embed_dim": e},
            "key_padding_mask": t(key_padding_mask.double()),
            "mask": mask_spec("keep", keep.double()),
            "fill": fill_spec("default"),
            "inputs": {n: t(x) for n, x in inputs.items()},
            "params": {
                "W_q.weight": t(w_q),
                "W_k.weight": t(w_k),
                "W_v.weight": t(w_v),
                "W_o.weight": t(mha.out_proj.weight),
            },
            "upstream": {"output": t(up_output)},
            "output": t(output),
            "weights": t(weights),
            "grads": {n: t(g) for n, g in named_grads.items()},
        }
    ]


# ---------------------------------------------------------------------------------------
# (h) causal self-attention (full sequence; the Rust side also decodes with a KV cache)
# ---------------------------------------------------------------------------------------


class CausalSelfAttention(nn.Module):
    def __init__(self, num_hiddens, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.W_q = nn.Linear(num_hiddens, num_hiddens)
        self.W_k = nn.Linear(num_hiddens, num_hiddens)
        self.W_v = nn.Linear(num_hiddens, num_hiddens)
        self.W_o = nn.Linear(num_hiddens, num_hiddens)

    def heads(self, w, x):
        b, length, d = x.shape
        return w(x).reshape(b, length, self.num_heads, d // self.num_heads).transpose(1, 2)

    def forward(self, x):
        b, length, d = x.shape
        q, k, v = self.heads(self.W_q, x), self.heads(self.W_k, x), self.heads(self.W_v, x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.num_heads)
        causal = torch.ones(length, length, dtype=torch.bool).tril()
        weights = torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(b, length, d)
        # PyTorch's fused causal attention agrees.
        fused = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        assert close(fused.transpose(1, 2).reshape(b, length, d), out)
        self.attention_weights = weights
        return self.W_o(out)


def causal_self_attention_cases():
    b, d, heads, prompt, steps = 2, 8, 2, 3, 4
    torch.manual_seed(800)
    module = randomize(CausalSelfAttention(d, heads))
    inputs = {"x": leaf(b, prompt + steps, d)}

    def forward(m):
        return m(inputs["x"]), m.attention_weights, False

    config = {"num_heads": heads, "prompt_len": prompt, "decode_steps": steps}
    return [
        module_case(
            "prompt_then_decode", module, inputs, mask_spec("causal"), "default", forward, config
        )
    ]


# ---------------------------------------------------------------------------------------
# (i) state dicts under PyTorch's own names: the article's module and nn.MultiheadAttention
# ---------------------------------------------------------------------------------------


class ArticleAdditiveAttention(nn.Module):
    """The first article's single-query additive attention, with its parameter names.

    scores = v(tanh(query_proj(q) + key_proj(k))), masked at -1e9, softmax over the keys,
    context = sum_k weights_k * value_proj(values_k).
    """

    def __init__(self, query_size, key_size, value_size, hidden):
        super().__init__()
        self.query_proj = nn.Linear(query_size, hidden)
        self.key_proj = nn.Linear(key_size, hidden)
        self.value_proj = nn.Linear(value_size, value_size)
        self.v = nn.Linear(hidden, 1, bias=False)

    def forward(self, query, keys, values, mask=None):
        # query: [B, query_size]; keys: [B, K, key_size]; values: [B, K, value_size];
        # mask: [B, K], 1 = a real key
        features = torch.tanh(self.query_proj(query).unsqueeze(1) + self.key_proj(keys))
        scores = self.v(features).squeeze(-1)  # [B, K]
        if mask is not None:
            scores = scores.masked_fill(mask == 0, ARTICLE_FILL)
        weights = torch.softmax(scores, dim=-1)
        context = (weights.unsqueeze(-1) * self.value_proj(values)).sum(dim=1)
        return context, weights


def state_dict_case(name, module, inputs, forward, config, extra=None):
    """Runs `forward(module) -> (output, weights, differentiable_weights)` and records the
    module's `state_dict()` under its own names, with the gradients of the inputs."""
    output, weights, outputs, upstreams, upstream = run_forward(module, forward)
    return {
        "name": name,
        "config": config,
        **(extra or {}),
        "inputs": {k: t(v) for k, v in inputs.items()},
        "state_dict": {k: t(v) for k, v in module.state_dict().items()},
        "upstream": upstream,
        "output": t(output),
        "weights": t(weights),
        "grads": gradients(outputs, upstreams, inputs),
    }


def article_additive_cases():
    b, k, query_size, key_size, value_size, hidden = 3, 4, 5, 3, 4, 6
    torch.manual_seed(900)
    module = randomize(ArticleAdditiveAttention(query_size, key_size, value_size, hidden))
    inputs = {
        "query": leaf(b, query_size),
        "keys": leaf(b, k, key_size),
        "values": leaf(b, k, value_size),
    }
    # Every example keeps at least one key, so the weights sum to 1 and projecting the
    # values before pooling equals projecting the pooled vector (the Rust module's W_o).
    keep = KEEP_BK

    def forward(m):
        context, weights = m(inputs["query"], inputs["keys"], inputs["values"], keep)
        return context, weights, True

    # The same numbers as the module of (c), which pools first and projects after.
    pooled_first = BahdanauAttention(query_size, key_size, value_size, hidden)
    with torch.no_grad():
        for ours, theirs in (
            (pooled_first.W_q, module.query_proj),
            (pooled_first.W_k, module.key_proj),
            (pooled_first.W_o, module.value_proj),
        ):
            ours.weight.copy_(theirs.weight)
            ours.bias.copy_(theirs.bias)
        pooled_first.v.copy_(module.v.weight.reshape(-1))
    context, weights = module(inputs["query"], inputs["keys"], inputs["values"], keep)
    ref_context, ref_weights = pooled_first(inputs["query"], inputs["keys"], inputs["values"], keep)
    assert close(context, ref_context) and close(weights, ref_weights)
    case = state_dict_case(
        "article_names_keep_mask",
        module,
        inputs,
        forward,
        {"hidden": hidden},
        {"mask": mask_spec("keep", keep), "fill": fill_spec(ARTICLE_FILL)},
    )
    assert sorted(case["state_dict"]) == sorted(
        [
            "query_proj.weight",
            "query_proj.bias",
            "key_proj.weight",
            "key_proj.bias",
            "value_proj.weight",
            "value_proj.bias",
            "v.weight",
        ]
    )
    return [case]


def torch_multihead_state_dict_cases():
    b, q, k, e, heads = 2, 3, 4, 8, 2
    torch.manual_seed(950)
    mha = randomize(nn.MultiheadAttention(e, heads, bias=True, batch_first=True, dropout=0.0))
    # True = ignore this key (PyTorch's sense); no query is left without keys.
    key_padding_mask = torch.tensor([[False, False, True, False], [False, True, True, False]])
    inputs = {"queries": leaf(b, q, e), "keys": leaf(b, k, e), "values": leaf(b, k, e)}

    def forward(m):
        output, weights = m(
            inputs["queries"],
            inputs["keys"],
            inputs["values"],
            key_padding_mask=key_padding_mask,
            need_weights=True,
            average_attn_weights=False,
        )
        return output, weights, False

    case = state_dict_case(
        "in_proj_with_bias_key_padding_mask",
        mha,
        inputs,
        forward,
        {"num_heads": heads, "embed_dim": e, "bias": True},
        {"key_padding_mask": t(key_padding_mask.double())},
    )
    assert sorted(case["state_dict"]) == sorted(
        ["in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"]
    )
    return [case]


# ---------------------------------------------------------------------------------------


def main():
    families = {
        "masked_softmax": masked_softmax_cases(),
        "additive_attention": additive_cases(),
        "bahdanau_attention": bahdanau_cases(),
        "scaled_dot_product_attention": sdpa_cases(),
        "multi_head_attention": multi_head_cases(),
        "torch_multihead_attention": torch_multihead_cases(),
        "multi_head_additive_attention": multi_head_additive_cases(),
        "causal_self_attention": causal_self_attention_cases(),
        "article_additive_attention": article_additive_cases(),
        "torch_multihead_attention_state_dict": torch_multihead_state_dict_cases(),
    }
    meta = {
        "generator": "tests/golden/attention.py",
        "torch_version": torch.__version__.split("+")[0],
        "dtype": "float64",
        "cases": sum(len(c) for c in families.values()),
    }
    OUT.write_text(dumps({"meta": meta, **families}) + "\n")


def dumps(value, indent=0):
    """JSON with one line per tensor: nested objects are indented, number lists stay flat."""
    pad = "  " * (indent + 1)
    if isinstance(value, dict):
        if "data" in value and "shape" in value:
            return json.dumps(value)
        items = [f"{pad}{json.dumps(k)}: {dumps(v, indent + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + "  " * indent + "}"
    if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        items = [f"{pad}{dumps(v, indent + 1)}" for v in value]
        return "[\n" + ",\n".join(items) + "\n" + "  " * indent + "]"
    return json.dumps(value)


if __name__ == "__main__":
    main()
