//! The Python binding: module `rtclab._core`. The only crate that knows about Python.
//!
//! Long runs are driven in chunks (`Simulation.step`) with the GIL released, so the Python
//! side can draw a progress bar and stop cleanly on Ctrl-C between chunks. Core error kinds map
//! to one exception class each (`ConfigError`).

mod afr;
mod column;
mod column_bytes;
mod controller;
mod hairpin;
mod html_report;
mod json_indent;
mod learn;
mod parquet_out;
mod plot_data;

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use rtclab_scenario::{ConfigError as CoreConfigError, Scenario};
use rtclab_sim::{Columns, Simulation as CoreSimulation};
use std::path::Path;
use std::sync::Arc;

create_exception!(_core, ConfigError, PyValueError, "A scenario failed validation.");
create_exception!(
    _core,
    RunTooLarge,
    ConfigError,
    "A valid scenario whose estimated cost is beyond rtclab's limits (pass force=True)."
);

/// Refuses a run whose estimated cost is beyond the limits, unless forced.
fn check_cost(s: &Scenario, force: bool) -> PyResult<()> {
    match s.cost().over_limits() {
        Some(why) if !force => Err(RunTooLarge::new_err(format!(
            "this run would be very large: {why}; check `duration` and the capacities, or run it anyway with --force (force=True)"
        ))),
        _ => Ok(()),
    }
}
create_exception!(
    _core,
    EmulatorUnavailable,
    PyRuntimeError,
    "The emulator cannot run here (needs root, /dev/net/tun and iproute2)."
);
create_exception!(
    _core,
    EmulatorUnsupported,
    PyValueError,
    "The scenario asks for something the emulator does not support."
);

fn emu_err(e: rtclab_emu::EmuError) -> PyErr {
    use rtclab_emu::EmuError as E;
    match e {
        E::NotPermitted(m) => EmulatorUnavailable::new_err(m),
        E::Unsupported(m) => EmulatorUnsupported::new_err(m),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

/// A `ConfigError` whose message is the whole sentence (`str(e)`), with the scenario key in
/// `e.path` (e.g. `"flows[0].cc"`) and the explanation alone in `e.message`.
fn config_err(e: CoreConfigError) -> PyErr {
    Python::attach(|py| {
        let err = ConfigError::new_err(e.to_string());
        let v = err.value(py);
        if v.setattr("path", &e.path).and_then(|()| v.setattr("message", &e.message)).is_err() {
            return PyRuntimeError::new_err(e.to_string());
        }
        err
    })
}

fn parse(text: &str, format: &str, base_dir: &str) -> PyResult<Scenario> {
    let base = Path::new(base_dir);
    match format {
        "toml" => rtclab_scenario::from_toml_str(text, base).map_err(config_err),
        "json" => rtclab_scenario::from_json_str(text, base).map_err(config_err),
        other => Err(PyValueError::new_err(format!(
            "unknown scenario format {other:?}: accepted \"toml\", \"json\""
        ))),
    }
}

/// Compact JSON (Python's `json.dumps(v, separators=(",", ":"))`) laid out as
/// `json.dumps(v, indent=2)` would, byte for byte, in a fraction of its time.
#[pyfunction]
fn indent_json(py: Python<'_>, compact: &str) -> String {
    let compact = compact.to_string();
    py.detach(move || json_indent::indent(&compact, 2))
}

/// Writes a Parquet file from `columns`: (name, kind, values) with kind "f64" or "i64" (values:
/// little-endian float64 bytes; "i64" rounds them to integers), "str" (values: a list of str)
/// or "str_by_index" (values: (a list of str, little-endian float64 bytes of indices into it)).
#[pyfunction]
fn write_parquet(
    py: Python<'_>,
    path: &str,
    columns: Vec<(String, String, Bound<'_, PyAny>)>,
) -> PyResult<()> {
    let path = path.to_string();
    with_parquet_columns(columns, |cols| py.detach(move || parquet_out::write(&path, cols)))?
        .map_err(pyo3::exceptions::PyOSError::new_err)
}

/// The Parquet file `write_parquet(path, columns)` would write, as bytes: a table encoded (the
/// GIL released) before the folder it goes into exists, written later as it is. `threads`: at
/// most this many encoding threads (default: all cores); the bytes do not depend on it.
#[pyfunction]
#[pyo3(signature = (columns, threads = None))]
fn encode_parquet<'py>(
    py: Python<'py>,
    columns: Vec<(String, String, Bound<'py, PyAny>)>,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyBytes>> {
    let threads = threads.unwrap_or_else(parquet_out::cores);
    let encoded =
        with_parquet_columns(columns, |cols| py.detach(|| parquet_out::encode(cols, threads)))?
            .map_err(PyRuntimeError::new_err)?;
    Ok(PyBytes::new(py, &encoded))
}

/// Checks `columns` as `write_parquet` documents them, borrows their bytes and hands them to `f`
/// (a bad column is a ValueError; `f`'s own error is returned as its text).
fn with_parquet_columns<T>(
    columns: Vec<(String, String, Bound<'_, PyAny>)>,
    f: impl FnOnce(&[(String, parquet_out::Column<'_>)]) -> Result<T, String>,
) -> PyResult<Result<T, String>> {
    use column_bytes::ColumnBytes;
    use parquet_out::Column;
    let bytes = ColumnBytes::of;
    // Borrow every column's bytes; the writer decodes one column at a time.
    let mut kept = Vec::with_capacity(columns.len());
    for (name, kind, values) in columns {
        let col = match kind.as_str() {
            "f64" | "i64" => (None, Some(bytes(&values)?)),
            "str" => (Some(values.extract::<Vec<String>>()?), None),
            "str_by_index" => {
                let (names, idx): (Vec<String>, Bound<'_, PyAny>) = values.extract()?;
                let idx = bytes(&idx)?;
                let n = names.len() as f64;
                let raw = idx.as_bytes();
                if let Some(bad) = raw
                    .chunks_exact(8)
                    .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                    .find(|&i| !(i >= 0.0 && i < n && i.fract() == 0.0))
                {
                    return Err(PyValueError::new_err(format!(
                        "column {name}: index {bad} is not one of the {n} names"
                    )));
                }
                (Some(names), Some(idx))
            }
            other => {
                return Err(PyValueError::new_err(format!(
                    "column {name}: unknown kind {other:?} (accepted: f64, i64, str, str_by_index)"
                )))
            }
        };
        kept.push((name, kind, col));
    }
    let mut cols = Vec::with_capacity(kept.len());
    for (name, kind, (strs, raw)) in &mut kept {
        let raw = raw.as_ref().map(|b| b.as_bytes()).unwrap_or(&[]);
        let col = match kind.as_str() {
            "f64" => Column::F64(raw),
            "i64" => Column::I64(raw),
            "str" => Column::Str(strs.take().unwrap_or_default()),
            _ => Column::StrByIndex(strs.take().unwrap_or_default(), raw),
        };
        cols.push((name.clone(), col));
    }
    Ok(f(&cols))
}

/// Draws a chart described by `spec` (JSON, `rtclab_chart::spec`) over `buffers` (little-endian
/// float64 bytes, referred to by index) into the PNG file `path`; ValueError names what is wrong
/// with the description. The GIL is released while drawing.
#[pyfunction]
fn render_chart(
    py: Python<'_>,
    spec: &str,
    buffers: Vec<Bound<'_, PyBytes>>,
    path: &str,
) -> PyResult<()> {
    let fig = rtclab_chart::parse(spec).map_err(|e| PyValueError::new_err(e.0))?;
    let raw: Vec<&[u8]> = buffers.iter().map(|b| b.as_bytes()).collect();
    let data = rtclab_chart::decode_buffers(&raw).map_err(|e| PyValueError::new_err(e.0))?;
    let path = std::path::PathBuf::from(path);
    py.detach(move || {
        let png = rtclab_chart::render_png(&fig, &data).map_err(|e| PyValueError::new_err(e.0))?;
        std::fs::write(&path, png)
            .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", path.display())))
    })
}

/// Validates a scenario; returns a short description dict or raises ConfigError.
/// A rate as scenarios write it ("300kbps", "1.5MBps" = bytes) in bit/s; ValueError names
/// the problem (the scenario layer's own parser).
/// The JSON Schema of `summary.json`, generated from the Rust `Summary` type.
#[pyfunction]
fn summary_schema() -> String {
    serde_json::to_string_pretty(&rtclab_harness::summary::json_schema()).unwrap_or_default()
}

#[pyfunction]
fn parse_rate(text: &str) -> PyResult<u64> {
    rtclab_scenario::units::parse_rate(text).map(|r| r.as_bps()).map_err(PyValueError::new_err)
}

#[pyfunction]
#[pyo3(signature = (text, format = "toml", base_dir = "."))]
fn validate<'py>(
    py: Python<'py>,
    text: &str,
    format: &str,
    base_dir: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let s = parse(text, format, base_dir)?;
    let d = PyDict::new(py);
    d.set_item("name", &s.name)?;
    d.set_item("description", &s.description)?;
    d.set_item("duration_s", s.duration.as_secs_f64())?;
    d.set_item("flows", s.flows.len())?;
    d.set_item("seed", s.seed)?;
    d.set_item("capacity", &s.main_link().forward.capacity_desc)?;
    d.set_item("links", s.links.iter().map(|l| l.name.as_str()).collect::<Vec<_>>())?;
    let c = s.cost();
    let cost = PyDict::new(py);
    cost.set_item("packet_hops", c.packet_hops)?;
    cost.set_item("seconds", c.seconds())?;
    cost.set_item("events", c.events)?;
    cost.set_item("series_rows", c.series_rows)?;
    cost.set_item("series_bytes", c.series_bytes)?;
    cost.set_item("over_limits", c.over_limits())?;
    d.set_item("cost", cost)?;
    d.set_item("warnings", warning_texts(&s))?;
    Ok(d)
}

/// `Scenario::warnings` as "path: message" sentences.
fn warning_texts(s: &Scenario) -> Vec<String> {
    s.warnings().iter().map(ToString::to_string).collect()
}

/// The table's columns by name, each a [`column::Column`] that lends the engine's vector to
/// Python without a copy.
fn columns_dict(py: Python<'_>, c: Columns) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    // A vector the engine shares among columns (the `flows` table's one-value columns: twenty
    // of a 1,000-flow TCP run's 34) becomes one object, found without reading it; other columns
    // that hold one value throughout share one object per value. `write_parquet` then encodes
    // each object once.
    let mut constants: Vec<(u64, Bound<'_, column::Column>)> = Vec::new();
    let mut shared: Vec<(*const Vec<f64>, Bound<'_, column::Column>)> = Vec::new();
    for (name, col) in c.names.into_iter().zip(c.data) {
        let ptr = Arc::as_ptr(&col);
        if let Some((_, obj)) = shared.iter().find(|s| s.0 == ptr) {
            d.set_item(name, obj.clone())?;
            continue;
        }
        let many = Arc::strong_count(&col) > 1;
        let one =
            col.first().map(|x| x.to_bits()).filter(|&b| col.iter().all(|x| x.to_bits() == b));
        if let Some(same) = one.and_then(|b| constants.iter().find(|c| c.0 == b)) {
            d.set_item(name, same.1.clone())?;
            continue;
        }
        let obj = Bound::new(py, column::Column::shared(col))?;
        if many {
            shared.push((ptr, obj.clone()));
        }
        if let Some(b) = one {
            constants.push((b, obj.clone()));
        }
        d.set_item(name, obj)?;
    }
    Ok(d)
}

/// (summary JSON, {table name: columns}): the tables are `flows`, `link`, `fairness`,
/// `interruptions` and `distributions`.
type Finished<'py> = (String, Bound<'py, PyDict>);

/// What `finish` returns in both engines: the summary as JSON text and the tables by name, in
/// the order of `TABLES`.
fn finished<'py>(
    py: Python<'py>,
    summary: &serde_json::Value,
    tables: [Columns; 5],
) -> PyResult<Finished<'py>> {
    let text =
        serde_json::to_string(summary).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    let d = PyDict::new(py);
    for (name, c) in TABLES.iter().zip(tables) {
        d.set_item(*name, columns_dict(py, c)?)?;
    }
    Ok((text, d))
}

/// The tables of a finished run.
const TABLES: [&str; 5] = ["flows", "link", "fairness", "interruptions", "distributions"];

/// A simulation run. `step(n)` processes up to n events without the GIL.
#[pyclass(module = "rtclab._core")]
struct Simulation {
    inner: CoreSimulation,
    warnings: Vec<String>,
    /// The per-flow table `flow_table` handed out, which `finish` returns rather than build again.
    flow_table: Option<Columns>,
}

#[pymethods]
impl Simulation {
    #[new]
    #[pyo3(signature = (text, format = "toml", base_dir = ".", seed = None, force = false))]
    fn new(
        text: &str,
        format: &str,
        base_dir: &str,
        seed: Option<u64>,
        force: bool,
    ) -> PyResult<Self> {
        let s = parse(text, format, base_dir)?;
        check_cost(&s, force)?;
        let seed = seed.or(s.seed).unwrap_or(1);
        let warnings = warning_texts(&s);
        let inner =
            CoreSimulation::try_new(s, seed).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok(Simulation { inner, warnings, flow_table: None })
    }

    /// What makes this scenario's results questionable ("path: message" each); the run goes on.
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    /// Processes up to `max_events` events with the GIL released; True when finished. Raises
    /// the first exception a Python controller raised during the chunk.
    fn step(&mut self, py: Python<'_>, max_events: u64) -> PyResult<bool> {
        let inner = &mut self.inner;
        let done = py.detach(move || inner.step(max_events));
        match controller::take_pending() {
            Some(e) => Err(e),
            None => Ok(done),
        }
    }

    /// (simulated seconds so far, scenario duration in seconds)
    fn progress(&self) -> (f64, f64) {
        (self.inner.now().as_secs_f64(), self.inner.end().as_secs_f64())
    }

    /// Runs until simulated time `t` seconds (or the end) with the GIL released; True when
    /// the run has finished. The step API of the Gymnasium environments.
    fn run_until(&mut self, py: Python<'_>, t: f64) -> PyResult<bool> {
        if !t.is_finite() || t < 0.0 {
            return Err(PyValueError::new_err(format!(
                "t must be a time in seconds >= 0, got {t}"
            )));
        }
        let inner = &mut self.inner;
        let until = rtclab_core::Time::ZERO
            + rtclab_core::TimeDelta::from_nanos((t * 1e9).min(9e18) as i64);
        let done = py.detach(move || inner.run_until(until));
        match controller::take_pending() {
            Some(e) => Err(e),
            None => Ok(done),
        }
    }

    /// A media flow's counters so far: (frames completed, summed frame delay s, freeze s).
    fn media_totals(&self, flow: usize) -> PyResult<(u64, f64, f64)> {
        self.inner
            .media_totals(flow)
            .ok_or_else(|| PyValueError::new_err(format!("flow index {flow} out of range")))
    }

    #[getter]
    fn seed(&self) -> u64 {
        self.inner.seed()
    }

    /// The finished run's `flows` table ({column: bytes}, as `finish` returns it; the same
    /// vectors, which `finish` then does not build again): for a caller that encodes the table
    /// while the summary is built.
    fn flow_table<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.check_finished()?;
        let inner = &self.inner;
        let cols = py.detach(|| inner.flow_columns());
        self.flow_table = Some(cols.clone());
        columns_dict(py, cols)
    }

    /// (id, name) of every flow, in the scenario's order: the names the summary gives them.
    fn flow_names(&self) -> Vec<(u32, String)> {
        self.inner.scenario().flows.iter().map(|f| (f.id, f.name.clone())).collect()
    }

    /// Returns (summary JSON text, {table name: {column: bytes}}) for the tables `flows`,
    /// `link`, `fairness`, `interruptions` and `distributions`; each column is little-endian float64
    /// bytes.
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Finished<'py>> {
        self.check_finished()?;
        let inner = &self.inner;
        let out = match self.flow_table.clone() {
            Some(flows) => py.detach(move || inner.finish_with_flows(flows)),
            None => py.detach(|| inner.finish()),
        };
        finished(
            py,
            &out.summary,
            [out.flows, out.link, out.fairness, out.interruptions, out.distributions],
        )
    }
}

impl Simulation {
    fn check_finished(&self) -> PyResult<()> {
        if self.inner.is_finished() {
            return Ok(());
        }
        Err(PyRuntimeError::new_err(
            "the simulation has not finished; call step() until it returns True",
        ))
    }
}

/// An emulation run: real packets through TUN devices in network namespaces. `start()` sets
/// it up; poll `progress()`/`is_done()`; `stop()` ends it early; `finish()` tears down and
/// returns what `Simulation.finish` returns. Dropping it also tears everything down.
#[pyclass(module = "rtclab._core")]
struct Emulation {
    scenario: Option<Scenario>,
    seed: u64,
    inner: Option<rtclab_emu::Emulation>,
    capture: Option<rtclab_emu::CaptureSpec>,
    shell: bool,
    warnings: Vec<String>,
}

#[pymethods]
impl Emulation {
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (text, format = "toml", base_dir = ".", seed = None, capture = None, snaplen = 0, shell = false, force = false, capture_sent = false))]
    fn new(
        text: &str,
        format: &str,
        base_dir: &str,
        seed: Option<u64>,
        capture: Option<std::path::PathBuf>,
        snaplen: u32,
        shell: bool,
        force: bool,
        capture_sent: bool,
    ) -> PyResult<Self> {
        let s = parse(text, format, base_dir)?;
        if !shell {
            check_cost(&s, force)?;
        }
        if !shell {
            rtclab_emu::check_scenario(&s).map_err(emu_err)?;
        }
        let seed = seed.or(s.seed).unwrap_or(1);
        let capture =
            capture.map(|path| rtclab_emu::CaptureSpec { path, snaplen, sent: capture_sent });
        // The shell runs the user's programs, not the scenario's flows: flow warnings do not apply.
        let warnings = if shell { Vec::new() } else { warning_texts(&s) };
        Ok(Emulation { scenario: Some(s), seed, inner: None, capture, shell, warnings })
    }

    fn start(&mut self, py: Python<'_>) -> PyResult<()> {
        let s = self
            .scenario
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("the emulation was already started"))?;
        let (seed, capture, shell) = (self.seed, self.capture.clone(), self.shell);
        self.inner = Some(
            py.detach(move || {
                if shell {
                    rtclab_emu::Emulation::start_shell(s, seed, capture)
                } else {
                    rtclab_emu::Emulation::start(s, seed, capture)
                }
            })
            .map_err(emu_err)?,
        );
        Ok(())
    }

    /// (emulated seconds so far, scenario duration in seconds)
    fn progress(&self) -> (f64, f64) {
        self.inner.as_ref().map_or((0.0, 0.0), |e| e.progress())
    }

    /// What makes this scenario's results questionable ("path: message" each).
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    /// The emulation's time zero as CLOCK_MONOTONIC nanoseconds (Python's
    /// `time.monotonic_ns()` clock); None before `start()`.
    fn start_monotonic_ns(&self) -> Option<i64> {
        self.inner.as_ref().map(|e| e.start_monotonic_ns())
    }

    fn is_done(&self) -> bool {
        self.inner.as_ref().is_none_or(|e| e.is_done())
    }

    fn stop(&self) {
        if let Some(e) = &self.inner {
            e.stop();
        }
    }

    #[getter]
    fn seed(&self) -> u64 {
        self.seed
    }

    /// The two namespaces (sender side, receiver side) while running.
    fn namespaces(&self) -> Option<(String, String)> {
        self.inner.as_ref().and_then(|e| e.namespaces())
    }

    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Finished<'py>> {
        let emu = self
            .inner
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("the emulation was not started"))?;
        let out = py.detach(move || emu.finish()).map_err(emu_err)?;
        if let Some(e) = controller::take_pending() {
            return Err(e);
        }
        finished(
            py,
            &out.summary,
            [out.flows, out.link, out.fairness, out.interruptions, out.distributions],
        )
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // Header bytes of each media packet on the wire (the packetizer's default overhead).
    m.add("MEDIA_HEADER_BYTES", rtclab_media::packetizer::PacketizerConfig::default().overhead)?;
    m.add("ConfigError", m.py().get_type::<ConfigError>())?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(write_parquet, m)?)?;
    m.add_function(wrap_pyfunction!(encode_parquet, m)?)?;
    m.add_function(wrap_pyfunction!(indent_json, m)?)?;
    m.add_function(wrap_pyfunction!(render_chart, m)?)?;
    m.add_function(wrap_pyfunction!(html_report::render_report, m)?)?;
    m.add_function(wrap_pyfunction!(plot_data::flow_series, m)?)?;
    m.add_function(wrap_pyfunction!(plot_data::spread, m)?)?;
    m.add_function(wrap_pyfunction!(hairpin::hairpin_table, m)?)?;
    m.add_function(wrap_pyfunction!(afr::afr_run, m)?)?;
    m.add_function(wrap_pyfunction!(learn::decision_latency_ns, m)?)?;
    m.add_function(wrap_pyfunction!(learn::abr_features, m)?)?;
    m.add_function(wrap_pyfunction!(parse_rate, m)?)?;
    m.add_function(wrap_pyfunction!(summary_schema, m)?)?;
    m.add_class::<learn::AbrCore>()?;
    m.add_class::<learn::BweAgent>()?;
    m.add_class::<learn::TreeCore>()?;
    m.add_class::<learn::PensieveNetCore>()?;
    m.add_function(wrap_pyfunction!(hairpin::hairpin_cell, m)?)?;
    m.add_function(wrap_pyfunction!(controller::register_controller, m)?)?;
    m.add_function(wrap_pyfunction!(controller::unregister_controller, m)?)?;
    m.add_function(wrap_pyfunction!(controller::registered_controllers, m)?)?;
    m.add_class::<column::Column>()?;
    m.add_class::<Simulation>()?;
    m.add_class::<Emulation>()?;
    m.add("EmulatorUnavailable", m.py().get_type::<EmulatorUnavailable>())?;
    m.add("EmulatorUnsupported", m.py().get_type::<EmulatorUnsupported>())?;
    m.add("RunTooLarge", m.py().get_type::<RunTooLarge>())?;
    Ok(())
}
