//! rtclab's real-network emulator: the simulator's link, queue, loss and delay elements driven
//! by CLOCK_MONOTONIC, with real packets between two network namespaces joined by TUN devices
//! (`netns.rs`), forwarded by one epoll/timerfd thread (`engine.rs`) through one
//! [`path::Path`] holding both directions (middleboxes see data and feedback); real kernel TCP
//! flows (`tcp.rs`) as endpoints. The only crate with OS I/O.
//!
//! Modelled on mahimahi (Netravali et al., USENIX ATC 2015: a TUN-based shell per emulated
//! element), with nanosecond deadlines instead of millisecond ticks, one process instead of
//! nested setuid shells, and the simulator's own elements (spec `peers-and-test-suites.md` §1).
//!
//! Supported: tcp flows with the kernel's `cubic`, `reno` or `bbr`; media flows (the
//! simulator's sans-IO sender and receiver over UDP with real RTP/RTCP, any media controller);
//! constant, schedule and trace capacities, every queue discipline and middlebox, multi-link
//! paths, i.i.d./Gilbert-Elliott loss, per-flow delay and jitter, both directions. Not yet:
//! cbr and registered flow kinds, application-limited tcp.

pub mod capture;
pub mod engine;
pub mod media;
pub mod netns;
pub mod path;
pub mod series;
pub mod sys;
pub mod tcp;

use engine::{Classifier, DirStats, EngineStats, Forwarder};
use netns::Topology;
use path::Path;
use rtclab_core::{Direction, SeedTree, Time, TimeDelta};
use rtclab_harness::link_meter::LinkMeter;
pub use rtclab_harness::measure::Columns;
use rtclab_harness::summary::{
    self as hs, percentiles_ms, Composition, EmulatorSummary, EngineCounters, KernelTcp, MediaQoe,
    ReleaseError, Summary,
};
use rtclab_harness::Network;
use rtclab_scenario::{CcSpec, FlowKindSpec, Scenario};

/// What a finished emulation produced: the simulator's outputs, `"engine": "emu"`.
#[derive(Clone, Debug)]
pub struct EmuOutput {
    pub summary: Value,
    /// One row per (bin, active flow).
    pub flows: Columns,
    /// One row per bin, forward bottleneck.
    pub link: Columns,
    /// One row per fairness window.
    pub fairness: Columns,
}
use serde_json::Value;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Receiver ports: flow i listens on `PORT_BASE + i`.
pub const PORT_BASE: u16 = 5000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EmuError {
    /// Not root, no /dev/net/tun, no iproute2: the CLI exits with status 2.
    NotPermitted(String),
    /// The scenario asks for something the emulator cannot do (yet).
    Unsupported(String),
    Setup(String),
    Io(String),
}

impl std::fmt::Display for EmuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EmuError::NotPermitted(m) | EmuError::Unsupported(m) => write!(f, "{m}"),
            EmuError::Setup(m) => write!(f, "emulator set-up failed: {m}"),
            EmuError::Io(m) => write!(f, "emulator I/O error: {m}"),
        }
    }
}

impl std::error::Error for EmuError {}

/// The kernel congestion control for a tcp flow (None for a media flow), or why the
/// emulator cannot run the flow.
fn kernel_cc(f: &rtclab_scenario::FlowSpec) -> Result<Option<&'static str>, EmuError> {
    if let FlowKindSpec::Media(_) = f.kind {
        return Ok(None);
    }
    let cc = match &f.kind {
        FlowKindSpec::Tcp { app_rate: Some(_), .. } => Err(EmuError::Unsupported(format!(
            "flow {:?}: application-limited tcp (`rate`) is not supported by the emulator yet",
            f.name
        ))),
        FlowKindSpec::Tcp { cc, .. } => match cc {
            CcSpec::Cubic(_) => Ok("cubic"),
            CcSpec::Reno(_) => Ok("reno"),
            CcSpec::Bbr(_) => Ok("bbr"),
            other => Err(EmuError::Unsupported(format!(
                "flow {:?}: cc {:?} is not a Linux congestion control; the emulator runs kernel TCP with \"cubic\", \"reno\" or \"bbr\"",
                f.name,
                other.name()
            ))),
        },
        other => Err(EmuError::Unsupported(format!(
            "flow {:?}: {} flows are not supported by the emulator yet (tcp and media flows are)",
            f.name,
            other.kind_name()
        ))),
    };
    cc.map(Some)
}

/// What one flow's endpoints measured.
pub enum FlowResult {
    Tcp(tcp::Received),
    Media(Box<media::MediaResult>),
    Failed,
}

impl FlowResult {
    /// Application bytes per time-series bin.
    pub fn bins(&self) -> &[u64] {
        match self {
            FlowResult::Tcp(r) => &r.bins,
            FlowResult::Media(m) => &m.bins,
            FlowResult::Failed => &[],
        }
    }
}

enum FlowHandle {
    Tcp(tcp::TcpFlow),
    Media(media::MediaFlow),
}

impl FlowHandle {
    fn join(self) -> Result<FlowResult, EmuError> {
        match self {
            FlowHandle::Tcp(f) => f.join().map(FlowResult::Tcp),
            FlowHandle::Media(f) => f.join().map(|m| FlowResult::Media(Box::new(m))),
        }
    }
}

/// Checks that every flow can run in the emulator (no root needed).
pub fn check_scenario(s: &Scenario) -> Result<(), EmuError> {
    if s.flows.len() > 200 {
        return Err(EmuError::Unsupported("at most 200 flows in the emulator".into()));
    }
    for f in &s.flows {
        kernel_cc(f)?;
    }
    Ok(())
}

/// The network, both directions, from the harness (the simulator's topology, random streams
/// and routes). Unclassified packets take the first flow's route.
fn build_path(s: &Scenario, seeds: &SeedTree) -> Result<Path, EmuError> {
    let net = Network::build(s, seeds).map_err(EmuError::Unsupported)?;
    let (bin, warmup) = (s.metrics.bin, Time::ZERO + s.metrics.warmup);
    Ok(Path::new(net, s.links.len(), bin, warmup))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Scenario,
    Shell,
}

/// A pcap of the bottleneck (both directions) to write at `path`; `snaplen` 0 = whole packets.
#[derive(Clone, Debug)]
pub struct CaptureSpec {
    pub path: std::path::PathBuf,
    pub snaplen: u32,
}

/// A running emulation. `start` sets up namespaces and threads; `progress` reports emulated
/// time; `stop` asks everything to end early; `finish` joins, tears down and summarizes.
/// Dropping it without `finish` still stops the threads and removes the namespaces.
pub struct Emulation {
    scenario: Scenario,
    seed: u64,
    stop: Arc<AtomicBool>,
    forwarders: Vec<JoinHandle<Result<[DirStats; 2], EmuError>>>,
    flows: Vec<FlowHandle>,
    topology: Option<Topology>,
    t0: i64,
    capture: Option<(CaptureSpec, Vec<std::path::PathBuf>)>,
}

impl Emulation {
    pub fn start(
        scenario: Scenario,
        seed: u64,
        capture: Option<CaptureSpec>,
    ) -> Result<Self, EmuError> {
        Self::start_with(scenario, seed, capture, Mode::Scenario)
    }

    /// The scenario's network only, for the user's own programs (`rtclab emu shell`): no
    /// built-in endpoints, running until `stop`. Unclassified traffic takes the first flow's
    /// delay; the flows' ports keep their own.
    pub fn start_shell(
        scenario: Scenario,
        seed: u64,
        capture: Option<CaptureSpec>,
    ) -> Result<Self, EmuError> {
        Self::start_with(scenario, seed, capture, Mode::Shell)
    }

    fn start_with(
        scenario: Scenario,
        seed: u64,
        capture: Option<CaptureSpec>,
        mode: Mode,
    ) -> Result<Self, EmuError> {
        if mode == Mode::Scenario {
            check_scenario(&scenario)?;
        }
        static NEXT_TAG: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let topology = Topology::create(NEXT_TAG.fetch_add(1, Ordering::Relaxed))?;
        let seeds = SeedTree::new(seed);
        let path = build_path(&scenario, &seeds)?;
        let stop = Arc::new(AtomicBool::new(false));
        // Hosts and listeners first, then time zero.
        let t0 = sys::monotonic_ns() + 50_000_000;
        let end = match mode {
            Mode::Scenario => Time::ZERO + scenario.duration,
            Mode::Shell => Time::ZERO + TimeDelta::from_secs(365 * 86_400),
        };
        let mut emu = Emulation {
            seed,
            stop: stop.clone(),
            forwarders: Vec::new(),
            flows: Vec::new(),
            topology: None,
            t0,
            scenario,
            capture: None,
        };
        let classifier = Classifier { port_base: PORT_BASE, flows: emu.scenario.flows.len() };
        let fds = [topology.tun_sender.as_raw_fd(), topology.tun_receiver.as_raw_fd()];
        let mut sinks: [Option<capture::PcapSink>; 2] = [None, None];
        if let Some(c) = &capture {
            for (d, dir) in [Direction::Forward, Direction::Reverse].into_iter().enumerate() {
                let part = c.path.with_extension(format!("{dir:?}.part").to_lowercase());
                let sink = capture::PcapSink::create(&part, c.snaplen)
                    .map_err(|e| EmuError::Setup(format!("capture {}: {e}", part.display())));
                let sink = match sink {
                    Ok(s) => s,
                    Err(e) => {
                        emu.topology = Some(topology);
                        return Err(e);
                    }
                };
                emu.capture.get_or_insert_with(|| (c.clone(), Vec::new())).1.push(part);
                sinks[d] = Some(sink);
            }
        }
        let f = Forwarder {
            fds,
            path,
            classifier,
            t0,
            end,
            window_start: Time::ZERO + emu.scenario.metrics.warmup,
            bin_ns: emu.scenario.metrics.bin.as_nanos(),
            capture: sinks,
        };
        let stop_f = stop.clone();
        let h = std::thread::Builder::new()
            .name("emu-forwarder".into())
            .spawn(move || f.run(&stop_f))
            .map_err(|e| EmuError::Setup(format!("thread: {e}")));
        match h {
            Ok(h) => emu.forwarders.push(h),
            Err(e) => {
                emu.topology = Some(topology);
                return Err(e);
            }
        }
        let bin = emu.scenario.metrics.bin;
        let nbins = (emu.scenario.duration.as_nanos() / bin.as_nanos()) as usize + 1;
        let flows = if mode == Mode::Scenario { emu.scenario.flows.clone() } else { Vec::new() };
        for f in &flows {
            let port = PORT_BASE + f.id as u16;
            let flow = match (&f.kind, kernel_cc(f)?) {
                (FlowKindSpec::Media(m), _) => {
                    let (snd, rcv) = rtclab_harness::endpoints::media_endpoints(f.id, m, &seeds)
                        .map_err(EmuError::Setup)?;
                    let spec = media::MediaSpecRt {
                        flow: f.id,
                        port,
                        t0,
                        start: f.start,
                        stop: f.stop.min(end),
                        end,
                        bin: emu.scenario.metrics.bin,
                    };
                    media::MediaFlow::spawn(
                        spec,
                        snd,
                        rcv,
                        &topology.sender_ns,
                        &topology.receiver_ns,
                        stop.clone(),
                    )
                    .map(FlowHandle::Media)
                }
                (_, cc) => {
                    let spec = tcp::TcpFlowSpec {
                        port,
                        cc: cc.unwrap_or("cubic").into(),
                        t0,
                        start: t0 + (f.start - Time::ZERO).as_nanos(),
                        stop: t0 + (f.stop.min(end) - Time::ZERO).as_nanos(),
                        bin_ns: bin.as_nanos(),
                        bins: nbins,
                    };
                    tcp::TcpFlow::spawn(
                        spec,
                        &topology.sender_ns,
                        &topology.receiver_ns,
                        stop.clone(),
                    )
                    .map(FlowHandle::Tcp)
                }
            };
            match flow {
                Ok(fl) => emu.flows.push(fl),
                Err(e) => {
                    emu.topology = Some(topology);
                    return Err(e);
                }
            }
        }
        emu.topology = Some(topology);
        Ok(emu)
    }

    /// (emulated seconds so far, scenario seconds).
    pub fn progress(&self) -> (f64, f64) {
        let now = (sys::monotonic_ns() - self.t0).max(0) as f64 / 1e9;
        let end = self.scenario.duration.as_secs_f64();
        (now.min(end), end)
    }

    pub fn is_done(&self) -> bool {
        self.forwarders.iter().all(|h| h.is_finished())
    }

    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    pub fn namespaces(&self) -> Option<(String, String)> {
        self.topology.as_ref().map(|t| (t.sender_ns.clone(), t.receiver_ns.clone()))
    }

    /// Waits for the end, tears everything down and returns the summary and time series
    /// (the simulator's `RunOutput` shape, `"engine": "emu"`).
    pub fn finish(mut self) -> Result<EmuOutput, EmuError> {
        let mut joined = Vec::new();
        for h in self.forwarders.drain(..) {
            joined.push(h.join().map_err(|_| EmuError::Io("forwarder panicked".into())));
        }
        // The forwarder is done: senders and receivers stop now.
        self.stop.store(true, Ordering::Relaxed);
        let mut received = Vec::new();
        let mut first_err = None;
        for f in self.flows.drain(..) {
            match f.join() {
                Ok(r) => received.push(r),
                Err(e) => {
                    first_err.get_or_insert(e);
                    received.push(FlowResult::Failed);
                }
            }
        }
        self.topology = None; // removes the namespaces
        let Some(dirs) = joined.pop() else {
            return Err(EmuError::Io("forwarder missing".into()));
        };
        let stats = EngineStats { dirs: dirs?? };
        if let Some((spec, parts)) = self.capture.take() {
            capture::merge(&parts, &spec.path, spec.snaplen)
                .map_err(|e| EmuError::Io(format!("capture {}: {e}", spec.path.display())))?;
        }
        if let Some(e) = first_err {
            return Err(e);
        }
        let fairness = series::fairness_columns(&self.scenario, &stats);
        Ok(EmuOutput {
            summary: summarize(&self.scenario, self.seed, &stats, &received, &fairness).to_value(),
            flows: series::flow_columns(&self.scenario, &stats, &received),
            link: series::link_columns(&self.scenario, &stats),
            fairness,
        })
    }
}

impl Drop for Emulation {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for h in self.forwarders.drain(..) {
            let _ = h.join();
        }
        for f in self.flows.drain(..) {
            let _ = f.join();
        }
        self.topology = None;
    }
}

fn media_qoe(m: &media::MediaResult, active: f64) -> MediaQoe {
    let s = &m.sender;
    MediaQoe {
        frame_delay_ms: percentiles_ms(&m.frame_delay),
        frames: m.frames.completed,
        frame_rate: if active > 0.0 { m.frames.completed as f64 / active } else { 0.0 },
        incomplete_frames: m.frames.incomplete,
        stalls: m.frames.stalls,
        stall_time_s: m.frames.stall_time.as_secs_f64(),
        frames_dropped_by_sender: m.frames_dropped_by_sender,
        padding_bytes: s.padding_bytes,
        probe_clusters: s.probe_clusters,
        composition: Composition::of(s.bytes_sent, s.fec_bytes, s.rtx_bytes, s.padding_bytes),
        frames_displayed: m.display.displayed,
        display_delay_ms: percentiles_ms(&m.display.delay),
        freezes: m.display.freezes,
        freeze_time_s: m.display.freeze_time.as_secs_f64(),
        undecodable_frames: m.display.undecodable,
        max_decode_queue: m.display.max_decode_queue as u64,
        undecodable_packets: Some(m.decode_errors),
    }
}

fn summarize(
    s: &Scenario,
    seed: u64,
    st: &EngineStats,
    received: &[FlowResult],
    fairness: &Columns,
) -> Summary {
    let w = hs::window(s, TimeDelta::from_nanos(st.ran_ns()));
    let (w0, w1) = w;
    let fwd = &st.dirs[0].flows;
    let total_fwd: u64 = fwd.iter().map(|c| c.window_bytes).sum();
    let mut all_q = rtclab_core::LogHistogram::new();
    let mut flows = Vec::new();
    let mut rates = Vec::new();
    let bin = s.metrics.bin.as_nanos();
    let (b0, b1) = (
        ((w0 - Time::ZERO).as_nanos() / bin) as usize,
        ((w1 - Time::ZERO).as_nanos() / bin) as usize,
    );
    for (f, rec) in s.flows.iter().zip(received) {
        let c = &fwd[f.id as usize];
        all_q.merge(&c.queue_delay);
        let mut out = hs::flow_base(f, w);
        let active = out.active_s;
        let mbps = |bytes: u64| if active > 0.0 { bytes as f64 * 8.0 / active / 1e6 } else { 0.0 };
        let app: u64 = rec.bins().iter().take(b1).skip(b0).sum();
        let sent: u64 = c.bins.iter().take(b1).skip(b0).map(|b| b.in_bytes).sum();
        let dropped: u64 = c.drops.iter().sum();
        out.throughput_mbps = mbps(c.window_bytes);
        if active > 0.0 {
            rates.push(out.throughput_mbps);
        }
        out.goodput_mbps = mbps(app);
        out.sending_rate_mbps = mbps(sent);
        out.share = if total_fwd > 0 { c.window_bytes as f64 / total_fwd as f64 } else { 0.0 };
        out.queuing_delay_ms = percentiles_ms(&c.queue_delay);
        out.one_way_delay_ms = percentiles_ms(&c.path_delay);
        out.packets_sent = c.window_in_packets;
        out.packets_received = c.window_packets;
        out.loss_ratio =
            if c.window_in_packets > 0 { dropped as f64 / c.window_in_packets as f64 } else { 0.0 };
        out.drops = hs::drops(&c.drops);
        out.ecn_marks = c.ecn_marks;
        out.ack_drops = st.dirs[1].flows[f.id as usize].drops.iter().sum();
        match rec {
            FlowResult::Tcp(r) => {
                out.connected = r.connected;
                out.retransmits = r.sender_info.map(|i| i.total_retrans as u64);
                out.kernel_tcp = r.sender_info.map(|i| KernelTcp {
                    total_retrans: i.total_retrans as u64,
                    final_cwnd_packets: i.snd_cwnd as u64,
                    final_srtt_ms: i.rtt_us as f64 / 1000.0,
                    mss: i.snd_mss as u64,
                });
            }
            // Frames are counted over the whole run, so the rate is over the flow's life.
            FlowResult::Media(m) => {
                out.media = Some(media_qoe(m, (f.stop.min(w1) - f.start).as_secs_f64()))
            }
            FlowResult::Failed => out.connected = false,
        }
        flows.push(out);
    }
    let meters = merged_meters(st);
    let (link, reverse_link) = hs::main_link(s, &meters[0], &meters[1], &all_q, w);
    let mut err = st.dirs[0].release_error.clone();
    err.merge(&st.dirs[1].release_error);
    let us = |q: f64| err.quantile(q).map(|ns| ns as f64 / 1e3);
    Summary {
        scenario: s.name.clone(),
        description: s.description.clone(),
        rtclab_version: env!("CARGO_PKG_VERSION"),
        seed,
        engine: "emu",
        duration_s: s.duration.as_secs_f64(),
        warmup_s: s.metrics.warmup.as_secs_f64(),
        wall_time_s: None,
        measurement_window_s: [(w0 - Time::ZERO).as_secs_f64(), (w1 - Time::ZERO).as_secs_f64()],
        link,
        reverse_link,
        links: hs::links(s, &meters, w),
        fairness: hs::fairness(s, &rates, fairness.column("jain").unwrap_or(&[])),
        flows,
        engine_stats: EngineCounters {
            events: None,
            delivered_packets: st.dirs[0].flows.iter().map(|c| c.out_packets).sum(),
            delivered_acks: st.dirs[1].flows.iter().map(|c| c.out_packets).sum(),
        },
        emulator: Some(EmulatorSummary {
            release_error_us: ReleaseError { p50: us(0.5), p99: us(0.99), max: us(1.0) },
            packets_forwarded: st.dirs.iter().flat_map(|d| &d.flows).map(|c| c.out_packets).sum(),
            unclassified_packets: st
                .dirs
                .iter()
                .filter_map(|d| d.flows.last())
                .map(|c| c.in_packets)
                .sum(),
            device_write_drops: st.dirs[0].write_drops + st.dirs[1].write_drops,
            realtime_forwarder: st.dirs[0].realtime && st.dirs[1].realtime,
            non_ip_packets: st.dirs[0].non_ipv4 + st.dirs[1].non_ipv4,
        }),
    }
}

/// The link meters (`HopRef::index`), both directions.
pub(crate) fn merged_meters(st: &EngineStats) -> Vec<LinkMeter> {
    st.dirs[0].meters.clone()
}
