//! The lighter forms of additive attention: their parameter and multiply-add counts
//! against what the tensors hold and do, their gradients against finite
//! differences, and the full form against the library's module.

use attention::{AdditiveAttention, AdditiveAttentionConfig, AttentionWeights, Mask};
use chapter05::light::{Sizes, Variant, attend, scores, weight_distance};
use engine::Tensor;
use engine::gradcheck::gradcheck;
use engine::nn::Module;

const SQUARE: Sizes = Sizes { query: 6, key: 6 };
const APART: Sizes = Sizes { query: 3, key: 5 };

fn forms() -> [Variant; 5] {
    [
        Variant::Full { hidden: 4 },
        Variant::Full { hidden: 1 },
        Variant::NoQueryProjection,
        Variant::LowRankKeys { hidden: 4, rank: 2 },
        Variant::Tied { hidden: 4 },
    ]
}

fn inputs(s: Sizes, [b, q, k, dv]: [usize; 4]) -> [Tensor; 3] {
    [
        Tensor::randn([b, q, s.query]),
        Tensor::randn([b, k, s.key]),
        Tensor::randn([b, k, dv]),
    ]
}

#[test]
fn the_parameter_count_is_what_the_tensors_hold() {
    engine::manual_seed(0);
    for sizes in [SQUARE, APART] {
        for form in forms() {
            if matches!(form, Variant::Tied { .. }) && sizes.query != sizes.key {
                continue;
            }
            let held: usize = form.init(sizes).iter().map(Tensor::numel).sum();
            assert_eq!(held, form.parameters(sizes), "{}", form.name());
        }
    }
}

#[test]
fn the_full_form_counts_what_the_library_module_holds() {
    let module = AdditiveAttention::new(AdditiveAttentionConfig {
        query_size: 3,
        key_size: 5,
        num_hiddens: 8,
        ..Default::default()
    });
    assert_eq!(
        Variant::Full { hidden: 8 }.parameters(APART),
        module.num_parameters()
    );
}

#[test]
fn the_multiply_add_count_is_what_the_shapes_of_a_pass_give() {
    engine::manual_seed(1);
    for (sizes, shape) in [(SQUARE, [2, 3, 5, 7]), (APART, [3, 4, 2, 6])] {
        for form in forms() {
            if matches!(form, Variant::Tied { .. }) && sizes.query != sizes.key {
                continue;
            }
            let params = form.init(sizes);
            let [q, k, v] = inputs(sizes, shape);
            let (weights, output, counted) =
                attend(form, &params, [&q, &k, &v], &Mask::none());
            assert_eq!(weights.shape(), &shape[..3]);
            assert_eq!(output.shape(), &[shape[0], shape[1], shape[3]]);
            assert_eq!(counted, form.multiply_adds(sizes, shape), "{}", form.name());
        }
    }
}

#[test]
fn the_light_forms_count_fewer_than_the_full_one_where_they_save() {
    let s = Sizes { query: 64, key: 64 };
    let shape = [2, 16, 16, 64];
    let full = Variant::Full { hidden: 64 };
    for light in [
        Variant::Full { hidden: 16 },
        Variant::NoQueryProjection,
        Variant::LowRankKeys {
            hidden: 64,
            rank: 8,
        },
        Variant::Tied { hidden: 64 },
    ] {
        assert!(light.parameters(s) < full.parameters(s), "{}", light.name());
    }
    // Tying shares the weights, not the work.
    let tied = Variant::Tied { hidden: 64 };
    assert_eq!(tied.multiply_adds(s, shape), full.multiply_adds(s, shape));
}

#[test]
fn every_form_passes_gradcheck() {
    engine::manual_seed(2);
    for form in forms() {
        let sizes = if matches!(form, Variant::Tied { .. }) {
            SQUARE
        } else {
            APART
        };
        let params = form.init(sizes);
        let [q, k, _] = inputs(sizes, [2, 3, 4, 1]);
        let mut all = vec![q, k];
        all.extend(params.iter().map(Tensor::detach));
        gradcheck(|t| scores(form, &t[0], &t[1], &t[2..]).0, &all)
            .unwrap_or_else(|e| panic!("{}: {e}", form.name()));
    }
}

#[test]
fn the_full_form_with_the_library_weights_gives_the_library_weights() {
    engine::manual_seed(3);
    let module = AdditiveAttention::new(AdditiveAttentionConfig {
        query_size: 3,
        key_size: 5,
        num_hiddens: 8,
        ..Default::default()
    });
    let state = module.state_dict();
    let params = [
        state.get("W_q.weight").expect("W_q").clone(),
        state.get("W_k.weight").expect("W_k").clone(),
        state.get("w_v.weight").expect("w_v").reshape([8]),
    ];
    let [q, k, v] = inputs(APART, [2, 3, 4, 6]);
    let lens = Tensor::from_vec(vec![4.0, 2.0], [2]);
    let mask = Mask::valid_lens(&lens);
    let (weights, output, _) =
        attend(Variant::Full { hidden: 8 }, &params, [&q, &k, &v], &mask);
    let expected = module.forward(&q, &k, &v, &mask);
    let expected_weights = module.last_attention_weights().expect("after forward");
    assert!(weight_distance(&weights, &expected_weights) < 1e-6);
    lesson::assert_close(&output.to_vec(), &expected.to_vec(), 1e-6);
}

#[test]
#[should_panic(expected = "one projection for queries and keys needs one size")]
fn tying_refuses_queries_and_keys_of_different_sizes() {
    let _ = Variant::Tied { hidden: 4 }.init(APART);
}

#[test]
fn the_distance_of_weights_is_half_the_absolute_difference() {
    let a = Tensor::from_vec(vec![1.0, 0.0, 0.5, 0.5], [1, 2, 2]);
    let b = Tensor::from_vec(vec![0.0, 1.0, 0.5, 0.5], [1, 2, 2]);
    assert_eq!(weight_distance(&a, &b), 0.5); // 1 for the first query, 0 for the second
    assert_eq!(weight_distance(&a, &a), 0.0);
}
