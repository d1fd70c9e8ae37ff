//! Anomaly mode names the first op whose forward or backward output is not finite.

use crate::common;

use common::panic_message;
use engine::{Tensor, anomaly};

#[test]
fn off_by_default_log_of_zero_is_minus_infinity() {
    assert!(!anomaly::is_enabled());
    let y = Tensor::from_vec(vec![1.0, 0.0], [2]).log();
    assert_eq!(y.to_vec(), vec![0.0, f32::NEG_INFINITY]);
}

#[test]
fn forward_log_of_zero_is_reported_with_the_op_and_its_input_shapes() {
    let x = Tensor::from_vec(vec![1.0, 2.0, 0.0], [3, 1]);
    let msg = panic_message(|| {
        anomaly::detect_anomaly(|| {
            let y = x.exp(); // finite: not reported
            let _ = (&y - &y).log(); // log(0) = -inf
        })
    });
    assert!(msg.contains("forward pass of `log`"), "{msg}");
    assert!(msg.contains("-inf"), "{msg}");
    assert!(msg.contains("input shapes: [3, 1]"), "{msg}");
    assert!(
        !anomaly::is_enabled(),
        "the mode is restored after the panic"
    );
}

#[test]
fn backward_of_sqrt_at_zero_is_reported() {
    // sqrt(0) = 0 is fine going forward; its derivative 1 / (2 sqrt(0)) is infinite.
    let x = Tensor::from_vec(vec![4.0, 0.0], [2]).requires_grad_();
    let msg = panic_message(|| {
        anomaly::detect_anomaly(|| {
            x.sqrt().sum().backward();
        })
    });
    assert!(msg.contains("backward pass of `sqrt`"), "{msg}");
    assert!(msg.contains("element 1"), "{msg}");
    assert!(msg.contains("input shapes: [2]"), "{msg}");
}

#[test]
fn finite_computations_pass_untouched_in_anomaly_mode() {
    let x = Tensor::from_vec(vec![0.5, 1.5], [2]).requires_grad_();
    anomaly::detect_anomaly(|| x.log().sum().backward());
    assert_eq!(x.grad().unwrap().to_vec(), vec![2.0, 1.0 / 1.5]);
}

#[test]
fn set_detect_anomaly_switches_the_mode_for_this_thread() {
    anomaly::set_detect_anomaly(true);
    assert!(anomaly::is_enabled());
    let other_thread = std::thread::spawn(anomaly::is_enabled).join().unwrap();
    anomaly::set_detect_anomaly(false);
    assert!(!other_thread);
    assert!(!anomaly::is_enabled());
}
