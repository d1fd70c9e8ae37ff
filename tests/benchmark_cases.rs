//! The benchmark cases (`benchmarks::Case`): names that identify a case and parse back, and
//! the one case too large to run. Here rather than in the benchmarks crate, whose only
//! test-mode targets would otherwise build its benchmark harness into every
//! `cargo test --workspace`.

use benchmarks::Case;

#[test]
fn names_are_unique_and_parse_back() {
    let cases = Case::all();
    for case in &cases {
        assert_eq!(Case::from_name(&case.to_string()), Some(*case));
    }
    let mut names: Vec<String> = cases.iter().map(Case::to_string).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), cases.len());
}

#[test]
fn only_broadcast_additive_attention_at_1024_is_skipped() {
    let skipped: Vec<String> = Case::all()
        .iter()
        .filter(|c| !c.fits())
        .map(Case::to_string)
        .collect();
    assert_eq!(
        skipped,
        [
            "additive_broadcast/forward/1024",
            "additive_broadcast/forward_backward/1024"
        ]
    );
}
