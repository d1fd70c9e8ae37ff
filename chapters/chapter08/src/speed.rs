//! Tokens per second with and without the cache: the sizes the `speed` example measures,
//! the sample run committed with the crate (`data/sample_speed.tsv`), its table and its
//! chart. Nothing here measures time; the example does
//! (`cargo run --release -p chapter08 --example speed`).

/// The width of the layer the `speed` example times.
pub const SPEED_NUM_HIDDENS: usize = 64;
/// The heads of the layer the `speed` example times.
pub const SPEED_HEADS: usize = 4;
/// The positions `t` at which the `speed` example times one new token.
pub const SPEED_POSITIONS: [usize; 9] = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096];

/// The sample run committed with the crate, as the example's `--record` wrote it.
pub const SAMPLE_SPEED: &str = include_str!("../data/sample_speed.tsv");

/// The same machine's run of the `speed` example before a decoding step read the cache in
/// place (each step copied the whole cache out with `keys()` and `values()`), kept to show
/// the collapse that change removed.
pub const SAMPLE_SPEED_BEFORE: &str = include_str!("../data/sample_speed_before.tsv");

/// The cache lengths at which the `copies` example times one copy of the keys (`keys()`):
/// around 1,024 tokens, where a copy of chapter 8's layer reaches 256 KiB.
pub const COPY_LENGTHS: [usize; 5] = [512, 1023, 1024, 2048, 4096];

/// The `copies` example's output on the machine of the sample runs, as its `--record`
/// wrote it.
pub const SAMPLE_COPIES: &str = include_str!("../data/sample_copies.txt");

/// The speed of producing the token at one position.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpeedRow {
    /// The position of the new token, counting from 1: it attends to `t` keys.
    pub t: usize,
    /// Tokens per second with a cache: one `step`.
    pub with_cache: f64,
    /// Tokens per second without: `forward` over all `t` tokens.
    pub without_cache: f64,
}

impl SpeedRow {
    /// How many times faster the cached token is.
    pub fn speedup(&self) -> f64 {
        self.with_cache / self.without_cache
    }
}

/// One run of the `speed` example: where it ran, and a row per position.
#[derive(Clone, Debug, PartialEq)]
pub struct SpeedRun {
    /// The machine, in words (operating system, architecture, threads).
    pub machine: String,
    /// One row per position, in increasing `t`.
    pub rows: Vec<SpeedRow>,
}

impl SpeedRun {
    /// Reads a run in the format [`to_file`](SpeedRun::to_file) writes: `#` comment lines
    /// (one of them `# machine: …`), then one line per position,
    /// `t  with_cache  without_cache` (tokens per second), separated by whitespace.
    pub fn parse(text: &str) -> Result<SpeedRun, String> {
        let mut machine = None;
        let mut rows = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if let Some(comment) = line.strip_prefix('#') {
                if let Some(m) = comment.trim().strip_prefix("machine:") {
                    machine = Some(m.trim().to_string());
                }
                continue;
            }
            if line.is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split_whitespace().collect();
            let bad = || {
                format!(
                    "line {}: expected `t with_cache without_cache`, found {line:?}",
                    n + 1
                )
            };
            let [t, with, without] = fields[..] else {
                return Err(bad());
            };
            rows.push(SpeedRow {
                t: t.parse().map_err(|_| bad())?,
                with_cache: with.parse().map_err(|_| bad())?,
                without_cache: without.parse().map_err(|_| bad())?,
            });
        }
        let machine = machine.ok_or("no `# machine: …` line")?;
        if rows.is_empty() {
            return Err("no rows".into());
        }
        Ok(SpeedRun { machine, rows })
    }

    /// The file the example's `--record` writes (and [`parse`](SpeedRun::parse) reads).
    pub fn to_file(&self) -> String {
        let mut out = String::new();
        out.push_str(
            "# One machine's run of the speed example, recorded with a release build:\n",
        );
        out.push_str(
            "#   cargo run --release -p chapter08 --example speed -- --record\n",
        );
        out.push_str(&format!("# machine: {}\n", self.machine));
        out.push_str(&format!(
            "# layer: CausalSelfAttention, num_hiddens {SPEED_NUM_HIDDENS}, {SPEED_HEADS} heads, batch 1, no gradient\n"
        ));
        out.push_str(
            "# t: the position of the new token; tokens/s: 1 / the median time to produce it\n",
        );
        out.push_str("# t\twith_cache_tokens_per_s\twithout_cache_tokens_per_s\n");
        for r in &self.rows {
            out.push_str(&format!(
                "{}\t{:.1}\t{:.1}\n",
                r.t, r.with_cache, r.without_cache
            ));
        }
        out
    }

    /// The run as the page shows it: the machine, then one line per position with both
    /// speeds and the speed-up.
    pub fn table(&self) -> String {
        let mut out = format!("machine: {}\n", self.machine);
        out.push_str(&format!(
            "{:>5} {:>20} {:>20} {:>9}\n",
            "t", "with cache (tok/s)", "without (tok/s)", "speed-up"
        ));
        for r in &self.rows {
            out.push_str(&format!(
                "{:>5} {:>20.0} {:>20.1} {:>8.1}x\n",
                r.t,
                r.with_cache,
                r.without_cache,
                r.speedup()
            ));
        }
        out
    }
}

/// The committed sample run (`data/sample_speed.tsv`).
pub fn sample_run() -> SpeedRun {
    SpeedRun::parse(SAMPLE_SPEED).expect("data/sample_speed.tsv is well formed")
}

/// The committed run from before a step read the cache in place
/// (`data/sample_speed_before.tsv`).
pub fn sample_run_before() -> SpeedRun {
    SpeedRun::parse(SAMPLE_SPEED_BEFORE)
        .expect("data/sample_speed_before.tsv is well formed")
}

// ANCHOR: speed_chart
/// Tokens per second against the position of the new token, with and without the cache,
/// both axes on log scales; with `before`, also that run's rate with the cache. `title`
/// says whose run it is.
pub fn speed_chart(run: &SpeedRun, before: Option<&SpeedRun>, title: &str) -> String {
    let points = |run: &SpeedRun, f: fn(&SpeedRow) -> f64| -> Vec<(f32, f32)> {
        run.rows.iter().map(|r| (r.t as f32, f(r) as f32)).collect()
    };
    let with = points(run, |r| r.with_cache);
    let without = points(run, |r| r.without_cache);
    let copying = before.map(|b| points(b, |r| r.with_cache));
    let mut series = vec![figures::Series {
        name: "with a KV cache (step)",
        points: &with,
    }];
    if let Some(copying) = &copying {
        series.push(figures::Series {
            name: "with a KV cache, each step copying it (before)",
            points: copying,
        });
    }
    series.push(figures::Series {
        name: "without (forward over all t tokens)",
        points: &without,
    });
    figures::line_chart(&figures::LineChart {
        title,
        x_desc: "position t of the new token (t keys)",
        y_desc: "tokens per second",
        series: &series,
        log2_x: true,
        log10_y: true,
    })
}
// ANCHOR_END: speed_chart

/// The title of the book's figure, drawn from the committed sample.
pub const SAMPLE_CHART_TITLE: &str = "tokens per second, one machine's sample run";

/// The book's figure: [`speed_chart`] of the committed [`sample_run`], with
/// [`sample_run_before`].
pub fn sample_speed_chart() -> String {
    speed_chart(
        &sample_run(),
        Some(&sample_run_before()),
        SAMPLE_CHART_TITLE,
    )
}

/// What the timing examples (`speed`, `copies`) check before they run: `--record`, which
/// writes the book's sample, needs a release build, and any other run of a debug build is
/// warned that its times mean little.
///
/// # Errors
/// `--record` asked of a debug build.
pub fn check_build_for_timing(record: bool) -> Result<(), String> {
    if record && cfg!(debug_assertions) {
        return Err(
            "--record writes the book's sample: run it with a release build (cargo run --release ...)"
                .into(),
        );
    }
    if cfg!(debug_assertions) {
        eprintln!("note: a debug build; for meaningful times add --release");
    }
    Ok(())
}
