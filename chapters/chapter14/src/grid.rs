//! Workgroups and invocations: how a launch covers its work.
//!
//! A GPU kernel runs as a grid of *workgroups*, each a block of *invocations*
//! (threads) that run the same code and can share fast workgroup memory. The engine's
//! element-wise kernels use workgroups of [`GROUP`] invocations, one per element;
//! WebGPU lets a launch have at most [`MAX_GROUPS_PER_DIM`] workgroups along each of
//! its three dimensions, so a large tensor's workgroups are spread over x and y.

/// Invocations per workgroup of the engine's one-dimensional kernels
/// (`@workgroup_size(256)` in their WGSL).
pub const GROUP: usize = 256;

/// WebGPU's default limit on the workgroups of one launch along one dimension.
pub const MAX_GROUPS_PER_DIM: usize = 65_535;

/// The workgroups of one launch, along x, y and z.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    /// Workgroups along x.
    pub x: usize,
    /// Workgroups along y.
    pub y: usize,
    /// Workgroups along z.
    pub z: usize,
}

impl Grid {
    /// The number of workgroups.
    pub fn groups(&self) -> usize {
        self.x * self.y * self.z
    }
}

// ANCHOR: elementwise_grid
/// The grid of an element-wise kernel over `n` elements, with `group` invocations per
/// workgroup and at most `max_per_dim` workgroups per dimension: the workgroups that
/// cover `n`, in as few rows (y) as keep each row within the limit, the rows as even
/// as can be. (Filling x first and starting a second row for the rest would, just
/// past the limit, launch twice the workgroups needed.)
pub fn elementwise_grid(n: usize, group: usize, max_per_dim: usize) -> Grid {
    let groups = n.div_ceil(group);
    let y = groups.div_ceil(max_per_dim).max(1);
    let x = groups.div_ceil(y);
    Grid { x, y, z: 1 }
}

/// The element an invocation handles: its workgroup `(wx, wy)` in a grid `grid` wide,
/// and its place `local` in the workgroup. The WGSL is `flat_index` in
/// `engine/src/gpu/shaders/common.wgsl`; invocations past `n` return at once.
pub fn invocation_index(
    grid: &Grid,
    (wx, wy): (usize, usize),
    local: usize,
    group: usize,
) -> usize {
    (wy * grid.x + wx) * group + local
}
// ANCHOR_END: elementwise_grid

// ANCHOR: matmul_grid
/// The grid of the tiled matrix product for `batch` products of `[m, k] · [k, n]`
/// with `tile × tile` output tiles: one workgroup per tile, the column tiles along x,
/// the row tiles along y, the batch along z.
pub fn matmul_grid(m: usize, n: usize, batch: usize, tile: usize) -> Grid {
    Grid {
        x: n.div_ceil(tile),
        y: m.div_ceil(tile),
        z: batch,
    }
}
// ANCHOR_END: matmul_grid

/// How many invocations of a grid do work, out of how many run: the rest fall past
/// the end of the data and return at once (a launch is paid in whole workgroups).
pub fn busy_share(n: usize, grid: &Grid, group: usize) -> (usize, usize) {
    (n, grid.groups() * group)
}
