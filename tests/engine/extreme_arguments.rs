//! Arguments at the edge of their type (`usize::MAX`, `i64::MIN`, NaN, ∞) give the right
//! answer or a refusal that names the op and points at the caller's line: never an
//! overflow, an index error or a silently wrong number inside the engine.

use engine::{BlockedAttentionOptions, Tensor};

use crate::common::{randn, refused_in};

#[test]
fn tril_and_triu_take_any_i64_diagonal_without_overflow() {
    // `j ≤ i + diagonal` overflowed at i64::MAX; the triangle is now `j − i ≤ diagonal`,
    // so a diagonal beyond the matrix keeps everything or nothing, as in PyTorch.
    let x = randn(&[2, 3, 4], 1).requires_grad_();
    let zeros = vec![0.0; 24];
    assert_eq!(x.tril(i64::MAX).to_vec(), x.to_vec());
    assert_eq!(x.tril(i64::MIN).to_vec(), zeros);
    assert_eq!(x.triu(i64::MIN).to_vec(), x.to_vec());
    assert_eq!(x.triu(i64::MAX).to_vec(), zeros);
    // The same as a diagonal just past the matrix on either side.
    assert_eq!(x.tril(3).to_vec(), x.to_vec());
    assert_eq!(x.tril(-3).to_vec(), zeros);
    // And the gradient passes through exactly the kept entries.
    (x.tril(i64::MAX).sum() + x.triu(i64::MAX).sum()).backward();
    assert_eq!(x.grad().unwrap().to_vec(), vec![1.0; 24]);
}

#[test]
fn a_dimension_past_i64_is_refused_not_read_as_the_last_one() {
    // `usize::MAX as i64` is -1: before, `sum_dim(usize::MAX)` summed the last dimension.
    let x = Tensor::ones([3, 4]);
    let out_of_range =
        "dimension 9223372036854775807 is out of range for a tensor of rank 2";
    refused_in(file!(), &format!("sum_dim: {out_of_range}"), || {
        let _ = x.sum_dim(usize::MAX);
    });
    refused_in(file!(), &format!("softmax: {out_of_range}"), || {
        let _ = x.softmax(u64::MAX);
    });
    refused_in(file!(), &format!("transpose: {out_of_range}"), || {
        let _ = x.transpose(usize::MAX, 0);
    });
    refused_in(file!(), &format!("concat: {out_of_range}"), || {
        let _ = Tensor::concat(&[&x, &x], usize::MAX);
    });
    refused_in(
        file!(),
        "unsqueeze: cannot insert a dimension at 9223372036854775807",
        || {
            let _ = x.unsqueeze(usize::MAX);
        },
    );
    refused_in(
        file!(),
        "stack: cannot insert a dimension at 9223372036854775807",
        || {
            let _ = Tensor::stack(&[&x, &x], usize::MAX);
        },
    );
    refused_in(file!(), "sum_dim: dimension -9223372036854775808", || {
        let _ = x.sum_dim(i128::MIN);
    });
    // Small values of the wider types still count as they read.
    assert_eq!(x.sum_dim(1u64).shape(), &[3]);
    assert_eq!(x.sum_dim(1u32).shape(), &[3]);
}

#[test]
fn a_causal_offset_past_every_key_hides_nothing() {
    // `q + offset + 1` overflowed at usize::MAX; an offset at or past the last key now
    // sees every key, the same bits as no causal order at all.
    let q = randn(&[2, 3, 4], 2);
    let k = randn(&[2, 5, 4], 3);
    let v = randn(&[2, 5, 2], 4);
    let plain_options = BlockedAttentionOptions {
        block: 2,
        ..Default::default()
    };
    let plain = q.blocked_attention(&k, &v, &plain_options);
    for offset in [4, 5, usize::MAX - 1, usize::MAX] {
        let options = BlockedAttentionOptions {
            causal_offset: Some(offset),
            ..plain_options.clone()
        };
        let out = q.blocked_attention(&k, &v, &options);
        assert_eq!(out.to_vec(), plain.to_vec(), "causal_offset {offset}");
    }
}

#[test]
fn refused_lengths_of_blocked_attention_point_at_the_caller() {
    let q = Tensor::ones([1, 2, 4]);
    for bad in [f32::NAN, f32::INFINITY, -1.0, 0.5] {
        let options = BlockedAttentionOptions {
            lengths: Some(Tensor::from_vec(vec![bad], [1])),
            ..Default::default()
        };
        let expected = format!(
            "blocked_attention: lengths must be whole numbers ≥ 0, found {bad}"
        );
        refused_in(file!(), &expected, || {
            let _ = q.blocked_attention(&q, &q, &options);
        });
    }
    let options = BlockedAttentionOptions {
        keep: Some(Tensor::from_vec(vec![0.5, 1.0], [1, 1, 2])),
        ..Default::default()
    };
    refused_in(file!(), "blocked_attention: ", || {
        let _ = q.blocked_attention(&q, &q, &options);
    });
}

#[test]
fn sizes_and_indices_at_the_edge_of_their_type_are_refused_where_they_are_written() {
    let x = Tensor::ones([3, 4]);
    refused_in(file!(), "narrow: the range 18446744073709551615..", || {
        let _ = x.narrow(0, usize::MAX, 2);
    });
    refused_in(file!(), "narrow: the range 18446744073709551614..", || {
        let _ = x.slice(0, usize::MAX - 1..usize::MAX);
    });
    refused_in(file!(), "repeat_interleave: 3 entries repeated", || {
        let _ = x.repeat_interleave(usize::MAX / 2, 0);
    });
    refused_in(file!(), "topk: k = 18446744073709551615 is larger", || {
        let _ = x.topk(usize::MAX, 1);
    });
    refused_in(
        file!(),
        "zeros: the shape [18446744073709551615, 2] holds more",
        || {
            let _ = Tensor::zeros([usize::MAX, 2]);
        },
    );
    refused_in(
        file!(),
        "expand: the shape [18446744073709551615, 2] holds more",
        || {
            let _ = Tensor::ones([1, 1]).expand([usize::MAX, 2]);
        },
    );
    refused_in(file!(), "reshape: cannot reshape [3, 4]", || {
        let _ = x.reshape([usize::MAX, 0]);
    });
    for index in [1e30, f32::NAN, f32::INFINITY, -1.0, 0.5] {
        let index = Tensor::from_vec(vec![index], [1]);
        refused_in(file!(), "index_select: index ", || {
            let _ = x.index_select(0, &index);
        });
        refused_in(file!(), "embedding: index ", || {
            let _ = Tensor::embedding(&index, &x);
        });
    }
    refused_in(file!(), "gather: index NaN", || {
        let _ = x.gather(1, &Tensor::from_vec(vec![f32::NAN; 12], [3, 4]));
    });
}

#[test]
fn probabilities_bounds_and_spreads_that_are_not_numbers_are_refused() {
    let x = Tensor::ones([3, 4]);
    refused_in(
        file!(),
        "dropout: the probability p must be in [0, 1], found NaN",
        || {
            let _ = x.dropout(f32::NAN, true);
        },
    );
    refused_in(
        file!(),
        "rand: needs finite low < high, found low = 0, high = inf",
        || {
            let _ = Tensor::rand([2], 0.0, f32::INFINITY);
        },
    );
    refused_in(
        file!(),
        "normal: needs a finite mean and a finite std ≥ 0",
        || {
            let _ = Tensor::normal([2], 0.0, f32::NAN);
        },
    );
    refused_in(file!(), "clamp: needs min ≤ max (neither NaN)", || {
        let _ = x.clamp(f32::NAN, 1.0);
    });
    let q = Tensor::ones([1, 2, 4]);
    let options = BlockedAttentionOptions {
        scale: Some(f32::NAN),
        ..Default::default()
    };
    refused_in(
        file!(),
        "blocked_attention: the scale must be finite",
        || {
            let _ = q.blocked_attention(&q, &q, &options);
        },
    );
}
