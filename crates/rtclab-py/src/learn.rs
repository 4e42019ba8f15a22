//! The learned-controller core for Python (`rtclab.gym`, `rtclab.metis`): the Pensieve ABR
//! environment, flat decision trees and the Pensieve network, plus a per-decision latency
//! probe. Observations and batches travel through the buffer protocol (numpy arrays the
//! caller owns), so a gym step costs one call and no allocation.

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rtclab_cc::learned::agent::AgentHandle;
use rtclab_cc::learned::obs::{FEATURE_NAMES, OBS_LEN};
use rtclab_learn::abr::{
    features_of, AbrConfig, AbrEnv, Snapshot, Trace, Video, LEVELS, S_INFO, S_LEN,
};
use rtclab_learn::pensieve_net::PensieveNet;
use rtclab_learn::qoe::Qoe;
use rtclab_learn::tree::FlatTree;
use std::time::Instant;

fn verr(e: String) -> PyErr {
    PyValueError::new_err(e)
}

fn write(py: Python<'_>, out: &Bound<'_, PyAny>, data: &[f64], what: &str) -> PyResult<()> {
    let buf: PyBuffer<f64> = PyBuffer::get(out)?;
    if buf.item_count() != data.len() || !buf.is_c_contiguous() || buf.readonly() {
        return Err(PyValueError::new_err(format!(
            "{what}: expected a writable C-contiguous float64 array of {} values",
            data.len()
        )));
    }
    buf.copy_from_slice(py, data)
}

fn read(py: Python<'_>, inp: &Bound<'_, PyAny>, width: usize, what: &str) -> PyResult<Vec<f64>> {
    let buf: PyBuffer<f64> = PyBuffer::get(inp)?;
    let v = buf.to_vec(py)?;
    if width == 0 || !v.len().is_multiple_of(width) {
        return Err(PyValueError::new_err(format!(
            "{what}: expected rows of {width} float64 values"
        )));
    }
    Ok(v)
}

fn outcome<'py>(
    py: Python<'py>,
    o: &rtclab_learn::abr::ChunkOutcome,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("quality", o.quality)?;
    d.set_item("reward", o.reward)?;
    d.set_item("rebuffer_s", o.rebuffer_s)?;
    d.set_item("buffer_s", o.buffer_s)?;
    d.set_item("delay_ms", o.delay_ms)?;
    d.set_item("sleep_ms", o.sleep_ms)?;
    d.set_item("chunk_bytes", o.chunk_bytes)?;
    d.set_item("chunks_left", o.chunks_left)?;
    d.set_item("end", o.end)?;
    Ok(d)
}

/// The Pensieve environment (see `rtclab_learn::abr`).
#[pyclass(module = "rtclab._core")]
#[derive(Clone)]
pub struct AbrCore {
    env: AbrEnv,
}

#[pymethods]
impl AbrCore {
    /// `traces`: [(name, text)] in `<seconds> <Mbit/s>` lines; `video`: six (name, text) of
    /// chunk sizes in bytes, lowest bitrate first.
    #[new]
    #[pyo3(signature = (traces, video, seed = 0, qoe = "lin", chunks = 48, noise = true, rtt_ms = 80.0, bitrates_kbps = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        traces: Vec<(String, String)>,
        video: Vec<(String, String)>,
        seed: u64,
        qoe: &str,
        chunks: usize,
        noise: bool,
        rtt_ms: f64,
        bitrates_kbps: Option<Vec<f64>>,
    ) -> PyResult<Self> {
        let mut cfg = AbrConfig {
            qoe: Qoe::parse(qoe).map_err(verr)?,
            chunks,
            rtt_ms,
            ..AbrConfig::default()
        };
        if !noise {
            cfg.noise_low = 1.0;
            cfg.noise_high = 1.0;
        }
        if !(rtt_ms.is_finite() && rtt_ms >= 0.0) {
            return Err(verr(format!("rtt_ms must be a number >= 0, got {rtt_ms}")));
        }
        if let Some(b) = bitrates_kbps {
            if b.len() != LEVELS || b.iter().any(|x| !(x.is_finite() && *x > 0.0)) {
                return Err(verr(format!("bitrates_kbps must be {LEVELS} positive numbers")));
            }
            cfg.bitrates_kbps.copy_from_slice(&b);
        }
        let ts = traces
            .iter()
            .map(|(n, t)| Trace::parse(n, t))
            .collect::<Result<Vec<_>, _>>()
            .map_err(verr)?;
        let v = Video::parse(&video, chunks).map_err(verr)?;
        Ok(AbrCore { env: AbrEnv::new(cfg, ts, v, seed).map_err(verr)? })
    }

    fn reseed(&mut self, seed: u64) {
        self.env.reseed(seed);
    }

    #[getter]
    fn trace_count(&self) -> usize {
        self.env.trace_count()
    }

    #[getter]
    fn trace_names(&self) -> Vec<String> {
        self.env.traces().iter().map(|t| t.name.clone()).collect()
    }

    #[getter]
    fn done(&self) -> bool {
        self.env.done()
    }

    /// Starts a video (a trace from its start, or a random trace and start when None) and
    /// writes the 48-value observation into `obs`.
    #[pyo3(signature = (obs, trace = None))]
    fn reset<'py>(
        &mut self,
        py: Python<'py>,
        obs: &Bound<'py, PyAny>,
        trace: Option<usize>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let o = self.env.reset(trace).map_err(verr)?;
        self.write_obs(py, obs)?;
        outcome(py, &o)
    }

    /// Downloads the next chunk at `quality`; writes the observation; returns (reward,
    /// done, rebuffer_s).
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        quality: usize,
        obs: &Bound<'py, PyAny>,
    ) -> PyResult<(f64, bool, f64)> {
        let o = self.env.step(quality).map_err(verr)?;
        self.write_obs(py, obs)?;
        Ok((o.reward, o.end, o.rebuffer_s))
    }

    /// Like `step`, with every figure of the download.
    fn step_info<'py>(
        &mut self,
        py: Python<'py>,
        quality: usize,
        obs: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let o = self.env.step(quality).map_err(verr)?;
        self.write_obs(py, obs)?;
        outcome(py, &o)
    }

    fn write_obs(&self, py: Python<'_>, obs: &Bound<'_, PyAny>) -> PyResult<()> {
        let s = self.env.observation();
        let mut flat = [0.0; S_INFO * S_LEN];
        for (r, row) in s.iter().enumerate() {
            flat[r * S_LEN..(r + 1) * S_LEN].copy_from_slice(row);
        }
        write(py, obs, &flat, "obs")
    }

    /// Metis's 25 features of the current observation.
    fn features(&self) -> Vec<f64> {
        self.env.features().to_vec()
    }

    /// The compact position (trace, ptr, time, buffer ms, chunk, last quality).
    fn snapshot(&self) -> Vec<f64> {
        self.env.snapshot().to_array().to_vec()
    }

    /// A full copy (RNG included): `restore(copy)` later puts this environment back.
    fn copy(&self) -> AbrCore {
        self.clone()
    }

    fn restore(&mut self, other: &AbrCore) {
        self.env = other.env.clone();
    }

    /// One-step rewards without noise: `snaps` holds rows of 6 (from `snapshot()`), `out`
    /// receives rows of 6 (one per quality).
    fn one_step_rewards<'py>(
        &self,
        py: Python<'py>,
        snaps: &Bound<'py, PyAny>,
        out: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        let v = read(py, snaps, Snapshot::WIDTH, "snaps")?;
        let env = &self.env;
        let res: Result<Vec<f64>, String> = py.detach(|| {
            let mut r = Vec::with_capacity(v.len() / Snapshot::WIDTH * LEVELS);
            for row in v.chunks_exact(Snapshot::WIDTH) {
                let s = Snapshot::from_array(row);
                for q in 0..LEVELS {
                    r.push(env.one_step_reward(&s, q)?);
                }
            }
            Ok(r)
        });
        write(py, out, &res.map_err(verr)?, "out")
    }

    /// Transitions for a critic's Q(s, a) = r + γ·V(s'): for each row of `snaps` (6) and
    /// `states` (48), the six noise-free one-step downloads. Writes rewards (rows of 6) into
    /// `rewards` and next observations (rows of 6 × 48) into `next_states`; returns whether
    /// each row's next state ends the video.
    fn one_step_transitions<'py>(
        &self,
        py: Python<'py>,
        snaps: &Bound<'py, PyAny>,
        states: &Bound<'py, PyAny>,
        rewards: &Bound<'py, PyAny>,
        next_states: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<bool>> {
        let sv = read(py, snaps, Snapshot::WIDTH, "snaps")?;
        let st = read(py, states, S_INFO * S_LEN, "states")?;
        let n = sv.len() / Snapshot::WIDTH;
        if st.len() / (S_INFO * S_LEN) != n {
            return Err(verr(format!("{n} snapshots but {} states", st.len() / (S_INFO * S_LEN))));
        }
        let env = &self.env;
        let (r, ns, ends) = py
            .detach(|| -> Result<_, String> {
                let (mut r, mut ns, mut ends) = (Vec::new(), Vec::new(), Vec::new());
                for (row, srow) in
                    sv.chunks_exact(Snapshot::WIDTH).zip(st.chunks_exact(S_INFO * S_LEN))
                {
                    let snap = Snapshot::from_array(row);
                    let mut end = false;
                    for q in 0..LEVELS {
                        let mut s = to_state(srow);
                        let o = env.one_step(&snap, &mut s, q)?;
                        r.push(o.reward);
                        end = o.end;
                        for line in s.iter() {
                            ns.extend_from_slice(line);
                        }
                    }
                    ends.push(end);
                }
                Ok((r, ns, ends))
            })
            .map_err(verr)?;
        write(py, rewards, &r, "rewards")?;
        write(py, next_states, &ns, "next_states")?;
        Ok(ends)
    }

    /// Plays whole videos with a tree over the 25 features (Rust end to end): returns the
    /// QoE sum of each video and writes nothing else. `traces` None: `videos` random videos.
    #[pyo3(signature = (tree, traces = None, videos = 1))]
    fn play_tree(
        &mut self,
        py: Python<'_>,
        tree: &TreeCore,
        traces: Option<Vec<usize>>,
        videos: usize,
    ) -> PyResult<Vec<f64>> {
        if tree.tree.n_features != 25 {
            return Err(verr(format!(
                "the tree reads {} features; the ABR environment has 25",
                tree.tree.n_features
            )));
        }
        let list: Vec<Option<usize>> = match traces {
            Some(t) => t.into_iter().map(Some).collect(),
            None => vec![None; videos],
        };
        let env = &mut self.env;
        let t = &tree.tree;
        py.detach(|| {
            let mut out = Vec::with_capacity(list.len());
            for tr in list {
                env.reset(tr)?;
                let mut qoe = 0.0;
                while !env.done() {
                    let q =
                        t.predict(&env.features()).round().clamp(0.0, (LEVELS - 1) as f64) as usize;
                    qoe += env.step(q)?.reward;
                }
                out.push(qoe);
            }
            Ok(out)
        })
        .map_err(verr)
    }
}

/// A flat decision tree (see `rtclab_learn::tree`).
#[pyclass(module = "rtclab._core", frozen)]
pub struct TreeCore {
    tree: FlatTree,
}

#[pymethods]
impl TreeCore {
    /// Parses rtclab's tree JSON; errors name `source`.
    #[staticmethod]
    fn from_json(source: &str, text: &str) -> PyResult<TreeCore> {
        Ok(TreeCore { tree: FlatTree::from_json(source, text).map_err(verr)? })
    }

    #[getter]
    fn n_features(&self) -> usize {
        self.tree.n_features
    }
    #[getter]
    fn node_count(&self) -> usize {
        self.tree.node_count()
    }
    #[getter]
    fn leaf_count(&self) -> usize {
        self.tree.leaf_count()
    }
    #[getter]
    fn depth(&self) -> usize {
        self.tree.depth()
    }
    #[getter]
    fn memory_bytes(&self) -> usize {
        self.tree.memory_bytes()
    }

    fn predict(&self, x: Vec<f64>) -> PyResult<f64> {
        self.tree.predict_checked(&x).map_err(verr)
    }

    /// Rows of `n_features` in `x`, one output per row into `out`.
    fn predict_batch<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        out: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        let v = read(py, x, self.tree.n_features, "x")?;
        let r: Vec<f64> =
            v.chunks_exact(self.tree.n_features).map(|row| self.tree.predict(row)).collect();
        write(py, out, &r, "out")
    }
}

/// The Pensieve network (see `rtclab_learn::pensieve_net`).
#[pyclass(module = "rtclab._core", frozen)]
pub struct PensieveNetCore {
    net: PensieveNet,
}

#[pymethods]
impl PensieveNetCore {
    /// `arrays`: name → flat float32 values as a list (names without `actor.`/`critic.`).
    #[new]
    fn new(arrays: std::collections::BTreeMap<String, Vec<f32>>) -> PyResult<Self> {
        let net = PensieveNet::from_arrays(&|n: &str| arrays.get(n).cloned()).map_err(verr)?;
        Ok(PensieveNetCore { net })
    }

    #[getter]
    fn parameter_count(&self) -> usize {
        self.net.parameter_count()
    }

    /// Outputs (softmax for 6 outputs, raw for 1) of the 48-value states in `states`.
    fn forward_batch<'py>(
        &self,
        py: Python<'py>,
        states: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<f64>> {
        let v = read(py, states, S_INFO * S_LEN, "states")?;
        let mut out = Vec::new();
        let mut o = [0f32; 16];
        for row in v.chunks_exact(S_INFO * S_LEN) {
            let s = to_state(row);
            if self.net.outputs() > 1 {
                self.net.probabilities(&s, &mut o);
            } else {
                self.net.forward(&s, &mut o);
            }
            out.extend(o[..self.net.outputs()].iter().map(|&x| x as f64));
        }
        Ok(out)
    }
}

fn to_state(row: &[f64]) -> [[f64; S_LEN]; S_INFO] {
    std::array::from_fn(|r| std::array::from_fn(|c| row[r * S_LEN + c]))
}

/// Per-decision latency in nanoseconds of a tree (over 25-feature rows of `x`) or a network
/// (over 48-value states), each decision timed alone; `repeats` passes over the rows.
#[pyfunction]
#[pyo3(signature = (model, x, repeats = 1))]
pub fn decision_latency_ns(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    x: &Bound<'_, PyAny>,
    repeats: usize,
) -> PyResult<Vec<f64>> {
    if let Ok(t) = model.cast::<TreeCore>() {
        let t = &t.get().tree;
        let v = read(py, x, t.n_features, "x")?;
        let rows: Vec<&[f64]> = v.chunks_exact(t.n_features).collect();
        return Ok(time_each(&rows, repeats, |row| t.predict(row)));
    }
    if let Ok(n) = model.cast::<PensieveNetCore>() {
        let net = &n.get().net;
        let v = read(py, x, S_INFO * S_LEN, "x")?;
        let states: Vec<_> = v.chunks_exact(S_INFO * S_LEN).map(to_state).collect();
        return Ok(time_each(&states, repeats, |s| net.greedy(s) as f64));
    }
    Err(verr("model must be a TreeCore or a PensieveNetCore".into()))
}

/// Wall time of each `decide(item)` alone, `repeats` passes over `items` (the only clock read
/// in this module).
#[allow(clippy::disallowed_methods)]
fn time_each<T>(items: &[T], repeats: usize, decide: impl Fn(&T) -> f64) -> Vec<f64> {
    let mut out = Vec::with_capacity(items.len() * repeats);
    let mut sink = 0.0;
    for _ in 0..repeats {
        for it in items {
            let t0 = Instant::now();
            sink += std::hint::black_box(decide(std::hint::black_box(it)));
            out.push(t0.elapsed().as_nanos() as f64);
        }
    }
    std::hint::black_box(sink);
    out
}

/// Metis's 25 features of 48-value states (rows of `states`), into `out`.
#[pyfunction]
pub fn abr_features<'py>(
    py: Python<'py>,
    states: &Bound<'py, PyAny>,
    out: &Bound<'py, PyAny>,
) -> PyResult<()> {
    let v = read(py, states, S_INFO * S_LEN, "states")?;
    let mut r = Vec::with_capacity(v.len() / 48 * 25);
    for row in v.chunks_exact(S_INFO * S_LEN) {
        r.extend_from_slice(&features_of(&to_state(row)));
    }
    write(py, out, &r, "out")
}

/// The environment's end of an externally driven media controller: registers `name` in the
/// controller registry (media flows), so a scenario flow with `cc = name` is driven by
/// `set_estimate` between `Simulation.run_until` calls. `shadow = "gcc"` runs send-side GCC
/// on the same feedback without letting it drive (a teacher's labels).
#[pyclass(module = "rtclab._core")]
pub struct BweAgent {
    name: String,
    handle: AgentHandle,
}

#[pymethods]
impl BweAgent {
    #[new]
    #[pyo3(signature = (name, start_bps = 300_000.0, shadow = None, min_bps = 30_000.0, max_bps = 20_000_000.0))]
    fn new(
        name: &str,
        start_bps: f64,
        shadow: Option<&str>,
        min_bps: f64,
        max_bps: f64,
    ) -> PyResult<Self> {
        for (what, v) in [("start_bps", start_bps), ("min_bps", min_bps), ("max_bps", max_bps)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(verr(format!("{what} must be a positive number, got {v}")));
            }
        }
        let shadow_kind = match shadow {
            None => 0,
            Some("gcc") => 1,
            Some(other) => {
                return Err(verr(format!(
                    "shadow {other:?}: accepted \"gcc\" (send-side, fed the same transport feedback) or None"
                )))
            }
        };
        let handle = AgentHandle::new(start_bps);
        let h = handle.clone();
        let factory: rtclab_cc::registry::Factory = std::sync::Arc::new(move |_args| {
            let sh: Option<Box<dyn rtclab_cc::CongestionController + Send + Sync>> =
                match shadow_kind {
                    1 => Some(Box::new(rtclab_cc::gcc::Gcc::new(rtclab_cc::gcc::GccConfig {
                        start_bitrate_bps: start_bps,
                        min_bitrate_bps: min_bps,
                        max_bitrate_bps: max_bps,
                        ..Default::default()
                    }))),
                    _ => None,
                };
            Ok(Box::new(h.controller(sh)))
        });
        rtclab_cc::registry::register(name, rtclab_cc::capabilities::Capabilities::MEDIA, factory)
            .map_err(verr)?;
        Ok(BweAgent { name: name.to_string(), handle })
    }

    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    #[staticmethod]
    fn feature_names() -> Vec<&'static str> {
        FEATURE_NAMES.to_vec()
    }

    fn reset(&self, start_bps: f64) {
        self.handle.reset(start_bps);
    }

    fn set_estimate(&self, bps: f64) -> PyResult<()> {
        if !(bps.is_finite() && bps > 0.0) {
            return Err(verr(format!(
                "the estimate must be a positive number of bit/s, got {bps}"
            )));
        }
        self.handle.set_estimate(bps);
        Ok(())
    }

    /// Closes a step of `step_s` seconds: writes the observation into `obs` (9 float64) and
    /// returns (network score, shadow controller's target in bit/s or None).
    fn close_step<'py>(
        &self,
        py: Python<'py>,
        step_s: f64,
        obs: &Bound<'py, PyAny>,
    ) -> PyResult<(f64, Option<f64>)> {
        let step = rtclab_core::TimeDelta::from_nanos((step_s * 1e9) as i64);
        let (o, score, shadow) = self.handle.close_step(step);
        write(py, obs, &o[..OBS_LEN], "obs")?;
        Ok((score, shadow))
    }

    /// Removes the registered name (also done when the object is dropped).
    fn close(&self) {
        rtclab_cc::registry::unregister(&self.name);
    }
}

impl Drop for BweAgent {
    fn drop(&mut self) {
        rtclab_cc::registry::unregister(&self.name);
    }
}
