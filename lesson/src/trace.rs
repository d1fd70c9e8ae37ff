//! [`Trace`]: the shape of every intermediate tensor of a computation, in order.

use std::fmt;

use engine::Tensor;

/// One step of a traced computation: what was computed, its shape, and how the shape reads.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// The expression that produced the tensor, e.g. `"q.permute(0, 2, 1, 3)"`.
    pub name: String,
    /// Its shape.
    pub shape: Vec<usize>,
    /// What each dimension is, e.g. `"[B, H, Q, d]"`.
    pub layout: &'static str,
}

/// The shapes of a computation, one [`Step`] per intermediate tensor: a chapter's
/// step-by-step module records into one, its tour prints it, and its tests read it back.
///
/// ```
/// use lesson::Trace;
/// use engine::Tensor;
///
/// let mut trace = Trace::default();
/// trace.record("x", "[B, T]", &Tensor::zeros([2, 3]));
/// assert_eq!(trace.shape_of("x"), Some(&[2, 3][..]));
/// assert_eq!(trace.to_string(), "x  [2, 3]  [B, T]\n");
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    steps: Vec<Step>,
}

impl Trace {
    /// Records that `name` produced `t`, whose dimensions read as `layout`.
    pub fn record(&mut self, name: &str, layout: &'static str, t: &Tensor) {
        self.steps.push(Step {
            name: name.to_string(),
            shape: t.shape().to_vec(),
            layout,
        });
    }

    /// The steps, in the order they were recorded.
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// The shape recorded under `name`, if any.
    pub fn shape_of(&self, name: &str) -> Option<&[usize]> {
        self.steps
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.shape.as_slice())
    }
}

impl fmt::Display for Trace {
    /// One line per step, in aligned columns: name, shape, layout.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shapes: Vec<String> = self
            .steps
            .iter()
            .map(|s| format!("{:?}", s.shape))
            .collect();
        let name_width = self
            .steps
            .iter()
            .map(|s| s.name.chars().count())
            .max()
            .unwrap_or(0);
        let shape_width = shapes.iter().map(String::len).max().unwrap_or(0);
        for (step, shape) in self.steps.iter().zip(&shapes) {
            writeln!(
                f,
                "{:<name_width$}  {:<shape_width$}  {}",
                step.name, shape, step.layout
            )?;
        }
        Ok(())
    }
}
