//! The comparison's results as one record: written to `data/compare.tsv` by the
//! `precision_runs` example (`--record`), read back for the tables, the tour and the
//! figures, and compared with a fresh run by `--check`, every number but the times.

use crate::compare::{CHAPTER9, Run, SMALL, Setting};
use crate::training::{GROWTH_INTERVAL, Mode, STATIC_SCALE};
use crate::underflow::{COLUMNS, LayerCount, share};

/// The recorded data, as committed.
pub const RECORDED_TSV: &str = include_str!("../data/compare.tsv");

/// The recorded tables, as committed: what the `precision_runs` example prints.
pub const RECORDED_TABLES: &str = include_str!("../data/compare.txt");

/// The recorded data of the small-gradient comparison ([`SMALL`]), as committed.
pub const SMALL_TSV: &str = include_str!("../data/small.tsv");

/// The recorded tables of the small-gradient comparison: what the `small_gradients`
/// example prints.
pub const SMALL_TABLES: &str = include_str!("../data/small.txt");

/// Everything the comparison measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// What was trained (not written to the file: each setting has its own).
    pub setting: Setting,
    /// Where the times were taken.
    pub machine: String,
    /// One run per mode, in the order of [`Mode::ALL`].
    pub runs: Vec<Run>,
    /// The f32 run's vanished gradients, `(step, per layer)`.
    pub underflow: Vec<(usize, Vec<LayerCount>)>,
}

/// Floats as Rust writes them by default: the shortest text that reads back as the
/// same bits.
fn join<T: std::fmt::Display>(xs: &[T]) -> String {
    xs.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join("\t")
}

impl Record {
    /// The recorded comparison (`data/compare.tsv`).
    ///
    /// # Panics
    /// When the committed file does not parse: the crate ships it.
    pub fn recorded() -> Record {
        Record::parse(RECORDED_TSV)
            .unwrap_or_else(|e| panic!("data/compare.tsv: {e}"))
    }

    /// The recorded small-gradient comparison (`data/small.tsv`).
    ///
    /// # Panics
    /// When the committed file does not parse: the crate ships it.
    pub fn recorded_small() -> Record {
        Record::parse_in(SMALL_TSV, SMALL)
            .unwrap_or_else(|e| panic!("data/small.tsv: {e}"))
    }

    /// The committed record of `setting`.
    ///
    /// # Panics
    /// When `setting` is neither [`CHAPTER9`] nor [`SMALL`].
    pub fn recorded_in(setting: Setting) -> Record {
        if setting == CHAPTER9 {
            Record::recorded()
        } else if setting == SMALL {
            Record::recorded_small()
        } else {
            panic!("no recording of {setting:?}")
        }
    }

    /// The run of `mode`.
    ///
    /// # Panics
    /// When the record has none.
    pub fn run(&self, mode: Mode) -> &Run {
        self.runs
            .iter()
            .find(|r| r.mode == mode)
            .unwrap_or_else(|| panic!("no run recorded for {}", mode.name()))
    }

    /// The record as tab-separated lines.
    pub fn to_tsv(&self) -> String {
        let mut out = format!("machine\t{}\n", self.machine);
        for r in &self.runs {
            let m = r.mode.name();
            out += &format!("run\t{m}\tlosses\t{}\n", join(&r.losses));
            let held: Vec<String> =
                r.held_out.iter().map(|(s, a)| format!("{s}:{a}")).collect();
            out += &format!("run\t{m}\theld_out\t{}\n", held.join("\t"));
            out += &format!("run\t{m}\tscales\t{}\n", join(&r.scales));
            out += &format!("run\t{m}\tskipped\t{}\n", join(&r.skipped));
            out += &format!("run\t{m}\tseconds\t{}\n", r.train_seconds);
        }
        for (step, layers) in &self.underflow {
            for c in layers {
                out += &format!(
                    "underflow\t{step}\t{}\t{}\t{}\t{}\n",
                    c.layer,
                    c.entries,
                    c.nonzero,
                    join(&c.vanished)
                );
            }
        }
        out
    }

    /// Reads what [`to_tsv`](Record::to_tsv) wrote for [`CHAPTER9`].
    pub fn parse(text: &str) -> Result<Record, String> {
        Record::parse_in(text, CHAPTER9)
    }

    /// Reads what [`to_tsv`](Record::to_tsv) wrote for `setting`.
    pub fn parse_in(text: &str, setting: Setting) -> Result<Record, String> {
        fn num<T: std::str::FromStr>(s: &str) -> Result<T, String> {
            s.parse().map_err(|_| format!("not a number: {s:?}"))
        }
        fn nums<T: std::str::FromStr>(s: &[&str]) -> Result<Vec<T>, String> {
            s.iter().filter(|x| !x.is_empty()).map(|x| num(x)).collect()
        }
        let mut record = Record {
            setting,
            machine: String::new(),
            runs: Vec::new(),
            underflow: Vec::new(),
        };
        for line in text.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            match f.as_slice() {
                ["machine", m] => record.machine = m.to_string(),
                ["run", mode, what, rest @ ..] => {
                    let mode = Mode::from_name(mode)
                        .ok_or(format!("unknown mode {mode:?}"))?;
                    if record.runs.last().is_none_or(|r| r.mode != mode) {
                        record.runs.push(Run {
                            mode,
                            losses: Vec::new(),
                            held_out: Vec::new(),
                            scales: Vec::new(),
                            skipped: Vec::new(),
                            train_seconds: 0.0,
                        });
                    }
                    let run = record.runs.last_mut().expect("pushed above");
                    match *what {
                        "losses" => run.losses = nums(rest)?,
                        "scales" => run.scales = nums(rest)?,
                        "skipped" => run.skipped = nums(rest)?,
                        "seconds" => run.train_seconds = num(rest.join("").as_str())?,
                        "held_out" => {
                            for pair in rest.iter().filter(|x| !x.is_empty()) {
                                let (s, a) = pair
                                    .split_once(':')
                                    .ok_or("a step:accuracy pair")?;
                                run.held_out.push((num(s)?, num(a)?));
                            }
                        }
                        _ => return Err(format!("unknown run line {what:?}")),
                    }
                }
                ["underflow", step, layer, entries, nonzero, a, b, c] => {
                    let step: usize = num(step)?;
                    if record.underflow.last().is_none_or(|(s, _)| *s != step) {
                        record.underflow.push((step, Vec::new()));
                    }
                    let (_, layers) = record.underflow.last_mut().expect("pushed");
                    layers.push(LayerCount {
                        layer: layer.to_string(),
                        entries: num(entries)?,
                        nonzero: num(nonzero)?,
                        vanished: [num(a)?, num(b)?, num(c)?],
                    });
                }
                _ => return Err(format!("cannot read {line:?}")),
            }
        }
        Ok(record)
    }

    /// The first difference between this record and `recorded` in anything but the
    /// times and the machine, or `Ok` when they agree to the last bit.
    pub fn check(&self, recorded: &Record) -> Result<(), String> {
        if self.underflow != recorded.underflow {
            return Err("the counts of vanished gradients differ".into());
        }
        if self.runs.len() != recorded.runs.len() {
            return Err(format!(
                "{} runs now, {} recorded",
                self.runs.len(),
                recorded.runs.len()
            ));
        }
        for (now, then) in self.runs.iter().zip(&recorded.runs) {
            let bits =
                |r: &Run| r.losses.iter().map(|l| l.to_bits()).collect::<Vec<_>>();
            let untimed = |r: &Run| Run {
                train_seconds: 0.0,
                losses: Vec::new(),
                ..r.clone()
            };
            if bits(now) != bits(then) {
                return Err(format!("{}: the losses differ", now.mode.name()));
            }
            if untimed(now) != untimed(then) {
                return Err(format!(
                    "{}: {now:?} now, {then:?} recorded",
                    now.mode.name()
                ));
            }
        }
        Ok(())
    }

    /// This record's results with `timed`'s times and machine.
    pub fn with_times_of(&self, timed: &Record) -> Record {
        let mut out = self.clone();
        out.machine = timed.machine.clone();
        for (run, t) in out.runs.iter_mut().zip(&timed.runs) {
            run.train_seconds = t.train_seconds;
        }
        out
    }

    /// Table 1: one line per mode.
    pub fn summary_table(&self) -> String {
        let c = self.setting.config();
        let mut out = format!(
            "chapter 9's model (E = {}, H = {}), seed {}, {} steps of {},\n  lr {} \
             after {} warmup steps falling to {}, clip {}; held-out: {} numbers\n",
            c.embed_size,
            c.num_hiddens,
            c.seed,
            c.steps,
            c.batch_size,
            c.lr,
            c.warmup,
            c.final_lr,
            c.clip,
            c.held_out
        );
        let factor = self.setting.loss_factor;
        if factor != 1.0 {
            out += &format!(
                "  the loss, Adam's eps and the clip norm x 2^{}: every gradient {} times \
                 smaller\n",
                factor.log2(),
                1.0 / factor
            );
        }
        out += &format!(
            "{:<17}  {:>8}  {:>10}  {:>7}  {:>11}  {:>7}\n",
            "mode", "held-out", "mean loss,", "skipped", "final scale", "train"
        );
        out += &format!(
            "{:<17}  {:>8}  {:>10}  {:>7}  {:>11}  {:>7}\n",
            "", "exact", "last 50", "steps", "", "steps/s"
        );
        for r in &self.runs {
            let tail = &r.losses[r.losses.len().saturating_sub(50)..];
            let mean = tail.iter().sum::<f32>() / tail.len().max(1) as f32;
            out += &format!(
                "{:<17}  {:>8.3}  {:>10.4}  {:>7}  {:>11}  {:>7.1}\n",
                r.mode.name(),
                r.accuracy(),
                mean,
                r.skipped.len(),
                r.scales.last().copied().unwrap_or(1.0),
                r.losses.len() as f64 / r.train_seconds
            );
        }
        out += &format!(
            "static scale {STATIC_SCALE}; GradScaler: PyTorch's defaults but \
             growth_interval {GROWTH_INTERVAL}\ntimes: {}; yours will differ\n",
            self.machine
        );
        out
    }

    /// Table 2: the held-out exact match during training.
    pub fn progress_table(&self) -> String {
        let (every, steps) = (self.setting.eval_every, self.setting.steps);
        let mut out =
            format!("held-out exact match every {every} steps\n{:>5}", "step");
        for r in &self.runs {
            out +=
                &format!("  {:>w$}", r.mode.name(), w = r.mode.name().len().max(5));
        }
        out.push('\n');
        for step in (every..=steps).step_by(every) {
            out += &format!("{step:>5}");
            for r in &self.runs {
                let a = r
                    .held_out
                    .iter()
                    .find(|(s, _)| *s == step)
                    .map_or(0.0, |p| p.1);
                out += &format!("  {a:>w$.3}", w = r.mode.name().len().max(5));
            }
            out.push('\n');
        }
        out
    }

    /// Table 3: the share of nonzero f32 gradient entries that are zero in half
    /// precision, over the whole model, along the f32 run.
    pub fn underflow_table(&self) -> String {
        let mut out = String::from(
            "gradient entries nonzero in f32 but zero in half precision, % of the \
             nonzero\n  ones, on the f32 run's weights and batch at each step\n",
        );
        let factor = self.setting.loss_factor;
        if factor != 1.0 {
            out += &format!(
                "  (the loss x 2^{}, then x1 or x{STATIC_SCALE}, the columns' scales)\n",
                factor.log2()
            );
        }
        out += &format!("{:>5}  {:>9}", "step", "nonzero");
        for (p, s) in COLUMNS {
            out += &format!("  {:>10}", format!("{} x{s}", short(p)));
        }
        out.push('\n');
        for (step, layers) in &self.underflow {
            let nonzero: usize = layers.iter().map(|c| c.nonzero).sum();
            out += &format!("{step:>5}  {nonzero:>9}");
            for k in 0..COLUMNS.len() {
                out += &format!("  {:>10.3}", 100.0 * share(layers, k));
            }
            out.push('\n');
        }
        out
    }

    /// Table 4: the same, layer by layer, at the last step counted.
    pub fn layer_table(&self) -> String {
        self.layer_table_of(self.underflow.len().saturating_sub(1))
    }

    /// Table 4 for the `i`-th count (step `i × eval_every`).
    pub fn layer_table_of(&self, i: usize) -> String {
        let Some((step, layers)) = self.underflow.get(i) else {
            return String::new();
        };
        let mut out = format!("the same by layer at step {step}, %\n");
        out += &format!("{:<24}{:>8}", "layer", "entries");
        for (p, s) in COLUMNS {
            out += &format!("  {:>10}", format!("{} x{s}", short(p)));
        }
        out.push('\n');
        for c in layers {
            out += &format!("{:<24}{:>8}", c.layer, c.entries);
            for k in 0..COLUMNS.len() {
                out +=
                    &format!("  {:>10.3}", 100.0 * share(std::slice::from_ref(c), k));
            }
            out.push('\n');
        }
        out
    }

    /// Every table, as the `precision_runs` example prints them and `data/compare.txt`
    /// holds them (for the small-gradient setting, `small_gradients` and
    /// `data/small.txt`, with the layers at step 0 too).
    pub fn tables(&self) -> String {
        let mut tables = vec![
            self.summary_table(),
            self.progress_table(),
            self.underflow_table(),
        ];
        if self.setting.loss_factor != 1.0 {
            // Where the f16 run starts, and where the f32 run ends.
            tables.push(self.layer_table_of(0));
        }
        tables.push(self.layer_table());
        tables.join("\n")
    }
}

/// `f16` or `bf16`.
fn short(p: engine::precision::Precision) -> &'static str {
    match p {
        engine::precision::Precision::F16 => "f16",
        engine::precision::Precision::Bf16 => "bf16",
        engine::precision::Precision::F32 => "f32",
    }
}

/// What the comparison examples do (`precision_runs` for [`CHAPTER9`],
/// `small_gradients` for [`SMALL`]): train every mode in `setting`, then with no
/// argument print the tables (and write the data to `target/chapter15/`), with
/// `--check` compare everything but the times with the committed record, with
/// `--record` rewrite the committed files.
pub fn main_for(setting: Setting) -> std::process::ExitCode {
    use std::path::PathBuf;
    use std::process::ExitCode;
    let arg = std::env::args().nth(1);
    if !matches!(arg.as_deref(), None | Some("--check") | Some("--record")) {
        eprintln!("unknown argument {arg:?}; use --check, --record or nothing");
        return ExitCode::FAILURE;
    }
    let start = std::time::Instant::now();
    let mut runs = Vec::new();
    let mut underflow = Vec::new();
    for m in Mode::ALL {
        let (r, counts) = crate::compare::run_in(&setting, m);
        eprintln!(
            "{:<17}: held-out {:.3}, {} skipped, {:.1} s",
            m.name(),
            r.accuracy(),
            r.skipped.len(),
            r.train_seconds
        );
        runs.push(r);
        if m == Mode::F32 {
            underflow = counts;
        }
    }
    let record = Record {
        setting,
        machine: lesson::cpu_name(),
        runs,
        underflow,
    };
    let seconds = start.elapsed().as_secs_f64();
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data");
    let (tsv, txt) = (
        format!("{}.tsv", setting.file),
        format!("{}.txt", setting.file),
    );
    match arg.as_deref() {
        Some("--check") => {
            let recorded = Record::recorded_in(setting);
            if let Err(e) = record.check(&recorded) {
                eprintln!("--check: {e}");
                return ExitCode::FAILURE;
            }
            let tables = record.with_times_of(&recorded).tables();
            let committed =
                std::fs::read_to_string(data.join(&txt)).unwrap_or_default();
            if tables != committed {
                eprintln!(
                    "--check: data/{txt} is not the recorded tables:\n{tables}"
                );
                return ExitCode::FAILURE;
            }
            print!("{}", record.tables());
            println!(
                "every loss, accuracy, scale, skipped step and count is the recorded \
                 one; the times are this machine's"
            );
        }
        Some(_) => {
            print!("{}", record.tables());
            for (name, text) in [(&tsv, record.to_tsv()), (&txt, record.tables())] {
                if let Err(e) = std::fs::write(data.join(name), text) {
                    eprintln!("cannot write data/{name}: {e}");
                    return ExitCode::FAILURE;
                }
            }
            println!("recorded data/{tsv} and data/{txt}");
        }
        None => {
            print!("{}", record.tables());
            let dir = PathBuf::from("target/chapter15");
            let written = std::fs::create_dir_all(&dir)
                .and_then(|()| std::fs::write(dir.join(&tsv), record.to_tsv()));
            if let Err(e) = written {
                eprintln!("cannot write {}: {e}", dir.display());
            }
        }
    }
    println!("wall time: {seconds:.0} s (this machine, this run)");
    ExitCode::SUCCESS
}
