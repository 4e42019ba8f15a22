//! rtclab's real-network emulator: the simulator's link, queue, loss and delay elements driven
//! by CLOCK_MONOTONIC, with real packets between two network namespaces joined by TUN devices
//! (`netns.rs`), forwarded by epoll/timerfd threads (`engine.rs`) through the harness's network
//! (`path.rs`: one loop per direction when no element serves both, else one loop for both, so
//! middleboxes see data and feedback); kernel TCP flows (`tcp.rs`) and every rtclab endpoint
//! over UDP (`udp_endpoint.rs`, `codec.rs`) as endpoints. The only crate with OS I/O.
//!
//! Modelled on mahimahi (Netravali et al., USENIX ATC 2015: a TUN-based shell per emulated
//! element), with nanosecond deadlines instead of millisecond ticks, one process instead of
//! nested setuid shells, and the simulator's own elements (spec `peers-and-test-suites.md` §1).
//!
//! Supported: bulk tcp flows with the kernel's `cubic`, `reno` or `bbr` as kernel TCP; every
//! other flow (media with real RTP/RTCP, tcp with any other controller or an application
//! rate, cbr, registered flow kinds) as the simulator's sans-IO endpoints over UDP; constant,
//! schedule and trace capacities, every queue discipline and middlebox, multi-link paths,
//! i.i.d./Gilbert-Elliott loss, per-flow delay and jitter, both directions.

pub mod capture;
pub mod codec;
pub mod engine;
pub mod held;
pub mod netns;
pub mod offload;
pub mod path;
pub mod series;
pub mod sys;
pub mod tcp;
pub mod udp_endpoint;

use engine::{Classifier, EngineStats, Forwarder, LoopStats};
use netns::Topology;
use path::Path;
use rtclab_core::{Direction, SeedTree, Time, TimeDelta};
use rtclab_harness::flow_meter::{FlowMeter, MeterWindow};
pub use rtclab_harness::measure::Columns;
use rtclab_harness::summarize::RunFacts;
use rtclab_harness::summary::{
    self as hs, DeviceIo, EmulatorSummary, EngineCounters, KernelTcp, ReleaseError, Summary,
};
use rtclab_harness::Network;
use rtclab_scenario::{FlowKindSpec, Scenario};

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
    /// One row per freeze of a media flow's display or stall of its frames.
    pub interruptions: Columns,
    /// Per flow and delay metric, the delay at fixed percentiles.
    pub distributions: Columns,
}
use serde_json::Value;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Receiver ports: flow i listens on `PORT_BASE + i`.
pub const PORT_BASE: u16 = 5000;

/// What can stop an emulation, by what the user can do about it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum EmuError {
    /// Not root, no /dev/net/tun, no iproute2: the CLI exits with status 2.
    #[error("{0}")]
    NotPermitted(String),
    /// The scenario asks for something the emulator cannot do (yet).
    #[error("{0}")]
    Unsupported(String),
    /// A part from outside the scenario layer's checks failed to build (the harness's error).
    #[error("{0}")]
    Build(#[from] rtclab_harness::BuildError),
    #[error("emulator set-up failed: {0}")]
    Setup(String),
    #[error("emulator I/O error: {0}")]
    Io(String),
}

/// The kernel congestion control a tcp flow runs with, where the emulator uses kernel TCP: a
/// bulk tcp flow whose `cc` Linux has (`cubic`, `reno`, `bbr`). Every other flow — media, tcp
/// with any other controller, an application rate, a size or video, cbr, registered kinds — runs rtclab's
/// own endpoints over UDP (`udp_endpoint.rs`).
fn kernel_tcp(f: &rtclab_scenario::FlowSpec) -> Option<&'static str> {
    match &f.kind {
        FlowKindSpec::Tcp { cc, app_rate: None, size: None, video: None, .. } => {
            rtclab_cc::registry::capabilities(cc.name()).and_then(|c| c.kernel)
        }
        _ => None,
    }
}

/// The SSRC of a media flow's stream.
const SSRC_BASE: u32 = 0x5254_0000;

/// What one flow's endpoints measured.
pub enum FlowResult {
    Tcp(Box<tcp::Received>),
    /// rtclab's endpoints over UDP.
    Endpoint(Box<udp_endpoint::UdpFlowResult>),
    Failed,
}

enum FlowHandle {
    Tcp(tcp::TcpFlow),
    Endpoint(udp_endpoint::UdpFlow),
}

impl FlowHandle {
    fn join(self) -> Result<FlowResult, EmuError> {
        match self {
            FlowHandle::Tcp(f) => f.join().map(|r| FlowResult::Tcp(Box::new(r))),
            FlowHandle::Endpoint(f) => f.join().map(|r| FlowResult::Endpoint(Box::new(r))),
        }
    }
}

/// Checks that every flow can run in the emulator (no root needed).
pub fn check_scenario(s: &Scenario) -> Result<(), EmuError> {
    if s.flows.len() > 200 {
        return Err(EmuError::Unsupported("at most 200 flows in the emulator".into()));
    }
    let ecn = |f: &rtclab_scenario::FlowSpec| matches!(f.kind, FlowKindSpec::Tcp { ecn: true, .. });
    let kernel: Vec<_> = s.flows.iter().filter(|f| kernel_tcp(f).is_some()).collect();
    if kernel.iter().any(|f| ecn(f)) && !kernel.iter().all(|f| ecn(f)) {
        return Err(EmuError::Unsupported(
            "kernel tcp flows must agree on `ecn` (Linux sets ECN per host, net.ipv4.tcp_ecn)"
                .into(),
        ));
    }
    for f in &s.flows {
        let cc = f.kind.cc_name();
        if let Some(why) = rtclab_cc::registry::capabilities(cc).and_then(|c| c.simulator_only) {
            return Err(EmuError::Unsupported(format!(
                "flow {:?}: cc = {cc:?} runs in the simulator only ({why})",
                f.name
            )));
        }
    }
    for m in &s.middleboxes {
        if let Some(why) = (m.entry.simulator_only)(&m.params) {
            return Err(EmuError::Unsupported(format!(
                "middlebox kind {:?} runs in the simulator only with these settings: {why}",
                m.kind
            )));
        }
    }
    Ok(())
}

/// The network from the harness (the simulator's topology, random streams and routes): one
/// path per direction when no element serves both, else one path for both. Unclassified
/// packets take the first flow's route.
fn build_paths(s: &Scenario, seeds: &SeedTree) -> Result<Vec<Path>, EmuError> {
    let net = Network::build(s, seeds)?;
    let (bin, warmup) = (s.metrics.bin, Time::ZERO + s.metrics.warmup);
    let mut paths = Path::per_direction(net, s.links.len(), bin, warmup);
    for p in &mut paths {
        p.set_flow_links(s.flows.iter().map(|f| f.path.clone()).collect());
    }
    Ok(paths)
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
    /// Capture packets as the hosts sent them (entering the emulated path, before any loss or
    /// queue drop: a sender-side capture, as the fairness study's) instead of as delivered.
    pub sent: bool,
}

/// A running emulation. `start` sets up namespaces and threads; `progress` reports emulated
/// time; `stop` asks everything to end early; `finish` joins, tears down and summarizes.
/// Dropping it without `finish` still stops the threads and removes the namespaces.
pub struct Emulation {
    scenario: Scenario,
    seed: u64,
    stop: Arc<AtomicBool>,
    forwarders: Vec<JoinHandle<Result<LoopStats, EmuError>>>,
    flows: Vec<FlowHandle>,
    topology: Option<Topology>,
    t0: i64,
    capture: Option<(CaptureSpec, Vec<std::path::PathBuf>)>,
    /// /proc/stat's (steal, total) CPU ticks at the start, for the summary's steal share.
    cpu_at_start: Option<(u64, u64)>,
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
        let topology =
            Topology::create(NEXT_TAG.fetch_add(1, Ordering::Relaxed), offload::enabled_by_env())?;
        let kernel_ecn = scenario.flows.iter().any(|f| {
            kernel_tcp(f).is_some() && matches!(f.kind, FlowKindSpec::Tcp { ecn: true, .. })
        });
        if mode == Mode::Scenario && kernel_ecn {
            topology.enable_tcp_ecn()?;
        }
        let seeds = SeedTree::new(seed);
        let paths = build_paths(&scenario, &seeds)?;
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
            cpu_at_start: sys::cpu_steal_ticks(),
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
        // One loop per path: per direction when no element serves both, else one for both.
        let one_loop = paths.len() == 1;
        for (i, path) in paths.into_iter().enumerate() {
            let reads = if one_loop { [true, true] } else { [i == 0, i == 1] };
            let f = Forwarder {
                fds,
                reads,
                path,
                classifier,
                t0,
                end,
                window: MeterWindow {
                    start: Time::ZERO + emu.scenario.metrics.warmup,
                    end,
                    bin: emu.scenario.metrics.bin,
                },
                capture: [0, 1].map(|d| if reads[d] { sinks[d].take() } else { None }),
                capture_sent: capture.as_ref().is_some_and(|c| c.sent),
                offload: topology.offload,
            };
            let stop_f = stop.clone();
            let name = if one_loop { "emu-forwarder".into() } else { format!("emu-forwarder-{i}") };
            let h = std::thread::Builder::new()
                .name(name)
                .spawn(move || {
                    let r = f.run(&stop_f);
                    if r.is_err() {
                        stop_f.store(true, Ordering::Relaxed); // the other loop ends too
                    }
                    r
                })
                .map_err(|e| EmuError::Setup(format!("thread: {e}")));
            match h {
                Ok(h) => emu.forwarders.push(h),
                Err(e) => {
                    emu.topology = Some(topology);
                    return Err(e);
                }
            }
        }
        let bin = emu.scenario.metrics.bin;
        let flows = if mode == Mode::Scenario { emu.scenario.flows.clone() } else { Vec::new() };
        for f in &flows {
            let port = PORT_BASE + f.id as u16;
            let flow = match kernel_tcp(f) {
                None => {
                    let (snd, rcv) = rtclab_harness::endpoints::flow_endpoints(f, &seeds)?;
                    let spec = udp_endpoint::UdpFlowSpec {
                        flow: f.id,
                        port,
                        t0,
                        start: f.start,
                        stop: f.stop.min(end),
                        pauses: f.pauses.clone(),
                        end,
                        bin,
                        window_start: Time::ZERO + emu.scenario.metrics.warmup,
                        packet_size: f.kind.packet_size(),
                    };
                    let codec = || -> Box<dyn codec::WireCodec> {
                        match f.kind {
                            FlowKindSpec::Media(_) => {
                                Box::new(codec::RtpCodec::new(SSRC_BASE + f.id))
                            }
                            _ => Box::new(codec::RecordCodec),
                        }
                    };
                    udp_endpoint::UdpFlow::spawn(
                        spec,
                        snd,
                        rcv,
                        codec(),
                        codec(),
                        &topology.sender_ns,
                        &topology.receiver_ns,
                        stop.clone(),
                    )
                    .map(FlowHandle::Endpoint)
                }
                Some(cc) => {
                    let spec = tcp::TcpFlowSpec {
                        port,
                        cc: cc.into(),
                        t0,
                        start: t0 + (f.start - Time::ZERO).as_nanos(),
                        stop: t0 + (f.stop.min(end) - Time::ZERO).as_nanos(),
                        window: MeterWindow {
                            start: Time::ZERO + emu.scenario.metrics.warmup,
                            end,
                            bin,
                        },
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

    /// The emulation's time zero: CLOCK_MONOTONIC in nanoseconds (the packets' timestamps,
    /// the time series and the capture all count from it).
    pub fn start_monotonic_ns(&self) -> i64 {
        self.t0
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
        let host_steal_percent = sys::steal_percent(self.cpu_at_start, sys::cpu_steal_ticks());
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
        let offload = self.topology.as_ref().is_some_and(|t| t.offload);
        self.topology = None; // removes the namespaces
        let loops = joined.into_iter().map(|r| r.and_then(|l| l)).collect::<Result<Vec<_>, _>>()?;
        let mut stats = EngineStats::merge(loops)?;
        stats.offload = offload;
        if let Some((spec, parts)) = self.capture.take() {
            capture::merge(&parts, &spec.path, spec.snaplen)
                .map_err(|e| EmuError::Io(format!("capture {}: {e}", spec.path.display())))?;
        }
        if let Some(e) = first_err {
            return Err(e);
        }
        let s = &self.scenario;
        let meters = series::flow_meters(s, &stats, &received);
        let fairness = rtclab_harness::summarize::fairness_columns(s, &meters, series::n_bins(s));
        let summary =
            summarize(s, self.seed, &stats, &received, &meters, &fairness, host_steal_percent);
        // A shell runs none of the scenario's flows: their tables stay empty.
        let ran = &meters[..received.len().min(meters.len())];
        Ok(EmuOutput {
            summary: summary.to_value(),
            flows: series::flow_columns(s, ran),
            link: series::link_columns(s, &stats),
            fairness,
            interruptions: rtclab_harness::flow_meter::interruption_columns(ran),
            distributions: rtclab_harness::flow_meter::distribution_columns(ran),
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

fn summarize(
    s: &Scenario,
    seed: u64,
    st: &EngineStats,
    received: &[FlowResult],
    meters: &[FlowMeter],
    fairness: &Columns,
    host_steal_percent: Option<f64>,
) -> Summary {
    let run = RunFacts {
        scenario: s,
        seed,
        engine: "emu",
        ran: TimeDelta::from_nanos(st.ran_ns()),
        n_bins: series::n_bins(s),
        engine_stats: EngineCounters {
            events: None,
            delivered_packets: st.dirs[0].flows.iter().map(|c| c.out_packets).sum(),
            delivered_acks: st.dirs[1].flows.iter().map(|c| c.out_packets).sum(),
        },
    };
    let hops = &st.dirs[0].meters;
    let mut out =
        rtclab_harness::summarize::build(run, meters, hops, fairness, |i, out, frames| {
            match received.get(i).unwrap_or(&FlowResult::Failed) {
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
                FlowResult::Endpoint(r) => {
                    let rx = &r.receiver;
                    let media = matches!(s.flows[i].kind, FlowKindSpec::Media(_));
                    let errors = media.then_some(rx.decode_errors + r.sender.decode_errors);
                    hs::endpoint_fields(out, &r.sender.endpoint, &rx.endpoint, frames, errors);
                    for (k, v) in &rx.codec_metrics {
                        out.metrics.insert(k.to_string(), *v);
                    }
                }
                FlowResult::Failed => out.connected = false,
            }
        });
    let mut err = st.dirs[0].release_error.clone();
    err.merge(&st.dirs[1].release_error);
    let us = |q: f64| err.quantile(q).map(|ns| ns as f64 / 1e3);
    out.emulator = Some(EmulatorSummary {
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
        realtime_endpoints: received.iter().all(|r| match r {
            FlowResult::Endpoint(e) => e.sender.realtime && e.receiver.realtime,
            _ => true,
        }),
        host_steal_percent,
        non_ip_packets: st.dirs[0].non_ipv4 + st.dirs[1].non_ipv4,
        shell_tcp_cc: None,
        tun_offload: st.offload,
        device_io: [0, 1].map(|d| {
            let dir = &st.dirs[d];
            let per = |n: u64, calls: u64| (calls > 0).then(|| n as f64 / calls as f64);
            let taken_in = dir.flows.iter().map(|c| c.in_packets).sum::<u64>() + dir.non_ipv4;
            let out = dir.flows.iter().map(|c| c.out_packets).sum();
            DeviceIo {
                reads: dir.reads,
                super_packets: dir.super_packets,
                writes: dir.writes,
                packets_per_read: per(taken_in, dir.reads),
                packets_per_write: per(out, dir.writes),
            }
        }),
    });
    out.middleboxes = rtclab_harness::summary::MiddleboxSummary::all(s, |i| {
        st.dirs[0].middleboxes.get(i).cloned().flatten()
    });
    hs::attach_wifi(&mut out.links, s, s.duration, |h| st.dirs[0].wifi.get(h).copied().flatten());
    if received.is_empty() {
        out.flows.clear(); // a shell runs none of the scenario's flows
    }
    out
}
