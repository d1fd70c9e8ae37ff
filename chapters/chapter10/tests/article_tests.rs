//! Pitfall 6: the article's two tests, what they let through, and the stronger checks
//! that catch it; the table of every implementation through every check, cell by
//! cell.

use chapter10::article_tests::{
    ARTICLE_BATCH, ARTICLE_KEYS, Batch, CHECKS, IMPLEMENTATIONS, VALUE_SIZE,
    article_case, article_fill, batch_not_square, caught, detached_key_projection,
    forgotten_unsqueeze, fully_masked_row, gradcheck_holds,
    gradients_reach_everything, keep_from_lengths, lengths_from_mask,
    mask_and_complement, mask_wrong_sense, neg_inf_fill, reference,
    shapes_and_sums_hold, softmax_wrong_axis, table,
};
use engine::Tensor;

/// The largest absolute difference between two tensors of one shape.
fn max_diff(a: &Tensor, b: &Tensor) -> f32 {
    assert_eq!(a.shape(), b.shape());
    a.to_vec()
        .iter()
        .zip(b.to_vec())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

#[test]
fn caught_returns_the_value_or_the_panic_message() {
    assert_eq!(caught(|| 3), Ok(3));
    assert_eq!(
        caught(|| panic!("shape {}", 2)),
        Err::<(), _>("shape 2".into())
    );
}

#[test]
fn the_article_s_case_is_square_with_two_padded_keys_in_example_0() {
    assert_eq!(ARTICLE_BATCH, ARTICLE_KEYS);
    let (_, batch) = article_case();
    assert_eq!(batch.query.shape(), &[4, 3]);
    assert_eq!(batch.keys.shape(), &[4, 4, 3]);
    assert_eq!(batch.values.shape(), &[4, 4, VALUE_SIZE]);
    assert_eq!(
        &batch.keep.to_vec()[..8],
        &[1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]
    );
    assert_eq!(
        keep_from_lengths(&[0, 2], 3).to_vec(),
        vec![0.0, 0.0, 0.0, 1.0, 1.0, 0.0]
    );
}

#[test]
fn the_reference_passes_the_article_s_tests_and_every_stronger_check() {
    assert_eq!(shapes_and_sums_hold(reference), Ok(()));
    assert_eq!(gradients_reach_everything(reference), Ok(()));
    assert_eq!(gradcheck_holds(reference), Ok(()));
    assert_eq!(batch_not_square(reference), Ok(()));
    assert_eq!(fully_masked_row(reference), Ok(()));
    assert_eq!(mask_and_complement(reference), Ok(()));
}

#[test]
fn the_article_s_tests_do_catch_a_mask_read_the_wrong_way_round_or_a_wrong_axis() {
    // Example 1 has no padding, so read the other way round it has no key at all.
    assert_eq!(
        shapes_and_sums_hold(mask_wrong_sense),
        Err("the weights of example 1 sum to 0".into())
    );
    let err = shapes_and_sums_hold(softmax_wrong_axis).unwrap_err();
    assert!(
        err.starts_with("the weights of example 0 sum to 0."),
        "{err}"
    );
    // Test 2 catches a query cut out of the graph.
    let detached_query = |p: &_, b: &Batch| {
        let cut = Batch {
            query: b.query.detach(),
            ..b.clone()
        };
        reference(p, &cut)
    };
    assert_eq!(
        gradients_reach_everything(detached_query),
        Err("query.grad is None".into())
    );
}

#[test]
fn the_forgotten_unsqueeze_passes_the_article_s_tests_with_wrong_numbers() {
    let (p, b) = article_case();
    assert_eq!(shapes_and_sums_hold(forgotten_unsqueeze), Ok(()));
    assert_eq!(gradients_reach_everything(forgotten_unsqueeze), Ok(()));
    // Its gradients are right too, for the wrong function: gradcheck passes.
    assert_eq!(gradcheck_holds(forgotten_unsqueeze), Ok(()));
    let (context, weights) = forgotten_unsqueeze(&p, &b);
    let (right_context, right_weights) = reference(&p, &b);
    assert!(max_diff(&weights, &right_weights) > 0.05);
    assert!(max_diff(&context, &right_context) > 0.05);
}

#[test]
fn a_batch_with_b_not_equal_to_k_refuses_the_forgotten_unsqueeze() {
    let err = batch_not_square(forgotten_unsqueeze).unwrap_err();
    assert!(
        err.starts_with("add: cannot broadcast [3, 4] with [3, 5, 4]"),
        "{err}"
    );
    assert!(err.contains("hint: did you mean to unsqueeze(1) the left operand"));
    assert_eq!(batch_not_square(reference), Ok(()));
}

#[test]
fn the_detached_key_projection_passes_the_article_s_tests_and_fails_gradcheck() {
    let (p, b) = article_case();
    assert_eq!(shapes_and_sums_hold(detached_key_projection), Ok(()));
    assert_eq!(gradients_reach_everything(detached_key_projection), Ok(()));
    // The forward pass is the reference's, number for number.
    let (context, _) = detached_key_projection(&p, &b);
    assert_eq!(context.to_vec(), reference(&p, &b).0.to_vec());
    context.sum().backward();
    assert!(b.keys.grad().is_ok());
    assert!(p.w_k.grad().is_err(), "W_k is out of the graph");
    // Input 1 of the gradcheck is W_k: backward gives 0 where the slope is not.
    let err = gradcheck_holds(detached_key_projection).unwrap_err();
    assert!(
        err.starts_with("gradcheck: input 1 element ")
            && err.contains("backward gives 0,"),
        "{err}"
    );
}

#[test]
fn the_fills_pass_the_article_s_tests_and_differ_on_an_empty_example() {
    for attend in [article_fill, neg_inf_fill] {
        assert_eq!(shapes_and_sums_hold(attend), Ok(()));
        assert_eq!(gradients_reach_everything(attend), Ok(()));
        assert_eq!(gradcheck_holds(attend), Ok(()));
    }
    // -1e9: uniform weights 1/K = 0.25 on the padding of the empty example.
    assert_eq!(
        fully_masked_row(article_fill),
        Err("key 0 of example 1 is masked, yet has weight 0.25".into())
    );
    // -inf: NaN from the empty example's context on (element 2 = example 1).
    assert_eq!(
        fully_masked_row(neg_inf_fill),
        Err("NaN at element 2 of the context".into())
    );
    assert_eq!(fully_masked_row(reference), Ok(()));
}

#[test]
fn lengths_from_the_mask_pass_until_the_padding_is_at_the_front() {
    let (p, b) = article_case();
    assert_eq!(shapes_and_sums_hold(lengths_from_mask), Ok(()));
    assert_eq!(
        lengths_from_mask(&p, &b).1.to_vec(),
        reference(&p, &b).1.to_vec()
    );
    assert_eq!(
        mask_and_complement(lengths_from_mask),
        Err(
            "with its complement: key 0 of example 0 is masked, yet has weight 1"
                .into()
        )
    );
    assert_eq!(
        mask_and_complement(mask_wrong_sense),
        Err("with the mask: key 3 of example 0 is masked, yet has weight 1".into())
    );
}

#[test]
fn the_table_holds_every_implementation_through_every_check() {
    let table = table();
    // Columns: test 1, test 2, gradcheck, B ≠ K, empty row, 1 − mask.
    let expected: [(&str, [bool; 6]); 8] = [
        (
            "reference (Fill::Safe)",
            [true, true, true, true, true, true],
        ),
        ("article's -1e9 fill", [true, true, true, true, false, true]),
        ("-inf fill", [true, true, true, true, false, true]),
        ("forgotten unsqueeze", [true, true, true, false, true, true]),
        (
            "mask in the wrong sense",
            [false, true, true, true, false, false],
        ),
        (
            "softmax over the batch",
            [false, true, true, false, false, false],
        ),
        (
            "lengths from the mask",
            [true, true, true, true, true, false],
        ),
        ("detached W_k", [true, true, false, true, true, true]),
    ];
    assert_eq!(table.rows.len(), expected.len());
    assert_eq!(IMPLEMENTATIONS.len(), expected.len());
    for ((name, results), (expected_name, cells)) in table.rows.iter().zip(expected) {
        assert_eq!(*name, expected_name);
        for ((check, _), (result, cell)) in
            CHECKS.iter().zip(results.iter().zip(cells))
        {
            assert_eq!(result.is_ok(), cell, "{name} / {check}: {result:?}");
            assert_eq!(table.passed(name, check), cell);
        }
    }
    // The article's two tests pass every implementation but two.
    let missed = table
        .rows
        .iter()
        .filter(|(name, _)| {
            table.passed(name, "test 1") && table.passed(name, "test 2")
        })
        .count();
    assert_eq!(missed, 6);
    assert_eq!(table.reason("reference (Fill::Safe)", "test 1"), None);
    assert_eq!(
        table.reason("-inf fill", "empty row"),
        Some("NaN at element 2 of the context")
    );
}

#[test]
fn the_table_prints_one_line_per_implementation_within_the_page_s_width() {
    let printed = table().to_string();
    let lines: Vec<&str> = printed.lines().collect();
    assert_eq!(lines.len(), 1 + IMPLEMENTATIONS.len());
    // 23 columns of names, then 10 per check.
    assert!(lines.iter().all(|l| l.chars().count() == 83), "{printed}");
    assert_eq!(
        lines[0].trim_start(),
        "test 1    test 2 gradcheck     B ≠ K empty row  1 − mask"
    );
    assert_eq!(
        lines[4],
        format!("{:<23}{}", "forgotten unsqueeze", "      pass".repeat(3))
            + "      FAIL"
            + &"      pass".repeat(2)
    );
}
