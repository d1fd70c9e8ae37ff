//! Chapter 9's model trained for a few steps on the CPU and on the GPU from the same seed:
//! the losses and the weights must agree within f32 tolerances, and greedy decoding must
//! run there too. In a CPU-only build the CPU half still runs.

#[path = "../../../engine/tests/devices/harness.rs"]
mod harness;

use chapter09::{TrainConfig, Trainer};
use engine::Tensor;
use engine::nn::Module;
use harness::{Tolerance, on_devices};

const STEPS: usize = 4;

#[test]
fn a_few_training_steps_give_the_same_losses_on_every_device() {
    let tolerance = Tolerance {
        abs: 2e-5,
        rel: 2e-4,
    };
    on_devices("chapter 9, four training steps", tolerance, |dev| {
        let mut trainer = Trainer::additive(TrainConfig::short());
        trainer.to_device(dev);
        let mut losses = Vec::new();
        trainer.train_until(STEPS, |report| losses.push(report.loss));
        let (accuracy, _) = trainer.evaluate();
        let mut results = vec![
            Tensor::from_vec(losses, [STEPS]).to(dev),
            Tensor::scalar(accuracy).to(dev).reshape([1]),
        ];
        // A few of the trained weights, which every step's gradients went into.
        for (_, p) in trainer.model.named_parameters().into_iter().take(4) {
            results.push(p);
        }
        results
    });
}
