//! Video over TCP: the application side of a live video stream written into a TCP socket (the
//! TCP experiments of Zhuge, Meng et al., SIGCOMM 2022, dissertation §4.7, Fig 4.11/4.14).
//!
//! Lineage: the released simulator's `PacketSenderTcp` (transys-project/zhuge,
//! `ns-3.34-diff/src/bitrate-ctrl/model/packet-sender-tcp.{h,cc}`) with its `GameServer`
//! (min 100 kbit/s, max 100 Mbit/s) over ns-3's `TcpSocketBase`, with the send buffer its
//! `scratch/fec-emulate.cc` sets (`SndBufSize` 5 MiB).
//!
//! - An encoder makes a frame every 1/fps of `bitrate / fps` bytes and queues it at the
//!   application. At each frame the application writes queued frames, whole and in order, into
//!   the socket while the socket's buffer (everything written and not cumulatively acknowledged)
//!   has room for the next one; a frame that does not fit waits for the next frame's write
//!   (the released code retries only when a new frame is made). One deviation: a frame larger
//!   than the whole buffer is written once the buffer is empty (ns-3 would refuse it forever).
//! - Every `interval` (40 ms) the encoder's bitrate is updated from the socket: `pending` = bytes
//!   written but never sent, `written` = bytes written in the window, `sent` = written − Δpending,
//!   the sending rate `sent · 8 / interval`, the duty ratio = the share of the window with
//!   pending bytes. If `pending > 0`: `bitrate = 0.75 · min(bitrate, max(0.1, 1 − pending/sent) ·
//!   rate)`; else `bitrate −= 0.5 · (duty − 0.75) · bitrate`; then clamped to [min, max]. The first
//!   update sets the minimum. The released code samples the duty state every 1 ms; here it is the
//!   exact share of time (the 1 ms samples' limit).
//! - Frames are whole packets (a frame of B bytes is ⌈B / packet size⌉ packets, sizes on the
//!   wire): the sender numbers packets, not bytes. The last packet of each frame carries the
//!   frame's capture time, so the receiver can time the frame once TCP delivers it in order
//!   (a frame is decodable when all its bytes and all earlier frames have arrived).

use rtclab_core::{Rate, Time, TimeDelta};
use std::collections::VecDeque;

/// The released code's constants (`packet-sender-tcp.h`).
const TARGET_DUTY: f64 = 0.75;
const DAMPING: f64 = 0.5;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpVideoConfig {
    pub fps: f64,
    pub min_bitrate: Rate,
    pub max_bitrate: Rate,
    /// The socket's send buffer (ns-3 `SndBufSize`).
    pub send_buffer_bytes: u64,
    /// How often the bitrate is updated (the released code: 40 ms).
    pub interval: TimeDelta,
}

impl Default for TcpVideoConfig {
    fn default() -> Self {
        TcpVideoConfig {
            fps: 25.0,
            min_bitrate: Rate::from_kbps(100),
            max_bitrate: Rate::from_mbps(100),
            send_buffer_bytes: 5 << 20,
            interval: TimeDelta::from_millis(40),
        }
    }
}

/// A frame written into the socket: packets [start, end), captured at `capture`, written at
/// `written`.
#[derive(Clone, Copy, Debug)]
struct Written {
    start: u64,
    end: u64,
    capture: Time,
    written: Time,
}

#[derive(Debug)]
pub struct TcpVideoApp {
    cfg: TcpVideoConfig,
    packet_size: u64,
    bitrate: f64,
    started: Option<Time>,
    next_update: Time,
    first_update: bool,
    /// Frames made and not yet written: (capture time, packets).
    queue: VecDeque<(Time, u64)>,
    /// Packets written into the socket so far (the stream's end).
    written: u64,
    /// Frames written and not yet cumulatively acknowledged.
    frames: VecDeque<Written>,
    /// Packets written since the last update, and `pending` (packets) at the last update.
    written_in_window: u64,
    last_pending: u64,
    /// Duty state: whether bytes are pending now, since when, and the pending time this window.
    busy: bool,
    busy_since: Time,
    busy_in_window: TimeDelta,
    last_update: Time,
    /// Frames made, and frames that waited at the application because the socket was full.
    pub frames_encoded: u64,
    pub frames_blocked: u64,
}

impl TcpVideoApp {
    pub fn new(cfg: TcpVideoConfig, packet_size: u32) -> Self {
        TcpVideoApp {
            cfg,
            packet_size: packet_size.max(1) as u64,
            bitrate: cfg.min_bitrate.as_bps() as f64,
            started: None,
            next_update: Time::ZERO,
            first_update: true,
            queue: VecDeque::new(),
            written: 0,
            frames: VecDeque::new(),
            written_in_window: 0,
            last_pending: 0,
            busy: false,
            busy_since: Time::ZERO,
            busy_in_window: TimeDelta::ZERO,
            last_update: Time::ZERO,
            frames_encoded: 0,
            frames_blocked: 0,
        }
    }

    /// The stream begins: the first frame now, the first bitrate update one interval later.
    pub fn start(&mut self, now: Time) {
        self.started = Some(now);
        self.next_update = now + self.cfg.interval;
        self.last_update = now;
    }

    /// The stream ends: no more frames (what was written is still delivered).
    pub fn stop(&mut self) {
        self.started = None;
    }

    /// The encoder's current bitrate.
    pub fn bitrate(&self) -> Rate {
        Rate::from_bps(self.bitrate.round() as u64)
    }

    /// Packets written into the socket (new data exists below this).
    pub fn written(&self) -> u64 {
        self.written
    }

    fn next_frame_at(&self) -> Option<Time> {
        let t0 = self.started?;
        Some(t0 + TimeDelta::from_secs_f64(self.frames_encoded as f64 / self.cfg.fps))
    }

    /// When the application next needs to run.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.started?;
        rtclab_core::earliest([self.next_frame_at(), Some(self.next_update)])
    }

    /// Tracks whether the socket holds unsent bytes (`unsent` packets): the duty state.
    pub fn track(&mut self, now: Time, unsent: u64) {
        let busy = unsent > 0;
        if busy != self.busy {
            if self.busy {
                self.busy_in_window += now - self.busy_since.max(self.last_update);
            } else {
                self.busy_since = now;
            }
            self.busy = busy;
        }
    }

    /// Runs what is due at `now`: bitrate updates, new frames and writes. `snd_una` frees the
    /// socket's buffer; `high_sent` is the first packet never sent (pending = written − it).
    pub fn on_timer(&mut self, now: Time, snd_una: u64, high_sent: u64) {
        if self.started.is_none() {
            return;
        }
        self.release(snd_una);
        while self.next_update <= now {
            let at = self.next_update;
            self.update(at, high_sent);
            self.next_update = at + self.cfg.interval;
        }
        let mut made = false;
        while let Some(capture) = self.next_frame_at().filter(|&t| t <= now) {
            let bytes = self.bitrate / 8.0 / self.cfg.fps;
            let pkts = ((bytes / self.packet_size as f64).ceil() as u64).max(1);
            self.queue.push_back((capture, pkts));
            self.frames_encoded += 1;
            made = true;
        }
        if made {
            self.write(now, snd_una, high_sent);
        }
    }

    /// Writes queued frames while the next one fits in the send buffer.
    fn write(&mut self, now: Time, snd_una: u64, high_sent: u64) {
        let cap = (self.cfg.send_buffer_bytes / self.packet_size).max(1);
        while let Some(&(capture, pkts)) = self.queue.front() {
            let used = self.written - snd_una.min(self.written);
            // A frame larger than the whole buffer is written once the buffer is empty.
            if used + pkts > cap && used > 0 {
                self.frames_blocked += 1;
                break;
            }
            self.queue.pop_front();
            let start = self.written;
            self.written += pkts;
            self.written_in_window += pkts;
            self.frames.push_back(Written { start, end: self.written, capture, written: now });
        }
        self.track(now, self.written.saturating_sub(high_sent));
    }

    /// The duty/pending-buffer rule (module doc).
    fn update(&mut self, now: Time, high_sent: u64) {
        let pending = self.written.saturating_sub(high_sent);
        if self.busy {
            self.busy_in_window += now - self.busy_since.max(self.last_update);
        }
        let window = self.cfg.interval.as_secs_f64();
        let duty = (self.busy_in_window.as_secs_f64() / window).clamp(0.0, 1.0);
        self.busy_in_window = TimeDelta::ZERO;
        self.last_update = now;
        if self.first_update {
            self.first_update = false;
            self.bitrate = self.cfg.min_bitrate.as_bps() as f64;
        } else {
            let sent = self.written_in_window as f64 - (pending as f64 - self.last_pending as f64);
            let sent_bytes = sent * self.packet_size as f64;
            let rate = (sent_bytes * 8.0 / window).max(0.0);
            if pending > 0 {
                let pending_bytes = (pending * self.packet_size) as f64;
                let share = if sent_bytes > 0.0 {
                    (1.0 - pending_bytes / sent_bytes).max(0.1)
                } else {
                    0.1
                };
                self.bitrate = TARGET_DUTY * self.bitrate.min(share * rate);
            } else {
                self.bitrate -= DAMPING * (duty - TARGET_DUTY) * self.bitrate;
            }
        }
        self.bitrate = self
            .bitrate
            .clamp(self.cfg.min_bitrate.as_bps() as f64, self.cfg.max_bitrate.as_bps() as f64);
        self.last_pending = pending;
        self.written_in_window = 0;
    }

    /// Frames wholly acknowledged leave the buffer's bookkeeping.
    fn release(&mut self, snd_una: u64) {
        while self.frames.front().is_some_and(|f| f.end <= snd_una) {
            self.frames.pop_front();
        }
    }

    /// If packet `seq` ends a frame: the frame's capture time.
    pub fn frame_end(&self, seq: u64) -> Option<Time> {
        let i = self.frames.partition_point(|f| f.end <= seq);
        self.frames.get(i).filter(|f| f.end == seq + 1).map(|f| f.capture)
    }

    /// When packet `seq` was written into the socket.
    pub fn written_at(&self, seq: u64) -> Option<Time> {
        let i = self.frames.partition_point(|f| f.end <= seq);
        self.frames.get(i).filter(|f| f.start <= seq).map(|f| f.written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: i64) -> Time {
        Time::ZERO + TimeDelta::from_millis(x)
    }

    fn app() -> TcpVideoApp {
        let cfg = TcpVideoConfig { min_bitrate: Rate::from_kbps(1200), ..Default::default() };
        let mut a = TcpVideoApp::new(cfg, 1500);
        a.start(ms(0));
        a
    }

    #[test]
    fn frames_are_made_every_40_ms_and_marked_at_their_last_packet() {
        let mut a = app();
        a.on_timer(ms(0), 0, 0);
        // 1.2 Mbit/s / 25 fps = 6000 bytes = 4 packets.
        assert_eq!(a.written(), 4);
        assert_eq!(a.poll_timeout(), Some(ms(40)));
        a.on_timer(ms(40), 0, 4);
        assert_eq!(a.written(), 8);
        assert_eq!(a.frame_end(3), Some(ms(0)));
        assert_eq!(a.frame_end(2), None);
        assert_eq!(a.frame_end(7), Some(ms(40)));
        assert_eq!(a.written_at(5), Some(ms(40)));
        a.stop();
        assert_eq!(a.poll_timeout(), None);
        a.on_timer(ms(80), 0, 8);
        assert_eq!((a.written(), a.frames_encoded), (8, 2), "no frame after the stop");
    }

    #[test]
    fn an_idle_socket_raises_the_bitrate_by_the_damping_rule() {
        let mut a = app();
        a.on_timer(ms(0), 0, 0);
        a.track(ms(0), 0); // everything sent at once: never pending
        a.on_timer(ms(40), 4, 4); // first update: the minimum
        a.track(ms(40), 0);
        assert_eq!(a.bitrate(), Rate::from_kbps(1200));
        a.on_timer(ms(80), 8, 8);
        // duty 0: bitrate += 0.5 · 0.75 · bitrate.
        assert_eq!(a.bitrate(), Rate::from_bps(1_650_000));
    }

    #[test]
    fn a_mostly_idle_socket_raises_then_pending_bytes_cut_below_the_sending_rate() {
        let cfg = TcpVideoConfig { min_bitrate: Rate::from_kbps(100), ..Default::default() };
        let mut a = TcpVideoApp::new(cfg, 1500);
        a.start(ms(0));
        a.on_timer(ms(0), 0, 0); // 500 bytes: one packet
        a.on_timer(ms(40), 0, 1); // first update (the minimum); frame 1 pending from 40 ms
        a.bitrate = 2_400_000.0;
        a.track(ms(41), 0); // sent at 41 ms: pending 1 ms of the window, duty 0.025
        a.on_timer(ms(80), 0, 2);
        // 2.4 M − 0.5 · (0.025 − 0.75) · 2.4 M = 3.27 M; frame 2 = 16,350 bytes = 11 packets.
        assert_eq!(a.bitrate(), Rate::from_bps(3_270_000));
        assert_eq!(a.written(), 13);
        // By 120 ms 9 of them were sent, 2 still pending: sending rate 13,500 bytes / 40 ms =
        // 2.7 Mbit/s, share 1 − 3000 / 13,500 → 0.75 · min(3.27 M, 0.778 · 2.7 M) = 1.575 M.
        a.on_timer(ms(120), 0, 11);
        assert_eq!(a.bitrate(), Rate::from_bps(1_575_000));
    }

    #[test]
    fn a_full_send_buffer_holds_frames_at_the_application() {
        let cfg = TcpVideoConfig {
            min_bitrate: Rate::from_mbps(12), // 60,000 bytes = 40 packets a frame
            send_buffer_bytes: 100 * 1500,
            ..Default::default()
        };
        let mut a = TcpVideoApp::new(cfg, 1500);
        a.start(ms(0));
        a.on_timer(ms(0), 0, 0);
        a.on_timer(ms(40), 0, 0);
        assert_eq!(a.written(), 80);
        a.on_timer(ms(80), 0, 0);
        assert_eq!(a.written(), 80, "120 packets do not fit in 100");
        assert_eq!(a.frames_blocked, 1);
        a.on_timer(ms(120), 40, 80);
        assert_eq!(a.written(), 120, "the waiting frame goes first; the new one waits");
        assert_eq!(a.frames_blocked, 2);
    }
}
