//! Masks built once: a bias looked up in a table is the bias built at the call, bit for
//! bit, and so are the weights it gives.

use attention::Mask;
use chapter04::{BiasTable, attend, causal_padding_bias, mask_bytes};
use engine::Tensor;

fn lens_tensor(lens: &[usize]) -> Tensor {
    Tensor::from_vec(lens.iter().map(|&l| l as f32).collect(), [lens.len()])
}

#[test]
fn every_mixture_of_lengths_looked_up_is_the_mask_rebuilt() {
    let (t, lengths) = (6, [1, 2, 4, 6]);
    let table = BiasTable::new(&lengths, t);
    engine::manual_seed(3);
    let scores = Tensor::randn([3, t, t]);
    for a in lengths {
        for b in lengths {
            for c in lengths {
                let lens = [a, b, c];
                let looked_up = table.bias(&lens);
                let rebuilt = causal_padding_bias(&lens_tensor(&lens), t);
                assert_eq!(looked_up.shape(), &[3, t, t]);
                assert_eq!(looked_up.to_vec(), rebuilt.to_vec(), "{lens:?}");
                assert_eq!(
                    attend(&scores, &looked_up).to_vec(),
                    attend(&scores, &rebuilt).to_vec(),
                    "{lens:?}"
                );
            }
        }
    }
}

#[test]
fn the_kept_causal_bias_gives_the_weights_of_full_lengths() {
    let t = 5;
    let table = BiasTable::new(&[2, t], t);
    assert_eq!(table.causal().shape(), &[1, t, t]);
    engine::manual_seed(4);
    let scores = Tensor::randn([3, t, t]);
    let rebuilt = causal_padding_bias(&lens_tensor(&[t, t, t]), t);
    assert_eq!(
        attend(&scores, table.causal()).to_vec(),
        attend(&scores, &rebuilt).to_vec()
    );
}

#[test]
fn the_bias_hides_what_the_library_mask_hides_and_no_row_is_empty() {
    let (t, lens) = (5, [1, 3, 5]);
    let bias = causal_padding_bias(&lens_tensor(&lens), t);
    let mask = Mask::causal() & Mask::valid_lens(&lens_tensor(&lens));
    let keep = mask.keep_for("test", &[3, t, t]).expect("a mask");
    let keep = keep.broadcast_to([3, t, t]).to_vec();
    for (b, k) in bias.to_vec().iter().zip(&keep) {
        assert_eq!(*b == 0.0, *k == 1.0);
        assert!(*b == 0.0 || *b == f32::NEG_INFINITY);
    }
    // Key 0 is visible to every query: no row of weights is NaN.
    let weights = attend(&Tensor::zeros([3, t, t]), &bias).to_vec();
    assert!(weights.iter().all(|w| w.is_finite()));
}

#[test]
#[should_panic(expected = "every length must be in 1..=4")]
fn a_table_refuses_a_length_of_zero() {
    let _ = BiasTable::new(&[0, 4], 4);
}

#[test]
#[should_panic(expected = "length 3 is not one of [2, 4]")]
fn a_table_refuses_a_length_it_does_not_hold() {
    let _ = BiasTable::new(&[2, 4], 4).bias(&[3]);
}

#[test]
fn looking_up_allocates_only_the_result_and_keeping_nothing() {
    let (b, t) = (8, 16);
    let table = BiasTable::new(&[4, 8, 16], t);
    let lens: Vec<usize> = (0..b).map(|i| [4, 8, 16][i % 3]).collect();
    let result = b * t * t * 4;
    let (peak, held) = mask_bytes(|| table.bias(&lens));
    assert_eq!(held, result);
    assert_eq!(peak, result + b * 4, "the result and its indices");
    let (rebuilt_peak, rebuilt_held) =
        mask_bytes(|| causal_padding_bias(&lens_tensor(&lens), t));
    assert_eq!(rebuilt_held, result);
    assert!(rebuilt_peak > peak);
    assert_eq!(mask_bytes(|| table.causal().clone()), (0, 0));
}
