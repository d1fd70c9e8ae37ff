//! Matrix products give the same bits on any number of threads. The thread count is read
//! once per process (`MATMUL_NUM_THREADS`), so the test runs its own binary again, once per
//! count, and compares what each run prints.

use std::process::Command;

use engine::Tensor;
use engine::random::rng_from_seed;

/// The products whose bits are compared: large enough to be split between three threads,
/// in every layout the kernels read (`a · b`, `a · wᵀ`, and in the backward pass `aᵀ · g`).
fn products() -> Vec<f32> {
    let a = Tensor::normal_with([2, 400, 300], 0.0, 1.0, &mut rng_from_seed(1))
        .requires_grad_();
    let b = Tensor::normal_with([300, 170], 0.0, 1.0, &mut rng_from_seed(2))
        .requires_grad_();
    let w = Tensor::normal_with([90, 300], 0.0, 1.0, &mut rng_from_seed(3));
    let ab = a.matmul(&b);
    let mut all = ab.to_vec();
    all.extend(a.matmul_t(&w).to_vec());
    ab.sum().backward();
    all.extend(b.grad().expect("b takes part").to_vec());
    all.extend(a.grad().expect("a takes part").to_vec());
    all
}

/// Run by the test below in a child process: prints the bits of every product.
#[test]
fn print_products_for_the_parent() {
    if std::env::var_os("PRINT_PRODUCTS").is_some() {
        let bits: Vec<String> =
            products().iter().map(|v| v.to_bits().to_string()).collect();
        println!("BITS {}", bits.join(","));
    }
}

#[test]
fn products_have_the_same_bits_on_one_two_and_three_threads() {
    let run = |threads: &str| {
        let out = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "print_products_for_the_parent", "--nocapture"])
            .env("PRINT_PRODUCTS", "1")
            .env("MATMUL_NUM_THREADS", threads)
            .output()
            .expect("the test binary runs again");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.lines()
            .find_map(|l| l.strip_prefix("BITS ").map(str::to_string))
            .unwrap_or_else(|| panic!("no BITS line with {threads} threads:\n{text}"))
    };
    let one = run("1");
    assert_eq!(
        one.split(',').count(),
        2 * 400 * 170 + 2 * 400 * 90 + 300 * 170 + 2 * 400 * 300
    );
    for threads in ["2", "3"] {
        assert!(
            run(threads) == one,
            "{threads} threads give other bits than 1"
        );
    }
    // And the same bits as this process, whatever its own thread count.
    let here: Vec<String> =
        products().iter().map(|v| v.to_bits().to_string()).collect();
    assert_eq!(here.join(","), one);
}
