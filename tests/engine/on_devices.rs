//! Every op, forward and backward, on the CPU and on the GPU with the same inputs: the
//! GPU's results must equal the CPU's within f32 tolerances (see `devices/harness.rs`).
//! In a CPU-only build each body still runs, on the CPU.

use crate::harness;

use engine::{Device, GeluApprox, Reduction, SafeSoftmaxMask, Tensor};
use harness::{
    F32, Tolerance, backward_weighted, on_devices, param, randn, test_gpu,
};

/// Forward and backward of a function of one input of shape `shape`: the result and the
/// input's gradient.
fn unary_case(name: &str, shape: &[usize], f: impl Fn(&Tensor) -> Tensor) {
    on_devices(name, F32, |dev| {
        let x = param(shape, 1, dev);
        let y = f(&x);
        backward_weighted(&y, 2);
        vec![y, x.grad().unwrap()]
    });
}

/// Forward and backward of a function of two inputs.
fn binary_case(
    name: &str,
    a: &[usize],
    b: &[usize],
    f: impl Fn(&Tensor, &Tensor) -> Tensor,
) {
    on_devices(name, F32, |dev| {
        let x = param(a, 3, dev);
        let y = param(b, 4, dev);
        let out = f(&x, &y);
        backward_weighted(&out, 5);
        vec![out, x.grad().unwrap(), y.grad().unwrap()]
    });
}

#[test]
fn elementwise_functions() {
    let shape = [3, 70];
    unary_case("neg", &shape, |x| -x);
    unary_case("exp", &shape, Tensor::exp);
    unary_case("log", &shape, |x| (x.abs() + 0.1).log());
    unary_case("tanh", &shape, |x| (x * 3.0).tanh());
    unary_case("sigmoid", &shape, |x| (x * 4.0).sigmoid());
    unary_case("relu", &shape, Tensor::relu);
    unary_case("gelu erf", &shape, |x| x.gelu(GeluApprox::Erf));
    unary_case("gelu tanh", &shape, |x| x.gelu(GeluApprox::Tanh));
    unary_case("sqrt", &shape, |x| (x.abs() + 0.5).sqrt());
    unary_case("powf", &shape, |x| x.powf(3.0));
    unary_case("powf fractional", &shape, |x| (x.abs() + 0.5).powf(1.5));
    unary_case("square", &shape, Tensor::square);
    unary_case("abs", &shape, Tensor::abs);
    unary_case("clamp", &shape, |x| x.clamp(-0.5, 0.7));
    on_devices("relu keeps a NaN and passes its gradient", F32, |dev| {
        let x = Tensor::from_vec(vec![f32::NAN, -0.0, -1.0, 0.0, 2.0], [5])
            .to(dev)
            .requires_grad_();
        let y = x.relu();
        (&y * 3.0).sum().backward();
        let (values, grad) = (y.to_vec(), x.grad().unwrap().to_vec());
        assert!(values[0].is_nan(), "{dev}: relu(NaN) = {}", values[0]);
        assert_eq!(&values[1..], &[0.0, 0.0, 0.0, 2.0], "{dev}");
        assert_eq!(grad, vec![3.0, 0.0, 0.0, 0.0, 3.0], "{dev}");
        vec![y, x.grad().unwrap()]
    });
}

#[test]
fn arithmetic_with_broadcasting() {
    binary_case("add", &[2, 3, 5], &[3, 1], |a, b| a + b);
    binary_case("sub", &[4, 1, 5], &[6, 1], |a, b| a - b);
    binary_case("mul", &[2, 3, 5], &[5], |a, b| a * b);
    binary_case("div", &[3, 5], &[3, 5], |a, b| a / &(b.abs() + 0.5));
    binary_case("maximum", &[3, 5], &[1, 5], Tensor::maximum);
    binary_case("minimum", &[3, 5], &[3, 1], Tensor::minimum);
    binary_case("scalar operands", &[3, 4], &[4], |a, b| {
        (a * 2.0 + 1.0) / b.exp() - 0.5
    });
    on_devices("comparisons", F32, |dev| {
        let (a, b) = (randn(&[4, 6], 6, dev), randn(&[6], 7, dev));
        vec![a.gt(&b), a.ge(&b), a.lt(&b), a.le(&b), a.eq_mask(&a)]
    });
}

#[test]
fn reductions() {
    let shape = [3, 4, 5];
    unary_case("sum", &shape, Tensor::sum);
    unary_case("sum_dim", &shape, |x| x.sum_dim(1));
    unary_case("sum_dims", &shape, |x| x.sum_dims_keepdim([0, 2]));
    unary_case("mean_dim", &shape, |x| x.mean_dim(-1));
    unary_case("max", &shape, Tensor::max);
    on_devices(
        "NaN propagates through max, min, maximum and minimum",
        F32,
        |dev| {
            let x =
                Tensor::from_vec(vec![1.0, f32::NAN, 3.0, -1.0, 0.5, 2.0], [2, 3])
                    .to(dev);
            let y = Tensor::from_vec(vec![0.0, 0.0, f32::NAN], [3]).to(dev);
            vec![
                x.max_dim(1),
                x.min_dim(0),
                x.maximum(&y),
                x.minimum(&y),
                x.max(),
            ]
        },
    );
    unary_case("max_dim", &shape, |x| x.max_dim(1));
    unary_case("min_dim", &shape, |x| x.min_dim_keepdim(2));
    unary_case("logsumexp", &shape, |x| x.logsumexp(-1));
    // Lines of 256 values and more are reduced by a workgroup each, in a tree.
    let long = Tolerance {
        abs: 1e-4,
        rel: 1e-4,
    };
    for (name, shape) in [
        ("sum of 100,000", vec![100_000]),
        ("sum of long lines", vec![3, 1000, 2]),
    ] {
        on_devices(name, long, |dev| {
            let x = param(&shape, 33, dev);
            let y = x.sum_dim(if shape.len() == 1 { 0 } else { 1 });
            backward_weighted(&y, 34);
            vec![y, x.grad().unwrap(), x.sum()]
        });
    }
    on_devices("max and min of long lines, with a NaN", F32, |dev| {
        let mut values = harness::randn(&[2, 700], 35, &Device::Cpu).to_vec();
        values[1000] = f32::NAN;
        let x = Tensor::from_vec(values, [2, 700]).to(dev);
        vec![x.max_dim(1), x.min_dim(1), x.max(), x.narrow(0, 0, 1).min()]
    });
    on_devices("argmax and argmin, ties and NaN", F32, |dev| {
        let mut values = harness::randn(&[3, 4, 5], 30, &Device::Cpu).to_vec();
        values[7] = values[12]; // a tie along dimension 1
        values[20] = f32::NAN; // a NaN wins
        let x = Tensor::from_vec(values, [3, 4, 5]).to(dev);
        vec![x.argmax(1), x.argmin(-1), x.argmax_keepdim(0), x.argmin(1)]
    });
}

#[test]
fn softmax_and_log_softmax() {
    for dim in [0, 1, 2] {
        unary_case("softmax", &[3, 4, 33], |x| (x * 3.0).softmax(dim));
        unary_case("log_softmax", &[3, 4, 33], |x| x.log_softmax(dim));
    }
}

#[test]
fn softmax_of_infinities() {
    on_devices("softmax: a row of -inf, and an +inf", F32, |dev| {
        let inf = f32::INFINITY;
        let x = Tensor::from_vec(
            vec![-inf, -inf, -inf, 0.0, -inf, 1.0, inf, 0.0, 1.0],
            [3, 3],
        );
        let x = x.to(dev);
        vec![x.softmax(-1), x.log_softmax(-1), x.logsumexp(-1)]
    });
}

#[test]
fn safe_softmax_with_causal_order_and_a_keep_mask() {
    // The GPU computes the composed definition; the CPU its fused kernel. Query 0 of the
    // second batch element sees nothing (zeros); [B, H, Q, K] = [2, 3, 5, 7].
    for offset in [None, Some(0), Some(2)] {
        unary_case("safe_softmax", &[2, 3, 5, 7], |x| {
            let mut keep = vec![1.0; 2 * 5 * 7];
            keep[35..42].fill(0.0);
            keep[3] = 0.0;
            let mask = SafeSoftmaxMask {
                keep: Some(Tensor::from_vec(keep, [2, 1, 5, 7]).to(&x.device())),
                causal_offset: offset,
            };
            (x * 3.0).safe_softmax(&mask)
        });
    }
    // Scores of rank 2 with more queries than keys.
    unary_case("safe_softmax of [6, 4]", &[6, 4], |x| {
        let mask = SafeSoftmaxMask {
            causal_offset: Some(1),
            ..Default::default()
        };
        x.safe_softmax(&mask)
    });
}

#[test]
fn matrix_products() {
    binary_case("matmul 2d", &[7, 13], &[13, 9], Tensor::matmul);
    binary_case("matmul batched", &[3, 7, 13], &[3, 13, 9], Tensor::matmul);
    binary_case(
        "matmul shared weight",
        &[2, 3, 7, 13],
        &[13, 9],
        Tensor::matmul,
    );
    binary_case(
        "matmul broadcast batch",
        &[2, 1, 5, 6],
        &[3, 6, 4],
        Tensor::matmul,
    );
    binary_case("matmul_t", &[2, 7, 13], &[2, 9, 13], Tensor::matmul_t);
    binary_case("bmm", &[4, 70, 33], &[4, 33, 65], Tensor::bmm);
    binary_case("linear layout", &[5, 16], &[8, 16], Tensor::matmul_t);
}

#[test]
fn a_large_product_uses_the_large_tile() {
    // 16 × 16 tiles of 128 × 128 outputs: the 128-tile kernel (256 tiles or more).
    let tol = Tolerance {
        abs: 1e-4,
        rel: 1e-4,
    };
    on_devices("matmul 2048 x 2048 x 64", tol, |dev| {
        let (a, b) = (randn(&[2048, 64], 8, dev), randn(&[64, 2048], 9, dev));
        vec![a.matmul(&b)]
    });
}

#[test]
fn a_batch_of_more_matrices_than_one_launch_holds() {
    // A launch holds at most 65,535 workgroups along z, one matrix each: 70,000 matrices
    // take two launches, forward and in both gradients (dA = dC·Bᵀ, dB = Aᵀ·dC). Splits
    // along the rows and columns are tested on small products with a smaller limit, in
    // the engine's `gpu/kernels.rs` (a real one needs 8,400,000 rows, slow on lavapipe).
    binary_case(
        "bmm of 70,000",
        &[70_000, 2, 3],
        &[70_000, 3, 2],
        Tensor::bmm,
    );
}

#[test]
fn layout_ops() {
    let shape = [2, 3, 4];
    unary_case("reshape", &shape, |x| x.reshape([4, 6]) * 2.0);
    unary_case("permute", &shape, |x| x.permute([2, 0, 1]));
    unary_case("transpose", &shape, |x| x.transpose(0, 2));
    unary_case("narrow", &shape, |x| x.narrow(2, 1, 2));
    unary_case("broadcast_to", &[3, 1], |x| x.broadcast_to([2, 3, 5]));
    unary_case("unsqueeze squeeze", &shape, |x| x.unsqueeze(1).squeeze(1));
    binary_case("concat", &[2, 3, 4], &[2, 5, 4], |a, b| {
        Tensor::concat(&[a, b], 1)
    });
    binary_case("stack", &[2, 3], &[2, 3], |a, b| Tensor::stack(&[a, b], 0));
}

#[test]
fn indexing_ops() {
    on_devices("index_select and embedding", F32, |dev| {
        let table = param(&[10, 6], 10, dev);
        let ids = Tensor::from_vec(vec![3.0, 1.0, 3.0, 9.0, 0.0, 3.0], [2, 3]);
        let rows = Tensor::embedding(&ids, &table);
        let picked =
            table.index_select(1, &Tensor::from_vec(vec![5.0, 0.0, 5.0], [3]));
        backward_weighted(&(rows.sum_dim(-1).sum() + picked.sum()), 11);
        vec![rows, picked, table.grad().unwrap()]
    });
    on_devices("gather", F32, |dev| {
        let x = param(&[3, 5], 12, dev);
        let index = Tensor::from_vec(vec![4.0, 0.0, 1.0, 1.0, 2.0, 2.0], [3, 2]);
        let y = x.gather(1, &index);
        backward_weighted(&y, 13);
        vec![y, x.grad().unwrap()]
    });
    on_devices("where, masked_fill, tril", F32, |dev| {
        let (a, b) = (param(&[3, 4], 14, dev), param(&[4], 15, dev));
        let cond = Tensor::from_vec(vec![1.0, 0.0, 0.0, 1.0], [4]).to(dev);
        let chosen = cond.where_cond(&a, &b);
        let filled = a.masked_fill(&cond, -1e9).softmax(-1);
        let lower = a.tril(0);
        backward_weighted(&(&chosen + &filled + &lower), 16);
        vec![chosen, filled, lower, a.grad().unwrap(), b.grad().unwrap()]
    });
    unary_case("repeat_interleave", &[2, 3], |x| x.repeat_interleave(2, 1));
}

#[test]
fn fused_additive_scores() {
    on_devices("additive_scores", F32, |dev| {
        let q = param(&[2, 3, 8], 17, dev);
        let k = param(&[2, 5, 8], 18, dev);
        let w = param(&[8], 19, dev);
        let s = q.additive_scores(&k, &w);
        backward_weighted(&s, 20);
        vec![s, q.grad().unwrap(), k.grad().unwrap(), w.grad().unwrap()]
    });
    on_devices("additive_scores_with relu", F32, |dev| {
        let q = param(&[2, 3, 8], 21, dev);
        let k = param(&[2, 5, 8], 22, dev);
        let w = param(&[8], 23, dev);
        let s = q.additive_scores_with(&k, &w, engine::Activation::Relu);
        backward_weighted(&s, 24);
        vec![s, q.grad().unwrap(), k.grad().unwrap(), w.grad().unwrap()]
    });
    on_devices("additive_scores_with relu of a NaN energy", F32, |dev| {
        let q = Tensor::from_vec(vec![f32::NAN, 0.5], [1, 1, 2])
            .to(dev)
            .requires_grad_();
        let k = Tensor::from_vec(vec![1.0, 0.5], [1, 1, 2])
            .to(dev)
            .requires_grad_();
        let w = Tensor::from_vec(vec![2.0, 3.0], [2])
            .to(dev)
            .requires_grad_();
        let s = q.additive_scores_with(&k, &w, engine::Activation::Relu);
        s.sum().backward();
        assert!(s.to_vec()[0].is_nan(), "{dev}: {:?}", s.to_vec());
        assert_eq!(q.grad().unwrap().to_vec(), vec![2.0, 3.0], "{dev}");
        let dw = w.grad().unwrap().to_vec();
        assert!(dw[0].is_nan() && dw[1] == 1.0, "{dev}: {dw:?}");
        vec![s, q.grad().unwrap(), k.grad().unwrap(), w.grad().unwrap()]
    });
}

#[test]
fn losses_and_dropout() {
    on_devices("cross_entropy", F32, |dev| {
        let logits = param(&[4, 7], 21, dev);
        let targets = Tensor::from_vec(vec![0.0, 6.0, 3.0, 3.0], [4]);
        let loss = logits.cross_entropy(&targets, Reduction::Mean);
        loss.backward();
        vec![loss, logits.grad().unwrap()]
    });
    on_devices("mse_loss", F32, |dev| {
        let (a, b) = (param(&[3, 4], 22, dev), randn(&[3, 4], 23, dev));
        let loss = a.mse_loss(&b, Reduction::Mean);
        loss.backward();
        vec![loss, a.grad().unwrap()]
    });
    on_devices("dropout: the same mask on every device", F32, |dev| {
        engine::manual_seed(24);
        let x = param(&[4, 50], 25, dev);
        let y = x.dropout(0.3, true);
        backward_weighted(&y, 26);
        vec![y, x.grad().unwrap()]
    });
}

#[test]
fn moving_between_devices_is_an_op() {
    on_devices("to and back", F32, |dev| {
        let x = randn(&[3, 4], 27, &Device::Cpu).requires_grad_();
        let there = x.to(dev);
        let y = (&there * &there).to(&Device::Cpu).to(dev);
        backward_weighted(&y, 28);
        // The gradient comes back to the CPU leaf: 2x times the weights.
        vec![y, x.grad().unwrap().to(dev)]
    });
}

#[test]
fn tensors_on_two_devices_are_refused_with_both_named() {
    let Some(gpu) = test_gpu() else { return };
    let a = Tensor::ones([2, 3]);
    let b = Tensor::ones([2, 3]).to(&gpu);
    let message = std::panic::catch_unwind(|| &a + &b)
        .err()
        .and_then(|e| e.downcast_ref::<String>().cloned())
        .expect("adding a CPU tensor to a GPU tensor panics with a message");
    assert!(
        message.starts_with("add: its inputs live on two devices"),
        "{message}"
    );
    assert!(
        message.contains("on cpu") && message.contains(&format!("on {gpu}")),
        "{message}"
    );
    // A 0-dimensional CPU tensor is a scalar, and goes with any device.
    assert_eq!((&b * &Tensor::scalar(2.0)).to_vec(), vec![2.0; 6]);
}

#[test]
fn an_op_without_a_gpu_kernel_says_so() {
    let Some(gpu) = test_gpu() else { return };
    let x = Tensor::ones([2, 3]).to(&gpu);
    let refusal = |op: &str, run: &dyn Fn() -> Tensor| {
        let message = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run))
            .err()
            .and_then(|e| e.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| panic!("{op} on the GPU panics with a message"));
        let expected = format!(
            "{op}: {op} has no GPU kernel, and its input [2, 3] lives on {gpu}"
        );
        assert!(message.starts_with(&expected), "{message}");
        assert!(message.contains("hint: compute it on the CPU"), "{message}");
    };
    refusal("cumsum", &|| x.cumsum(1));
    refusal("topk", &|| x.topk(2, 1).0);
    refusal("max_dim_with_indices", &|| x.max_dim_with_indices(1).0);
    refusal("blocked_attention", &|| {
        x.blocked_attention(&x, &x, &engine::BlockedAttentionOptions::default())
    });
}

#[test]
fn gradient_clipping_measures_the_same_norm_on_every_device() {
    on_devices("clip_grad_norm", F32, |dev| {
        let (a, b) = (param(&[3, 40], 31, dev), param(&[7], 32, dev));
        (a.square().sum() * 3.0 + b.sum()).backward();
        let norm = engine::optim::clip_grad_norm(&[a.clone(), b.clone()], 1.0);
        let norm = Tensor::scalar(norm).to(dev).reshape([1]);
        vec![norm, a.grad().unwrap(), b.grad().unwrap()]
    });
}
