//! Pitfall 7: the causal mask forgotten in a decoder. The leak check catches the bug
//! on a model that has never been trained, and a short run shows the loss it fakes.

use chapter10::causal::{
    Decoder, HALF, INPUT_LEN, VOCAB, draw, future_leaks, generation_accuracy, loss,
    successor, train,
};

#[test]
fn the_sequences_are_a_random_half_then_its_successors() {
    engine::manual_seed(0);
    let ids = draw(4).to_vec();
    for row in ids.chunks(2 * HALF) {
        for i in 0..HALF {
            assert!((1.0..VOCAB as f32).contains(&row[i]) && row[i].fract() == 0.0);
            assert_eq!(row[HALF + i], successor(row[i]));
        }
    }
    assert_eq!(successor(VOCAB as f32 - 1.0), 1.0);
}

// ANCHOR: leak_test
#[test]
fn changing_a_future_token_must_not_change_an_earlier_output() {
    engine::manual_seed(0);
    let ids = draw(2).narrow(1, 0, INPUT_LEN);
    engine::manual_seed(1);
    let fixed = Decoder::new(true);
    assert_eq!(future_leaks(&fixed, &ids), vec![]);
    engine::manual_seed(1);
    let buggy = Decoder::new(false);
    // Untrained, the bug shows: every earlier position reads every later token.
    let leaks = future_leaks(&buggy, &ids);
    assert_eq!(leaks.len(), INPUT_LEN * (INPUT_LEN - 1) / 2, "{leaks:?}");
}
// ANCHOR_END: leak_test

#[test]
fn the_leak_check_counts_only_earlier_positions() {
    engine::manual_seed(0);
    let ids = draw(1).narrow(1, 0, INPUT_LEN);
    engine::manual_seed(1);
    let buggy = Decoder::new(false);
    assert!(future_leaks(&buggy, &ids).iter().all(|&(i, j)| i < j));
}

#[test]
fn a_short_run_lowers_the_loss_with_the_mask_and_lower_still_without() {
    let steps = 40;
    let fixed = train(true, steps, 1);
    let buggy = train(false, steps, 1);
    for run in [&fixed, &buggy] {
        assert!(run.final_loss(5) < run.losses[0] - 0.3, "{:?}", run.losses);
    }
    // Only the model that reads the answer gets below ln 8 on the random half.
    let floor = ((VOCAB - 1) as f32).ln();
    assert!(fixed.held_out_halves[0] > floor);
    assert!(buggy.held_out_halves[0] < floor);
    assert_eq!((fixed.leaks, buggy.leaks > 0), (0, true));
}

#[test]
fn generation_is_scored_on_the_generated_half_only() {
    // An untrained model generates something; its score is a share of HALF tokens.
    engine::manual_seed(2);
    let sequences = draw(8);
    let model = Decoder::new(true);
    let score = generation_accuracy(&model, &sequences);
    assert!((0.0..=1.0).contains(&score));
    assert_eq!((score * (8 * HALF) as f32).fract(), 0.0);
    // The loss of a fresh model is near ln VOCAB, every position predicted at once.
    let l = loss(&model, &sequences).item();
    assert!(l.is_finite() && l > 1.0, "{l}");
}
