//! AFR's decoder-queue simulator for Python (`rtclab repro afr`): one policy over a number of
//! synthetic client sessions, the GIL released.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rtclab_media::afr::clients::{category, ClientSession, CATEGORIES};
use rtclab_media::afr::controller::FrameRatePolicy;
use rtclab_media::afr::decoder_queue::{simulate, stall_ratio, stats};

fn policy(
    name: &str,
    w0_ms: f64,
    rho: f64,
    dissertation: bool,
) -> PyResult<(FrameRatePolicy, Option<usize>)> {
    FrameRatePolicy::by_name(name, w0_ms, rho, dissertation).map_err(PyValueError::new_err)
}

/// Runs `policy` over `sessions` synthetic sessions of client category `category` (each
/// `seconds` long, seeds `seed`, `seed + 1`, ...); returns the figures of spec §2.8 and each
/// session's stall ratio. `dissertation` selects the dissertation's outlier and transient
/// rules instead of the released code's.
#[pyfunction]
#[pyo3(signature = (category_name, policy_name, sessions = 10, seconds = 60.0, seed = 1, w0_ms = 2.0, rho = 0.95, dissertation = false))]
#[allow(clippy::too_many_arguments)]
pub fn afr_run<'py>(
    py: Python<'py>,
    category_name: &str,
    policy_name: &str,
    sessions: usize,
    seconds: f64,
    seed: u64,
    w0_ms: f64,
    rho: f64,
    dissertation: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let Some(cat) = category(category_name) else {
        let names: Vec<_> = CATEGORIES.iter().map(|c| c.name).collect();
        return Err(PyValueError::new_err(format!(
            "unknown client category {category_name:?} (accepted: {})",
            names.join(", ")
        )));
    };
    if sessions == 0 || !(seconds.is_finite() && (1.0..=86_400.0).contains(&seconds)) {
        return Err(PyValueError::new_err("need at least one session of 1 s to 24 h"));
    }
    policy(policy_name, w0_ms, rho, dissertation)?;
    let name = policy_name.to_string();
    let (st, stalls) = py.detach(move || {
        let mut runs = Vec::with_capacity(sessions);
        for i in 0..sessions {
            let rng =
                rtclab_core::SeedTree::new(seed + i as u64).stream(&format!("afr.{}", cat.name));
            let s = ClientSession::new(cat, seconds, rng);
            let (mut p, cap) = policy(&name, w0_ms, rho, dissertation).expect("checked above");
            runs.push(simulate(&s, &mut p, cap));
        }
        let stalls: Vec<f64> = runs.iter().map(|r| stall_ratio(r)).collect();
        (stats(&runs, seconds), stalls)
    });
    let d = PyDict::new(py);
    d.set_item("frames", st.frames)?;
    d.set_item("dropped", st.dropped)?;
    d.set_item("queue_p99_ms", st.queue_p99_ms)?;
    d.set_item("queue_over_50ms", st.queue_over_50ms)?;
    d.set_item("total_p99_ms", st.total_p99_ms)?;
    d.set_item("total_over_100ms", st.total_over_100ms)?;
    d.set_item("queue_mean_ms", st.queue_mean_ms)?;
    d.set_item("decode_mean_ms", st.decode_mean_ms)?;
    d.set_item("network_mean_ms", st.network_mean_ms)?;
    d.set_item("total_mean_ms", st.total_mean_ms)?;
    d.set_item("fps_median", st.fps_median)?;
    d.set_item("fps_p10", st.fps_p10)?;
    d.set_item("interframe_p99_ms", st.interframe_p99_ms)?;
    d.set_item("stall_ratios", stalls)?;
    Ok(d)
}
