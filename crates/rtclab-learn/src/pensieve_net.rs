//! The released Pensieve actor/critic (hongzimao/pensieve `a3c.py`, checkpoint
//! `pretrain_linear_reward`), forward pass only, in f32 like the original graph.
//!
//! Six branches of 128 ReLU units read the 6 × 8 state: dense on row 0's and row 1's last
//! column, three "Conv1D" layers on rows 2, 3 (all 8 columns) and row 4 (columns 0-5), and a
//! dense on row 4's last column (the original's `split_5` reads row 4, not row 5). The
//! convolutions see a length-1 sequence whose columns are channels, so with SAME padding
//! only kernel tap 1 touches data: each is a dense layer with `W[1, 0]`. Then 768 → 128 ReLU
//! → 6 softmax (actor) or → 1 (critic). See `python/rtclab/data/pensieve/README.md`.
//!
//! This exists to measure per-decision latency of the DNN next to the tree in the same
//! language; the Python teacher (`rtclab.metis.pensieve`) runs the same arithmetic in numpy.

use crate::abr::{S_INFO, S_LEN};

const H: usize = 128;

/// One network (actor or critic).
#[derive(Clone, Debug)]
pub struct PensieveNet {
    /// Per branch: weights [in × 128] and bias [128].
    branches: Vec<(Vec<f32>, Vec<f32>)>,
    hidden_w: Vec<f32>,
    hidden_b: Vec<f32>,
    out_w: Vec<f32>,
    out_b: Vec<f32>,
    outputs: usize,
}

/// The branch inputs: (row, first column, columns).
const BRANCH_INPUTS: [(usize, usize, usize); 6] =
    [(0, 7, 1), (1, 7, 1), (2, 0, 8), (3, 0, 8), (4, 0, 6), (4, 7, 1)];

impl PensieveNet {
    /// Builds a network from the checkpoint's arrays; `get(name)` returns a flattened
    /// float32 array (`FullyConnected.W`, `Conv1D.W`, ... without the `actor.` prefix).
    pub fn from_arrays(get: &dyn Fn(&str) -> Option<Vec<f32>>) -> Result<PensieveNet, String> {
        let take = |name: &str, len: usize| -> Result<Vec<f32>, String> {
            let v = get(name).ok_or_else(|| format!("array {name} is missing"))?;
            if v.len() != len {
                return Err(format!("array {name} has {} values, expected {len}", v.len()));
            }
            Ok(v)
        };
        let mut branches = Vec::new();
        let names = [
            "FullyConnected",
            "FullyConnected_1",
            "Conv1D",
            "Conv1D_1",
            "Conv1D_2",
            "FullyConnected_2",
        ];
        for (name, &(_, _, cols)) in names.iter().zip(BRANCH_INPUTS.iter()) {
            let w = if name.starts_with("Conv") {
                // [4, 1, C, 128]: tap 1.
                let all = take(&format!("{name}.W"), 4 * cols * H)?;
                all[cols * H..2 * cols * H].to_vec()
            } else {
                take(&format!("{name}.W"), cols * H)?
            };
            branches.push((w, take(&format!("{name}.b"), H)?));
        }
        let out_b = get("FullyConnected_4.b").ok_or("array FullyConnected_4.b is missing")?;
        let outputs = out_b.len();
        if outputs == 0 {
            return Err("FullyConnected_4.b is empty".into());
        }
        Ok(PensieveNet {
            branches,
            hidden_w: take("FullyConnected_3.W", 6 * H * H)?,
            hidden_b: take("FullyConnected_3.b", H)?,
            out_w: take("FullyConnected_4.W", H * outputs)?,
            out_b,
            outputs,
        })
    }

    pub fn outputs(&self) -> usize {
        self.outputs
    }

    pub fn parameter_count(&self) -> usize {
        self.branches.iter().map(|(w, b)| w.len() + b.len()).sum::<usize>()
            + self.hidden_w.len()
            + self.hidden_b.len()
            + self.out_w.len()
            + self.out_b.len()
    }

    /// Raw outputs (logits for the actor, the value for the critic) into `out`.
    pub fn forward(&self, s: &[[f64; S_LEN]; S_INFO], out: &mut [f32]) {
        let mut cat = [0f32; 6 * H];
        for (k, ((w, b), &(row, col, cols))) in
            self.branches.iter().zip(BRANCH_INPUTS.iter()).enumerate()
        {
            let h = &mut cat[k * H..(k + 1) * H];
            h.copy_from_slice(b);
            for c in 0..cols {
                let x = s[row][col + c] as f32;
                for (hj, wj) in h.iter_mut().zip(&w[c * H..(c + 1) * H]) {
                    *hj += x * wj;
                }
            }
            for v in h.iter_mut() {
                *v = v.max(0.0);
            }
        }
        let mut hid = [0f32; H];
        hid.copy_from_slice(&self.hidden_b);
        for (i, &x) in cat.iter().enumerate() {
            if x != 0.0 {
                for (hj, wj) in hid.iter_mut().zip(&self.hidden_w[i * H..(i + 1) * H]) {
                    *hj += x * wj;
                }
            }
        }
        for v in hid.iter_mut() {
            *v = v.max(0.0);
        }
        out[..self.outputs].copy_from_slice(&self.out_b);
        for (i, &x) in hid.iter().enumerate() {
            for (o, w) in out[..self.outputs]
                .iter_mut()
                .zip(&self.out_w[i * self.outputs..(i + 1) * self.outputs])
            {
                *o += x * w;
            }
        }
    }

    /// Softmax probabilities (actor).
    pub fn probabilities(&self, s: &[[f64; S_LEN]; S_INFO], out: &mut [f32]) {
        self.forward(s, out);
        let o = &mut out[..self.outputs];
        let m = o.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let mut sum = 0.0;
        for v in o.iter_mut() {
            *v = (*v - m).exp();
            sum += *v;
        }
        for v in o.iter_mut() {
            *v /= sum;
        }
    }

    /// The most probable action.
    pub fn greedy(&self, s: &[[f64; S_LEN]; S_INFO]) -> usize {
        let mut out = [0f32; 16];
        self.forward(s, &mut out);
        let mut best = 0;
        for i in 1..self.outputs {
            if out[i] > out[best] {
                best = i;
            }
        }
        best
    }
}
