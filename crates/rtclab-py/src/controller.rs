//! Congestion controllers written in Python: `rtclab.register_controller(name, factory)`
//! registers a factory in `rtclab_cc::registry`; each flow that names the controller gets an
//! object from `factory(args)`, and the engines call its methods through
//! [`PyController`], which implements `CongestionController`.
//!
//! The object's entry points mirror the Rust trait (every one but `target` optional; `now` and
//! durations in seconds, rates in bit/s):
//!
//! - `on_packet_sent(now, seq, size, bytes_in_flight)`
//! - `on_feedback(now, fb)`: fb is a dict (`acked_bytes`, `acked_packets`, `rtt`, `srtt`,
//!   `min_rtt`, `bytes_in_flight`, `snd_una`, `snd_nxt`, `in_recovery`, `app_limited`,
//!   `lost_packets`)
//! - `on_congestion_event(now, kind, bytes_in_flight)`: kind `"loss"` or `"timeout"`
//! - `on_transport_feedback(now, packets)`: media flows, a list of `(seq, send_time,
//!   arrival or None, size)`
//! - `on_receiver_estimate(now, bps)`, `on_loss_report(now, fraction_lost, rtt)`
//! - `on_data_in_flight(now, bytes)`: media flows, the bytes still in flight once a transport
//!   feedback is taken in (told just before `on_transport_feedback`)
//! - `on_media_frame(now, bytes, queue_delay, queued_bytes)`: media flows, the encoder made a
//!   frame of `bytes`; the sender's queue holds `queued_bytes`, its oldest packet has waited
//!   `queue_delay` seconds
//! - `on_tx_start(now, idle)`: the sender resumes after `idle` seconds without sending
//! - `may_send(now, size)` → bool: media flows, whether the packet at the head of the pacer's
//!   queue may leave now (a window-gated controller's own gate; False holds the pacer until
//!   the next feedback or timeout)
//! - `poll_timeout()` → a time in seconds or None, and `handle_timeout(now)`: media flows, a
//!   timer (both or neither); asked after each call as `target()` is, called once the time
//!   comes
//! - `target()` → dict with any of `cwnd_bytes`, `pacing_rate_bps`, `target_rate_bps`
//!   (asked after every call above and kept until the next)
//! - `metrics()` → dict of name → number, up to 12 (each a `flows.parquet` column).
//!
//! The engines run without the GIL; each call takes it. An exception inside a callback cannot
//! unwind through the engine: the first one is kept, the controller stops calling Python, and
//! the binding raises it when the current chunk of the run ends.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use rtclab_cc::registry::{self, BoxedController, ControllerArgs, Role};
use rtclab_cc::{
    CcMetrics, CcTarget, CongestionController, CongestionEvent, FeedbackReport, PacketResult,
    SentPacket, EXTRA_METRICS,
};
use rtclab_core::params::Value;
use rtclab_core::{Rate, Time, TimeDelta};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

/// The first exception a Python controller raised during a run, raised by the binding after
/// the chunk it happened in.
static PENDING: Mutex<Option<PyErr>> = Mutex::new(None);

/// Takes the pending controller exception, if any.
pub fn take_pending() -> Option<PyErr> {
    PENDING.lock().unwrap_or_else(|e| e.into_inner()).take()
}

fn keep(e: PyErr) {
    let mut p = PENDING.lock().unwrap_or_else(|e| e.into_inner());
    if p.is_none() {
        *p = Some(e);
    }
}

/// Metric names live as long as the process (`CcMetrics` holds `&'static str`): each distinct
/// name is stored once.
fn intern(name: &str) -> &'static str {
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut t = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = t.get(name) {
        return n;
    }
    let n: &'static str = Box::leak(name.to_string().into_boxed_str());
    t.insert(n);
    n
}

fn secs(t: Time) -> f64 {
    (t - Time::ZERO).as_secs_f64()
}

fn opt_secs(d: Option<TimeDelta>) -> Option<f64> {
    d.map(|d| d.as_secs_f64())
}

/// Which optional entry points the object has (looked up once).
#[derive(Clone, Copy, Default)]
struct Has {
    sent: bool,
    feedback: bool,
    congestion: bool,
    transport: bool,
    estimate: bool,
    loss_report: bool,
    in_flight: bool,
    tx_start: bool,
    media_frame: bool,
    may_send: bool,
    /// `handle_timeout` and `poll_timeout` (one needs the other).
    timer: bool,
    metrics: bool,
}

pub struct PyController {
    name: &'static str,
    obj: Py<PyAny>,
    has: Has,
    target: CcTarget,
    /// The object's `poll_timeout()`, asked after each call as `target()` is.
    timer: Option<Time>,
    /// The last `handle_timeout`'s `now`.
    fired: Option<Time>,
    failed: bool,
}

impl PyController {
    fn new(name: &'static str, obj: Py<PyAny>) -> PyResult<Self> {
        let has = Python::attach(|py| -> PyResult<Has> {
            let o = obj.bind(py);
            if !o.hasattr("target")? {
                return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                    "the controller object for {name:?} has no target() method"
                )));
            }
            Ok(Has {
                sent: o.hasattr("on_packet_sent")?,
                feedback: o.hasattr("on_feedback")?,
                congestion: o.hasattr("on_congestion_event")?,
                transport: o.hasattr("on_transport_feedback")?,
                estimate: o.hasattr("on_receiver_estimate")?,
                loss_report: o.hasattr("on_loss_report")?,
                in_flight: o.hasattr("on_data_in_flight")?,
                tx_start: o.hasattr("on_tx_start")?,
                media_frame: o.hasattr("on_media_frame")?,
                may_send: o.hasattr("may_send")?,
                timer: match (o.hasattr("poll_timeout")?, o.hasattr("handle_timeout")?) {
                    (true, true) => true,
                    (false, false) => false,
                    (has_poll, _) => {
                        let (has, lacks) = if has_poll {
                            ("poll_timeout", "handle_timeout")
                        } else {
                            ("handle_timeout", "poll_timeout")
                        };
                        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                            "the controller object for {name:?} has {has}() but no {lacks}(): a timer needs both"
                        )));
                    }
                },
                metrics: o.hasattr("metrics")?,
            })
        })?;
        let mut c = PyController {
            name,
            obj,
            has,
            target: CcTarget::default(),
            timer: None,
            fired: None,
            failed: false,
        };
        c.refresh_target();
        c.refresh_timer();
        match take_pending() {
            Some(e) => Err(e),
            None => Ok(c),
        }
    }

    /// Calls `f` with the GIL unless an earlier call failed, then re-reads `target()` (and
    /// `poll_timeout()`).
    fn call(&mut self, f: impl FnOnce(Python<'_>, &Bound<'_, PyAny>) -> PyResult<()>) {
        if self.failed {
            return;
        }
        let r = Python::attach(|py| f(py, self.obj.bind(py)));
        if let Err(e) = r {
            self.fail(e);
            return;
        }
        self.refresh_target();
        self.refresh_timer();
    }

    /// Reads `poll_timeout()` (seconds or None). A time already past is due at once (both
    /// engines treat a past time as now); one not after the last timeout would fire for ever,
    /// and is an error.
    fn refresh_timer(&mut self) {
        if !self.has.timer || self.failed {
            return;
        }
        let name = self.name;
        let r = Python::attach(|py| -> PyResult<Option<f64>> {
            let v = self.obj.bind(py).call_method0("poll_timeout")?;
            if v.is_none() {
                return Ok(None);
            }
            let t: f64 = v.extract().map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err(format!(
                    "controller {name:?}: poll_timeout() must return a time in seconds or None"
                ))
            })?;
            if !t.is_finite() || t < 0.0 {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "controller {name:?}: poll_timeout() returned {t}, not a finite time in seconds"
                )));
            }
            Ok(Some(t))
        });
        match r {
            Ok(None) => self.timer = None,
            Ok(Some(t)) => {
                let t = Time::from_secs_f64(t);
                if let Some(f) = self.fired.filter(|&f| t <= f) {
                    let e = pyo3::exceptions::PyValueError::new_err(format!(
                        "controller {name:?}: poll_timeout() returned {} s, not after the last timeout it was given ({} s): it would fire for ever",
                        secs(t),
                        secs(f)
                    ));
                    self.fail(e);
                    self.timer = None;
                    return;
                }
                self.timer = Some(t);
            }
            Err(e) => {
                self.timer = None;
                self.fail(e);
            }
        }
    }

    fn fail(&mut self, e: PyErr) {
        self.failed = true;
        keep(e);
    }

    fn refresh_target(&mut self) {
        let name = self.name;
        let r = Python::attach(|py| -> PyResult<CcTarget> {
            let t = self.obj.bind(py).call_method0("target")?;
            let d = t.cast::<PyDict>().map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err(format!(
                    "controller {name:?}: target() must return a dict (cwnd_bytes, pacing_rate_bps, target_rate_bps)"
                ))
            })?;
            let get = |k: &str| -> PyResult<Option<f64>> {
                match d.get_item(k)? {
                    Some(v) if !v.is_none() => {
                        let x: f64 = v.extract()?;
                        if !x.is_finite() || x < 0.0 {
                            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                                "controller {name:?}: target()[{k:?}] = {x} is not a finite non-negative number"
                            )));
                        }
                        Ok(Some(x))
                    }
                    _ => Ok(None),
                }
            };
            for k in d.keys() {
                let k: String = k.extract()?;
                if !matches!(k.as_str(), "cwnd_bytes" | "pacing_rate_bps" | "target_rate_bps") {
                    return Err(pyo3::exceptions::PyValueError::new_err(format!(
                        "controller {name:?}: target() returned unknown key {k:?}; accepted cwnd_bytes, pacing_rate_bps, target_rate_bps"
                    )));
                }
            }
            Ok(CcTarget {
                cwnd_bytes: get("cwnd_bytes")?.map(|x| x as u64),
                pacing_rate: get("pacing_rate_bps")?.map(|x| Rate::from_bps(x as u64)),
                target_rate: get("target_rate_bps")?.map(|x| Rate::from_bps(x as u64)),
                ..CcTarget::default()
            })
        });
        match r {
            Ok(t) => self.target = t,
            Err(e) => self.fail(e),
        }
    }
}

impl CongestionController for PyController {
    fn name(&self) -> &'static str {
        self.name
    }

    fn on_packet_sent(&mut self, now: Time, p: &SentPacket) {
        if self.has.sent {
            self.call(|_, o| {
                o.call_method1("on_packet_sent", (secs(now), p.seq, p.size, p.bytes_in_flight))
                    .map(drop)
            });
        }
    }

    fn on_feedback(&mut self, now: Time, fb: &FeedbackReport) {
        if !self.has.feedback {
            return;
        }
        self.call(|py, o| {
            let d = PyDict::new(py);
            d.set_item("acked_bytes", fb.acked_bytes)?;
            d.set_item("acked_packets", fb.acked_packets)?;
            d.set_item("rtt", opt_secs(fb.rtt))?;
            d.set_item("srtt", opt_secs(fb.srtt))?;
            d.set_item("min_rtt", opt_secs(fb.min_rtt))?;
            d.set_item("bytes_in_flight", fb.bytes_in_flight)?;
            d.set_item("snd_una", fb.snd_una)?;
            d.set_item("snd_nxt", fb.snd_nxt)?;
            d.set_item("in_recovery", fb.in_recovery)?;
            d.set_item("app_limited", fb.app_limited)?;
            d.set_item("lost_packets", fb.lost_packets)?;
            o.call_method1("on_feedback", (secs(now), d)).map(drop)
        });
    }

    fn on_congestion_event(&mut self, now: Time, ev: &CongestionEvent) {
        if !self.has.congestion {
            return;
        }
        let (kind, inflight) = match *ev {
            CongestionEvent::Loss { bytes_in_flight } => ("loss", bytes_in_flight),
            CongestionEvent::Timeout => ("timeout", 0),
        };
        self.call(|_, o| {
            o.call_method1("on_congestion_event", (secs(now), kind, inflight)).map(drop)
        });
    }

    fn on_transport_feedback(&mut self, now: Time, packets: &[PacketResult]) {
        if !self.has.transport {
            return;
        }
        self.call(|py, o| {
            let items: Vec<Bound<'_, PyTuple>> = packets
                .iter()
                .map(|p| (p.seq, secs(p.send_time), p.arrival.map(secs), p.size).into_pyobject(py))
                .collect::<PyResult<_>>()?;
            let list = PyList::new(py, items)?;
            o.call_method1("on_transport_feedback", (secs(now), list)).map(drop)
        });
    }

    fn on_receiver_estimate(&mut self, now: Time, bitrate: Rate) {
        if self.has.estimate {
            self.call(|_, o| {
                o.call_method1("on_receiver_estimate", (secs(now), bitrate.as_bps())).map(drop)
            });
        }
    }

    fn on_loss_report(&mut self, now: Time, fraction_lost: f64, rtt: Option<TimeDelta>) {
        if self.has.loss_report {
            self.call(|_, o| {
                o.call_method1("on_loss_report", (secs(now), fraction_lost, opt_secs(rtt)))
                    .map(drop)
            });
        }
    }

    fn on_data_in_flight(&mut self, now: Time, bytes: u64) {
        if self.has.in_flight {
            self.call(|_, o| o.call_method1("on_data_in_flight", (secs(now), bytes)).map(drop));
        }
    }

    fn on_tx_start(&mut self, now: Time, idle: TimeDelta) {
        if self.has.tx_start {
            self.call(|_, o| {
                o.call_method1("on_tx_start", (secs(now), idle.as_secs_f64())).map(drop)
            });
        }
    }

    fn on_media_frame(&mut self, now: Time, bytes: u64, queue_delay: TimeDelta, queued: u64) {
        if self.has.media_frame {
            self.call(|_, o| {
                let args = (secs(now), bytes, queue_delay.as_secs_f64(), queued);
                o.call_method1("on_media_frame", args).map(drop)
            });
        }
    }

    fn may_send(&mut self, now: Time, size: u32) -> bool {
        if !self.has.may_send || self.failed {
            return true;
        }
        let name = self.name;
        let r = Python::attach(|py| -> PyResult<bool> {
            let v = self.obj.bind(py).call_method1("may_send", (secs(now), size))?;
            v.extract::<bool>().map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err(format!(
                    "controller {name:?}: may_send() must return True or False"
                ))
            })
        });
        match r {
            Ok(yes) => {
                self.refresh_target();
                self.refresh_timer();
                yes
            }
            Err(e) => {
                self.fail(e);
                true
            }
        }
    }

    fn handle_timeout(&mut self, now: Time) {
        if !self.has.timer || self.timer.is_none_or(|t| t > now) {
            return;
        }
        self.fired = Some(now);
        self.call(|_, o| o.call_method1("handle_timeout", (secs(now),)).map(drop));
    }

    fn poll_timeout(&self) -> Option<Time> {
        if self.failed {
            None
        } else {
            self.timer
        }
    }

    fn target(&self) -> CcTarget {
        self.target
    }

    fn metrics(&self) -> CcMetrics {
        let mut m = CcMetrics {
            cwnd_bytes: self.target.cwnd_bytes,
            pacing_rate: self.target.pacing_rate,
            target_rate: self.target.target_rate,
            ..CcMetrics::default()
        };
        if !self.has.metrics || self.failed {
            return m;
        }
        let name = self.name;
        let r = Python::attach(|py| -> PyResult<()> {
            let v = self.obj.bind(py).call_method0("metrics")?;
            let d = v.cast::<PyDict>().map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err(format!(
                    "controller {name:?}: metrics() must return a dict of name -> number"
                ))
            })?;
            if d.len() > EXTRA_METRICS {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "controller {name:?}: metrics() returned {} values; at most {EXTRA_METRICS}",
                    d.len()
                )));
            }
            for (slot, (k, v)) in m.extra.iter_mut().zip(d.iter()) {
                let k: String = k.extract()?;
                let v: f64 = v.extract()?;
                *slot = Some((intern(&k), v));
            }
            Ok(())
        });
        if let Err(e) = r {
            keep(e);
        }
        m
    }
}

/// The `args` dict a Python factory gets.
fn args_dict<'py>(py: Python<'py>, a: &ControllerArgs) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("flow", a.flow)?;
    d.set_item("role", if a.role == Role::Window { "tcp" } else { "media" })?;
    d.set_item("packet_size", a.packet_size)?;
    d.set_item("initial_window", a.initial_window)?;
    d.set_item("seed", a.seed)?;
    let p = PyDict::new(py);
    for (k, v) in a.params {
        match v {
            Value::Num(x) => p.set_item(k, x)?,
            Value::Bool(b) => p.set_item(k, b)?,
        }
    }
    d.set_item("params", p)?;
    Ok(d)
}

/// `rtclab._core.register_controller(name, factory, tcp=True, media=False,
/// owns_recovery_window=False, simulator_only=None)`: the flows it serves and what it needs
/// (`rtclab_cc::capabilities`).
#[pyfunction]
#[pyo3(signature = (name, factory, tcp = true, media = false, owns_recovery_window = false, simulator_only = None))]
pub fn register_controller(
    name: &str,
    factory: Py<PyAny>,
    tcp: bool,
    media: bool,
    owns_recovery_window: bool,
    simulator_only: Option<&str>,
) -> PyResult<()> {
    Python::attach(|py| {
        if !factory.bind(py).is_callable() {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "register_controller({name:?}, ...): factory must be callable (a class or a function returning the controller object)"
            )));
        }
        Ok(())
    })?;
    let factory = Arc::new(factory);
    let cname: &'static str = intern(name);
    let f: registry::Factory =
        Arc::new(move |a: &ControllerArgs| -> Result<BoxedController, String> {
            let obj = Python::attach(|py| -> PyResult<Py<PyAny>> {
                Ok(factory.bind(py).call1((args_dict(py, a)?,))?.unbind())
            });
            let obj = obj.map_err(|e| Python::attach(|py| describe(py, &e)))?;
            PyController::new(cname, obj)
                .map(|c| Box::new(c) as BoxedController)
                .map_err(|e| Python::attach(|py| describe(py, &e)))
        });
    let caps = rtclab_cc::capabilities::Capabilities {
        tcp,
        media,
        owns_recovery_window,
        simulator_only: simulator_only.map(intern),
        ..rtclab_cc::capabilities::Capabilities::TCP
    };
    registry::register(name, caps, f).map_err(pyo3::exceptions::PyValueError::new_err)
}

/// `rtclab._core.unregister_controller(name)` -> whether it was registered.
#[pyfunction]
pub fn unregister_controller(name: &str) -> bool {
    registry::unregister(name)
}

/// `rtclab._core.registered_controllers()`.
#[pyfunction]
pub fn registered_controllers() -> Vec<&'static str> {
    registry::names()
}

/// "TypeError: message" for a Python exception (what a scenario error shows).
fn describe(py: Python<'_>, e: &PyErr) -> String {
    let kind = e.get_type(py).name().map(|n| n.to_string()).unwrap_or_else(|_| "Exception".into());
    format!("{kind}: {}", e.value(py))
}
