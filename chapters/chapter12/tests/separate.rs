//! The separating runs, checked: the reversed task's batches hold the digits in
//! reverse, a short run learns it, each scoring's rate is the one its validation
//! numbers chose, the recording replays its first steps bit for bit, and its tables
//! are its data printed.

use chapter09::{Batch, TrainConfig, Vocab};
use chapter12::scorings::Scoring;
use chapter12::separate::{
    RATES, RECORDED_TABLES, SEEDS, STEPS, SepRecord, TUNING_SEED, Task, run_with,
};

#[test]
fn the_reversed_task_writes_the_digits_last_first() {
    let (src, tgt) = (Vocab::source(), Vocab::target());
    let numbers = [342, 12, 40_005];
    let forward = Batch::new(&numbers, &src, &tgt);
    let reversed = Task::Reversed.batch(&numbers, &src, &tgt);
    let small = Task::Small.batch(&numbers, &src, &tgt);
    // The sources, the lengths and the shapes are chapter 9's.
    assert_eq!(reversed.src.to_vec(), forward.src.to_vec());
    assert_eq!(reversed.tgt_lens.to_vec(), forward.tgt_lens.to_vec());
    assert_eq!(reversed.tgt.shape(), forward.tgt.shape());
    // 342 → 2 4 3 <eos>, 12 → 2 1 <eos>, 40005 → 5 0 0 0 4 <eos>.
    let t = reversed.tgt.size(1);
    let row = |x: &[f32], b: usize| -> Vec<String> {
        x[b * t..(b + 1) * t]
            .iter()
            .map(|&id| tgt.token(id as usize).to_string())
            .collect()
    };
    let (tg, input) = (reversed.tgt.to_vec(), reversed.dec_input.to_vec());
    assert_eq!(row(&tg, 0)[..4], ["2", "4", "3", "<eos>"].map(String::from));
    assert_eq!(row(&tg, 1)[..3], ["2", "1", "<eos>"].map(String::from));
    assert_eq!(
        row(&tg, 2),
        ["5", "0", "0", "0", "4", "<eos>"].map(String::from)
    );
    // The decoder reads <bos> and the reversed target shifted right.
    assert_eq!(
        row(&input, 0)[..4],
        ["<bos>", "2", "4", "3"].map(String::from)
    );
    assert_eq!(
        row(&input, 2),
        ["<bos>", "5", "0", "0", "0", "4"].map(String::from)
    );
    // The small task's batches are chapter 9's.
    assert_eq!(small.tgt.to_vec(), forward.tgt.to_vec());
    assert_eq!(small.dec_input.to_vec(), forward.dec_input.to_vec());
}

#[test]
fn a_short_run_learns_the_reversed_task() {
    // Numbers below 1000, E = 16, H = 32, 80 steps of 32.
    let config = TrainConfig {
        steps: 80,
        held_out: 100,
        ..TrainConfig::short()
    };
    for scoring in [Scoring::Additive, Scoring::ScaledDotProduct] {
        let run = run_with(Task::Reversed, scoring, config, false);
        let mean = |l: &[f32]| l.iter().sum::<f32>() / l.len() as f32;
        let (first, last) = (mean(&run.losses[..10]), mean(&run.losses[70..]));
        assert!(last < first / 2.0, "{scoring:?}: loss {first} → {last}");
        assert_eq!(run.grad_norms.len(), 80);
    }
}

#[test]
fn the_recorded_runs_replay_their_first_steps_bit_for_bit() {
    // The first 4 steps are in the warmup, whose rates do not depend on the number of
    // steps: a 4-step run takes the recorded run's first 4 steps.
    let recorded = SepRecord::recorded();
    for task in Task::ALL {
        for scoring in [Scoring::Additive, Scoring::MultiHead] {
            let then = recorded.runs_of(task, scoring)[0];
            let config = TrainConfig {
                steps: 4,
                ..task.config(then.seed, then.lr)
            };
            let now = run_with(task, scoring, config, false);
            let bits = |l: &[f32]| l.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&now.losses), bits(&then.losses[..4]), "{scoring:?}");
            assert_eq!(
                bits(&now.grad_norms),
                bits(&then.grad_norms[..4]),
                "{scoring:?}"
            );
        }
    }
}

#[test]
fn the_recording_is_complete_and_each_rate_is_chosen_on_validation() {
    let recorded = SepRecord::recorded();
    for task in Task::ALL {
        for scoring in Scoring::ALL {
            let tuning = recorded.tuning_of(task, scoring);
            assert_eq!(
                tuning.iter().map(|r| r.lr).collect::<Vec<_>>(),
                RATES,
                "{task:?} {scoring:?}"
            );
            assert!(
                tuning
                    .iter()
                    .all(|r| r.seed == TUNING_SEED && r.test == 0.0)
            );
            // The chosen rate has the best validation score, and the runs use it.
            let chosen = recorded.chosen(task, scoring);
            let best = tuning.iter().map(|r| r.validation).fold(0.0, f32::max);
            let at = tuning.iter().find(|r| r.lr == chosen).unwrap();
            assert_eq!(at.validation, best);
            let runs = recorded.runs_of(task, scoring);
            assert_eq!(runs.iter().map(|r| r.seed).collect::<Vec<_>>(), SEEDS);
            assert!(runs.iter().all(|r| r.lr == chosen));
            for r in tuning.iter().chain(&runs) {
                assert_eq!(r.losses.len(), STEPS);
                assert_eq!(r.grad_norms.len(), STEPS);
                assert!(r.train_seconds > 0.0);
            }
        }
    }
    // The tuning seed is none of the test seeds: the rates are chosen on a split of
    // its own.
    assert!(!SEEDS.contains(&TUNING_SEED));
    assert_eq!(SepRecord::parse(&recorded.to_tsv()).unwrap(), recorded);
    assert_eq!(recorded.tables(), RECORDED_TABLES);
}

#[test]
fn the_check_ignores_the_times_and_nothing_else() {
    let recorded = SepRecord::recorded();
    let mut runs = recorded.runs.clone();
    runs[0].train_seconds *= 2.0;
    assert_eq!(recorded.check(&runs), Ok(()));
    let mut changed = runs.clone();
    changed[3].losses[17] = f32::from_bits(changed[3].losses[17].to_bits() ^ 1);
    assert!(recorded.check(&changed).unwrap_err().contains("step 17"));
    let mut changed = runs.clone();
    changed[2].grad_norms[5] += 1.0;
    assert!(recorded.check(&changed).is_err());
    let mut changed = runs;
    changed[1].test = 1.0 - changed[1].test;
    assert!(recorded.check(&changed).is_err());
}
