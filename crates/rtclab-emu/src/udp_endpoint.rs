//! The emulator's one endpoint driver: any rtclab endpoint (media sender and receiver, rtclab's
//! own TCP with any controller, CBR, registered flow kinds) on a real UDP socket, driven
//! through the one sans-IO `Endpoint` interface exactly as the simulator drives it — input a
//! packet or a timer at `now`, then drain `poll_transmit`, `poll_event` and `poll_timeout` —
//! with CLOCK_MONOTONIC as `now`. A [`WireCodec`] turns packets into UDP payloads and back
//! (RTP/RTCP for media, rtclab's records for the rest).
//!
//! Each end runs in its own thread in its host's namespace: the sender on an ephemeral port in
//! the sender namespace, connected to the receiver on port `PORT_BASE + flow id` in the
//! receiver namespace (which answers whoever wrote to it last), so every byte crosses the
//! emulated network. A thread sleeps on epoll with a timerfd armed at its endpoint's next
//! deadline (or the next sampling point). Its events feed the same `FlowMeter` the simulator
//! keeps per flow.

use crate::codec::WireCodec;
use crate::sys;
use crate::sys::now_at;
use crate::EmuError;
use rtclab_core::{Endpoint, FlowId, Time, TimeDelta};
use rtclab_harness::endpoints::{sample_flow, sample_receiver, AnyEndpoint};
use rtclab_harness::flow_meter::{FlowMeter, MeterWindow};
use rtclab_harness::measure::CcSample;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// When and how one flow's two ends run.
#[derive(Clone)]
pub struct UdpFlowSpec {
    pub flow: u32,
    pub port: u16,
    /// CLOCK_MONOTONIC of emulated time zero.
    pub t0: i64,
    pub start: Time,
    pub stop: Time,
    /// The sender pauses at the first time and resumes at the second.
    pub pauses: Vec<(Time, Time)>,
    pub end: Time,
    pub bin: TimeDelta,
    /// Start of the measurement window (frame counts and delays cover the window only).
    pub window_start: Time,
    /// For the controller's window in packets (`cwnd_packets`).
    pub packet_size: u32,
}

/// What one end measured, and the endpoint itself (for its own statistics).
pub struct EndOut {
    pub endpoint: AnyEndpoint,
    /// Per time-series bin: the endpoint's state at the bin's end.
    pub samples: Vec<CcSample>,
    /// What the end's events said (`Delivered`, frames, freezes, stalls): the application
    /// half of the flow's meter, joined with the forwarding loops' after the run.
    pub meter: FlowMeter,
    /// Datagrams the codec could not read, and packets the socket refused (full buffers).
    pub decode_errors: u64,
    pub send_drops: u64,
    /// What the codec measured (the receiver's FEC rebuilds on real bytes).
    pub codec_metrics: Vec<(&'static str, f64)>,
    /// Whether this end's thread got SCHED_FIFO (`sys::HOST_PRIORITY`).
    pub realtime: bool,
}

/// One flow's two ends.
pub struct UdpFlow {
    sender: JoinHandle<Result<EndOut, EmuError>>,
    receiver: JoinHandle<Result<EndOut, EmuError>>,
}

/// What the flow's two ends measured.
pub struct UdpFlowResult {
    pub sender: EndOut,
    pub receiver: EndOut,
    /// Per bin: the receiver's named values (a receive-side estimator) then the sender's
    /// controller, as the simulator samples a flow.
    pub samples: Vec<CcSample>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Sender,
    Receiver,
}

impl UdpFlow {
    #[allow(clippy::too_many_arguments)]
    pub fn spawn(
        spec: UdpFlowSpec,
        sender: AnyEndpoint,
        receiver: AnyEndpoint,
        sender_codec: Box<dyn WireCodec>,
        receiver_codec: Box<dyn WireCodec>,
        sender_ns: &str,
        receiver_ns: &str,
        stop: Arc<AtomicBool>,
    ) -> Result<Self, EmuError> {
        let port = spec.port;
        let stop_r = stop.clone();
        let spec_r = spec.clone();
        let recv_thread = crate::netns::spawn_in_netns(
            format!("emu-flow-recv-{port}"),
            crate::netns::Topology::netns_path(receiver_ns),
            move || bound((crate::netns::RECEIVER_ADDR, port), None),
            move |sock| drive(Side::Receiver, spec_r, receiver, receiver_codec, sock, &stop_r),
        )?;
        let send_thread = crate::netns::spawn_in_netns(
            format!("emu-flow-send-{port}"),
            crate::netns::Topology::netns_path(sender_ns),
            move || {
                bound((crate::netns::SENDER_ADDR, 0), Some((crate::netns::RECEIVER_ADDR, port)))
            },
            move |sock| drive(Side::Sender, spec, sender, sender_codec, sock, &stop),
        );
        let send_thread = match send_thread {
            Ok(t) => t,
            Err(e) => {
                let _ = recv_thread.join();
                return Err(e);
            }
        };
        Ok(UdpFlow { sender: send_thread, receiver: recv_thread })
    }

    pub fn join(self) -> Result<UdpFlowResult, EmuError> {
        let s = self.sender.join().map_err(|_| EmuError::Io("flow sender panicked".into()))?;
        let r = self.receiver.join().map_err(|_| EmuError::Io("flow receiver panicked".into()))?;
        let (sender, receiver) = (s?, r?);
        let samples = sender
            .samples
            .iter()
            .zip(&receiver.samples)
            .map(|(s, r)| {
                let mut c = s.clone();
                c.named = r.named.iter().chain(&s.named).copied().collect();
                c
            })
            .collect();
        Ok(UdpFlowResult { sender, receiver, samples })
    }
}

/// A non-blocking UDP socket bound to `local` (and connected to `peer`).
fn bound(local: (&str, u16), peer: Option<(&str, u16)>) -> Result<UdpSocket, EmuError> {
    let setup = |e: std::io::Error| EmuError::Setup(format!("UDP {}:{}: {e}", local.0, local.1));
    let s = UdpSocket::bind(local).map_err(setup)?;
    if let Some(p) = peer {
        s.connect(p).map_err(setup)?;
    }
    // The ECN field both ways: set per datagram through IP_TOS, read back through IP_RECVTOS.
    sys::set_recv_tos(s.as_raw_fd()).map_err(setup)?;
    s.set_nonblocking(true).map_err(setup)?;
    Ok(s)
}

/// Socket errors that lose one datagram but not the flow: a full buffer, nothing listening
/// yet (an ICMP error from an earlier send).
fn transient(e: &std::io::Error) -> bool {
    matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::ConnectionRefused)
        || e.raw_os_error() == Some(libc::ENOBUFS)
}

/// Runs one end until the emulation ends (a receiver lingers 500 ms for packets in flight).
fn drive(
    side: Side,
    spec: UdpFlowSpec,
    mut ep: AnyEndpoint,
    mut codec: Box<dyn WireCodec>,
    sock: UdpSocket,
    stop: &AtomicBool,
) -> Result<EndOut, EmuError> {
    let io = |e: std::io::Error| EmuError::Io(e.to_string());
    let _ = sys::set_timer_slack(1);
    let realtime = sys::set_realtime(sys::HOST_PRIORITY).is_ok();
    let epoll = sys::Epoll::new().map_err(io)?;
    let timer = sys::TimerFd::new().map_err(io)?;
    epoll.add(sock.as_raw_fd(), 0).map_err(io)?;
    epoll.add(timer.raw(), 1).map_err(io)?;
    let (t0, bin) = (spec.t0, spec.bin);
    let nb = ((spec.end - Time::ZERO).as_nanos() / bin.as_nanos()) as usize + 1;
    let bin_of = |t: Time| ((t - Time::ZERO).as_nanos() / bin.as_nanos()) as usize;
    let mut out = EndOut {
        endpoint: AnyEndpoint::Sink(Box::default()),
        samples: vec![CcSample::default(); nb],
        meter: FlowMeter::new(MeterWindow { start: spec.window_start, end: spec.end, bin }),
        decode_errors: 0,
        codec_metrics: Vec::new(),
        send_drops: 0,
        realtime,
    };
    let sample = |ep: &AnyEndpoint| match side {
        Side::Sender => sample_flow(ep, None, spec.packet_size),
        Side::Receiver => sample_receiver(ep),
    };
    let flow = FlowId(spec.flow);
    let last = match side {
        Side::Sender => spec.end,
        Side::Receiver => spec.end + TimeDelta::from_millis(500),
    };
    let mut buf = vec![0u8; 65536];
    let mut wire = Vec::with_capacity(2048);
    let mut inbox = Vec::new();
    let mut ready = Vec::new();
    let mut peer: Option<SocketAddr> = None;
    // The TOS byte the socket sends with now (its ECN field: the packet's, set when it changes).
    let mut tos = 0u8;
    let (mut started, mut stopped) = (side == Side::Receiver, false);
    let (mut paused, mut pause_at) = (false, 0);
    let mut sampled = 0; // bins whose end has been sampled
    while !stop.load(Ordering::Relaxed) {
        let now = now_at(t0);
        if now >= last {
            break;
        }
        if !started && now >= spec.start {
            ep.start(now);
            started = true;
        }
        if side == Side::Sender && started && !stopped && now >= spec.stop {
            ep.stop();
            stopped = true;
        }
        // Pauses: stop at the pause, start again at the resume (as the simulator's events).
        while let Some(&(pause, resume)) =
            spec.pauses.get(pause_at).filter(|_| side == Side::Sender && started && !stopped)
        {
            if !paused && now >= pause {
                ep.stop();
                paused = true;
            } else if paused && now >= resume {
                ep.start(now);
                paused = false;
                pause_at += 1;
            } else {
                break;
            }
        }
        // Bins that ended before this instant's inputs: sample the state they ended in.
        let i = bin_of(now).min(nb);
        if i > sampled {
            let c = sample(&ep);
            for s in &mut out.samples[sampled..i] {
                *s = c.clone();
            }
            sampled = i;
        }
        // Input: every datagram waiting, at the time it is read.
        loop {
            match sys::recv_with_tos(sock.as_raw_fd(), &mut buf) {
                Ok((n, from, tos)) => {
                    peer = Some(from);
                    let now = now_at(t0);
                    inbox.clear();
                    if codec.decode(&buf[..n], flow, now, &mut inbox).is_err() {
                        out.decode_errors += 1;
                        continue;
                    }
                    for (mut pkt, payload) in inbox.drain(..) {
                        // The ECN field as the datagram arrived (an emulated queue may have
                        // set CE on the way).
                        pkt.set_ecn(rtclab_core::Ecn::from_bits(tos));
                        pkt.dir = match side {
                            Side::Sender => rtclab_core::Direction::Reverse,
                            Side::Receiver => rtclab_core::Direction::Forward,
                        };
                        if started {
                            ep.handle_packet(now, &pkt, payload);
                        }
                    }
                }
                Err(e) if transient(&e) => break,
                Err(e) => return Err(EmuError::Io(format!("recv: {e}"))),
            }
        }
        let now = now_at(t0);
        if started && ep.poll_timeout().is_some_and(|t| t <= now) {
            ep.handle_timeout(now);
        }
        // Output.
        while let Some(t) = if started { ep.poll_transmit(now) } else { None } {
            wire.clear();
            codec
                .encode(&t.pkt, t.payload.as_ref(), &mut wire)
                .map_err(|e| EmuError::Io(format!("flow {}: {e}", spec.flow)))?;
            let ecn = t.pkt.ecn().bits();
            if ecn != tos {
                sys::set_tos(sock.as_raw_fd(), ecn)
                    .map_err(|e| EmuError::Io(format!("flow {}: {e}", spec.flow)))?;
                tos = ecn;
            }
            let sent = match (side, peer) {
                (Side::Sender, _) => sock.send(&wire),
                (Side::Receiver, Some(to)) => sock.send_to(&wire, to),
                // A receiver speaks only to a sender it has heard from.
                (Side::Receiver, None) => Ok(0),
            };
            match sent {
                Ok(_) => {}
                Err(e) if transient(&e) => out.send_drops += 1,
                Err(e) => return Err(EmuError::Io(format!("send: {e}"))),
            }
        }
        // Events, into the bin they happen in.
        while let Some(ev) = ep.poll_event() {
            out.meter.on_event(now, &ev);
        }
        let next_bin = Time::ZERO + TimeDelta::from_nanos(bin.as_nanos() * (sampled as i64 + 1));
        let next = [
            if started { ep.poll_timeout() } else { Some(spec.start) },
            (side == Side::Sender && !stopped).then_some(spec.stop),
            (side == Side::Sender)
                .then(|| spec.pauses.get(pause_at).map(|p| if paused { p.1 } else { p.0 }))
                .flatten(),
            Some(next_bin),
            Some(last),
        ]
        .into_iter()
        .flatten()
        .min();
        wait(&epoll, &timer, t0, next, &mut ready)?;
    }
    let i = bin_of(now_at(t0)).min(nb);
    if i > sampled {
        let c = sample(&ep);
        for s in &mut out.samples[sampled..i] {
            *s = c.clone();
        }
    }
    out.endpoint = ep;
    out.codec_metrics = codec.metrics();
    Ok(out)
}

/// Sleeps on `epoll` until `deadline` (None: up to 50 ms) or input.
pub(crate) fn wait(
    epoll: &sys::Epoll,
    timer: &sys::TimerFd,
    t0: i64,
    deadline: Option<Time>,
    ready: &mut Vec<u64>,
) -> Result<(), EmuError> {
    let io = |e: std::io::Error| EmuError::Io(e.to_string());
    match deadline {
        Some(t) => timer.set(Some(t0 + (t - Time::ZERO).as_nanos())).map_err(io)?,
        None => timer.set(None).map_err(io)?,
    }
    epoll.wait(ready, 50).map_err(io)?;
    timer.drain();
    Ok(())
}
