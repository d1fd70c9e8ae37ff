//! Drawing a small computation graph: values as boxes in columns, ops as arrows.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// A computation graph to draw. Nodes sit in columns (inputs on the left); each edge goes
/// from an input node to the node computed from it.
#[derive(Clone, Debug)]
pub struct Graph<'a> {
    /// The figure's title.
    pub title: &'a str,
    /// Each node's text (e.g. `"a = 2.0 | grad 4.0"`) and its `(column, row)` place.
    pub nodes: &'a [(String, (u32, u32))],
    /// `(from, to)` indices into `nodes`.
    pub edges: &'a [(usize, usize)],
}

const BOX: (i32, i32) = (130, 44);
const GAP: (i32, i32) = (46, 24);

/// Draws the graph as an SVG document.
///
/// # Panics
/// When an edge names a node that does not exist.
pub fn graph(figure: &Graph<'_>) -> String {
    for &(a, b) in figure.edges {
        assert!(
            a < figure.nodes.len() && b < figure.nodes.len(),
            "graph: edge ({a}, {b}) names a node past the {} given",
            figure.nodes.len()
        );
    }
    let cols = figure.nodes.iter().map(|n| n.1.0).max().unwrap_or(0) as i32 + 1;
    let rows = figure.nodes.iter().map(|n| n.1.1).max().unwrap_or(0) as i32 + 1;
    let width = cols * (BOX.0 + GAP.0) + GAP.0;
    let height = rows * (BOX.1 + GAP.1) + GAP.1 + 40;
    let corner = |(c, r): (u32, u32)| {
        (
            GAP.0 + c as i32 * (BOX.0 + GAP.0),
            40 + GAP.1 + r as i32 * (BOX.1 + GAP.1),
        )
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width as u32, height as u32))
            .into_drawing_area();
        root.fill(&WHITE).expect("drawing to a string");
        let title = TextStyle::from(("sans-serif", 20).into_font())
            .pos(Pos::new(HPos::Center, VPos::Top));
        root.draw_text(figure.title, &title, (width / 2, 10))
            .expect("drawing to a string");
        let stroke = ShapeStyle::from(&BLACK).stroke_width(1);
        for &(a, b) in figure.edges {
            let (ax, ay) = corner(figure.nodes[a].1);
            let (bx, by) = corner(figure.nodes[b].1);
            let from = (ax + BOX.0, ay + BOX.1 / 2);
            let to = (bx, by + BOX.1 / 2);
            root.draw(&PathElement::new(vec![from, to], stroke))
                .expect("drawing to a string");
            // An arrow head: two short strokes back from the target.
            let (dx, dy) = ((to.0 - from.0) as f32, (to.1 - from.1) as f32);
            let len = (dx * dx + dy * dy).sqrt().max(1.0);
            let (ux, uy) = (dx / len, dy / len);
            for side in [-1.0f32, 1.0] {
                let tip = (
                    to.0 - (8.0 * ux - side * 4.0 * uy) as i32,
                    to.1 - (8.0 * uy + side * 4.0 * ux) as i32,
                );
                root.draw(&PathElement::new(vec![tip, to], stroke))
                    .expect("drawing to a string");
            }
        }
        let text = TextStyle::from(("sans-serif", 15).into_font())
            .pos(Pos::new(HPos::Center, VPos::Center));
        for (label, place) in figure.nodes {
            let (x, y) = corner(*place);
            root.draw(&Rectangle::new(
                [(x, y), (x + BOX.0, y + BOX.1)],
                RGBColor(232, 240, 248).filled(),
            ))
            .expect("drawing to a string");
            root.draw(&Rectangle::new([(x, y), (x + BOX.0, y + BOX.1)], stroke))
                .expect("drawing to a string");
            for (i, line) in label.split('\n').enumerate() {
                let lines = label.split('\n').count() as i32;
                let dy = (i as i32 * 2 - (lines - 1)) * 8;
                root.draw_text(line, &text, (x + BOX.0 / 2, y + BOX.1 / 2 + dy))
                    .expect("drawing to a string");
            }
        }
        root.present().expect("drawing to a string");
    }
    svg
}
