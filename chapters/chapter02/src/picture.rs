//! Drawing a scalar graph: the boxes and arrows come from walking the graph itself.

use crate::scalar::{Value, short};

/// The boxes of a drawn graph: each node's text and its `(column, row)` place, as
/// [`figures::Graph`] takes them.
pub type Nodes = Vec<(String, (u32, u32))>;

/// The arrows of a drawn graph: `(from, to)` indices into its [`Nodes`].
pub type Edges = Vec<(usize, usize)>;

/// The boxes and arrows of `root`'s graph, found by walking it: one box per value, in
/// topological order, reading `name = op(inputs)` and `data … | grad …`; one arrow from
/// every input to the value computed from it (twice for a value used twice).
///
/// An op's column is one more than its deepest input's, and a leaf sits just left of the
/// first column that uses it; within a column, values take rows in topological order.
/// Values missing from `names` are called `v0`, `v1`, … by their place in that order.
pub fn graph_layout(root: &Value, names: &[(&str, &Value)]) -> (Nodes, Edges) {
    let order = root.topological_order();
    let index = |v: &Value| {
        order
            .iter()
            .position(|w| w.same(v))
            .expect("an input is in the graph")
    };
    let name = |i: usize| {
        names
            .iter()
            .find(|(_, v)| v.same(&order[i]))
            .map_or_else(|| format!("v{i}"), |(n, _)| n.to_string())
    };

    let mut edges = Vec::new();
    let mut column = vec![0; order.len()];
    for (i, v) in order.iter().enumerate() {
        for (input, _) in v.inputs() {
            let j = index(input);
            edges.push((j, i));
            column[i] = column[i].max(column[j] + 1);
        }
    }
    for (i, _) in order.iter().enumerate().filter(|(_, v)| v.is_leaf()) {
        let first_use = edges.iter().filter(|e| e.0 == i).map(|e| column[e.1]).min();
        column[i] = first_use.map_or(0, |c| c - 1);
    }

    let mut next_row = vec![0; order.len()];
    let mut nodes = Vec::new();
    for (i, v) in order.iter().enumerate() {
        let args: Vec<String> = v.inputs().map(|(x, _)| name(index(x))).collect();
        let formula = match args.as_slice() {
            [] => name(i),
            [x, y] => format!("{} = {x} {} {y}", name(i), v.op()),
            _ => format!("{} = {}({})", name(i), v.op(), args.join(", ")),
        };
        let text = format!(
            "{formula}\ndata {} | grad {}",
            short(v.data()),
            short(v.grad())
        );
        let c = column[i];
        nodes.push((text, (c, next_row[c as usize])));
        next_row[c as usize] += 1;
    }
    (nodes, edges)
}

/// The picture of `root`'s graph as an SVG document, titled `title`.
pub fn graph_figure(title: &str, root: &Value, names: &[(&str, &Value)]) -> String {
    let (nodes, edges) = graph_layout(root, names);
    figures::graph(&figures::Graph {
        title,
        nodes: &nodes,
        edges: &edges,
    })
}
