"""Reference values for the engine's `nn` and `optim` modules, computed with PyTorch.

Run from anywhere: `python3 tests/golden/nn_optim.py`. It rewrites `nn_optim.json` next to
this file. Everything is computed in float64 from fixed seeds, so the file only changes
when this script does.

Each tensor is stored as {"shape": [...], "data": [...]} with the values in row-major
order, rounded to 10 significant digits (far finer than the f32 tolerances of the tests).
Every input (tensors, weights, gradients fed to the optimizers) is first rounded to
float32, so the engine starts from exactly the numbers PyTorch saw and the only difference
left is the engine's own f32 rounding.
Dropout is not here: PyTorch's random stream differs from the engine's, so its tests check
statistics instead.
"""

import json
import pathlib

import torch

torch.set_default_dtype(torch.float64)
OUT = pathlib.Path(__file__).with_name("nn_optim.json")


def t(x):
    x = x.detach()
    return {"shape": list(x.shape), "data": [float(f"{v:.10g}") for v in x.reshape(-1).tolist()]}


def f32(x):
    """`x` rounded to float32 (and held as float64), so the engine can represent it exactly."""
    return x.float().double()


def rand(*shape):
    return f32(torch.randn(*shape))


def grads_of(out, upstream, **tensors):
    """The gradients of sum(out * upstream) with respect to each named tensor."""
    grads = torch.autograd.grad(out, list(tensors.values()), grad_outputs=upstream)
    return {f"grad_{name}": t(g) for name, g in zip(tensors, grads)}


def linear_case(batch_shape, fan_in, fan_out, bias):
    x = rand(*batch_shape, fan_in).requires_grad_()
    layer = torch.nn.Linear(fan_in, fan_out, bias=bias)
    with torch.no_grad():
        layer.weight.copy_(rand(fan_out, fan_in))
        if bias:
            layer.bias.copy_(rand(fan_out))
    out = layer(x)
    upstream = rand(*out.shape)
    case = {"x": t(x), "weight": t(layer.weight), "out": t(out), "upstream": t(upstream)}
    params = {"x": x, "weight": layer.weight}
    if bias:
        case["bias"] = t(layer.bias)
        params["bias"] = layer.bias
    case.update(grads_of(out, upstream, **params))
    return case


def weight_norm_case(dim):
    """A Linear(4, 3) with weight normalisation along `dim` (0, 1 or None), its length `g`
    set away from the norms of `v` so that the test is not an identity."""
    x = rand(2, 4).requires_grad_()
    layer = torch.nn.Linear(4, 3)
    with torch.no_grad():
        layer.weight.copy_(rand(3, 4))
        layer.bias.copy_(rand(3))
    layer = torch.nn.utils.parametrizations.weight_norm(layer, dim=dim)
    weight = layer.parametrizations.weight
    g, v = weight.original0, weight.original1
    with torch.no_grad():
        g.copy_(f32(torch.rand(g.shape) + 0.5))
    out = layer(x)
    upstream = rand(*out.shape)
    case = {
        "dim": dim,
        "x": t(x),
        "original0": t(g),
        "original1": t(v),
        "bias": t(layer.bias),
        "weight": t(layer.weight),
        "out": t(out),
        "upstream": t(upstream),
    }
    case.update(grads_of(out, upstream, x=x, original0=g, original1=v, bias=layer.bias))
    return case


def layer_norm_case():
    dim = 6
    x = f32(rand(2, 3, dim) * 2.0 + 0.5).requires_grad_()
    layer = torch.nn.LayerNorm(dim)
    with torch.no_grad():
        layer.weight.copy_(f32(1.0 + 0.3 * rand(dim)))
        layer.bias.copy_(f32(0.2 * rand(dim)))
    out = layer(x)
    upstream = rand(*out.shape)
    case = {
        "eps": layer.eps,
        "x": t(x),
        "weight": t(layer.weight),
        "bias": t(layer.bias),
        "out": t(out),
        "upstream": t(upstream),
    }
    case.update(grads_of(out, upstream, x=x, weight=layer.weight, bias=layer.bias))
    return case


def embedding_case():
    layer = torch.nn.Embedding(5, 3)
    with torch.no_grad():
        layer.weight.copy_(rand(5, 3))
    # Id 1 appears three times and id 4 twice: their rows must collect every use.
    ids = torch.tensor([[1, 4, 1, 0], [2, 1, 4, 3]])
    out = layer(ids)
    upstream = rand(*out.shape)
    case = {
        "ids": t(ids.to(torch.float64)),
        "weight": t(layer.weight),
        "out": t(out),
        "upstream": t(upstream),
    }
    case.update(grads_of(out, upstream, weight=layer.weight))
    return case


def gru_cell_case():
    batch, inputs, hidden = 2, 3, 4
    cell = torch.nn.GRUCell(inputs, hidden)
    with torch.no_grad():
        for p in cell.parameters():
            p.copy_(f32(0.5 * rand(*p.shape)))
    x = rand(batch, inputs).requires_grad_()
    h = rand(batch, hidden).requires_grad_()
    out = cell(x, h)
    upstream = rand(*out.shape)
    case = {"x": t(x), "h": t(h), "out": t(out), "upstream": t(upstream)}
    for name, p in cell.named_parameters():
        case[name] = t(p)
    case.update(grads_of(out, upstream, x=x, h=h, **dict(cell.named_parameters())))
    return case


def gru_case():
    batch, steps, inputs, hidden = 2, 3, 3, 4
    gru = torch.nn.GRU(inputs, hidden, batch_first=True)
    with torch.no_grad():
        for p in gru.parameters():
            p.copy_(f32(0.5 * rand(*p.shape)))
    x = rand(batch, steps, inputs).requires_grad_()
    h0 = rand(batch, hidden).requires_grad_()
    outputs, last = gru(x, h0.unsqueeze(0))
    last = last.squeeze(0)
    up_outputs = rand(*outputs.shape)
    up_last = rand(*last.shape)
    params = dict(gru.named_parameters())
    wrt = {"x": x, "h0": h0, **{k.removesuffix("_l0"): v for k, v in params.items()}}
    grads = torch.autograd.grad([outputs, last], list(wrt.values()), [up_outputs, up_last])
    case = {
        "x": t(x),
        "h0": t(h0),
        "outputs": t(outputs),
        "last": t(last),
        "upstream_outputs": t(up_outputs),
        "upstream_last": t(up_last),
    }
    for name, p in params.items():
        case[name.removesuffix("_l0")] = t(p)
    case.update({f"grad_{name}": t(g) for name, g in zip(wrt, grads)})
    return case


def optimizer_case(make, steps, skip=None):
    """Runs `make(params)` for `steps` steps on fixed parameters with fixed gradients.

    `skip` is (step, parameter index): that parameter has no gradient on that step, so the
    optimizer must leave it (and its state) alone.
    """
    params = [rand(2, 3).requires_grad_(), rand(4).requires_grad_()]
    start = [t(p) for p in params]
    opt = make(params)
    grads, after = [], []
    for step in range(steps):
        step_grads = []
        for i, p in enumerate(params):
            if skip == (step, i):
                p.grad = None
                step_grads.append(None)
            else:
                p.grad = rand(*p.shape)
                step_grads.append(t(p.grad))
        opt.step()
        grads.append(step_grads)
        after.append([t(p) for p in params])
    return {"params": start, "grads": grads, "after": after}


def clip_case(max_norm):
    grads = [rand(2, 3) * 2.0, rand(5)]
    params = [torch.zeros_like(g, requires_grad=True) for g in grads]
    for p, g in zip(params, grads):
        p.grad = g.clone()
    norm = torch.nn.utils.clip_grad_norm_(params, max_norm)
    return {
        "max_norm": max_norm,
        "grads": [t(g) for g in grads],
        "norm": float(norm),
        "clipped": [t(p.grad) for p in params],
    }


def warmup_lrs(base_lr, steps, make_scheduler):
    p = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([p], lr=base_lr)
    scheduler = make_scheduler(opt)
    lrs = []
    for _ in range(steps):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        scheduler.step()
    return lrs


def main():
    torch.manual_seed(20240611)
    cases = {
        "linear_bias": linear_case((2, 3), 4, 5, bias=True),
        "linear_no_bias": linear_case((3,), 4, 2, bias=False),
        "layer_norm": layer_norm_case(),
        "embedding": embedding_case(),
        "gru_cell": gru_cell_case(),
        "gru": gru_case(),
        "sgd_momentum_weight_decay": {
            "config": {"lr": 0.1, "momentum": 0.9, "dampening": 0.0, "weight_decay": 0.01, "nesterov": False},
            **optimizer_case(
                lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01), 4, skip=(2, 1)
            ),
        },
        "sgd_nesterov_dampening_free": {
            "config": {"lr": 0.05, "momentum": 0.8, "dampening": 0.0, "weight_decay": 0.0, "nesterov": True},
            **optimizer_case(lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.8, nesterov=True), 4),
        },
        "sgd_dampening": {
            "config": {"lr": 0.1, "momentum": 0.5, "dampening": 0.3, "weight_decay": 0.0, "nesterov": False},
            **optimizer_case(lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.5, dampening=0.3), 4),
        },
        "adam": {
            "config": {"lr": 0.01, "betas": [0.9, 0.999], "eps": 1e-8, "weight_decay": 0.1},
            **optimizer_case(
                lambda ps: torch.optim.Adam(ps, lr=0.01, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.1),
                5,
                skip=(1, 0),
            ),
        },
        "adamw": {
            "config": {"lr": 0.01, "betas": [0.8, 0.99], "eps": 1e-8, "weight_decay": 0.1},
            **optimizer_case(
                lambda ps: torch.optim.AdamW(ps, lr=0.01, betas=(0.8, 0.99), eps=1e-8, weight_decay=0.1),
                5,
                skip=(3, 1),
            ),
        },
        "clip_grad_norm_clips": clip_case(1.0),
        "clip_grad_norm_leaves_small_norms": clip_case(100.0),
        "warmup_start_factor": {
            "base_lr": 0.1,
            "warmup_steps": 4,
            "start_factor": 0.25,
            "lrs": warmup_lrs(
                0.1,
                8,
                lambda o: torch.optim.lr_scheduler.LinearLR(o, start_factor=0.25, end_factor=1.0, total_iters=4),
            ),
        },
        "warmup_from_zero": {
            "base_lr": 0.1,
            "warmup_steps": 3,
            "start_factor": 0.0,
            "lrs": warmup_lrs(
                0.1, 6, lambda o: torch.optim.lr_scheduler.LambdaLR(o, lambda s: min(s, 3) / 3)
            ),
        },
        # Last, so that the cases above draw the same random numbers as before.
        "weight_norm_dim0": weight_norm_case(0),
        "weight_norm_dim1": weight_norm_case(1),
        "weight_norm_none": weight_norm_case(None),
    }
    meta = {
        "generator": "tests/golden/nn_optim.py",
        "torch_version": torch.__version__.split("+")[0],
        "dtype": "float64",
    }
    OUT.write_text(dumps({"meta": meta, **cases}) + "\n")


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
