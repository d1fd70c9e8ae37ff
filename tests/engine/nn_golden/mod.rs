//! Reading `tests/golden/nn_optim.json`, shared by the `nn` and `optim` tests.

use std::sync::LazyLock;

use engine::Tensor;
use serde::Deserialize;
use serde_json::Value;

static GOLDEN: LazyLock<Value> = LazyLock::new(|| {
    serde_json::from_str(include_str!("../../golden/nn_optim.json"))
        .expect("nn_optim.json is valid JSON")
});

/// A tensor as the golden script stores it.
#[derive(Deserialize)]
pub struct Stored {
    pub shape: Vec<usize>,
    pub data: Vec<f64>,
}

/// One named case of the golden file.
pub fn case(name: &str) -> &'static Value {
    let c = &GOLDEN[name];
    assert!(!c.is_null(), "nn_optim.json has no case {name:?}");
    c
}

/// A stored tensor, read from a JSON value.
pub fn stored(value: &Value, what: &str) -> Stored {
    serde_json::from_value(value.clone())
        .unwrap_or_else(|e| panic!("{what} is not a stored tensor: {e}"))
}

/// A stored tensor as an engine tensor.
pub fn to_tensor(value: &Value) -> Tensor {
    let s = stored(value, "value");
    Tensor::from_vec(s.data.iter().map(|&v| v as f32).collect(), &s.shape)
}

/// Compares at f32 precision: |actual − expected| ≤ 1e-5 + 1e-5 · |expected|.
#[track_caller]
pub fn assert_close(actual: &Tensor, expected: &Value, what: &str) {
    let expected = stored(expected, what);
    assert_eq!(actual.shape(), expected.shape.as_slice(), "shape of {what}");
    for (i, (&a, &e)) in actual.to_vec().iter().zip(&expected.data).enumerate() {
        let err = (f64::from(a) - e).abs();
        assert!(
            err <= 1e-5 + 1e-5 * e.abs(),
            "{what}[{i}]: engine {a}, PyTorch {e} (difference {err:e})"
        );
    }
}
