//! Hairpin's offline table: the solver's best parity count for every loss rate, frame size,
//! opportunity count and outstanding packet count, in the released layout (spec §3.4):
//! `uint8` cells at `loss_idx·9075 + fs_idx·825 + (L − 1)·55 + (n − 1)` for α = 0…0.50 in
//! 0.01 steps, F = 5…55 in steps of 5, L = 1…15, n = 1…55 — 462,825 bytes, so the published
//! tables and ours compare byte for byte.
//!
//! Two lookups: [`Table::get`] for a cell on the grid (a loss rate, frame size or count off
//! the grid is an error that names it), and [`Table::lookup`] for the online sender, which
//! clamps and rounds its measurements onto the grid exactly as the released `GetFecCnt` does.

use super::binomial::Binomials;
use super::solver::{solve_chain, Transitions, MAX_LAYERS, MAX_PACKETS};
use std::fmt;

/// Loss rates on the grid: 0, 0.01, …, 0.50.
pub const LOSS_STEPS: usize = 51;
/// Frame sizes on the grid: 5, 10, …, 55.
pub const FRAME_SIZES: usize = 11;
/// Cells in one table.
pub const CELLS: usize = LOSS_STEPS * FRAME_SIZES * MAX_LAYERS * MAX_PACKETS;

/// A cell off the solved grid, or a table of the wrong size.
#[derive(Clone, Debug, PartialEq)]
pub enum TableError {
    LossOffGrid(f64),
    FrameSizeOffGrid(usize),
    LayersOffGrid(usize),
    PacketsOffGrid(usize),
    BadLambda(f64),
    WrongSize(usize),
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableError::LossOffGrid(a) => write!(
                f,
                "loss rate {a} is outside the solved grid: the Hairpin table covers 0 to 0.50 in steps of 0.01"
            ),
            TableError::FrameSizeOffGrid(n) => write!(
                f,
                "frame size {n} packets is outside the solved grid: the Hairpin table covers 5 to 55 in steps of 5"
            ),
            TableError::LayersOffGrid(l) => write!(
                f,
                "{l} transmission opportunities is outside the solved grid: the Hairpin table covers 1 to {MAX_LAYERS}"
            ),
            TableError::PacketsOffGrid(n) => write!(
                f,
                "{n} outstanding packets is outside the solved grid: the Hairpin table covers 1 to {MAX_PACKETS}"
            ),
            TableError::BadLambda(l) => {
                write!(f, "the bandwidth weight lambda must be a finite number > 0, got {l}")
            }
            TableError::WrongSize(n) => {
                write!(f, "a Hairpin table has {CELLS} one-byte cells, this one has {n} bytes")
            }
        }
    }
}

impl std::error::Error for TableError {}

/// The loss rate of grid step `i` as the released solver computes it (`linspace(0, 0.5, 51)`).
pub fn grid_loss(i: usize) -> f64 {
    if i == LOSS_STEPS - 1 {
        0.5
    } else {
        i as f64 * 0.01
    }
}

#[derive(Clone, PartialEq)]
pub struct Table {
    pub lambda: f64,
    cells: Vec<u8>,
}

impl fmt::Debug for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Table {{ lambda: {}, {} cells }}", self.lambda, self.cells.len())
    }
}

fn index(loss_idx: usize, fs_idx: usize, layer: usize, packets: usize) -> usize {
    loss_idx * (FRAME_SIZES * MAX_LAYERS * MAX_PACKETS)
        + fs_idx * (MAX_LAYERS * MAX_PACKETS)
        + (layer - 1) * MAX_PACKETS
        + (packets - 1)
}

impl Table {
    /// Solve the whole table for weight `lambda`, the loss rates spread over `threads`
    /// workers (at least one).
    pub fn solve(lambda: f64, threads: usize) -> Result<Table, TableError> {
        if !(lambda.is_finite() && lambda > 0.0) {
            return Err(TableError::BadLambda(lambda));
        }
        let binom = Binomials::new();
        let block = FRAME_SIZES * MAX_LAYERS * MAX_PACKETS;
        let mut cells = vec![0u8; CELLS];
        let threads = threads.clamp(1, LOSS_STEPS);
        std::thread::scope(|s| {
            let binom = &binom;
            let mut chunks: Vec<(usize, &mut [u8])> = cells.chunks_mut(block).enumerate().collect();
            let per = LOSS_STEPS.div_ceil(threads);
            while !chunks.is_empty() {
                let rest = chunks.split_off(chunks.len().min(per));
                let mine = std::mem::replace(&mut chunks, rest);
                s.spawn(move || {
                    for (li, out) in mine {
                        let trans = Transitions::new(grid_loss(li), binom);
                        for fi in 0..FRAME_SIZES {
                            let chain = solve_chain(&trans, 5 * (fi + 1), lambda);
                            for l in 1..=MAX_LAYERS {
                                for n in 1..=MAX_PACKETS {
                                    out[index(0, fi, l, n)] = chain.parity[l][n];
                                }
                            }
                        }
                    }
                });
            }
        });
        Ok(Table { lambda, cells })
    }

    /// A table in the released byte layout (e.g. a published `beta-array-*.bin`).
    pub fn from_bytes(lambda: f64, bytes: Vec<u8>) -> Result<Table, TableError> {
        if bytes.len() != CELLS {
            return Err(TableError::WrongSize(bytes.len()));
        }
        Ok(Table { lambda, cells: bytes })
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.cells
    }

    /// The parity count for a cell on the grid: loss rate α (a multiple of 0.01 in
    /// [0, 0.5], to 1e-9), frame size F (5…55, a multiple of 5), opportunities L (1…15),
    /// outstanding packets n (1…55).
    pub fn get(
        &self,
        alpha: f64,
        frame: usize,
        layers: usize,
        packets: usize,
    ) -> Result<u8, TableError> {
        let li = (alpha / 0.01).round();
        if !(alpha.is_finite()
            && (0.0..=0.5 + 1e-12).contains(&alpha)
            && (alpha - li * 0.01).abs() < 1e-9)
        {
            return Err(TableError::LossOffGrid(alpha));
        }
        if !(5..=55).contains(&frame) || !frame.is_multiple_of(5) {
            return Err(TableError::FrameSizeOffGrid(frame));
        }
        if !(1..=MAX_LAYERS).contains(&layers) {
            return Err(TableError::LayersOffGrid(layers));
        }
        if !(1..=MAX_PACKETS).contains(&packets) {
            return Err(TableError::PacketsOffGrid(packets));
        }
        Ok(self.cells[index(li as usize, frame / 5 - 1, layers, packets)])
    }

    /// The online lookup of the released sender (`GetFecCnt`): the loss estimate clamped to
    /// [0, 0.5] and rounded to the nearest step, the frame size clamped to [5, 55] and
    /// rounded *up* to a multiple of 5, L = ⌊remaining / rtt⌋ clamped to [1, 15], n clamped
    /// to [1, 55].
    pub fn lookup(
        &self,
        loss: f64,
        frame: usize,
        remaining_ms: u32,
        rtt_ms: u32,
        packets: usize,
    ) -> u8 {
        let loss = if loss.is_nan() { 0.0 } else { loss.clamp(0.0, 0.5) };
        let li = (loss / 0.01).round() as usize;
        let fi = (frame.clamp(5, 55) - 5).div_ceil(5);
        let layers = (remaining_ms.checked_div(rtt_ms).unwrap_or(MAX_LAYERS as u32) as usize)
            .clamp(1, MAX_LAYERS);
        self.cells[index(li, fi, layers, packets.clamp(1, MAX_PACKETS))]
    }

    /// Cells that differ from `other`'s, and where the first few are.
    pub fn compare(&self, other: &Table) -> TableDiff {
        let mut diff = TableDiff { cells: CELLS, mismatches: 0, first: Vec::new() };
        for (i, (a, b)) in self.cells.iter().zip(&other.cells).enumerate() {
            if a != b {
                diff.mismatches += 1;
                if diff.first.len() < 10 {
                    diff.first.push(Cell::at(i, *a, *b));
                }
            }
        }
        diff
    }
}

/// A table cell's coordinates and two tables' values there.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    pub loss: f64,
    pub frame: usize,
    pub layers: usize,
    pub packets: usize,
    pub ours: u8,
    pub theirs: u8,
}

impl Cell {
    fn at(i: usize, ours: u8, theirs: u8) -> Cell {
        let per_loss = FRAME_SIZES * MAX_LAYERS * MAX_PACKETS;
        let per_fs = MAX_LAYERS * MAX_PACKETS;
        Cell {
            loss: grid_loss(i / per_loss),
            frame: 5 * ((i % per_loss) / per_fs + 1),
            layers: (i % per_fs) / MAX_PACKETS + 1,
            packets: i % MAX_PACKETS + 1,
            ours,
            theirs,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct TableDiff {
    pub cells: usize,
    pub mismatches: usize,
    pub first: Vec<Cell>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_grid_requests_are_named() {
        let t = Table::from_bytes(1e-4, vec![0; CELLS]).unwrap();
        assert_eq!(t.get(0.7, 25, 1, 1), Err(TableError::LossOffGrid(0.7)));
        assert_eq!(t.get(0.015, 25, 1, 1), Err(TableError::LossOffGrid(0.015)));
        assert_eq!(t.get(0.2, 24, 1, 1), Err(TableError::FrameSizeOffGrid(24)));
        assert_eq!(t.get(0.2, 25, 0, 1), Err(TableError::LayersOffGrid(0)));
        assert_eq!(t.get(0.2, 25, 1, 56), Err(TableError::PacketsOffGrid(56)));
        assert!(t.get(0.2, 25, 3, 25).is_ok());
        assert!(TableError::LossOffGrid(0.7).to_string().contains("0 to 0.50"));
        assert_eq!(Table::from_bytes(1e-4, vec![0; 10]), Err(TableError::WrongSize(10)));
        assert_eq!(Table::solve(0.0, 1), Err(TableError::BadLambda(0.0)));
    }

    #[test]
    fn index_and_cell_coordinates_agree() {
        for (li, fi, l, n) in [(0, 0, 1, 1), (20, 4, 3, 25), (50, 10, 15, 55)] {
            let c = Cell::at(index(li, fi, l, n), 0, 0);
            assert_eq!((c.loss, c.frame, c.layers, c.packets), (grid_loss(li), 5 * (fi + 1), l, n));
        }
        assert_eq!(index(50, 10, 15, 55), CELLS - 1);
    }
}
