//! The book's figures, drawn with plotters' SVG backend (no system fonts: text is written
//! as SVG `<text>` and drawn by the browser), and the check that keeps each committed figure
//! equal to what the code draws.
//!
//! A chapter builds its figure from a seeded run, then either writes it (its example) or
//! compares it with the committed file (its test) through [`check_or_update`]:
//!
//! ```no_run
//! let svg = figures::bar_chart(&figures::BarChart {
//!     title: "weights of one query",
//!     x_desc: "key",
//!     y_desc: "weight",
//!     labels: &["a".into(), "b".into()],
//!     values: &[0.25, 0.75],
//! });
//! figures::check_or_update("ch00-example.svg", &svg).unwrap();
//! ```
//!
//! - [`heatmap`]: one or more panels of a matrix (attention weights: queries × keys), with
//!   token labels on both axes and a colour scale.
//! - [`bar_chart`]: one query's weights over the keys.
//! - [`line_chart`]: loss curves, cost growth, variances against the dimension.
//! - [`graph`]: a computation graph, nodes in columns, edges as arrows.

use std::path::PathBuf;

use plotters::coord::Shift;
use plotters::prelude::*;

mod check;
mod colour;
mod graph;

pub use check::{UPDATE_VARIABLE, check_or_update, figure_path, write};
pub use colour::{NAN_COLOUR, colour_of};
pub use graph::{Graph, graph};

/// The width at which the book shows a figure (mdBook's content column): a wider figure is
/// scaled down to it, its text with it.
pub const DISPLAY_WIDTH: u32 = 750;

/// The smallest text, in pixels as displayed, that a figure may hold (the body text is 16).
pub const MIN_TEXT_PX: f64 = 12.0;

/// Font sizes as requested from plotters, whose SVG backend writes about 0.8 of the
/// requested size: tick and token labels (≈ 12 px), panel captions and legends, titles.
const LABEL: f64 = 15.0;
const CAPTION: f64 = 17.0;
const TITLE: f64 = 20.0;

/// Width and height of one heatmap panel, in SVG pixels; at most two panels share a row,
/// so that a figure is never wider than [`DISPLAY_WIDTH`].
const PANEL: (u32, u32) = (330, 320);
const SCALE_WIDTH: u32 = 90;
const PANELS_PER_ROW: u32 = 2;
/// The column a line chart's legend takes when no region of the plot is free of lines.
const LEGEND_WIDTH: u32 = 200;
const FONT: &str = "sans-serif";

/// One matrix to draw as a heatmap: `values` in row-major order, `rows × cols`.
#[derive(Clone, Debug)]
pub struct Panel<'a> {
    /// The panel's title (e.g. `"head 0"`).
    pub title: String,
    /// The values, row-major, `rows × cols` of them.
    pub values: &'a [f32],
    /// The label of each row (a query token), top to bottom.
    pub row_labels: &'a [String],
    /// The label of each column (a key token), left to right.
    pub col_labels: &'a [String],
}

/// A heatmap figure: one or more panels side by side sharing one colour scale.
#[derive(Clone, Debug)]
pub struct Heatmap<'a> {
    /// The figure's title.
    pub title: &'a str,
    /// What the rows are (e.g. `"query"`).
    pub row_desc: &'a str,
    /// What the columns are (e.g. `"key"`).
    pub col_desc: &'a str,
    /// The panels, drawn left to right.
    pub panels: &'a [Panel<'a>],
    /// The range of the colour scale; `None` uses the smallest and largest value shown.
    pub range: Option<(f32, f32)>,
}

/// Draws a heatmap as an SVG document.
///
/// # Panics
/// When a panel's value count is not `row_labels.len() × col_labels.len()`, or there is no
/// panel.
pub fn heatmap(figure: &Heatmap<'_>) -> String {
    assert!(
        !figure.panels.is_empty(),
        "heatmap: needs at least one panel"
    );
    for p in figure.panels {
        assert_eq!(
            p.values.len(),
            p.row_labels.len() * p.col_labels.len(),
            "heatmap: panel {:?} has {} values for {} rows × {} columns",
            p.title,
            p.values.len(),
            p.row_labels.len(),
            p.col_labels.len()
        );
    }
    let (lo, hi) = figure.range.unwrap_or_else(|| {
        let all = figure
            .panels
            .iter()
            .flat_map(|p| p.values.iter().copied())
            .filter(|v| !v.is_nan());
        all.fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        })
    });
    let n = figure.panels.len() as u32;
    let (cols, rows) = (n.min(PANELS_PER_ROW), n.div_ceil(PANELS_PER_ROW));
    let size = (PANEL.0 * cols + SCALE_WIDTH, PANEL.1 * rows + 30);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).expect("drawing to a string");
        let root = root
            .titled(figure.title, (FONT, TITLE))
            .expect("drawing to a string");
        let (panels_area, scale_area) = root.split_horizontally(PANEL.0 * cols);
        let areas = panels_area.split_evenly((rows as usize, cols as usize));
        for (panel, area) in figure.panels.iter().zip(&areas) {
            draw_panel(area, panel, figure, (lo, hi));
        }
        draw_scale(&scale_area, (lo, hi));
        root.present().expect("drawing to a string");
    }
    svg
}

fn draw_panel(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    panel: &Panel<'_>,
    figure: &Heatmap<'_>,
    range: (f32, f32),
) {
    let (rows, cols) = (panel.row_labels.len() as i32, panel.col_labels.len() as i32);
    // Room for the longest row label at the label size (about 8 px a character), and the
    // axis description beside it.
    let longest = panel
        .row_labels
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(1);
    let y_label_area = (longest as u32 * 8 + 30).clamp(40, 110);
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, (FONT, CAPTION))
        .margin(6)
        .x_label_area_size(44)
        .y_label_area_size(y_label_area)
        // `a..b` makes b − a + 1 segments in plotters, so `0..n − 1` gives n cells.
        .build_cartesian_2d(
            (0..(cols - 1).max(0)).into_segmented(),
            (0..(rows - 1).max(0)).into_segmented(),
        )
        .expect("drawing to a string");
    let label = |labels: &[String], v: &SegmentValue<i32>| match v {
        SegmentValue::CenterOf(i) if *i >= 0 => {
            labels.get(*i as usize).cloned().unwrap_or_default()
        }
        _ => String::new(),
    };
    // Rows are drawn top to bottom, as a matrix is read.
    let flip = |r: i32| rows - 1 - r;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc(figure.col_desc)
        .y_desc(figure.row_desc)
        .x_labels(cols as usize)
        .y_labels(rows as usize)
        .x_label_formatter(&|v| label(panel.col_labels, v))
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(r) => {
                label(panel.row_labels, &SegmentValue::CenterOf(flip(*r)))
            }
            _ => String::new(),
        })
        .label_style((FONT, LABEL))
        .draw()
        .expect("drawing to a string");
    chart
        .draw_series((0..rows).flat_map(|r| {
            (0..cols).map(move |c| {
                let v = panel.values[(r * cols + c) as usize];
                let y = flip(r);
                Rectangle::new(
                    [
                        (SegmentValue::Exact(c), SegmentValue::Exact(y)),
                        (SegmentValue::Exact(c + 1), SegmentValue::Exact(y + 1)),
                    ],
                    colour_of(v, range).filled(),
                )
            })
        }))
        .expect("drawing to a string");
}

fn draw_scale(area: &DrawingArea<SVGBackend<'_>, Shift>, (lo, hi): (f32, f32)) {
    let top = if hi > lo { hi } else { lo + 1.0 };
    let mut chart = ChartBuilder::on(area)
        .margin_top(30)
        .margin_bottom(46)
        .margin_right(36)
        .y_label_area_size(0)
        .right_y_label_area_size(40)
        .build_cartesian_2d(0f32..1f32, lo..top)
        .expect("drawing to a string");
    chart
        .configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_labels(5)
        .y_label_formatter(&|v| format!("{v:.2}"))
        .label_style((FONT, LABEL))
        .draw()
        .expect("drawing to a string");
    const STEPS: usize = 64;
    let step = (top - lo) / STEPS as f32;
    chart
        .draw_series((0..STEPS).map(|i| {
            let y = lo + step * i as f32;
            Rectangle::new(
                [(0.0, y), (1.0, y + step)],
                colour_of(y + step / 2.0, (lo, top)).filled(),
            )
        }))
        .expect("drawing to a string");
}

/// A bar chart: one value per label (e.g. one query's weight on each key).
#[derive(Clone, Debug)]
pub struct BarChart<'a> {
    /// The figure's title.
    pub title: &'a str,
    /// What the bars are (e.g. `"key"`).
    pub x_desc: &'a str,
    /// What the heights are (e.g. `"attention weight"`).
    pub y_desc: &'a str,
    /// The label under each bar.
    pub labels: &'a [String],
    /// The height of each bar.
    pub values: &'a [f32],
}

/// Draws a bar chart as an SVG document; the value axis starts at 0 (or below, for a
/// negative value).
pub fn bar_chart(figure: &BarChart<'_>) -> String {
    assert_eq!(
        figure.labels.len(),
        figure.values.len(),
        "bar_chart: {} labels for {} values",
        figure.labels.len(),
        figure.values.len()
    );
    let n = figure.values.len() as i32;
    let lo = figure.values.iter().copied().fold(0.0f32, f32::min);
    let hi = figure.values.iter().copied().fold(0.0f32, f32::max);
    let hi = if hi > lo { hi * 1.1 } else { lo + 1.0 };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (480, 300)).into_drawing_area();
        root.fill(&WHITE).expect("drawing to a string");
        let mut chart = ChartBuilder::on(&root)
            .caption(figure.title, (FONT, TITLE))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d((0..(n - 1).max(0)).into_segmented(), lo..hi)
            .expect("drawing to a string");
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc(figure.x_desc)
            .y_desc(figure.y_desc)
            .x_labels(n as usize)
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) if *i >= 0 => {
                    figure.labels.get(*i as usize).cloned().unwrap_or_default()
                }
                _ => String::new(),
            })
            .y_label_formatter(&|v| format!("{v:.2}"))
            .label_style((FONT, LABEL))
            .draw()
            .expect("drawing to a string");
        chart
            .draw_series(figure.values.iter().enumerate().map(|(i, &v)| {
                let i = i as i32;
                let mut bar = Rectangle::new(
                    [
                        (SegmentValue::Exact(i), 0.0),
                        (SegmentValue::Exact(i + 1), v),
                    ],
                    RGBColor(49, 104, 142).filled(),
                );
                bar.set_margin(0, 0, 6, 6);
                bar
            }))
            .expect("drawing to a string");
        root.present().expect("drawing to a string");
    }
    svg
}

/// One named line of a [`LineChart`].
#[derive(Clone, Debug)]
pub struct Series<'a> {
    /// The name shown in the legend.
    pub name: &'a str,
    /// The points, in order of `x`.
    pub points: &'a [(f32, f32)],
}

/// A line chart of one or more series.
#[derive(Clone, Debug)]
pub struct LineChart<'a> {
    /// The figure's title.
    pub title: &'a str,
    /// What the horizontal axis is.
    pub x_desc: &'a str,
    /// What the vertical axis is.
    pub y_desc: &'a str,
    /// The lines.
    pub series: &'a [Series<'a>],
    /// Draw the horizontal axis on a log₂ scale (for sizes that double).
    pub log2_x: bool,
    /// Draw the vertical axis on a log₁₀ scale (for costs that grow by orders).
    pub log10_y: bool,
}

/// The colours of successive series.
const PALETTE: [RGBColor; 6] = [
    RGBColor(49, 104, 142),
    RGBColor(221, 132, 82),
    RGBColor(85, 168, 104),
    RGBColor(196, 78, 82),
    RGBColor(129, 114, 179),
    RGBColor(147, 120, 96),
];

/// Draws a line chart as an SVG document, with a legend when there is more than one series.
pub fn line_chart(figure: &LineChart<'_>) -> String {
    let tx = |x: f32| if figure.log2_x { x.log2() } else { x };
    let ty = |y: f32| if figure.log10_y { y.log10() } else { y };
    let points = || figure.series.iter().flat_map(|s| s.points.iter());
    let bounds = |f: &dyn Fn(&(f32, f32)) -> f32| {
        points()
            .map(f)
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            })
    };
    let (x0, x1) = bounds(&|p| tx(p.0));
    let (y0, y1) = bounds(&|p| ty(p.1));
    let pad = |lo: f32, hi: f32| {
        let m = if hi > lo { (hi - lo) * 0.05 } else { 1.0 };
        (lo - m)..(hi + m)
    };
    // Where the legend goes: the region of the plot that the lines cross least, or, when
    // every region holds some of a line, a column of its own to the right of the plot.
    let legend = (figure.series.len() > 1).then(|| {
        let along_lines = figure.series.iter().flat_map(|s| {
            s.points.windows(2).flat_map(|w| {
                let ((ax, ay), (bx, by)) =
                    ((tx(w[0].0), ty(w[0].1)), (tx(w[1].0), ty(w[1].1)));
                (0..=16).map(move |i| {
                    let f = i as f32 / 16.0;
                    (ax + f * (bx - ax), ay + f * (by - ay))
                })
            })
        });
        let lone_points = figure
            .series
            .iter()
            .filter(|s| s.points.len() == 1)
            .map(|s| (tx(s.points[0].0), ty(s.points[0].1)));
        emptiest_corner(along_lines.chain(lone_points), (pad(x0, x1), pad(y0, y1)))
    });
    let outside = matches!(legend, Some((_, covered)) if covered > 0);
    let width = if outside { 520 + LEGEND_WIDTH } else { 520 };
    let mut svg = String::new();
    {
        let full =
            SVGBackend::with_string(&mut svg, (width, 340)).into_drawing_area();
        full.fill(&WHITE).expect("drawing to a string");
        let (root, legend_area) = full.split_horizontally(520);
        let mut chart = ChartBuilder::on(&root)
            .caption(figure.title, (FONT, TITLE))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(pad(x0, x1), pad(y0, y1))
            .expect("drawing to a string");
        let x_fmt = |v: &f32| {
            if figure.log2_x {
                number(2f32.powf(*v))
            } else {
                number(*v)
            }
        };
        let y_fmt = |v: &f32| {
            if figure.log10_y {
                power_of_ten(*v)
            } else {
                format!("{v:.2}")
            }
        };
        // On a log axis, one tick per power (of 2 along x, of 10 along y), so that the
        // labels read 64, 128, 256 or 1, 10, 100 rather than values in between.
        let powers = |lo: f32, hi: f32| (hi.floor() - lo.ceil()) as usize + 1;
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(figure.x_desc)
            .y_desc(figure.y_desc)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .label_style((FONT, LABEL));
        if figure.log2_x {
            mesh.x_labels(powers(x0, x1));
        }
        if figure.log10_y {
            mesh.y_labels(powers(y0, y1).max(2));
        }
        mesh.draw().expect("drawing to a string");
        for (i, s) in figure.series.iter().enumerate() {
            let colour = PALETTE[i % PALETTE.len()];
            let line = s.points.iter().map(|&(x, y)| (tx(x), ty(y)));
            chart
                .draw_series(LineSeries::new(line, colour.stroke_width(2)))
                .expect("drawing to a string")
                .label(s.name)
                .legend(move |(x, y)| {
                    PathElement::new(
                        vec![(x, y), (x + 16, y)],
                        colour.stroke_width(2),
                    )
                });
        }
        if outside {
            // One entry per series, a short line in its colour and its name.
            for (i, s) in figure.series.iter().enumerate() {
                let colour = PALETTE[i % PALETTE.len()];
                let y = 60 + 24 * i as i32;
                legend_area
                    .draw(&PathElement::new(
                        vec![(8, y), (30, y)],
                        colour.stroke_width(2),
                    ))
                    .expect("drawing to a string");
                legend_area
                    .draw(&Text::new(s.name, (36, y - 8), (FONT, LABEL).into_font()))
                    .expect("drawing to a string");
            }
        } else if let Some((corner, _)) = legend {
            chart
                .configure_series_labels()
                .position(corner)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .label_font((FONT, LABEL))
                .draw()
                .expect("drawing to a string");
        }
        root.present().expect("drawing to a string");
    }
    svg
}

/// The label of the tick at `10^v` on a log axis: a power of ten written out in full
/// (`0.001`, `1`, `1000`), any other value as [`number`] writes it.
fn power_of_ten(v: f32) -> String {
    let k = v.round();
    if (v - k).abs() > 1e-3 {
        return number(10f32.powf(v));
    }
    if k >= 0.0 {
        format!("{}", 10f64.powi(k as i32))
    } else {
        format!("{:.*}", (-k) as usize, 10f64.powi(k as i32))
    }
}

/// A tick label: whole numbers without decimals, others with up to three significant digits
/// and no trailing zeros.
fn number(v: f32) -> String {
    if (v - v.round()).abs() < 1e-4 * v.abs().max(1.0) {
        format!("{}", v.round())
    } else {
        let digits = (2 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
        let text = format!("{v:.digits$}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// The corner (or the middle of a side) of the plotting area that the fewest points fall
/// in, so the legend covers as little of the data as possible (upper corners first on a
/// tie, then lower, then the middles), and how many fall there.
fn emptiest_corner(
    points: impl Iterator<Item = (f32, f32)>,
    (xs, ys): (std::ops::Range<f32>, std::ops::Range<f32>),
) -> (SeriesLabelPosition, usize) {
    // Upper right, upper left, lower right, lower left, then the middle of each side (for
    // lines that run along both the top and the bottom, leaving the middle free).
    let mut counts = [0usize; 6];
    for (x, y) in points {
        let fx = (x - xs.start) / (xs.end - xs.start);
        let fy = (y - ys.start) / (ys.end - ys.start);
        let (right, left, top, bottom) = (fx > 0.55, fx < 0.45, fy > 0.6, fy < 0.4);
        let middle = fy > 0.3 && fy < 0.7;
        let regions = [
            right && top,
            left && top,
            right && bottom,
            left && bottom,
            right && middle,
            left && middle,
        ];
        for (i, inside) in regions.into_iter().enumerate() {
            counts[i] += usize::from(inside);
        }
    }
    let best = (0..6).min_by_key(|&i| counts[i]).unwrap_or(0);
    let position = [
        SeriesLabelPosition::UpperRight,
        SeriesLabelPosition::UpperLeft,
        SeriesLabelPosition::LowerRight,
        SeriesLabelPosition::LowerLeft,
        SeriesLabelPosition::MiddleRight,
        SeriesLabelPosition::MiddleLeft,
    ][best]
        .clone();
    (position, counts[best])
}

/// Where the book keeps its figures: `book/src/figures/` in the workspace.
pub fn figures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../book/src/figures")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_numbers_drop_decimals_only_for_whole_numbers() {
        assert_eq!(number(10.0), "10");
        assert_eq!(number(1024.0), "1024");
        assert_eq!(number(0.5), "0.5");
        assert_eq!(number(0.125), "0.125");
        assert_eq!(number(2.5), "2.5");
    }

    #[test]
    fn the_legend_goes_where_the_data_is_not() {
        // Points along the bottom edge and up the left side: the upper right is empty.
        let points = [(0.0, 0.0), (0.5, 0.0), (1.0, 0.0), (0.0, 1.0), (0.0, 0.5)];
        let corner = emptiest_corner(points.into_iter(), (0.0..1.0, 0.0..1.0));
        assert!(matches!(corner, (SeriesLabelPosition::UpperRight, 0)));
        // A rising line leaves the upper left and the lower right empty: upper left first.
        let rising = (0..=10).map(|i| (i as f32 / 10.0, i as f32 / 10.0));
        let corner = emptiest_corner(rising, (0.0..1.0, 0.0..1.0));
        assert!(matches!(corner, (SeriesLabelPosition::UpperLeft, 0)));
        // Lines along the top and the bottom leave only the middles free.
        let top_and_bottom =
            (0..=10).flat_map(|i| [(i as f32 / 10.0, 0.95), (i as f32 / 10.0, 0.05)]);
        let corner = emptiest_corner(top_and_bottom, (0.0..1.0, 0.0..1.0));
        assert!(matches!(corner, (SeriesLabelPosition::MiddleRight, 0)));
        // A region crossed everywhere reports how much: the chart then puts its legend
        // beside the plot.
        let everywhere = (0..=10)
            .flat_map(|i| (0..=10).map(move |j| (i as f32 / 10.0, j as f32 / 10.0)));
        assert!(emptiest_corner(everywhere, (0.0..1.0, 0.0..1.0)).1 > 0);
    }

    #[test]
    fn a_crowded_line_chart_puts_its_legend_beside_the_plot() {
        let a: Vec<(f32, f32)> = (0..=20)
            .map(|i| (i as f32, (i as f32 / 3.0).sin()))
            .collect();
        let b: Vec<(f32, f32)> = (0..=20)
            .map(|i| (i as f32, (i as f32 / 3.0).cos()))
            .collect();
        let svg = line_chart(&LineChart {
            title: "t",
            x_desc: "x",
            y_desc: "y",
            series: &[
                Series {
                    name: "sin",
                    points: &a,
                },
                Series {
                    name: "cos",
                    points: &b,
                },
            ],
            log2_x: false,
            log10_y: false,
        });
        assert!(
            svg.contains(&format!("width=\"{}\"", 520 + LEGEND_WIDTH)),
            "{}",
            &svg[..200]
        );
    }

    #[test]
    fn a_heatmap_draws_one_cell_per_value_and_a_scale() {
        let labels: Vec<String> = ["a", "b"].iter().map(|s| s.to_string()).collect();
        let svg = heatmap(&Heatmap {
            title: "t",
            row_desc: "query",
            col_desc: "key",
            panels: &[Panel {
                title: "p".into(),
                values: &[0.0, 1.0, 0.25, 0.75],
                row_labels: &labels,
                col_labels: &labels,
            }],
            range: Some((0.0, 1.0)),
        });
        // The lowest and highest values take the ends of the scale.
        assert!(svg.contains("fill=\"#440154\""), "dark purple for 0");
        assert!(svg.contains("fill=\"#FDE725\""), "yellow for 1");
        for text in [">query<", ">key<", ">a<", ">b<"] {
            assert!(
                svg.replace(['\n', ' '], "").contains(text),
                "{text} in the figure"
            );
        }
    }
}

#[cfg(test)]
mod log_tick_tests {
    use super::power_of_ten;

    #[test]
    fn powers_of_ten_are_written_out_and_small_ones_are_not_zero() {
        assert_eq!(power_of_ten(0.0), "1");
        assert_eq!(power_of_ten(3.0), "1000");
        assert_eq!(power_of_ten(-5.0), "0.00001");
        assert_eq!(power_of_ten(-1.0), "0.1");
        assert_eq!(power_of_ten(0.5), "3.16");
    }
}
