//! The comparison's results as one record: written to `data/compare.tsv` by the
//! `scorings` example (`--record`), read back for the tables, the tour and the
//! figures, and compared with a fresh run by `--check`, every number but the times.

use std::fmt::Write;

use crate::compare::{
    EVAL_EVERY, READING_NUMBERS, Reading, Run, SEEDS, STEPS, train_config,
};
use crate::complexity::{SWEEP_BATCH, SWEEP_KEYS, multiply_adds};
use crate::scorings::Scoring;

/// The recorded data, as committed.
pub const RECORDED_TSV: &str = include_str!("../data/compare.tsv");

/// The recorded tables, as committed: what the `scorings` example prints.
pub const RECORDED_TABLES: &str = include_str!("../data/compare.txt");

/// One row of the complexity sweep: the feature size and the median time of one call
/// of each [`Variant`](crate::complexity::Variant), in seconds (one machine's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepRow {
    /// The size of the queries, keys, values and hidden space.
    pub d: usize,
    /// The median seconds of one call, in the order of
    /// [`Variant::ALL`](crate::complexity::Variant::ALL).
    pub seconds: [f64; 4],
}

/// Everything the comparison measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// Where the times were taken: the CPU, the threads and the kernel path.
    pub machine: String,
    /// Every run, scoring by scoring in the order of [`Scoring::ALL`], seed by seed.
    pub runs: Vec<Run>,
    /// The peak bytes of one training step of each scoring
    /// ([`training_step_peak_bytes`](crate::compare::training_step_peak_bytes)).
    pub peaks: Vec<(Scoring, usize)>,
    /// The complexity sweep, one row per size of
    /// [`SWEEP_SIZES`](crate::complexity::SWEEP_SIZES).
    pub sweep: Vec<SweepRow>,
}

/// Floats as Rust writes them by default: the shortest text that reads back as the
/// same bits, so the file holds every number exactly.
fn floats<T: std::fmt::Display>(xs: &[T]) -> String {
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

    /// The runs of one scoring, in seed order.
    pub fn runs_of(&self, scoring: Scoring) -> Vec<&Run> {
        self.runs.iter().filter(|r| r.scoring == scoring).collect()
    }

    /// The peak bytes of one training step of `scoring`.
    ///
    /// # Panics
    /// When the record has none for it.
    pub fn peak(&self, scoring: Scoring) -> usize {
        self.peaks
            .iter()
            .find(|(s, _)| *s == scoring)
            .map(|&(_, b)| b)
            .unwrap_or_else(|| panic!("no peak recorded for {}", scoring.name()))
    }

    /// The mean, lowest and highest held-out exact match of `scoring` after `step`
    /// steps, over the seeds.
    pub fn accuracy_at(&self, scoring: Scoring, step: usize) -> (f32, f32, f32) {
        let values: Vec<f32> = self
            .runs_of(scoring)
            .iter()
            .filter_map(|r| r.held_out.iter().find(|(s, _)| *s == step))
            .map(|&(_, a)| a)
            .collect();
        let mean = values.iter().sum::<f32>() / values.len().max(1) as f32;
        let (lo, hi) = values
            .iter()
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &a| {
                (lo.min(a), hi.max(a))
            });
        (mean, lo, hi)
    }

    /// Training steps per second of `scoring` in the fastest of its runs, the one
    /// least slowed by other programs (one machine's).
    pub fn steps_per_second(&self, scoring: Scoring) -> f64 {
        self.runs_of(scoring)
            .iter()
            .map(|r| r.losses.len() as f64 / r.train_seconds)
            .fold(0.0, f64::max)
    }

    /// Tokens per second of greedy decoding of the held-out set at the end of
    /// `scoring`'s fastest run (one machine's).
    pub fn tokens_per_second(&self, scoring: Scoring) -> f64 {
        self.runs_of(scoring)
            .iter()
            .map(|r| r.decoded_tokens as f64 / r.decode_seconds)
            .fold(0.0, f64::max)
    }

    /// The record as the lines of `data/compare.tsv`.
    pub fn to_tsv(&self) -> String {
        let mut out = String::from(
            "# The comparison of chapter 12, written by\n\
             #   cargo run --release -p chapter12 --example scorings -- --record\n\
             # Every number is the engine's and the same on every machine, except \
             the\n# seconds, which are the machine's named below.\n",
        );
        writeln!(out, "machine\t{}", self.machine).unwrap();
        for (scoring, bytes) in &self.peaks {
            writeln!(out, "peak\t{}\t{bytes}", scoring.key()).unwrap();
        }
        for r in &self.runs {
            let head = format!("run\t{}\t{}", r.scoring.key(), r.seed);
            let w = &mut out;
            writeln!(
                w,
                "{head}\tparameters\t{}\t{}",
                r.attention_parameters, r.model_parameters
            )
            .unwrap();
            writeln!(w, "{head}\tdecoded_tokens\t{}", r.decoded_tokens).unwrap();
            let held_out: Vec<String> = r
                .held_out
                .iter()
                .map(|(s, a)| format!("{s}\t{a}"))
                .collect();
            writeln!(w, "{head}\theld_out\t{}", held_out.join("\t")).unwrap();
            writeln!(w, "{head}\tlosses\t{}", floats(&r.losses)).unwrap();
            if !r.gates.is_empty() {
                writeln!(w, "{head}\tgates\t{}", floats(&r.gates)).unwrap();
            }
            if let Some(x) = r.reading {
                let values = [
                    x.gate,
                    x.additive_spread,
                    x.dot_spread,
                    x.top_additive,
                    x.top_dot,
                ];
                writeln!(w, "{head}\treading\t{}", floats(&values)).unwrap();
            }
            writeln!(
                w,
                "{head}\tseconds\t{}\t{}",
                r.train_seconds, r.decode_seconds
            )
            .unwrap();
        }
        for row in &self.sweep {
            writeln!(out, "sweep\t{}\t{}", row.d, floats(&row.seconds)).unwrap();
        }
        out
    }

    /// Reads the lines of [`to_tsv`](Record::to_tsv) back.
    pub fn parse(text: &str) -> Result<Record, String> {
        let mut record = Record {
            machine: String::new(),
            runs: Vec::new(),
            peaks: Vec::new(),
            sweep: Vec::new(),
        };
        for (n, line) in text.lines().enumerate() {
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split('\t').collect();
            record
                .parse_line(&fields)
                .map_err(|e| format!("line {}: {e}", n + 1))?;
        }
        Ok(record)
    }

    /// Adds one line's fields.
    fn parse_line(&mut self, fields: &[&str]) -> Result<(), String> {
        fn number<T: std::str::FromStr>(s: &str) -> Result<T, String> {
            s.parse().map_err(|_| format!("{s:?} is not a number"))
        }
        fn numbers<T: std::str::FromStr>(s: &[&str]) -> Result<Vec<T>, String> {
            s.iter().map(|x| number(x)).collect()
        }
        let scoring = |key: &str| {
            Scoring::from_key(key).ok_or_else(|| format!("no scoring {key:?}"))
        };
        match fields {
            ["machine", text] => self.machine = text.to_string(),
            ["peak", key, bytes] => self.peaks.push((scoring(key)?, number(bytes)?)),
            ["sweep", d, seconds @ ..] => {
                let seconds: Vec<f64> = numbers(seconds)?;
                self.sweep.push(SweepRow {
                    d: number(d)?,
                    seconds: seconds
                        .try_into()
                        .map_err(|_| "a sweep row has 4 times".to_string())?,
                });
            }
            ["run", key, seed, what, values @ ..] => {
                let (scoring, seed) = (scoring(key)?, number(seed)?);
                let run = match self
                    .runs
                    .iter_mut()
                    .find(|r| r.scoring == scoring && r.seed == seed)
                {
                    Some(run) => run,
                    None => {
                        self.runs.push(empty_run(scoring, seed));
                        self.runs.last_mut().expect("just pushed")
                    }
                };
                match (*what, values) {
                    ("parameters", [a, m]) => {
                        (run.attention_parameters, run.model_parameters) =
                            (number(a)?, number(m)?)
                    }
                    ("decoded_tokens", [t]) => run.decoded_tokens = number(t)?,
                    ("held_out", pairs) => {
                        let v: Vec<f32> = numbers(pairs)?;
                        run.held_out =
                            v.chunks(2).map(|p| (p[0] as usize, p[1])).collect();
                    }
                    ("losses", v) => run.losses = numbers(v)?,
                    ("gates", v) => run.gates = numbers(v)?,
                    ("reading", [g, a, d, ta, td]) => {
                        run.reading = Some(Reading {
                            gate: number(g)?,
                            additive_spread: number(a)?,
                            dot_spread: number(d)?,
                            top_additive: number(ta)?,
                            top_dot: number(td)?,
                        })
                    }
                    ("seconds", [t, d]) => {
                        (run.train_seconds, run.decode_seconds) =
                            (number(t)?, number(d)?)
                    }
                    _ => return Err(format!("unknown run line {what:?}")),
                }
            }
            _ => return Err(format!("cannot read {:?}", fields.join(" "))),
        }
        Ok(())
    }

    /// The first difference between this record and `recorded` in anything but the
    /// times and the machine, or `Ok` when they agree to the last bit.
    pub fn check(&self, recorded: &Record) -> Result<(), String> {
        if self.peaks != recorded.peaks {
            return Err(format!(
                "peak bytes {:?} now, {:?} recorded",
                self.peaks, recorded.peaks
            ));
        }
        let sizes = |r: &Record| r.sweep.iter().map(|s| s.d).collect::<Vec<_>>();
        if sizes(self) != sizes(recorded) {
            return Err("the sweep's sizes differ".into());
        }
        if self.runs.len() != recorded.runs.len() {
            return Err(format!(
                "{} runs now, {} recorded",
                self.runs.len(),
                recorded.runs.len()
            ));
        }
        for (now, then) in self.runs.iter().zip(&recorded.runs) {
            let untimed = |r: &Run| Run {
                train_seconds: 0.0,
                decode_seconds: 0.0,
                ..r.clone()
            };
            let name = format!("{} from seed {}", now.scoring.name(), now.seed);
            if let Some(step) =
                (0..now.losses.len().max(then.losses.len())).find(|&s| {
                    now.losses.get(s).map(|l| l.to_bits())
                        != then.losses.get(s).map(|l| l.to_bits())
                })
            {
                return Err(format!(
                    "{name}: the loss of step {step} is {:?} now and {:?} recorded",
                    now.losses.get(step),
                    then.losses.get(step)
                ));
            }
            if untimed(now) != untimed(then) {
                return Err(format!("{name}: {:?} now, {:?} recorded", now, then));
            }
        }
        Ok(())
    }

    /// This record's results with `timed`'s times: a fresh run printed with the
    /// recorded times gives the recorded tables exactly when everything else agrees.
    pub fn with_times_of(&self, timed: &Record) -> Record {
        let mut out = self.clone();
        out.machine = timed.machine.clone();
        for (run, t) in out.runs.iter_mut().zip(&timed.runs) {
            (run.train_seconds, run.decode_seconds) =
                (t.train_seconds, t.decode_seconds);
        }
        for (row, t) in out.sweep.iter_mut().zip(&timed.sweep) {
            row.seconds = t.seconds;
        }
        out
    }
}

/// A run with nothing read yet.
fn empty_run(scoring: Scoring, seed: u64) -> Run {
    Run {
        scoring,
        seed,
        attention_parameters: 0,
        model_parameters: 0,
        losses: Vec::new(),
        held_out: Vec::new(),
        gates: Vec::new(),
        decoded_tokens: 0,
        reading: None,
        train_seconds: 0.0,
        decode_seconds: 0.0,
    }
}

/// The steps at which the gate table reads the gates.
pub const GATE_STEPS: [usize; 9] = [0, 25, 50, 100, 150, 200, 250, 300, 400];

impl Record {
    /// Section 1 of the tables: one line per scoring.
    pub fn summary_table(&self) -> String {
        let c = train_config(SEEDS[0]);
        let mut out = format!(
            "5 scorings × seeds {SEEDS:?}: chapter 9's model (E = {}, H = {}),\n",
            c.embed_size, c.num_hiddens
        );
        out += &format!(
            "  {STEPS} steps of {}, lr {} after {} warmup steps falling to {}, clip {};\n",
            c.batch_size, c.lr, c.warmup, c.final_lr, c.clip
        );
        out += &format!("  held-out: {} numbers\n", c.held_out);
        out += &format!(
            "{:<19}{:>10}  {:^20}  {:>9}  {:>7}  {:>8}\n",
            "", "attention", "held-out exact match", "step peak", "train", "decode"
        );
        out += &format!(
            "{:<19}{:>10}  {:>6} {:>6} {:>6}  {:>9}  {:>7}  {:>8}\n",
            "scoring", "params", "mean", "min", "max", "KiB", "steps/s", "tokens/s"
        );
        for scoring in Scoring::ALL {
            let (mean, lo, hi) = self.accuracy_at(scoring, STEPS);
            let params = self.runs_of(scoring)[0].attention_parameters;
            let accuracy = format!("{mean:>6.3} {lo:>6.3} {hi:>6.3}");
            out += &format!(
                "{:<19}{params:>10}  {accuracy}  {:>9.1}  {:>7.1}  {:>8.0}\n",
                scoring.name(),
                self.peak(scoring) as f64 / 1024.0,
                self.steps_per_second(scoring),
                self.tokens_per_second(scoring)
            );
        }
        out
    }

    /// Section 2: the held-out exact match during training, mean over the seeds.
    pub fn progress_table(&self) -> String {
        let mut out = format!(
            "held-out exact match every {EVAL_EVERY} steps, mean of the {} seeds\n",
            SEEDS.len()
        );
        out += &format!("{:>5}", "step");
        for scoring in Scoring::ALL {
            out += &format!("  {:>w$}", scoring.name(), w = column(scoring));
        }
        out.push('\n');
        for step in (EVAL_EVERY..=STEPS).step_by(EVAL_EVERY) {
            out += &format!("{step:>5}");
            for scoring in Scoring::ALL {
                let (mean, _, _) = self.accuracy_at(scoring, step);
                out += &format!("  {mean:>w$.3}", w = column(scoring));
            }
            out.push('\n');
        }
        out
    }

    /// Section 3: the hybrid's gate during training, and what decides its weights at
    /// the end.
    pub fn gate_table(&self) -> String {
        let runs = self.runs_of(Scoring::Hybrid);
        let mut out = String::from(
            "the hybrid's gate g = sigmoid(logit): 1 is all additive, 0 all dot \
             product\n",
        );
        out += &format!("{:>5}", "step");
        for r in &runs {
            out += &format!("  seed {}", r.seed);
        }
        out.push('\n');
        for step in GATE_STEPS {
            out += &format!("{step:>5}");
            for r in &runs {
                out += &format!("  {:>6.3}", r.gates[step]);
            }
            out.push('\n');
        }
        out += &format!(
            "the trained hybrids, at every decoding step of {READING_NUMBERS} held-out \
             numbers:\n"
        );
        out += &format!(
            "{:<6}  {:>5}  {:^28}  {:^27}\n",
            "", "", "mean spread over the keys", "top key is the top key of"
        );
        out += &format!(
            "{:<6}  {:>5}  {:>13}  {:>13}  {:>13}  {:>13}\n",
            "", "g", "g · additive", "(1 − g) · dot", "additive", "dot product"
        );
        for r in &runs {
            let x = r.reading.expect("a hybrid run has a reading");
            out += &format!(
                "seed {}  {:>5.3}  {:>13.3}  {:>13.3}  {:>13.3}  {:>13.3}\n",
                r.seed,
                x.gate,
                x.additive_spread,
                x.dot_spread,
                x.top_additive,
                x.top_dot
            );
        }
        out
    }

    /// Section 4: the complexity sweep, counted and timed.
    pub fn sweep_table(&self) -> String {
        let mut out = format!(
            "one call: {SWEEP_BATCH} queries (one per example) against {SWEEP_KEYS} \
             keys each,\n  h = d, no gradient; multiply-adds per query, and the \
             median time of one\n  call in ms\n"
        );
        out += &format!(
            "{:>5}  {:>9} {:>7}  {:>9} {:>9} {:>9} {:>9}\n",
            "", "with", "without", "additive", "additive", "scaled", "scaled"
        );
        out += &format!(
            "{:>5}  {:>9} {:>7}  {:>9} {:>9} {:>9} {:>9}\n",
            "d", "proj.", "proj.", "+ proj.", "scores", "+ proj.", "dot only"
        );
        for row in &self.sweep {
            let n = SWEEP_KEYS as u64;
            let (d, ms) = (row.d as u64, row.seconds.map(|s| s * 1e3));
            out += &format!(
                "{d:>5}  {:>9} {:>7}  {:>9.3} {:>9.3} {:>9.3} {:>9.3}\n",
                multiply_adds(n, d, true),
                multiply_adds(n, d, false),
                ms[0],
                ms[1],
                ms[2],
                ms[3]
            );
        }
        out += &format!("times: {}; yours will differ\n", self.machine);
        out
    }

    /// Every table, as the `scorings` example prints them and `data/compare.txt` holds
    /// them.
    pub fn tables(&self) -> String {
        let text = [
            self.summary_table(),
            self.progress_table(),
            self.gate_table(),
            self.sweep_table(),
        ]
        .join("\n");
        // No line ends in spaces (a centred heading would leave some).
        text.lines()
            .map(|l| l.trim_end().to_string() + "\n")
            .collect()
    }
}

/// The width of a scoring's column in the progress table: its name's.
fn column(scoring: Scoring) -> usize {
    scoring.name().chars().count()
}
