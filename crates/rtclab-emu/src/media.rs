//! Real-time media endpoints over real UDP sockets: the simulator's sans-IO `MediaSender` and
//! `MediaReceiver` (same controller, encoder, pacer, feedback generators), driven by
//! CLOCK_MONOTONIC in one thread each, exchanging real RTP and RTCP bytes
//! (`rtclab_media::rtp_codec`). The sender lives in the sender namespace, the receiver in the
//! receiver namespace on port `PORT_BASE + flow id`, so every byte crosses the emulated link.
//! Each thread sleeps on epoll with a timerfd armed at its endpoint's next deadline.

use crate::sys;
use crate::sys::now_at;
use crate::EmuError;
use rtclab_core::{FlowId, LogHistogram, Time, TimeDelta};
use rtclab_harness::endpoints::{sample_media_receiver, sample_media_sender};
use rtclab_harness::measure::CcSample;
use rtclab_media::frames::FrameStats;
use rtclab_media::playout::DisplayStats;
use rtclab_media::receiver::MediaReceiver;
use rtclab_media::rtp_codec::{
    decode_data, decode_feedback, encode_data, encode_feedback, SeqUnwrapper,
};
use rtclab_media::sender::{MediaSender, MediaSenderStats};
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

const SSRC_BASE: u32 = 0x5254_0000;

pub struct MediaSpecRt {
    pub flow: u32,
    pub port: u16,
    pub t0: i64,
    pub start: Time,
    pub stop: Time,
    pub end: Time,
    pub bin: TimeDelta,
}

/// What a media flow's two ends measured.
pub struct MediaResult {
    pub sender: MediaSenderStats,
    pub frames_dropped_by_sender: u64,
    pub frames: FrameStats,
    pub frame_delay: LogHistogram,
    /// Application bytes received per 100 ms (as the tcp receiver counts them).
    pub bins: Vec<u64>,
    /// The controller's state at the end of each time-series bin (the receiver-side
    /// estimator's named values first, as the simulator reports them).
    pub samples: Vec<CcSample>,
    /// Frames completed per time-series bin.
    pub frames_per_bin: Vec<u64>,
    /// The display stage (jitter buffer, decoder, display), whole run.
    pub display: DisplayStats,
    pub decode_errors: u64,
}

/// The sender thread's result: stats, frames dropped by the encoder, controller per bin.
type SenderOut = (MediaSenderStats, u64, Vec<CcSample>);
/// The receiver thread's result: frame stats, frame delays, bytes per bin, decode errors,
/// the receiver-side estimator per bin.
type ReceiverOut = (FrameStats, LogHistogram, Vec<u64>, u64, Vec<CcSample>, Vec<u64>, DisplayStats);

/// Fills `samples[done..=i]` (bins that ended by now) with `f()`; returns the new `done`.
fn sample_bins(samples: &mut [CcSample], done: usize, i: usize, f: impl Fn() -> CcSample) -> usize {
    if i <= done || done >= samples.len() {
        return done;
    }
    let c = f();
    let upto = i.min(samples.len());
    for s in &mut samples[done..upto] {
        *s = c.clone();
    }
    upto
}

pub struct MediaFlow {
    sender: JoinHandle<Result<SenderOut, EmuError>>,
    receiver: JoinHandle<Result<ReceiverOut, EmuError>>,
}

/// Sleeps on `epoll` until `deadline` (None: up to 50 ms) or input.
fn wait(
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

impl MediaFlow {
    pub fn spawn(
        spec: MediaSpecRt,
        mut sender: MediaSender,
        mut receiver: MediaReceiver,
        sender_ns: &str,
        receiver_ns: &str,
        stop: Arc<AtomicBool>,
    ) -> Result<Self, EmuError> {
        let rns = crate::netns::Topology::netns_path(receiver_ns);
        let stop_r = stop.clone();
        let (port, t0, end, flow, bin) = (spec.port, spec.t0, spec.end, spec.flow, spec.bin);
        let nb = ((end - Time::ZERO).as_nanos() / bin.as_nanos()) as usize + 1;
        let ssrc = SSRC_BASE + flow;
        let setup = move || -> Result<UdpSocket, EmuError> {
            let s = UdpSocket::bind((crate::netns::RECEIVER_ADDR, port))
                .map_err(|e| EmuError::Setup(format!("UDP port {port}: {e}")))?;
            s.set_nonblocking(true).map_err(|e| EmuError::Setup(e.to_string()))?;
            Ok(s)
        };
        let recv_thread = crate::netns::spawn_in_netns(
            format!("emu-media-recv-{port}"),
            rns,
            setup,
            move |sock: UdpSocket| -> Result<ReceiverOut, EmuError> {
                let _ = sys::set_timer_slack(1);
                let io = |e: std::io::Error| EmuError::Io(e.to_string());
                let epoll = sys::Epoll::new().map_err(io)?;
                let timer = sys::TimerFd::new().map_err(io)?;
                epoll.add(sock.as_raw_fd(), 0).map_err(io)?;
                epoll.add(timer.raw(), 1).map_err(io)?;
                let mut seqs = SeqUnwrapper::default();
                let mut buf = vec![0u8; 2048];
                let mut peer = None;
                let mut delay = LogHistogram::new();
                let mut bins = vec![0u64; nb];
                let mut frames = vec![0u64; nb];
                let mut est = vec![CcSample::default(); nb];
                let mut est_done = 0;
                let mut errors = 0u64;
                let mut ready = Vec::new();
                while !stop_r.load(Ordering::Relaxed) {
                    let now = now_at(t0);
                    if now >= end + TimeDelta::from_millis(500) {
                        break;
                    }
                    loop {
                        match sock.recv_from(&mut buf) {
                            Ok((n, from)) => {
                                peer = Some(from);
                                let now = now_at(t0);
                                match decode_data(&buf[..n], FlowId(flow), &mut seqs) {
                                    Ok(p) => {
                                        let i = ((now - Time::ZERO).as_nanos() / bin.as_nanos())
                                            as usize;
                                        if let Some(d) = receiver.handle_data(now, &p) {
                                            delay.record(d.as_nanos().max(0) as u64);
                                            if let Some(n) = frames.get_mut(i) {
                                                *n += 1;
                                            }
                                        }
                                        if let Some(b) = bins.get_mut(i) {
                                            *b += p.size as u64;
                                        }
                                    }
                                    Err(_) => errors += 1,
                                }
                            }
                            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                            Err(e) => return Err(EmuError::Io(format!("recv: {e}"))),
                        }
                    }
                    let now = now_at(t0);
                    let i = ((now - Time::ZERO).as_nanos() / bin.as_nanos()) as usize;
                    est_done = sample_bins(&mut est, est_done, i, || {
                        let mut c = CcSample::default();
                        sample_media_receiver(&receiver, &mut c);
                        c
                    });
                    if receiver.poll_timeout().is_some_and(|t| t <= now) {
                        receiver.handle_timeout(now);
                    }
                    while let Some(fb) = receiver.poll_feedback(now) {
                        if let (Some(to), Ok(bytes)) = (peer, encode_feedback(&fb, ssrc ^ 1, ssrc))
                        {
                            let _ = sock.send_to(&bytes, to);
                        }
                    }
                    wait(&epoll, &timer, t0, receiver.poll_timeout(), &mut ready)?;
                }
                let display = receiver.playout.stats.clone();
                Ok((receiver.frames.stats.clone(), delay, bins, errors, est, frames, display))
            },
        )?;

        let sns = crate::netns::Topology::netns_path(sender_ns);
        let (start, stop_at) = (spec.start, spec.stop);
        let send_thread = std::thread::Builder::new()
            .name(format!("emu-media-send-{port}"))
            .spawn(move || {
                let io = |e: std::io::Error| EmuError::Io(e.to_string());
                sys::enter_netns(&sns).map_err(|e| EmuError::Setup(e.to_string()))?;
                let sock = UdpSocket::bind((crate::netns::SENDER_ADDR, 0)).map_err(io)?;
                sock.connect((crate::netns::RECEIVER_ADDR, port)).map_err(io)?;
                sock.set_nonblocking(true).map_err(io)?;
                let _ = sys::set_timer_slack(1);
                let epoll = sys::Epoll::new().map_err(io)?;
                let timer = sys::TimerFd::new().map_err(io)?;
                epoll.add(sock.as_raw_fd(), 0).map_err(io)?;
                epoll.add(timer.raw(), 1).map_err(io)?;
                let mut ready = Vec::new();
                let mut buf = vec![0u8; 4096];
                let mut samples = vec![CcSample::default(); nb];
                let mut done = 0;
                // Until the flow starts.
                while !stop.load(Ordering::Relaxed) && now_at(t0) < start {
                    wait(&epoll, &timer, t0, Some(start), &mut ready)?;
                }
                sender.start(now_at(t0));
                let mut stopped = false;
                while !stop.load(Ordering::Relaxed) {
                    let now = now_at(t0);
                    if now >= end {
                        break;
                    }
                    if !stopped && now >= stop_at {
                        sender.stop();
                        stopped = true;
                    }
                    loop {
                        match sock.recv(&mut buf) {
                            Ok(n) => {
                                if let Ok(fbs) = decode_feedback(&buf[..n]) {
                                    let now = now_at(t0);
                                    for fb in fbs {
                                        sender.handle_feedback(now, &fb);
                                    }
                                }
                            }
                            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                            // An ICMP error (nothing listening yet) is not fatal.
                            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => break,
                            Err(e) => return Err(EmuError::Io(format!("recv: {e}"))),
                        }
                    }
                    let now = now_at(t0);
                    if sender.poll_timeout().is_some_and(|t| t <= now) {
                        sender.handle_timeout(now);
                    }
                    while let Some(p) = sender.poll_transmit(now) {
                        let bytes =
                            encode_data(&p, ssrc).map_err(|e| EmuError::Io(e.to_string()))?;
                        match sock.send(&bytes) {
                            Ok(_) => {}
                            Err(e)
                                if matches!(
                                    e.kind(),
                                    std::io::ErrorKind::WouldBlock
                                        | std::io::ErrorKind::ConnectionRefused
                                ) => {}
                            Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => {}
                            Err(e) => return Err(EmuError::Io(format!("send: {e}"))),
                        }
                    }
                    let i = ((now - Time::ZERO).as_nanos() / bin.as_nanos()) as usize;
                    done = sample_bins(&mut samples, done, i, || {
                        let mut c = CcSample::default();
                        sample_media_sender(&sender, &mut c);
                        c
                    });
                    let next = [sender.poll_timeout(), (!stopped).then_some(stop_at), Some(end)]
                        .into_iter()
                        .flatten()
                        .min();
                    wait(&epoll, &timer, t0, next, &mut ready)?;
                }
                let i = ((now_at(t0) - Time::ZERO).as_nanos() / bin.as_nanos()) as usize;
                sample_bins(&mut samples, done, i, || {
                    let mut c = CcSample::default();
                    sample_media_sender(&sender, &mut c);
                    c
                });
                Ok((sender.stats, sender.frames_dropped(), samples))
            })
            .map_err(|e| EmuError::Setup(format!("thread: {e}")))?;
        Ok(MediaFlow { sender: send_thread, receiver: recv_thread })
    }

    pub fn join(self) -> Result<MediaResult, EmuError> {
        let s = self.sender.join().map_err(|_| EmuError::Io("media sender panicked".into()))?;
        let r = self.receiver.join().map_err(|_| EmuError::Io("media receiver panicked".into()))?;
        let (sender, dropped, mut samples) = s?;
        let (frames, frame_delay, bins, decode_errors, est, frames_per_bin, display) = r?;
        // The receiver's estimator first, as the simulator samples a media flow.
        for (s, mut e) in samples.iter_mut().zip(est) {
            e.named.append(&mut s.named);
            s.named = e.named;
        }
        Ok(MediaResult {
            sender,
            frames_dropped_by_sender: dropped,
            frames,
            frame_delay,
            bins,
            samples,
            frames_per_bin,
            display,
            decode_errors,
        })
    }
}
