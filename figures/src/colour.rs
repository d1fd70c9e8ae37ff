//! The colour scale of the heatmaps: viridis, read left to right as low to high, legible in
//! grey and to the colour-blind.

use plotters::style::RGBColor;

/// The colour of a NaN: outside the scale, so that it cannot be read as a value.
pub const NAN_COLOUR: RGBColor = RGBColor(200, 200, 200);

/// Viridis at nine evenly spaced points; colours between are interpolated linearly.
const VIRIDIS: [(u8, u8, u8); 9] = [
    (68, 1, 84),
    (71, 44, 122),
    (59, 81, 139),
    (44, 113, 142),
    (33, 144, 141),
    (39, 173, 129),
    (92, 200, 99),
    (170, 220, 50),
    (253, 231, 37),
];

/// The colour of `value` on a scale from `lo` (dark purple) to `hi` (yellow). Values outside
/// the range take the colour of the nearest end; a flat range (`lo == hi`) is the middle; a
/// NaN, which has no place on the scale, is light grey ([`NAN_COLOUR`]).
///
/// ```
/// use figures::colour_of;
/// use plotters::style::RGBColor;
/// assert_eq!(colour_of(0.0, (0.0, 1.0)), RGBColor(68, 1, 84));
/// assert_eq!(colour_of(1.0, (0.0, 1.0)), RGBColor(253, 231, 37));
/// assert_eq!(colour_of(f32::NAN, (0.0, 1.0)), figures::NAN_COLOUR);
/// ```
pub fn colour_of(value: f32, (lo, hi): (f32, f32)) -> RGBColor {
    if value.is_nan() {
        return NAN_COLOUR;
    }
    let t = if hi > lo {
        ((value - lo) / (hi - lo)).clamp(0.0, 1.0)
    } else {
        0.5
    };
    let pos = t * (VIRIDIS.len() - 1) as f32;
    let i = (pos.floor() as usize).min(VIRIDIS.len() - 2);
    let f = pos - i as f32;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    let mix = |x: u8, y: u8| {
        (f32::from(x) + (f32::from(y) - f32::from(x)) * f).round() as u8
    };
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}
