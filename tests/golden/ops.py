#!/usr/bin/env python3
"""Golden values for the engine's op-level parity tests (`tests/engine/parity_ops.rs`).

Regenerate `tests/golden/ops.json` with:

    python3 tests/golden/ops.py

(needs PyTorch and NumPy). The output is deterministic: every case draws its values from
its own NumPy generator seeded with a checksum of the case name, keys are sorted, and numbers
are written with 9 significant digits.

Every case records, in float64:
  - `op` and `args`: what `parity_ops.rs` builds (one `match` arm per op there);
  - `inputs`: name, shape, row-major values, whether it is differentiable, and for each
    differentiable input the gradient `grad` of `sum(upstream * output)`;
  - `upstream`: a random gradient for the output (passed to `backward_with`);
  - `output`: the op's result.

Ops whose result is an index or a constant (`argmax`, the indices of `topk`, `full_like`)
have no differentiable input: their cases record the output alone, and `parity_ops.rs`
lists them by name. Ops with two results (`topk`, `torch.max(x, dim)`) have one case for
the values (with gradients) and one for the indices.

Inputs and the upstream gradient are rounded to float32 before PyTorch sees them, so the
engine (which works in f32) starts from exactly the same numbers and the only difference
left is the engine's own rounding. Integer inputs (indices, class targets, token ids) and
0/1 masks are stored as whole numbers, as the engine takes them (f32 tensors).

Values are chosen away from the places where a derivative is not defined: no ties for
`max` (except in the cases named `*_ties`, which check that ties share the gradient),
nothing near 0 for `relu` or as a divisor, positive inputs for `log`, `sqrt` and fractional
powers.
"""

import json
import os
import zlib

import numpy as np
import torch
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ops.json")

CASES = []


def f32(values):
    """The values rounded to float32, held as float64."""
    return np.asarray(values, dtype=np.float64).astype(np.float32).astype(np.float64)


def num(v):
    """A number with 9 significant digits (enough to round-trip a float32)."""
    v = float(v)
    assert np.isfinite(v), v
    return float("%.9g" % v)


def flat(array):
    return [num(v) for v in np.asarray(array, dtype=np.float64).reshape(-1)]


def rng_for(name):
    return np.random.RandomState(zlib.crc32(name.encode()))


# ---- value generators (each returns float32-exact float64 arrays) -------------------------


def normal(rng, shape, scale=1.0):
    return f32(rng.standard_normal(shape) * scale)


def uniform(rng, shape, low, high):
    return f32(rng.uniform(low, high, size=shape))


def away_from_zero(rng, shape, gap=0.1):
    """Random signs, magnitudes at least `gap` (for relu and divisors)."""
    magnitude = gap + np.abs(rng.standard_normal(shape))
    sign = np.where(rng.uniform(size=shape) < 0.5, -1.0, 1.0)
    return f32(sign * magnitude)


def distinct(rng, shape, spacing=0.25):
    """All values distinct, at least about `spacing` apart (no ties for max)."""
    n = int(np.prod(shape))
    values = (rng.permutation(n) - n / 2.0) * spacing + rng.uniform(-0.05, 0.05, n) * spacing
    return f32(values.reshape(shape))


def indices(rng, shape, high):
    return rng.randint(0, high, size=shape).astype(np.int64)


def mask(rng, shape, p=0.4):
    return (rng.uniform(size=shape) < p).astype(np.int64)


# ---- case recording ---------------------------------------------------------------------

FLOAT, INDEX, BOOL = "float", "index", "bool"


def inp(name, values, requires_grad=True, kind=FLOAT):
    return (name, np.asarray(values), requires_grad, kind)


def case(name, op, inputs, fn, args=None):
    """Runs `fn` on the inputs in PyTorch (float64) and records a case.

    `fn` takes the torch tensors in the order of `inputs`.
    """
    assert all(c["name"] != name for c in CASES), name
    tensors = []
    for _, values, requires_grad, kind in inputs:
        if kind == FLOAT:
            t = torch.tensor(values, dtype=torch.float64, requires_grad=requires_grad)
        elif kind == INDEX:
            assert not requires_grad
            t = torch.tensor(values, dtype=torch.int64)
        else:
            assert not requires_grad
            t = torch.tensor(values, dtype=torch.bool)
        tensors.append(t)
    out = fn(*tensors)
    rng = rng_for(name + "/upstream")
    upstream = f32(rng.standard_normal(tuple(out.shape)))
    wanted = [t for t, (_, _, rg, _) in zip(tensors, inputs) if rg]
    # Ops whose result is an index or a constant (argmax, full_like) have nothing to
    # differentiate: their cases record the output alone.
    grads = iter(
        torch.autograd.grad(out, wanted, grad_outputs=torch.tensor(upstream)) if wanted else []
    )
    recorded = []
    for t, (input_name, values, requires_grad, kind) in zip(tensors, inputs):
        entry = {
            "name": input_name,
            "shape": list(values.shape),
            "requires_grad": requires_grad,
        }
        if kind == FLOAT:
            entry["data"] = flat(values)
        else:
            entry["data"] = [int(v) for v in values.reshape(-1)]
        if requires_grad:
            g = next(grads).detach().numpy()
            entry["grad"] = {"shape": list(g.shape), "data": flat(g)}
        recorded.append(entry)
    o = out.detach().to(torch.float64).numpy()
    CASES.append(
        {
            "name": name,
            "op": op,
            "args": args or {},
            "inputs": recorded,
            "upstream": {"shape": list(upstream.shape), "data": flat(upstream)},
            "output": {"shape": list(o.shape), "data": flat(o)},
        }
    )


# ---- arithmetic ---------------------------------------------------------------------------


def binary_cases():
    fns = {
        "add": lambda a, b: a + b,
        "sub": lambda a, b: a - b,
        "mul": lambda a, b: a * b,
        "div": lambda a, b: a / b,
    }
    shapes = {
        "same_shape": ([2, 3], [2, 3]),
        "broadcast_row": ([3, 4], [4]),
        "broadcast_both": ([2, 1, 3], [4, 1]),
        "broadcast_column_3d": ([2, 3, 4], [3, 1]),
        "zero_dim_rhs": ([2, 3], []),
        "zero_dim_lhs": ([], [3, 2]),
    }
    for op, fn in fns.items():
        for label, (sa, sb) in shapes.items():
            name = f"{op}_{label}"
            rng = rng_for(name)
            a = normal(rng, sa)
            # Divisors stay away from zero so the quotient and its derivative are tame.
            b = away_from_zero(rng, sb, 0.5) if op == "div" else normal(rng, sb)
            case(name, op, [inp("a", a), inp("b", b)], fn)

    scalar_fns = {
        "add": lambda x, s, first: s + x if first else x + s,
        "sub": lambda x, s, first: s - x if first else x - s,
        "mul": lambda x, s, first: s * x if first else x * s,
        "div": lambda x, s, first: s / x if first else x / s,
    }
    scalars = {"add": 2.5, "sub": 1.0, "mul": 2.0, "div": 2.0}
    for op, fn in scalar_fns.items():
        for first in (False, True):
            name = f"{op}_scalar_{'left' if first else 'right'}"
            rng = rng_for(name)
            x = away_from_zero(rng, [2, 3], 0.5) if op == "div" else normal(rng, [2, 3])
            s = scalars[op] if not (op == "mul" and first) else -1.5
            case(
                name,
                f"{op}_scalar",
                [inp("x", x)],
                lambda t, s=s, first=first, fn=fn: fn(t, s, first),
                {"scalar": s, "scalar_first": first},
            )

    # The same tensor on both sides: its two gradients add up.
    rng = rng_for("mul_same_tensor_twice")
    x = normal(rng, [2, 3])
    case("mul_same_tensor_twice", "mul_self", [inp("x", x)], lambda t: t * t)

    # One operand is a constant: only the other gets a gradient.
    rng = rng_for("sub_constant_rhs")
    case(
        "sub_constant_rhs",
        "sub",
        [inp("a", normal(rng, [2, 3])), inp("b", normal(rng, [3]), requires_grad=False)],
        lambda a, b: a - b,
    )


# ---- elementwise functions ----------------------------------------------------------------


def unary_cases():
    specs = [
        ("neg", "neg", lambda r: normal(r, [3, 4]), lambda t: -t, {}),
        ("exp", "exp", lambda r: uniform(r, [3, 4], -2.0, 2.0), torch.exp, {}),
        ("log", "log", lambda r: uniform(r, [3, 4], 0.2, 3.0), torch.log, {}),
        ("tanh", "tanh", lambda r: normal(r, [3, 4], 1.5), torch.tanh, {}),
        ("sigmoid", "sigmoid", lambda r: normal(r, [3, 4], 2.0), torch.sigmoid, {}),
        ("relu", "relu", lambda r: away_from_zero(r, [3, 4], 0.05), torch.relu, {}),
        ("sqrt", "sqrt", lambda r: uniform(r, [3, 4], 0.1, 4.0), torch.sqrt, {}),
        (
            "gelu_erf",
            "gelu",
            lambda r: uniform(r, [3, 4], -3.0, 3.0),
            lambda t: F.gelu(t),
            {"approximate": "none"},
        ),
        (
            "gelu_tanh",
            "gelu",
            lambda r: uniform(r, [3, 4], -3.0, 3.0),
            lambda t: F.gelu(t, approximate="tanh"),
            {"approximate": "tanh"},
        ),
    ]
    for p, positive in [(2.0, False), (3.0, False), (0.5, True), (-1.5, True), (2.5, True)]:
        label = str(p).replace("-", "minus_").replace(".", "_")
        specs.append(
            (
                f"powf_{label}",
                "powf",
                (lambda r: uniform(r, [3, 4], 0.2, 2.5))
                if positive
                else (lambda r: normal(r, [3, 4])),
                lambda t, p=p: t.pow(p),
                {"p": p},
            )
        )
    # Larger shapes for a few: a mix of dimensions is not special for elementwise ops, but
    # it checks the result keeps the input's shape.
    specs.append(("exp_3d", "exp", lambda r: normal(r, [2, 3, 2]), torch.exp, {}))
    specs.append(("relu_3d", "relu", lambda r: away_from_zero(r, [2, 2, 3]), torch.relu, {}))
    for name, op, make, fn, args in specs:
        case(name, op, [inp("x", make(rng_for(name)))], fn, args)


# ---- reductions ---------------------------------------------------------------------------


def reduction_cases():
    def x_for(name, shape, no_ties=False):
        r = rng_for(name)
        return distinct(r, shape) if no_ties else normal(r, shape)

    case("sum_all", "sum", [inp("x", x_for("sum_all", [2, 3, 4]))], lambda t: t.sum())
    case("sum_all_1d", "sum", [inp("x", x_for("sum_all_1d", [5]))], lambda t: t.sum())
    for dim, keepdim, shape in [(1, False, [2, 3, 4]), (-1, True, [2, 3, 4]), (0, False, [3, 4]),
                                (0, True, [3, 4])]:
        name = f"sum_dim_{dim}_keepdim_{str(keepdim).lower()}".replace("-", "minus_")
        case(
            name,
            "sum_dim",
            [inp("x", x_for(name, shape))],
            lambda t, d=dim, k=keepdim: t.sum(dim=d, keepdim=k),
            {"dim": dim, "keepdim": keepdim},
        )
    for dims, keepdim, shape in [([0, 2], False, [2, 3, 4]), ([2, 0], True, [2, 3, 4]),
                                 ([-1, -2], False, [2, 3, 2, 2]), ([0, 1, 2], False, [2, 2, 3]),
                                 ([1], True, [2, 3, 2])]:
        name = "sum_dims_" + "_".join(str(d).replace("-", "minus_") for d in dims)
        name += f"_keepdim_{str(keepdim).lower()}"
        case(
            name,
            "sum_dims",
            [inp("x", x_for(name, shape))],
            lambda t, d=dims, k=keepdim: t.sum(dim=tuple(d), keepdim=k),
            {"dims": dims, "keepdim": keepdim},
        )
    case("mean_all", "mean", [inp("x", x_for("mean_all", [3, 4]))], lambda t: t.mean())
    for dim, keepdim, shape in [(1, True, [2, 3, 4]), (0, False, [3, 4]), (-1, False, [2, 5])]:
        name = f"mean_dim_{dim}_keepdim_{str(keepdim).lower()}".replace("-", "minus_")
        case(
            name,
            "mean_dim",
            [inp("x", x_for(name, shape))],
            lambda t, d=dim, k=keepdim: t.mean(dim=d, keepdim=k),
            {"dim": dim, "keepdim": keepdim},
        )
    case("max_all", "max", [inp("x", x_for("max_all", [3, 4], True))], lambda t: t.max())
    case("max_all_3d", "max", [inp("x", x_for("max_all_3d", [2, 3, 2], True))], lambda t: t.max())
    for dim, keepdim, shape in [(1, False, [2, 3, 4]), (-1, True, [2, 3, 4]), (0, False, [3, 4]),
                                (0, True, [4, 3])]:
        name = f"max_dim_{dim}_keepdim_{str(keepdim).lower()}".replace("-", "minus_")
        case(
            name,
            "max_dim",
            [inp("x", x_for(name, shape, True))],
            lambda t, d=dim, k=keepdim: torch.amax(t, dim=d, keepdim=k),
            {"dim": dim, "keepdim": keepdim},
        )
    # Exact ties: PyTorch's amax and max() share the gradient equally among the maxima.
    ties = f32([[1.0, 3.0, 3.0, -2.0], [2.0, -1.0, 2.0, 2.0], [0.5, 0.25, -4.0, 0.0]])
    case(
        "max_dim_1_ties",
        "max_dim",
        [inp("x", ties)],
        lambda t: torch.amax(t, dim=1),
        {"dim": 1, "keepdim": False},
    )
    case("max_all_ties", "max", [inp("x", f32([[1.0, 2.0], [2.0, 0.0]]))], lambda t: t.max())


# ---- softmax ------------------------------------------------------------------------------


def softmax_cases():
    for op, fn in [("softmax", F.softmax), ("log_softmax", F.log_softmax)]:
        for dim, shape in [(-1, [2, 3, 4]), (1, [2, 3, 4]), (0, [3, 4]), (-1, [5])]:
            name = f"{op}_dim_{dim}_rank_{len(shape)}".replace("-", "minus_")
            case(
                name,
                op,
                [inp("x", normal(rng_for(name), shape, 2.0))],
                lambda t, d=dim, fn=fn: fn(t, dim=d),
                {"dim": dim},
            )
        # Large logits: a naive exp would overflow in f32.
        name = f"{op}_large_logits"
        case(
            name,
            op,
            [inp("x", f32(500.0 + normal(rng_for(name), [2, 4], 3.0)))],
            lambda t, fn=fn: fn(t, dim=-1),
            {"dim": -1},
        )


# ---- matmul -------------------------------------------------------------------------------


def matmul_cases():
    for label, sa, sb in [
        ("2d", [3, 4], [4, 2]),
        ("batched", [2, 3, 4], [2, 4, 5]),
        ("broadcast_batch", [2, 1, 3, 4], [5, 4, 2]),
        ("batch_times_matrix", [2, 3, 4], [4, 2]),
        ("matrix_times_batch", [3, 4], [2, 4, 2]),
        ("outer_product", [3, 1], [1, 4]),
    ]:
        name = f"matmul_{label}"
        r = rng_for(name)
        case(name, "matmul", [inp("a", normal(r, sa)), inp("b", normal(r, sb))],
             torch.matmul)
    r = rng_for("matmul_constant_rhs")
    case(
        "matmul_constant_rhs",
        "matmul",
        [inp("a", normal(r, [2, 3])), inp("b", normal(r, [3, 2]), requires_grad=False)],
        torch.matmul,
    )
    r = rng_for("bmm")
    case("bmm", "bmm", [inp("a", normal(r, [2, 3, 4])), inp("b", normal(r, [2, 4, 3]))],
         torch.bmm)


# ---- shape ops ----------------------------------------------------------------------------


def shape_cases():
    def one(name, op, shape, fn, args):
        case(name, op, [inp("x", normal(rng_for(name), shape))], fn, args)

    one("reshape_with_hole", "reshape", [2, 3, 4], lambda t: t.reshape(4, -1),
        {"shape": [4, -1]})
    one("reshape_add_dims", "reshape", [6], lambda t: t.reshape(1, 2, 3), {"shape": [1, 2, 3]})
    one("transpose_0_2", "transpose", [2, 3, 4], lambda t: t.transpose(0, 2),
        {"dim0": 0, "dim1": 2})
    one("transpose_last_two", "transpose", [2, 3, 4], lambda t: t.transpose(-1, -2),
        {"dim0": -1, "dim1": -2})
    # A 3-cycle is its own inverse only when applied three times: a derivative that
    # reapplies the permutation instead of inverting it gives the wrong layout.
    one("permute_cycle", "permute", [2, 3, 4], lambda t: t.permute(2, 0, 1),
        {"dims": [2, 0, 1]})
    one("permute_4d", "permute", [2, 1, 3, 2], lambda t: t.permute(3, 1, 0, 2),
        {"dims": [3, 1, 0, 2]})
    one("unsqueeze_middle", "unsqueeze", [2, 3], lambda t: t.unsqueeze(1), {"dim": 1})
    one("unsqueeze_end", "unsqueeze", [2, 3], lambda t: t.unsqueeze(-1), {"dim": -1})
    one("squeeze_middle", "squeeze", [2, 1, 3], lambda t: t.squeeze(1), {"dim": 1})
    one("squeeze_last", "squeeze", [3, 1], lambda t: t.squeeze(-1), {"dim": -1})
    one("broadcast_to_new_and_unit_dims", "broadcast_to", [3, 1],
        lambda t: t.broadcast_to(2, 3, 4), {"shape": [2, 3, 4]})
    one("broadcast_to_rows", "broadcast_to", [4], lambda t: t.broadcast_to(3, 4),
        {"shape": [3, 4]})
    one("expand_keep_dims", "expand", [3, 1], lambda t: t.expand(2, -1, 4),
        {"shape": [2, -1, 4]})
    one("expand_middle", "expand", [2, 1, 3], lambda t: t.expand(-1, 4, -1),
        {"shape": [-1, 4, -1]})
    one("narrow_middle", "narrow", [4, 5], lambda t: t.narrow(1, 1, 2),
        {"dim": 1, "start": 1, "len": 2})
    one("narrow_dim0", "narrow", [3, 4, 2], lambda t: t.narrow(0, 1, 1),
        {"dim": 0, "start": 1, "len": 1})
    one("narrow_last_from_start", "narrow", [3, 4], lambda t: t.narrow(-1, 0, 3),
        {"dim": -1, "start": 0, "len": 3})
    one("narrow_to_end", "narrow", [5], lambda t: t.narrow(0, 2, 3),
        {"dim": 0, "start": 2, "len": 3})
    one("slice_columns", "slice", [3, 6], lambda t: t[:, 2:5], {"dim": 1, "start": 2, "end": 5})
    one("slice_rows", "slice", [4, 2], lambda t: t[1:3], {"dim": 0, "start": 1, "end": 3})


def join_cases():
    for label, shapes, dim, grads in [
        ("three_middle", [[2, 1, 3], [2, 2, 3], [2, 3, 3]], 1, [True, True, True]),
        ("last", [[2, 2], [2, 3]], -1, [True, True]),
        ("first", [[1, 3], [2, 3]], 0, [True, True]),
        ("constant_in_middle", [[2, 2], [2, 1], [2, 3]], 1, [True, False, True]),
    ]:
        name = f"concat_{label}"
        r = rng_for(name)
        inputs = [inp(f"x{i}", normal(r, s), g) for i, (s, g) in enumerate(zip(shapes, grads))]
        case(
            name,
            "concat",
            inputs,
            lambda *ts, d=dim: torch.cat(ts, dim=d),
            {"dim": dim},
        )
    for dim in [0, 1, -1]:
        name = f"stack_dim_{dim}".replace("-", "minus_")
        r = rng_for(name)
        inputs = [inp(f"x{i}", normal(r, [2, 3])) for i in range(3)]
        case(name, "stack", inputs, lambda *ts, d=dim: torch.stack(ts, dim=d), {"dim": dim})


# ---- indexing -----------------------------------------------------------------------------


def indexing_cases():
    for label, shape, dim, index in [
        ("rows_repeated", [4, 3], 0, [2, 0, 2, 3, 2]),
        ("middle_repeated", [2, 5, 3], 1, [4, 4, 1]),
        ("last_repeated", [2, 3], -1, [0, 0, 2, 0]),
    ]:
        name = f"index_select_{label}"
        case(
            name,
            "index_select",
            [inp("x", normal(rng_for(name), shape)),
             inp("index", np.array(index), False, INDEX)],
            lambda t, i, d=dim: torch.index_select(t, d, i),
            {"dim": dim},
        )
    for label, ids, vocab, width in [
        ("2d_ids_repeated", [[1, 3, 1], [0, 1, 4]], 5, 4),
        ("1d_ids_repeated", [2, 2, 0, 2], 3, 2),
    ]:
        name = f"embedding_{label}"
        case(
            name,
            "embedding",
            [inp("ids", np.array(ids), False, INDEX),
             inp("weight", normal(rng_for(name), [vocab, width]))],
            F.embedding,
        )
    for label, shape, mshape, value in [
        ("same_shape", [2, 3], [2, 3], -1e9),
        ("broadcast_row_mask", [3, 4], [1, 4], 0.5),
        ("broadcast_column_mask", [2, 3, 2], [3, 1], -2.0),
    ]:
        name = f"masked_fill_{label}"
        r = rng_for(name)
        x = normal(r, shape)
        m = mask(r, mshape)
        m.reshape(-1)[0] = 1  # at least one masked and one kept entry
        m.reshape(-1)[-1] = 0
        case(
            name,
            "masked_fill",
            [inp("x", x), inp("mask", m, False, BOOL)],
            lambda t, mk, v=value: t.masked_fill(mk, v),
            {"value": value},
        )
    for label, cshape, ashape, bshape in [
        ("same_shape", [2, 3], [2, 3], [2, 3]),
        ("broadcast_all", [3, 1], [1, 4], []),
        ("broadcast_values", [1, 4], [3, 1], [3, 4]),
    ]:
        name = f"where_cond_{label}"
        r = rng_for(name)
        c = mask(r, cshape, 0.5)
        c.reshape(-1)[0] = 1
        c.reshape(-1)[-1] = 0
        case(
            name,
            "where_cond",
            [inp("cond", c, False, BOOL), inp("a", normal(r, ashape)),
             inp("b", normal(r, bshape))],
            torch.where,
        )


# ---- loss ---------------------------------------------------------------------------------


def loss_cases():
    for reduction in ["mean", "sum", "none"]:
        name = f"cross_entropy_2d_{reduction}"
        r = rng_for(name)
        targets = np.array([1, 4, 1, 0])
        case(
            name,
            "cross_entropy",
            [inp("logits", normal(r, [4, 5], 2.0)), inp("targets", targets, False, INDEX)],
            lambda x, t, red=reduction: F.cross_entropy(x, t, reduction=red),
            {"reduction": reduction},
        )
        # [B, T, C] logits with [B, T] targets; PyTorch wants the classes second.
        name = f"cross_entropy_3d_{reduction}"
        r = rng_for(name)
        targets = np.array([[0, 3, 3], [2, 1, 0]])
        case(
            name,
            "cross_entropy",
            [inp("logits", normal(r, [2, 3, 4], 2.0)), inp("targets", targets, False, INDEX)],
            lambda x, t, red=reduction: F.cross_entropy(x.permute(0, 2, 1), t, reduction=red),
            {"reduction": reduction},
        )


# ---- PyTorch staples: abs, clamp, maximum/minimum, min, argmax/argmin, selection, scans -----


def staple_cases():
    case("abs", "abs", [inp("x", away_from_zero(rng_for("abs"), [3, 4], 0.05))], torch.abs)
    # Values kept away from the bounds, where the derivative jumps.
    for label, lo, hi in [("both", -0.5, 0.75), ("min_only", -0.25, None),
                          ("max_only", None, 0.5)]:
        name = f"clamp_{label}"
        r = rng_for(name)
        x = normal(r, [3, 5])
        x = f32(np.where(np.abs(x - (lo if lo is not None else 99)) < 0.05, x + 0.1, x))
        x = f32(np.where(np.abs(x - (hi if hi is not None else 99)) < 0.05, x + 0.1, x))
        case(name, "clamp", [inp("x", x)],
             lambda t, lo=lo, hi=hi: torch.clamp(t, min=lo, max=hi), {"min": lo, "max": hi})
    for op, fn in [("maximum", torch.maximum), ("minimum", torch.minimum)]:
        for label, sa, sb in [("same_shape", [2, 3], [2, 3]), ("broadcast", [2, 1, 3], [4, 1])]:
            name = f"{op}_{label}"
            r = rng_for(name)
            case(name, op, [inp("a", normal(r, sa)), inp("b", normal(r, sb))], fn)
        # Exact ties: PyTorch gives each operand half the gradient.
        a = f32([[1.0, -2.0, 0.5], [3.0, 3.0, -1.0]])
        b = f32([[1.0, 0.0, 0.5], [2.0, 3.0, 4.0]])
        case(f"{op}_ties", op, [inp("a", a), inp("b", b)], fn)

    def x_for(name, shape):
        return distinct(rng_for(name), shape)

    case("min_all", "min", [inp("x", x_for("min_all", [3, 4]))], lambda t: t.min())
    case("min_all_ties", "min", [inp("x", f32([[1.0, -2.0], [-2.0, 0.0]]))], lambda t: t.min())
    for dim, keepdim, shape in [(1, False, [2, 3, 4]), (-1, True, [2, 3, 4]), (0, False, [3, 4])]:
        name = f"min_dim_{dim}_keepdim_{str(keepdim).lower()}".replace("-", "minus_")
        case(name, "min_dim", [inp("x", x_for(name, shape))],
             lambda t, d=dim, k=keepdim: torch.amin(t, dim=d, keepdim=k),
             {"dim": dim, "keepdim": keepdim})
    # Ties within a row: argmax, argmin and max(dim) take the first.
    ties = f32([[1.0, 3.0, 3.0, -2.0], [2.0, -1.0, 2.0, -1.0], [0.5, 0.25, -4.0, 0.0]])
    for op, fn in [("argmax", torch.argmax), ("argmin", torch.argmin)]:
        for dim, keepdim in [(1, False), (0, True), (-1, True)]:
            name = f"{op}_dim_{dim}_keepdim_{str(keepdim).lower()}".replace("-", "minus_")
            case(name, op, [inp("x", x_for(name, [3, 4, 2]), False)],
                 lambda t, d=dim, k=keepdim, fn=fn: fn(t, dim=d, keepdim=k),
                 {"dim": dim, "keepdim": keepdim})
        case(f"{op}_ties", op, [inp("x", ties, False)], lambda t, fn=fn: fn(t, dim=1),
             {"dim": 1, "keepdim": False})
    for which, fn in [("max", torch.max), ("min", torch.min)]:
        for dim, keepdim in [(1, False), (-1, True)]:
            name = f"{which}_dim_with_indices_{dim}_keepdim_{str(keepdim).lower()}"
            name = name.replace("-", "minus_")
            x = x_for(name, [2, 3, 4])
            args = {"which": which, "dim": dim, "keepdim": keepdim}
            case(name + "_values", "extreme_with_indices_values", [inp("x", x)],
                 lambda t, d=dim, k=keepdim, fn=fn: fn(t, dim=d, keepdim=k).values, args)
            case(name + "_indices", "extreme_with_indices_indices", [inp("x", x, False)],
                 lambda t, d=dim, k=keepdim, fn=fn: fn(t, dim=d, keepdim=k).indices, args)
        # With ties the gradient goes to the returned (first) index only.
        args = {"which": which, "dim": 1, "keepdim": False}
        case(f"{which}_dim_with_indices_ties_values", "extreme_with_indices_values",
             [inp("x", ties)], lambda t, fn=fn: fn(t, dim=1).values, args)
        case(f"{which}_dim_with_indices_ties_indices", "extreme_with_indices_indices",
             [inp("x", ties, False)], lambda t, fn=fn: fn(t, dim=1).indices, args)
    for largest in [True, False]:
        for k, dim, shape in [(2, -1, [3, 5]), (3, 0, [4, 2, 3]), (1, 1, [2, 4])]:
            name = f"topk_{k}_dim_{dim}_{'largest' if largest else 'smallest'}"
            name = name.replace("-", "minus_")
            x = x_for(name, shape)
            args = {"k": k, "dim": dim, "largest": largest}
            case(name + "_values", "topk_values", [inp("x", x)],
                 lambda t, k=k, d=dim, l=largest: torch.topk(t, k, dim=d, largest=l).values,
                 args)
            case(name + "_indices", "topk_indices", [inp("x", x, False)],
                 lambda t, k=k, d=dim, l=largest: torch.topk(t, k, dim=d, largest=l).indices,
                 args)
    for label, shape, dim, index in [
        ("rows", [3, 4], 1, [[0, 3, 3], [2, 1, 0], [1, 1, 1]]),
        ("columns_smaller", [4, 3], 0, [[3, 0], [1, 1]]),
        ("3d_middle", [2, 3, 2], 1, [[[2, 0], [0, 0]], [[1, 2], [2, 1]]]),
    ]:
        name = f"gather_{label}"
        case(name, "gather",
             [inp("x", normal(rng_for(name), shape)), inp("index", np.array(index), False, INDEX)],
             lambda t, i, d=dim: torch.gather(t, d, i), {"dim": dim})
    for label, shape, start, end in [("all", [2, 3, 4], 0, -1), ("middle", [2, 3, 4, 2], 1, 2),
                                     ("last_two", [2, 3, 4], -2, -1), ("one_dim", [2, 3], 1, 1)]:
        name = f"flatten_{label}"
        case(name, "flatten", [inp("x", normal(rng_for(name), shape))],
             lambda t, s=start, e=end: torch.flatten(t, s, e), {"start_dim": start, "end_dim": end})
    for dim, shape in [(0, [4]), (1, [2, 3, 4]), (-1, [3, 5]), (0, [3, 2])]:
        name = f"cumsum_dim_{dim}_rank_{len(shape)}".replace("-", "minus_")
        case(name, "cumsum", [inp("x", normal(rng_for(name), shape))],
             lambda t, d=dim: torch.cumsum(t, dim=d), {"dim": dim})
    for op, fn in [("tril", torch.tril), ("triu", torch.triu)]:
        for diagonal, shape in [(0, [4, 4]), (1, [3, 5]), (-1, [2, 4, 3])]:
            name = f"{op}_diagonal_{diagonal}_rank_{len(shape)}".replace("-", "minus_")
            case(name, op, [inp("x", normal(rng_for(name), shape))],
                 lambda t, k=diagonal, fn=fn: fn(t, diagonal=k), {"diagonal": diagonal})
    for dim, keepdim, shape, shift in [(-1, False, [3, 4], 0.0), (1, True, [2, 3, 4], 0.0),
                                       (0, False, [3, 2], 0.0), (-1, False, [2, 4], 200.0)]:
        name = f"logsumexp_dim_{dim}_keepdim_{str(keepdim).lower()}".replace("-", "minus_")
        if shift:
            name += "_large"
        case(name, "logsumexp", [inp("x", f32(shift + normal(rng_for(name), shape, 2.0)))],
             lambda t, d=dim, k=keepdim: torch.logsumexp(t, dim=d, keepdim=k),
             {"dim": dim, "keepdim": keepdim})
    for reduction in ["mean", "sum", "none"]:
        name = f"mse_loss_{reduction}"
        r = rng_for(name)
        case(name, "mse_loss", [inp("input", normal(r, [3, 4])), inp("target", normal(r, [3, 4]))],
             lambda a, b, red=reduction: F.mse_loss(a, b, reduction=red), {"reduction": reduction})
    r = rng_for("mse_loss_constant_target")
    case("mse_loss_constant_target", "mse_loss",
         [inp("input", normal(r, [5])), inp("target", normal(r, [5]), False)],
         lambda a, b: F.mse_loss(a, b), {"reduction": "mean"})
    for value in [0.0, 1.0, -1e9]:
        name = f"full_like_{value}".replace("-", "minus_").replace(".", "_")
        case(name, "full_like", [inp("x", normal(rng_for(name), [2, 3]), False)],
             lambda t, v=value: torch.full_like(t, v), {"value": value})


def main():
    torch.set_default_dtype(torch.float64)
    binary_cases()
    unary_cases()
    reduction_cases()
    softmax_cases()
    matmul_cases()
    shape_cases()
    join_cases()
    indexing_cases()
    loss_cases()
    staple_cases()
    CASES.sort(key=lambda c: c["name"])
    lines = [json.dumps(c, sort_keys=True, separators=(",", ":")) for c in CASES]
    with open(OUT, "w", encoding="utf-8") as f:
        f.write('{"cases":[\n')
        f.write(",\n".join(lines))
        f.write('\n],"generator":"tests/golden/ops.py","version":1}\n')
    print(f"wrote {len(CASES)} cases to {os.path.relpath(OUT)}")


if __name__ == "__main__":
    main()
