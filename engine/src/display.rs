//! Printing tensors the way PyTorch does: nested brackets, aligned values with four
//! decimals (or as many as `{:.N}` asks for), and `...` in place of the middle of long
//! dimensions.

use std::fmt;

use crate::shape::strides;
use crate::tensor::Tensor;

/// Tensors with more elements than this print abbreviated, as in PyTorch.
const SUMMARY_THRESHOLD: usize = 1000;
/// How many entries to show at each end of an abbreviated dimension.
const EDGE_ITEMS: usize = 3;

struct Printer<'a> {
    data: &'a [f32],
    shape: &'a [usize],
    strides: Vec<usize>,
    width: usize,
    decimals: usize,
    summarize: bool,
}

impl Printer<'_> {
    fn shown(&self, dim: usize) -> Vec<Option<usize>> {
        let n = self.shape[dim];
        if self.summarize && n > 2 * EDGE_ITEMS {
            let mut idx: Vec<Option<usize>> = (0..EDGE_ITEMS).map(Some).collect();
            idx.push(None);
            idx.extend((n - EDGE_ITEMS..n).map(Some));
            idx
        } else {
            (0..n).map(Some).collect()
        }
    }

    fn write(
        &self,
        f: &mut fmt::Formatter<'_>,
        dim: usize,
        offset: usize,
        indent: usize,
    ) -> fmt::Result {
        if dim == self.shape.len() {
            return write!(
                f,
                "{:>w$}",
                format_value(self.data[offset], self.decimals),
                w = self.width
            );
        }
        write!(f, "[")?;
        let last = dim + 1 == self.shape.len();
        for (k, entry) in self.shown(dim).into_iter().enumerate() {
            if k > 0 {
                if last {
                    write!(f, ", ")?;
                } else {
                    write!(
                        f,
                        ",{}{:indent$}",
                        "\n".repeat(self.shape.len() - dim - 1),
                        "",
                        indent = indent + 1
                    )?;
                }
            }
            match entry {
                Some(i) => self.write(
                    f,
                    dim + 1,
                    offset + i * self.strides[dim],
                    indent + 1,
                )?,
                None => write!(f, "...")?,
            }
        }
        write!(f, "]")
    }
}

/// Decimals shown when the format string does not say (`{}`), as PyTorch's default.
const DEFAULT_DECIMALS: usize = 4;

fn format_value(v: f32, decimals: usize) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf".into() } else { "-inf".into() }
    } else if v != 0.0 && (v.abs() >= 1e8 || v.abs() < 1e-4) {
        // PyTorch writes the exponent with a sign and two digits: 1.0000e-06.
        let text = format!("{v:.decimals$e}");
        let (mantissa, exponent) =
            text.split_once('e').expect("{:e} output has an exponent");
        let exponent: i32 = exponent.parse().expect("{:e} exponent is an integer");
        format!("{mantissa}e{exponent:+03}")
    } else {
        format!("{v:.decimals$}")
    }
}

impl fmt::Display for Tensor {
    /// ```
    /// let t = engine::Tensor::from_vec(vec![1.0, -2.5, 3.0, 4.0], &[2, 2]);
    /// assert_eq!(
    ///     t.to_string(),
    ///     "tensor([[ 1.0000, -2.5000],\n        [ 3.0000,  4.0000]], shape=[2, 2])"
    /// );
    /// // A precision in the format string sets the number of decimals.
    /// assert_eq!(format!("{t:.1}"), "tensor([[ 1.0, -2.5],\n        [ 3.0,  4.0]], shape=[2, 2])");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let values = self.to_vec();
        let data = values.as_slice();
        let summarize = data.len() > SUMMARY_THRESHOLD;
        let decimals = f.precision().unwrap_or(DEFAULT_DECIMALS);
        let width = data
            .iter()
            .map(|&v| format_value(v, decimals).len())
            .max()
            .unwrap_or(0);
        let printer = Printer {
            data,
            shape: self.shape(),
            strides: strides(self.shape()),
            width,
            decimals,
            summarize,
        };
        write!(f, "tensor(")?;
        printer.write(f, 0, 0, "tensor(".len())?;
        write!(f, ", shape={:?}", self.shape())?;
        if self.requires_grad() {
            write!(f, ", requires_grad=true")?;
        }
        write!(f, ")")
    }
}
