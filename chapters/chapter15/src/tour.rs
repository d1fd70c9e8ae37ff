//! Everything the page prints that is not the comparison, section by section
//! (`cargo run -p chapter15`).

use attention::prelude::*;
use engine::autocast;
use engine::optim::{GradScaler, GradScalerConfig, Optimizer, Sgd, SgdConfig};
use engine::precision::Precision;

use crate::compare::train_config;
use crate::fills;
use crate::memory;

/// A limit of a format, as a function of it.
type Limit = fn(Precision) -> f32;

/// The three formats, in the order of the columns.
const FORMATS: [Precision; 3] = [Precision::F32, Precision::F16, Precision::Bf16];

/// A number in three significant digits, `-inf`, `inf` or `0`.
fn sci(x: f32) -> String {
    if x.is_infinite() {
        format!("{}inf", if x < 0.0 { "-" } else { "" })
    } else if x == 0.0 {
        "0".to_string()
    } else {
        format!("{x:.2e}")
    }
}

/// Section 1: the formats' limits, and a few values as each stores them.
pub fn formats_section() -> String {
    let mut out = format!("{:<22}", "");
    for p in FORMATS {
        out += &format!("{:>10}", p.name());
    }
    out.push('\n');
    // Below the smallest normal number the exponent stops and the fraction's bits run
    // out one by one: the smallest subnormal is the smallest normal times epsilon.
    let smallest_subnormal: Limit = |p| p.min_positive() * p.epsilon();
    let limits: [(&str, Limit); 4] = [
        ("largest", Precision::max),
        ("smallest normal", Precision::min_positive),
        ("smallest subnormal", smallest_subnormal),
        ("epsilon (1 to next)", Precision::epsilon),
    ];
    for (name, f) in limits {
        out += &format!("{name:<22}");
        for p in FORMATS {
            out += &format!("{:>10}", sci(f(p)));
        }
        out.push('\n');
    }
    // ANCHOR: stored
    // 2⁻²⁵ is half of f16's smallest subnormal: a tie, rounded to the even neighbour, 0.
    let values = [-1e9, -1e6, -1e4, 70000.0, 1e-5, 3e-8, 2f32.powi(-25), 1e-8];
    // ANCHOR_END: stored
    for v in values {
        out += &format!("{:<22}", format!("{} stored", sci(v)));
        for p in FORMATS {
            out += &format!("{:>10}", sci(p.round(v)));
        }
        out.push('\n');
    }
    out
}

/// Section 2: the fill table ([`fills::table`]).
pub fn fills_section() -> String {
    fills::table()
}

/// The attention scores of the autocast demonstration: `q kᵀ / √d` for 4 queries
/// and 6 keys of 16 features, drawn from seed 15, computed in `precision` by the
/// autocast scope and by explicit rounding.
pub fn autocast_scores(precision: Precision) -> (Tensor, Tensor, Tensor) {
    engine::manual_seed(15);
    let q = Tensor::randn([1, 4, 16]);
    let k = Tensor::randn([1, 6, 16]);
    let scale = 1.0 / 4.0;
    // ANCHOR: autocast
    let full = q.bmm(&k.transpose(1, 2)) * scale;
    let cast = autocast(precision, || q.bmm(&k.transpose(1, 2)) * scale);
    let p = precision;
    let explicit = q.to_precision(p).bmm(&k.to_precision(p).transpose(1, 2));
    let explicit = explicit.to_precision(p) * scale;
    // ANCHOR_END: autocast
    (full, cast, explicit)
}

/// Section 3: autocast against f32 and against explicit rounding.
pub fn autocast_section() -> String {
    let mut out = String::from(
        "q kᵀ / √d, 4 queries × 6 keys, d = 16 (seed 15), inside autocast\n",
    );
    out += &format!(
        "{:<10}{:>22}{:>26}\n",
        "format", "max |cast − f32|", "same bits as explicit"
    );
    for p in [Precision::F16, Precision::Bf16] {
        let (full, cast, explicit) = autocast_scores(p);
        let diff = full
            .to_vec()
            .iter()
            .zip(cast.to_vec())
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        let same = cast
            .to_vec()
            .iter()
            .map(|x| x.to_bits())
            .eq(explicit.to_vec().iter().map(|x| x.to_bits()));
        out += &format!("{:<10}{diff:>22.6}{same:>26}\n", p.name());
    }
    out
}

/// One row of the planted overflow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlantedStep {
    /// The scale the step used.
    pub scale: f32,
    /// The scaled gradient as f16 holds it.
    pub grad: f32,
    /// Whether the optimizer stepped.
    pub stepped: bool,
    /// The weight after the step.
    pub weight: f32,
}

// ANCHOR: planted
/// The planted overflow: `loss = 4 · w` with `w` stored in f16, so the gradient the
/// f16 storage receives is `4 × scale`, and a scale above 16376 overflows f16
/// (65504). A [`GradScaler`] from 65536 with `growth_interval` 2, SGD at 0.01, for
/// `steps` steps.
pub fn planted_overflow(steps: usize) -> Vec<PlantedStep> {
    let w = Tensor::from_vec(vec![1.0], [1]).requires_grad_();
    let config = SgdConfig {
        lr: 0.01,
        ..Default::default()
    };
    let mut opt = Sgd::new(vec![w.clone()], config);
    let mut scaler = GradScaler::new(GradScalerConfig {
        growth_interval: 2,
        ..GradScalerConfig::default()
    });
    let mut rows = Vec::new();
    for _ in 0..steps {
        opt.zero_grad();
        let loss = (w.to_precision(Precision::F16) * 4.0).sum();
        let scale = scaler.get_scale();
        scaler.scale(&loss).backward();
        let grad = w.grad().expect("a gradient").item();
        let stepped = scaler.step(&mut opt);
        scaler.update();
        let weight = w.item();
        rows.push(PlantedStep {
            scale,
            grad,
            stepped,
            weight,
        });
    }
    rows
}
// ANCHOR_END: planted

/// Section 4: the planted overflow, step by step.
pub fn scaler_section() -> String {
    let mut out = format!(
        "{:>4}  {:>7}  {:>12}  {:>7}  {:>6}\n",
        "step", "scale", "f16 gradient", "stepped", "w"
    );
    for (i, r) in planted_overflow(8).iter().enumerate() {
        out += &format!(
            "{i:>4}  {:>7}  {:>12}  {:>7}  {:>6.2}\n",
            r.scale,
            sci(r.grad),
            if r.stepped { "yes" } else { "skipped" },
            r.weight
        );
    }
    out
}

/// Section 5: the bytes of one training step of chapter 9's model, by kind.
pub fn memory_section() -> String {
    memory::table(&memory::categories(train_config()))
}

/// Every section, as `cargo run -p chapter15` prints them.
pub fn tour() -> String {
    [
        ("1. three formats", formats_section()),
        ("2. the mask fill in each format", fills_section()),
        ("3. autocast", autocast_section()),
        ("4. a GradScaler on a planted overflow", scaler_section()),
        ("5. memory of one training step", memory_section()),
    ]
    .iter()
    .map(|(title, body)| format!("## {title}\n{body}"))
    .collect::<Vec<_>>()
    .join("\n")
}
