//! SCReAM v2, Self-Clocked Rate Adaptation for Multimedia: a window-based media controller
//! with an L4S mode, driven by RFC 8888 feedback.
//!
//! Lineage: I. Johansson, Z. Sarker, *Self-Clocked Rate Adaptation for Multimedia*, RFC 8298
//! (2017), and its successor draft-johansson-ccwg-rfc8298bis-screamv2 (SCReAM v2); the reference
//! implementation EricssonResearch/scream (BSD-2-Clause), `code/ScreamV2Tx.cpp` and
//! `code/ScreamV2TxStream.cpp`, which this follows function by function for one stream:
//! `incomingStandardizedFeedback` → `markAcked`, `detectLoss`, the per-feedback block (CE
//! event, L4S α, queue-delay averages, virtual CE), `updateCwnd`, `Stream::updateTargetBitrate`,
//! `isOkToTransmit`/`addTransmitted` (the window gate), `Stream::newMediaFrame`.
//!
//! ```text
//! per received packet:  owd = arrival − send;  qdelay = owd − min owd (10 s × 50 history)
//!                       CE → bytes/packets marked this RTT;  srtt ← 7/8 (on the last packet)
//! per feedback:         packets up to the highest received leave the window (SACK-like);
//!                       unacked ones sent > 30 ms before the newest acked one are lost
//!                       (a loss event only when the loss rate > 1 % or qdelay_avg > target/4)
//!     L4S:              every min(10 ms, srtt): F = marked/delivered packets;
//!                       α ← F > α ? α + (F − α)/8 : α·(1 − 1/128)
//!     virtual CE:       qdelay_avg > target/2 → α_v = (qdelay_avg − target/2)/(target/2)
//!     every min(30 ms, srtt), or on an event, or a new frame: updateCwnd:
//!         loss:  cwnd ← max(cwnd_min, 0.7·cwnd)
//!         CE:    L4S  cwnd ← (1 − α/2 · scalings)·cwnd;   classic  cwnd ← 0.8·cwnd
//!         virtual CE: cwnd ← (1 − α_v/2 · scalings)·cwnd
//!         growth: cwnd += (acked − CE bytes)·mss/cwnd · sclI · min(1, srtt/25 ms)
//!                 · latency-diff scale · (1 + 0.05·cwnd/mss · post-congestion scale · sclI),
//!                 not beyond mss + 2 × max bytes in flight
//!         target = 8·cwnd/(srtt + 1 ms) · (1 − small-window scale)/1.1 · mss/(mss + 20)
//!         pacing = 1.5 · adaptive scale · max(target, RTP rate), relaxed near the max rate
//! send gate:            bytes in flight + next packet ≤ cwnd · window headroom + mss
//! ```
//!
//! Defaults are the reference sender application's (`scream_sender.cpp`): 60 ms queue-delay
//! target, loss and classic-ECN β 0.7, window headroom 5 (adaptive down to 1.5), pacing headroom
//! 1.5, bytes-in-flight headroom 2, multiplicative increase 0.05, initial window 100 ms at the
//! start rate, minimum window two 1212-byte packets, relaxed pacing off, hysteresis 0.
//! `scream_simulator.cpp` uses classic-ECN β 0.8, window headroom 3, relaxed pacing on and a
//! 2000-byte minimum window: the `[flows.params]` below set each.
//!
//! L4S mode is on when the media flow sends ECT(1) (`media.ecn = "ect1"`), as the reference
//! application's `-ect 1` sets both.
//!
//! Differences from the reference, by construction of rtclab's media sender: one stream (no
//! priorities, credits or rate sharing between streams); the sender's pacer queue is the RTP
//! queue, and SCReAM does not clear it (the reference discards the RTP queue above
//! `maxRtpQueueDelay`, and for two RTTs after 490 s without a sub-millisecond queue delay);
//! packet sizes come from rtclab's packetizer, not SCReAM's recommended MSS list; no clock
//! drift compensation or shared-bottleneck detection (both off in the reference's defaults);
//! loss detection uses send times alone (the reference adds the RTP timestamp distance to the
//! newest acknowledged frame, which delays declaring a loss by up to a frame interval).

use crate::factory::{BoxedController, ControllerArgs, Factory};
use crate::{named, CcMetrics, CcTarget, CongestionController, CongestionEvent, FeedbackReport};
use crate::{PacketResult, SentPacket};
use rtclab_core::params::{param, Param};
use rtclab_core::{Ecn, Rate, Time, TimeDelta};
use std::collections::VecDeque;

/// Rate statistics update (`kRateUpdateInterval_ntp`, 100 ms).
const RATE_UPDATE: f64 = 0.1;
/// `kSlowUpdateInterval_ntp` (50 ms).
const SLOW_UPDATE: f64 = 0.05;
/// Minimum interval between congestion back-offs (`kMinCongestionBackOffInterval_ntp`, 30 ms).
const MIN_BACKOFF_INTERVAL: f64 = 1966.0 / 65536.0;
/// L4S α gains and ceiling.
const L4S_G_UP: f64 = 1.0 / 8.0;
const L4S_G_DOWN: f64 = 1.0 / 128.0;
const L4S_ALPHA_MAX: f64 = 1.0;
/// Minimum window in MSS after an MSS reset (`kMinCwndMss`).
const MIN_CWND_MSS: f64 = 3.0;
/// Virtual SRTT (`kSrttVirtual`, 25 ms).
const SRTT_VIRTUAL: f64 = 0.025;
const QUEUE_DELAY_AVG_ALPHA: f64 = 1.0 / 4.0;
const QUEUE_DELAY_MIN_SLOW_AVG_ALPHA: f64 = 1.0 / 8.0;
const QUEUE_DELAY_MIN_SLOW_AVG_UPDATE_RTTS: f64 = 100.0;
/// RTP + UDP header bytes (`kPacketOverhead`).
const PACKET_OVERHEAD: f64 = 20.0;
const POST_CONGESTION_DELAY_RTTS: f64 = 200.0;
const RELAXED_PACING_LIMIT_LOW: f64 = 0.8;
const RELAXED_PACING_LIMIT_HIGH: f64 = 1.0;
const MAX_RELAXED_PACING_FACTOR: f64 = 5.0;
const MIN_WINDOW_HEADROOM: f64 = 1.5;
const LATENCY_DIFF_ALPHA: f64 = 1.0 / 32.0;
const QUEUE_DELAY_MIN_MAX_ALPHA: f64 = 1.0 / 16.0;
const LATENCY_DIFF_THRESHOLD: f64 = 0.01;
const LOSS_RATE_THRESHOLD: f64 = 0.01;
const TOTAL_ACKED_BITRATE_FRACTION: f64 = 0.8;
/// `kGainUp`.
const GAIN_UP: f64 = 1.0;
/// Base one-way delay history: a minimum every 10 s, 50 kept.
const BASE_DELAY_UPDATE: f64 = 10.0;
const BASE_OWD_HIST: usize = 50;
const MAX_BYTES_IN_FLIGHT_HIST: usize = 20;
/// Rate limiting when the base delay may be stale (`kBaseDelayResetInterval_ntp`, 60 s;
/// `kNumRateLimitRtts`, 5).
const BASE_DELAY_RESET_INTERVAL: f64 = 60.0;
const NUM_RATE_LIMIT_RTTS: f64 = 5.0;
/// The initial MSS, small so that audio alone works (`kInitMss`), and its reset period.
const INIT_MSS: f64 = 100.0;
const MSS_UPDATE: f64 = 1.0;
/// Frame statistics (`ScreamV2TxStream.cpp`).
const RATE_ADJUST_GAIN1: f64 = 0.2;
const RATE_ADJUST_GAIN2: f64 = 1.0 / 8.0;
const RATE_UPDATE_HIST: usize = 4;
/// A packet acknowledged after one sent this long after it is lost (`kReorderTime`, 30 ms).
const REORDER_TIME: f64 = 0.03;
/// The deadlock guard: nothing sent for 0.5 s empties the window.
const DEADLOCK: f64 = 0.5;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScreamConfig {
    /// Window reduction on loss (`lossBeta`).
    pub loss_beta: f64,
    /// Window reduction on a classic ECN mark (`ecnCeBeta`).
    pub ecn_ce_beta: f64,
    /// Queue delay target, s (`queueDelayTargetMin`).
    pub queue_delay_target: f64,
    /// Initial window, bytes; 0 = 100 ms at the start rate (`scream_sender`'s).
    pub initial_cwnd: f64,
    /// Pacing rate over the target (`packetPacingHeadroom`).
    pub packet_pacing_headroom: f64,
    /// Largest frame-size pacing scale (`maxAdaptivePacingRateScale`).
    pub max_adaptive_pacing_rate_scale: f64,
    /// Window growth allowed over the largest bytes in flight (`bytesInFlightHeadRoom`).
    pub bytes_in_flight_headroom: f64,
    /// Multiplicative increase factor (`multiplicativeIncreaseScalefactor`).
    pub multiplicative_increase: f64,
    /// Window headroom of the send gate (`maxWindowHeadroom`); adaptive down to 1.5.
    pub max_window_headroom: f64,
    /// Adaptive window headroom (`isEnableAdaptiveWindowHeadroom`).
    pub adaptive_window_headroom: bool,
    /// Minimum window, bytes (`setCwndMinLow`).
    pub cwnd_min_low: f64,
    /// Relax pacing near the maximum rate (`enableRelaxedPacing`).
    pub relaxed_pacing: bool,
    /// Target-rate hysteresis: a rise below this fraction (or a fall below a quarter of it)
    /// is not passed to the encoder (`hysteresis`).
    pub hysteresis: f64,
    /// Stream rates, bit/s (the media flow's min/start/max bitrate).
    pub min_bps: f64,
    pub start_bps: f64,
    pub max_bps: f64,
    /// L4S mode (the flow sends ECT(1)).
    pub l4s: bool,
}

impl Default for ScreamConfig {
    fn default() -> Self {
        ScreamConfig {
            loss_beta: 0.7,
            ecn_ce_beta: 0.7,
            queue_delay_target: 0.06,
            initial_cwnd: 0.0,
            packet_pacing_headroom: 1.5,
            max_adaptive_pacing_rate_scale: 1.5,
            bytes_in_flight_headroom: 2.0,
            multiplicative_increase: 0.05,
            max_window_headroom: 5.0,
            adaptive_window_headroom: true,
            cwnd_min_low: 2.0 * (1200.0 + 12.0),
            relaxed_pacing: false,
            hysteresis: 0.0,
            min_bps: 30_000.0,
            start_bps: 300_000.0,
            max_bps: 2_000_000.0,
            l4s: false,
        }
    }
}

/// Settings a flow's `[flows.params]` may give (the stream's rates and L4S mode come from the
/// flow's `media` table).
pub static SCREAM_PARAMS: &[Param<ScreamConfig>] = &[
    param!(
        ScreamConfig,
        "loss_beta",
        "window factor on a loss event (0.7)",
        Real,
        0.1,
        1.0,
        |c| c.loss_beta,
        |c, v| c.loss_beta = v
    ),
    param!(
        ScreamConfig,
        "ecn_ce_beta",
        "window factor on a classic ECN mark (0.7; the reference simulator 0.8)",
        Real,
        0.1,
        1.0,
        |c| c.ecn_ce_beta,
        |c, v| c.ecn_ce_beta = v
    ),
    param!(
        ScreamConfig,
        "queue_delay_target_ms",
        "queue delay target, ms (60)",
        Real,
        1.0,
        300.0,
        |c| c.queue_delay_target * 1e3,
        |c, v| c.queue_delay_target = v / 1e3
    ),
    param!(
        ScreamConfig,
        "initial_cwnd_bytes",
        "initial window, bytes (0: 100 ms at the start rate)",
        Real,
        0.0,
        1e8,
        |c| c.initial_cwnd,
        |c, v| c.initial_cwnd = v
    ),
    param!(
        ScreamConfig,
        "packet_pacing_headroom",
        "pacing rate over the target (1.5)",
        Real,
        1.0,
        10.0,
        |c| c.packet_pacing_headroom,
        |c, v| c.packet_pacing_headroom = v
    ),
    param!(
        ScreamConfig,
        "max_adaptive_pacing_rate_scale",
        "largest frame-size pacing scale (1.5)",
        Real,
        1.0,
        10.0,
        |c| c.max_adaptive_pacing_rate_scale,
        |c, v| c.max_adaptive_pacing_rate_scale = v
    ),
    param!(
        ScreamConfig,
        "bytes_in_flight_headroom",
        "window growth over the largest bytes in flight (2)",
        Real,
        1.0,
        10.0,
        |c| c.bytes_in_flight_headroom,
        |c, v| c.bytes_in_flight_headroom = v
    ),
    param!(
        ScreamConfig,
        "multiplicative_increase",
        "multiplicative increase factor (0.05)",
        Real,
        0.0,
        1.0,
        |c| c.multiplicative_increase,
        |c, v| c.multiplicative_increase = v
    ),
    param!(
        ScreamConfig,
        "max_window_headroom",
        "send gate: window × this (5; the reference simulator 3)",
        Real,
        1.0,
        20.0,
        |c| c.max_window_headroom,
        |c, v| c.max_window_headroom = v
    ),
    param!(ScreamConfig, "adaptive_window_headroom", "lower the headroom towards 1.5 while the queue delay varies (true)", flag adaptive_window_headroom),
    param!(
        ScreamConfig,
        "cwnd_min_bytes",
        "minimum window, bytes (2424; the reference simulator 2000)",
        Real,
        100.0,
        1e7,
        |c| c.cwnd_min_low,
        |c, v| c.cwnd_min_low = v
    ),
    param!(ScreamConfig, "relaxed_pacing", "pace up to 5× faster near the maximum rate (false; the reference simulator true)", flag relaxed_pacing),
    param!(
        ScreamConfig,
        "hysteresis",
        "target changes smaller than this fraction are not passed on (0)",
        Real,
        0.0,
        1.0,
        |c| c.hysteresis,
        |c, v| c.hysteresis = v
    ),
];

/// One sent packet (`Transmitted`).
#[derive(Clone, Copy, Debug)]
struct Tx {
    seq: u64,
    time: f64,
    size: f64,
    acked: bool,
    after_edge: bool,
    used: bool,
}

#[derive(Clone, Debug)]
pub struct Scream {
    cfg: ScreamConfig,
    init: Option<f64>,
    tx: VecDeque<Tx>,
    // Window and in flight.
    cwnd: f64,
    cwnd_min: f64,
    cwnd_i: f64,
    cwnd_i_update_blocked: bool,
    cwnd_ratio: f64,
    mss: f64,
    prev_mss: f64,
    bytes_in_flight: f64,
    max_bytes_in_flight: f64,
    max_bytes_in_flight_prev: f64,
    max_bytes_in_flight_hist: [f64; MAX_BYTES_IN_FLIGHT_HIST],
    max_bytes_in_flight_hist_ix: usize,
    window_headroom: f64,
    bytes_newly_acked: f64,
    bytes_newly_acked_ce: f64,
    app_limited: bool,
    // RTT and one-way delay.
    srtt: f64,
    srtt_sh: f64,
    srtt_sh_prev: f64,
    base_owd: f64,
    base_owd_hist: [f64; BASE_OWD_HIST],
    base_owd_hist_ptr: usize,
    base_owd_hist_min: f64,
    queue_delay: f64,
    queue_delay_avg: f64,
    queue_delay_min: f64,
    queue_delay_min_avg: f64,
    queue_delay_max_avg: f64,
    queue_delay_min_slow_avg: f64,
    latency_diff_avg: f64,
    latency_diff_cwnd_scale: f64,
    // Congestion signals.
    loss_event: bool,
    loss_rate: f64,
    ecn_ce_event: bool,
    virtual_ce_event: bool,
    ce_this_feedback: bool,
    fraction_marked: f64,
    l4s_alpha: f64,
    virtual_l4s_alpha: f64,
    post_congestion_scale: f64,
    packets_marked_this_rtt: u64,
    packets_delivered_this_rtt: u64,
    bytes_delivered_this_rtt: f64,
    // Pacing.
    pacing_bps: f64,
    // Timers (s; `_ntp` in the reference).
    last_congestion_detected: f64,
    last_mss_update: f64,
    last_srtt_update: f64,
    last_base_owd_add: f64,
    last_slow_update: f64,
    last_loss_event: f64,
    last_transmit: f64,
    last_rate_update: f64,
    last_cwnd_update: Option<f64>,
    last_queue_delay_avg_update: f64,
    last_queue_delay_min_slow_avg_update: f64,
    last_l4s_alpha_update: f64,
    last_rate_limit: f64,
    can_reset_base_delay: bool,
    new_frame: bool,
    // The stream.
    stream: StreamState,
    /// The newest acknowledged packet's send time and the highest acknowledged sequence.
    time_tx_ack: f64,
    hi_seq_ack: Option<u64>,
    /// The send gate said no and nothing has been sent since.
    gated: bool,
    stats: ScreamStats,
}

/// Counters for the series and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ScreamStats {
    pub loss_events: u64,
    pub ce_events: u64,
    pub virtual_ce_events: u64,
    pub lost_packets: u64,
    pub ce_packets: u64,
}

/// `ScreamV2Tx::Stream`, one of it.
#[derive(Clone, Debug)]
struct StreamState {
    target_bps: f64,
    target_bps_h: f64,
    rate_share: f64,
    rate_adjust_factor: f64,
    adaptive_pacing_rate_scale: f64,
    frame_period: f64,
    last_frame: Option<f64>,
    bytes_acked: f64,
    bytes_rtp: f64,
    rate_acked: f64,
    rate_rtp_hist: [f64; RATE_UPDATE_HIST],
    rate_rtp_hist_ptr: usize,
    rate_rtp_avg: f64,
    rate_limited: bool,
}

fn secs(t: Time) -> f64 {
    t.as_secs_f64()
}

impl Scream {
    pub fn new(cfg: ScreamConfig) -> Self {
        let target = cfg.start_bps.clamp(cfg.min_bps, cfg.max_bps);
        let cwnd = if cfg.initial_cwnd > 0.0 { cfg.initial_cwnd } else { target * 0.1 / 8.0 };
        Scream {
            cfg,
            init: None,
            tx: VecDeque::new(),
            cwnd,
            cwnd_min: INIT_MSS * 2.0,
            cwnd_i: 1.0,
            cwnd_i_update_blocked: false,
            cwnd_ratio: 0.001,
            mss: INIT_MSS,
            prev_mss: INIT_MSS,
            bytes_in_flight: 0.0,
            max_bytes_in_flight: 0.0,
            max_bytes_in_flight_prev: 0.0,
            max_bytes_in_flight_hist: [0.0; MAX_BYTES_IN_FLIGHT_HIST],
            max_bytes_in_flight_hist_ix: 0,
            window_headroom: cfg.max_window_headroom,
            bytes_newly_acked: 0.0,
            bytes_newly_acked_ce: 0.0,
            app_limited: false,
            srtt: 0.05,
            srtt_sh: 0.05,
            srtt_sh_prev: 0.05,
            base_owd: f64::INFINITY,
            base_owd_hist: [f64::INFINITY; BASE_OWD_HIST],
            base_owd_hist_ptr: 0,
            base_owd_hist_min: f64::INFINITY,
            queue_delay: 0.0,
            queue_delay_avg: 0.0,
            queue_delay_min: 1000.0,
            queue_delay_min_avg: 1000.0,
            queue_delay_max_avg: 0.0,
            queue_delay_min_slow_avg: 0.0,
            latency_diff_avg: 0.0,
            latency_diff_cwnd_scale: 1.0,
            loss_event: false,
            loss_rate: 0.0,
            ecn_ce_event: false,
            virtual_ce_event: false,
            ce_this_feedback: false,
            fraction_marked: 0.0,
            l4s_alpha: 0.1,
            virtual_l4s_alpha: 0.0,
            post_congestion_scale: 1.0,
            packets_marked_this_rtt: 0,
            packets_delivered_this_rtt: 0,
            bytes_delivered_this_rtt: 0.0,
            pacing_bps: 0.0,
            last_congestion_detected: 0.0,
            last_mss_update: 0.0,
            last_srtt_update: 0.0,
            last_base_owd_add: 0.0,
            last_slow_update: 0.0,
            last_loss_event: 0.0,
            last_transmit: 0.0,
            last_rate_update: 0.0,
            last_cwnd_update: None,
            last_queue_delay_avg_update: 0.0,
            last_queue_delay_min_slow_avg_update: 0.0,
            last_l4s_alpha_update: 0.0,
            last_rate_limit: 0.0,
            can_reset_base_delay: false,
            new_frame: false,
            stream: StreamState {
                target_bps: target,
                target_bps_h: target,
                rate_share: cfg.min_bps,
                rate_adjust_factor: 0.0,
                adaptive_pacing_rate_scale: 1.0,
                frame_period: 0.02,
                last_frame: None,
                bytes_acked: 0.0,
                bytes_rtp: 0.0,
                rate_acked: 0.0,
                rate_rtp_hist: [0.0; RATE_UPDATE_HIST],
                rate_rtp_hist_ptr: 0,
                rate_rtp_avg: 0.0,
                rate_limited: false,
            },
            time_tx_ack: 0.0,
            hi_seq_ack: None,
            gated: false,
            stats: ScreamStats::default(),
        }
    }

    /// Built from a flow's `[flows.params]` and `media` table.
    pub fn from_args(a: &ControllerArgs) -> Result<Self, String> {
        let mut cfg = ScreamConfig::default();
        if let Some(m) = a.media {
            cfg.min_bps = m.min_bps;
            cfg.start_bps = m.start_bps;
            cfg.max_bps = m.max_bps;
            cfg.l4s = m.ecn == Ecn::Ect1;
        }
        rtclab_core::params::apply(SCREAM_PARAMS, &mut cfg, a.params)?;
        Ok(Scream::new(cfg))
    }

    /// The registry factory (its line in `capabilities::BUILTIN`).
    pub fn factory() -> Factory {
        std::sync::Arc::new(|a: &ControllerArgs| {
            Scream::from_args(a).map(|s| Box::new(s) as BoxedController)
        })
    }

    pub fn cwnd_bytes(&self) -> f64 {
        self.cwnd
    }
    pub fn l4s_alpha(&self) -> f64 {
        self.l4s_alpha
    }
    pub fn queue_delay(&self) -> f64 {
        self.queue_delay
    }
    pub fn stats(&self) -> ScreamStats {
        self.stats
    }

    /// `initialize`: every timer starts at the first call.
    fn ensure_init(&mut self, t: f64) {
        if self.init.is_some() {
            return;
        }
        self.init = Some(t);
        self.last_srtt_update = t;
        self.last_base_owd_add = t;
        self.last_slow_update = t;
        self.last_loss_event = t;
        self.last_transmit = t;
        self.last_rate_update = t;
        self.last_l4s_alpha_update = t;
        self.last_mss_update = t;
        self.last_queue_delay_avg_update = t;
        self.last_queue_delay_min_slow_avg_update = t;
        self.last_rate_limit = t;
    }

    fn get_mss(&self) -> f64 {
        self.mss.max(self.prev_mss)
    }

    fn base_owd(&self) -> f64 {
        self.base_owd.min(self.base_owd_hist_min)
    }

    /// The periodic part of `isOkToTransmit`: rate statistics every 100 ms and the MSS reset
    /// every second.
    fn periodic(&mut self, t: f64) {
        if t - self.last_rate_update > RATE_UPDATE {
            let s = &mut self.stream;
            let dt = t - self.last_rate_update;
            s.rate_acked = s.bytes_acked * 8.0 / dt;
            s.rate_rtp_hist[s.rate_rtp_hist_ptr] = s.bytes_rtp * 8.0 / dt;
            s.rate_rtp_hist_ptr = (s.rate_rtp_hist_ptr + 1) % RATE_UPDATE_HIST;
            s.rate_rtp_avg = s.rate_rtp_hist.iter().sum::<f64>() / RATE_UPDATE_HIST as f64;
            s.bytes_acked = 0.0;
            s.bytes_rtp = 0.0;
            self.last_rate_update = t;
        }
        if t - self.last_mss_update > MSS_UPDATE {
            self.prev_mss = self.mss;
            self.mss = INIT_MSS;
            self.cwnd_min = self.cfg.cwnd_min_low.max(MIN_CWND_MSS * self.get_mss());
            self.cwnd = self.cwnd.max(self.cwnd_min);
            self.last_mss_update = t;
        }
    }

    /// The deadlock guard of `isOkToTransmit`: nothing sent for half a second (feedback lost
    /// or the path down) empties the window.
    fn forget_in_flight(&mut self) {
        self.tx.clear();
        self.bytes_in_flight = 0.0;
        self.gated = false;
    }

    /// `calculateLossRate`.
    fn calculate_loss_rate(&mut self, lost: bool) {
        let alpha = (LOSS_RATE_THRESHOLD / 4.0).min(self.mss / self.cwnd / 2.0);
        self.loss_rate = (1.0 - alpha) * self.loss_rate + alpha * if lost { 1.0 } else { 0.0 };
    }

    /// `setLossEvent` (rate-policer protection off, as by default).
    fn set_loss_event(&mut self) {
        if self.loss_rate > LOSS_RATE_THRESHOLD
            || self.queue_delay_avg > self.cfg.queue_delay_target / 4.0
        {
            self.loss_event = true;
        }
    }

    /// `estimateOwd` (clock drift compensation off).
    fn estimate_owd(&mut self, t: f64, owd: f64) {
        self.base_owd = self.base_owd.min(owd);
        if t - self.last_base_owd_add >= BASE_DELAY_UPDATE {
            self.base_owd_hist_ptr = (self.base_owd_hist_ptr + 1) % BASE_OWD_HIST;
            self.base_owd_hist[self.base_owd_hist_ptr] = self.base_owd;
            self.last_base_owd_add = t;
            self.base_owd = f64::INFINITY;
            self.base_owd_hist_min =
                self.base_owd_hist.iter().copied().fold(f64::INFINITY, f64::min);
        }
    }

    fn reset_base_delay(&mut self) {
        self.queue_delay_min_slow_avg = 0.0;
        self.queue_delay = 0.0;
        self.base_owd_hist = [f64::INFINITY; BASE_OWD_HIST];
        self.base_owd = f64::INFINITY;
        self.base_owd_hist_min = f64::INFINITY;
    }

    fn index(&self, seq: u64) -> Option<usize> {
        let first = self.tx.front()?.seq;
        let i = seq.checked_sub(first)? as usize;
        (i < self.tx.len()).then_some(i)
    }

    /// `markAcked` for one received packet; `last`: the report's last (highest) one.
    fn mark_acked(&mut self, t: f64, p: &PacketResult, arrival: Time, last: bool) {
        let Some(i) = self.index(p.seq) else { return };
        let tx = self.tx[i];
        if !tx.used || tx.acked {
            return;
        }
        self.bytes_delivered_this_rtt += tx.size;
        self.packets_delivered_this_rtt += 1;
        if p.ce {
            self.bytes_newly_acked_ce += tx.size;
            self.packets_marked_this_rtt += 1;
            self.stats.ce_packets += 1;
            self.ce_this_feedback = true;
        }
        self.tx[i].acked = true;
        let owd = secs(arrival) - tx.time;
        self.estimate_owd(t, owd);
        self.queue_delay = (owd - self.base_owd()).max(0.0);
        let rtt = t - tx.time;
        if last && rtt < 1_000_000.0 / 65536.0 {
            self.srtt_sh_prev = self.srtt_sh;
            self.srtt_sh = (7.0 * self.srtt_sh + rtt) / 8.0;
            if t - self.last_srtt_update > self.srtt_sh {
                self.srtt = if self.app_limited && self.srtt > self.srtt_sh {
                    (1023.0 * self.srtt + self.srtt_sh) / 1024.0
                } else {
                    (7.0 * self.srtt + self.srtt_sh) / 8.0
                };
                self.last_srtt_update = t;
            }
        }
        self.time_tx_ack = self.time_tx_ack.max(tx.time);
        self.queue_delay_min_avg = self.queue_delay_min_avg.min(self.queue_delay);
        self.queue_delay_max_avg =
            self.cfg.queue_delay_target.min(self.queue_delay_max_avg.max(self.queue_delay));
    }

    /// `detectLoss` up to the highest sequence number reported received.
    fn detect_loss(&mut self, t: f64, highest: u64) {
        let old_hi = self.hi_seq_ack.unwrap_or(0);
        self.hi_seq_ack = Some(self.hi_seq_ack.map_or(highest, |h| h.max(highest)));
        let forever = old_hi.saturating_sub(512);
        for i in 0..self.tx.len() {
            let tx = self.tx[i];
            if !tx.used || tx.seq > highest {
                continue;
            }
            if !tx.after_edge {
                // At or below the highest received: out of the window (SACK-like).
                self.bytes_newly_acked += tx.size;
                self.bytes_in_flight = (self.bytes_in_flight - tx.size).max(0.0);
                self.stream.bytes_acked += tx.size;
                self.tx[i].after_edge = true;
            }
            let late = tx.time + REORDER_TIME < self.time_tx_ack;
            if !tx.acked && (late || tx.seq < forever) {
                if t - self.last_loss_event > self.srtt && self.cfg.loss_beta < 1.0 {
                    self.set_loss_event();
                }
                self.stats.lost_packets += 1;
                self.tx[i].used = false;
                self.calculate_loss_rate(true);
            } else if tx.acked {
                self.tx[i].used = false;
                self.calculate_loss_rate(false);
            }
        }
        while self.tx.front().is_some_and(|x| !x.used) {
            self.tx.pop_front();
        }
    }

    /// The per-feedback block of `incomingStandardizedFeedback` (its `isLast` part).
    fn after_feedback(&mut self, t: f64) {
        let srtt = self.srtt;
        let backoff_gap = MIN_BACKOFF_INTERVAL.min(srtt);
        if t - self.last_loss_event > backoff_gap && self.ce_this_feedback {
            self.ecn_ce_event = true;
            self.last_loss_event = t;
        }
        self.ce_this_feedback = false;
        if self.cfg.l4s {
            if t - self.last_l4s_alpha_update > (655.0 / 65536.0f64).min(srtt) {
                self.last_l4s_alpha_update = t;
                self.fraction_marked = 0.0;
                if self.bytes_delivered_this_rtt > 0.0 {
                    self.fraction_marked = self.packets_marked_this_rtt as f64
                        / self.packets_delivered_this_rtt as f64;
                    // (ceDensity stays 1: pacing is always on here.)
                    if self.fraction_marked >= self.l4s_alpha {
                        self.l4s_alpha = L4S_ALPHA_MAX.min(
                            L4S_G_UP * self.fraction_marked + (1.0 - L4S_G_UP) * self.l4s_alpha,
                        );
                    } else {
                        self.l4s_alpha *= 1.0 - L4S_G_DOWN;
                    }
                    self.bytes_delivered_this_rtt = 0.0;
                    self.packets_delivered_this_rtt = 0;
                    self.packets_marked_this_rtt = 0;
                }
            }
        } else {
            self.l4s_alpha = 0.0;
        }
        if t - self.last_queue_delay_avg_update > backoff_gap {
            if t - self.last_queue_delay_min_slow_avg_update
                > srtt * QUEUE_DELAY_MIN_SLOW_AVG_UPDATE_RTTS
            {
                if self.queue_delay_min < self.queue_delay_min_slow_avg {
                    self.queue_delay_min_slow_avg = self.queue_delay_min;
                } else {
                    self.queue_delay_min_slow_avg = QUEUE_DELAY_MIN_SLOW_AVG_ALPHA
                        * self.queue_delay_min
                        + (1.0 - QUEUE_DELAY_MIN_SLOW_AVG_ALPHA) * self.queue_delay_min_slow_avg;
                }
                self.queue_delay_min = 1000.0;
                self.last_queue_delay_min_slow_avg_update = t;
            }
            let q = self.queue_delay - self.queue_delay_min_slow_avg;
            if q < self.queue_delay_avg {
                self.queue_delay_avg = q;
            } else {
                self.queue_delay_avg = (1.0 - QUEUE_DELAY_AVG_ALPHA) * self.queue_delay_avg
                    + QUEUE_DELAY_AVG_ALPHA * q;
            }
            let diff = (self.queue_delay_max_avg - self.queue_delay_min_avg)
                .clamp(0.0, 2.0 * LATENCY_DIFF_THRESHOLD);
            self.latency_diff_avg =
                (1.0 - LATENCY_DIFF_ALPHA) * self.latency_diff_avg + LATENCY_DIFF_ALPHA * diff;
            self.latency_diff_cwnd_scale =
                (1.0 - self.latency_diff_avg / LATENCY_DIFF_THRESHOLD).clamp(0.0, 1.0);
            self.queue_delay_max_avg *= 1.0 - QUEUE_DELAY_MIN_MAX_ALPHA;
            self.queue_delay_min_avg = (1.0 - QUEUE_DELAY_MIN_MAX_ALPHA) * self.queue_delay_min_avg
                + QUEUE_DELAY_MIN_MAX_ALPHA * self.queue_delay_max_avg;
            self.last_queue_delay_avg_update = t;
        }
        let target = self.cfg.queue_delay_target;
        if self.queue_delay_avg > target / 2.0 && t - self.last_loss_event > backoff_gap {
            self.virtual_ce_event = true;
            self.virtual_l4s_alpha =
                ((self.queue_delay_avg - target / 2.0) / (target / 2.0)).clamp(0.0, 1.0);
            self.virtual_l4s_alpha /= (srtt / MIN_BACKOFF_INTERVAL).max(1.0);
        }
        if self.srtt_sh_prev > self.srtt_sh && self.fraction_marked == 1.0 {
            // All marked while the RTT falls: the queue is draining, hold back.
            self.ecn_ce_event = false;
        }
        if self.loss_event || self.ecn_ce_event || self.virtual_ce_event {
            self.last_loss_event = t;
        }
        let last = *self.last_cwnd_update.get_or_insert(t);
        if t - last > backoff_gap
            || self.loss_event
            || self.ecn_ce_event
            || self.virtual_ce_event
            || self.new_frame
        {
            self.update_cwnd(t);
            self.update_target_bitrate();
            self.ecn_ce_event = false;
            self.virtual_ce_event = false;
            self.last_cwnd_update = Some(t);
            self.new_frame = false;
        }
    }

    /// `updateCwnd`.
    fn update_cwnd(&mut self, t: f64) {
        let c = self.cfg;
        let srtt = self.srtt;
        self.post_congestion_scale = ((t - self.last_congestion_detected)
            / (POST_CONGESTION_DELAY_RTTS * srtt))
            .clamp(0.0, 1.0);
        self.queue_delay_min = self.queue_delay_min.min(self.queue_delay);
        let target_bps = self.stream.target_bps;
        let max_bps = c.max_bps;
        // Pacing rate.
        let apr = if self.stream.adaptive_pacing_rate_scale > 1.0 {
            self.stream.adaptive_pacing_rate_scale
        } else {
            1.0
        };
        let mut pacing = target_bps.max(self.stream.rate_rtp_avg);
        pacing = (c.packet_pacing_headroom * apr * pacing).max(50e3);
        if c.relaxed_pacing && target_bps > RELAXED_PACING_LIMIT_LOW * max_bps {
            let nominal = target_bps / max_bps;
            let relaxed = ((nominal - RELAXED_PACING_LIMIT_LOW)
                / (RELAXED_PACING_LIMIT_HIGH - RELAXED_PACING_LIMIT_LOW))
                .min(1.0);
            pacing /= (1.0 - relaxed).clamp(1.0 / MAX_RELAXED_PACING_FACTOR, 1.0);
        }
        self.pacing_bps = pacing;
        // The slow updates (every 50 ms).
        if t - self.last_slow_update > SLOW_UPDATE {
            self.max_bytes_in_flight_hist[self.max_bytes_in_flight_hist_ix] =
                self.max_bytes_in_flight;
            self.max_bytes_in_flight_hist_ix =
                (self.max_bytes_in_flight_hist_ix + 1) % MAX_BYTES_IN_FLIGHT_HIST;
            if target_bps > max_bps * 0.95 {
                let mut m = self.max_bytes_in_flight;
                for v in self.max_bytes_in_flight_hist {
                    m = m.max(v);
                }
                // (relFrameSizeHigh stays 1: the frame-size histogram is off by default.)
                m = m.max((c.packet_pacing_headroom * max_bps / 8.0 * (srtt + 0.001)).floor());
                self.cwnd = self.cwnd.min(m);
            }
            if t - self.init.unwrap_or(t) > 2.0 {
                self.max_bytes_in_flight_prev = self.max_bytes_in_flight;
                self.max_bytes_in_flight = 0.0;
            }
            self.last_slow_update = t;
        }
        self.cwnd_ratio = self.get_mss() / self.cwnd;
        if c.adaptive_window_headroom {
            self.window_headroom = MIN_WINDOW_HEADROOM
                + (c.max_window_headroom - MIN_WINDOW_HEADROOM) * self.latency_diff_cwnd_scale;
        }
        let rel = (self.cwnd - self.cwnd_i) / self.cwnd_i * 8.0;
        let scl_i = (rel * rel).clamp(0.1, 1.0);
        let acked_bps = self.stream.rate_acked;
        let backoff_scale = (srtt * 65536.0 / 1966.0).max(1.0);
        if self.loss_event {
            if !self.cwnd_i_update_blocked {
                self.cwnd_i = self.cwnd;
                self.cwnd_i_update_blocked = true;
            }
            self.cwnd = self.cwnd_min.max((c.loss_beta * self.cwnd).floor());
            self.loss_event = false;
            self.last_congestion_detected = t;
            self.post_congestion_scale = 0.0;
            self.stats.loss_events += 1;
        } else if self.ecn_ce_event || self.virtual_ce_event {
            if !self.cwnd_i_update_blocked {
                self.cwnd_i = self.cwnd;
                self.cwnd_i_update_blocked = true;
            }
            if self.ecn_ce_event {
                self.stats.ce_events += 1;
                if c.l4s {
                    let mut backoff = self.l4s_alpha / 2.0;
                    if target_bps < acked_bps * TOTAL_ACKED_BITRATE_FRACTION {
                        backoff *= 0.25;
                    }
                    backoff /= backoff_scale;
                    if self.queue_delay < c.queue_delay_target * 0.25 {
                        backoff *= scl_i.max(0.25);
                        backoff *= self.latency_diff_cwnd_scale.clamp(0.25, 1.0);
                    }
                    if t - self.last_congestion_detected > 100.0 * srtt.max(SRTT_VIRTUAL) {
                        self.cwnd = self.cwnd.min(self.max_bytes_in_flight_prev);
                    }
                    self.cwnd = self.cwnd_min.max(((1.0 - backoff) * self.cwnd).floor());
                } else {
                    self.cwnd = self.cwnd_min.max((c.ecn_ce_beta * self.cwnd).floor());
                }
                self.virtual_ce_event = false;
            }
            if self.virtual_ce_event {
                self.stats.virtual_ce_events += 1;
                let mut backoff = self.virtual_l4s_alpha / 2.0;
                if target_bps < acked_bps * TOTAL_ACKED_BITRATE_FRACTION {
                    backoff *= 0.25;
                }
                backoff /= backoff_scale;
                self.cwnd = self.cwnd_min.max(((1.0 - backoff) * self.cwnd).floor());
            }
            self.ecn_ce_event = false;
            self.virtual_ce_event = false;
            self.last_congestion_detected = t;
            self.post_congestion_scale = 0.0;
        }
        // Growth.
        let mss = self.get_mss();
        let mut inc =
            GAIN_UP * (self.bytes_newly_acked - self.bytes_newly_acked_ce) * self.cwnd_ratio;
        inc *= scl_i.max(0.25);
        inc *= (srtt / SRTT_VIRTUAL).min(1.0);
        inc *= self.latency_diff_cwnd_scale.clamp(0.1, 1.0);
        let mut mi = 1.0 + c.multiplicative_increase * self.cwnd / mss;
        mi = 1.0 + (mi - 1.0) * self.post_congestion_scale * scl_i;
        inc *= mi;
        let prev = self.cwnd;
        let max_allowed = mss
            + self.max_bytes_in_flight.max(self.max_bytes_in_flight_prev)
                * c.bytes_in_flight_headroom;
        self.app_limited = max_allowed < self.cwnd;
        let grown = self.cwnd + (inc + 0.5).floor();
        if grown <= max_allowed && target_bps < max_bps {
            self.cwnd = grown;
        }
        if self.cwnd > prev {
            self.cwnd_i_update_blocked = false;
        }
        self.cwnd = self.cwnd.max(self.cwnd_min);
        self.bytes_newly_acked = 0.0;
        self.bytes_newly_acked_ce = 0.0;
        // The rate the window allows (one stream takes it all, up to its maximum).
        let mut rate = 8.0 * self.cwnd / (srtt + 0.001).clamp(0.001, 0.2);
        rate *= 1.0 - (self.cwnd_ratio - 0.1).clamp(0.0, 0.2);
        rate /= 1.1;
        rate *= mss / (mss + PACKET_OVERHEAD);
        self.stream.rate_share = rate.min(max_bps);
    }

    /// `Stream::updateTargetBitrate` (the RTP queue is never cleared here).
    fn update_target_bitrate(&mut self) {
        let c = self.cfg;
        let s = &mut self.stream;
        s.target_bps = (s.rate_share / (1.0 + s.rate_adjust_factor)).clamp(c.min_bps, c.max_bps);
        let diff = (s.target_bps - s.target_bps_h) / s.target_bps_h;
        if diff > c.hysteresis || diff < -c.hysteresis / 4.0 {
            s.target_bps_h = s.target_bps;
        }
    }

    /// `getTargetBitrate`'s guard against a stale base delay: a standing queue delay above an
    /// eighth of the target halves the rate for max(100 ms, 5 RTTs) once a minute, then the
    /// base delay history restarts.
    fn check_base_delay(&mut self, t: f64) {
        self.stream.rate_limited = false;
        if self.queue_delay_min_slow_avg > self.cfg.queue_delay_target / 8.0 {
            if t - self.last_rate_limit > BASE_DELAY_RESET_INTERVAL {
                self.last_rate_limit = t;
            }
            if t - self.last_rate_limit < (6554.0 / 65536.0f64).max(NUM_RATE_LIMIT_RTTS * self.srtt)
            {
                self.stream.rate_limited = true;
                self.can_reset_base_delay = true;
            } else if self.can_reset_base_delay {
                self.reset_base_delay();
                self.can_reset_base_delay = false;
            }
        }
    }
}

impl CongestionController for Scream {
    fn name(&self) -> &'static str {
        "scream"
    }

    fn on_packet_sent(&mut self, now: Time, pkt: &SentPacket) {
        let t = secs(now);
        self.ensure_init(t);
        self.periodic(t);
        let size = pkt.size as f64;
        if let Some(back) = self.tx.back() {
            // Sequence numbers are consecutive; a gap (never here) restarts the list.
            if pkt.seq != back.seq + 1 {
                self.tx.clear();
            }
        }
        self.tx.push_back(Tx {
            seq: pkt.seq,
            time: t,
            size,
            acked: false,
            after_edge: false,
            used: true,
        });
        self.bytes_in_flight += size;
        self.last_transmit = t;
        self.mss = self.mss.max(size);
        self.cwnd_min = self.cfg.cwnd_min_low.max(2.0 * self.get_mss());
        self.cwnd = self.cwnd.max(self.cwnd_min);
    }

    fn on_media_frame(&mut self, now: Time, bytes: u64, queue_delay: TimeDelta, queued: u64) {
        let t = secs(now);
        self.ensure_init(t);
        self.new_frame = true;
        let s = &mut self.stream;
        if let Some(last) = s.last_frame {
            s.frame_period = (t - last) * 0.9 + s.frame_period * 0.1;
        }
        s.last_frame = Some(t);
        let frame_size_avg = s.target_bps * s.frame_period / 8.0;
        let error =
            RATE_ADJUST_GAIN1 * (queue_delay.as_secs_f64() - s.frame_period / 2.0) / s.frame_period;
        s.rate_adjust_factor = (s.rate_adjust_factor + error * RATE_ADJUST_GAIN2).clamp(0.0, 0.5);
        let frame_size = (queued as f64).max(bytes as f64);
        s.adaptive_pacing_rate_scale = if frame_size_avg > 500.0 {
            (frame_size / frame_size_avg).clamp(1.0, self.cfg.max_adaptive_pacing_rate_scale)
        } else {
            1.0
        };
        s.bytes_rtp += bytes as f64;
        self.update_target_bitrate();
        self.check_base_delay(t);
    }

    fn may_send(&mut self, now: Time, size: u32) -> bool {
        let t = secs(now);
        self.ensure_init(t);
        self.periodic(t);
        if t - self.last_transmit > DEADLOCK {
            self.forget_in_flight();
            return true;
        }
        let open =
            self.bytes_in_flight + size as f64 <= self.cwnd * self.window_headroom + self.get_mss();
        self.gated = !open;
        open
    }

    fn on_transport_feedback(&mut self, now: Time, packets: &[PacketResult]) {
        let t = secs(now);
        self.ensure_init(t);
        self.max_bytes_in_flight = self.max_bytes_in_flight.max(self.bytes_in_flight);
        let mut received: Vec<&PacketResult> =
            packets.iter().filter(|p| p.arrival.is_some()).collect();
        received.sort_by_key(|p| p.seq);
        let Some(highest) = received.last().map(|p| p.seq) else { return };
        let n = received.len();
        for (i, p) in received.into_iter().enumerate() {
            self.mark_acked(t, p, p.arrival.unwrap_or(now), i + 1 == n);
        }
        self.detect_loss(t, highest);
        self.after_feedback(t);
    }

    fn handle_timeout(&mut self, now: Time) {
        let t = secs(now);
        if self.init.is_some() {
            self.periodic(t);
        }
        if self.gated && t - self.last_transmit > DEADLOCK {
            self.forget_in_flight();
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        // The deadlock guard frees a gated sender once nothing has left for 0.5 s.
        self.gated.then(|| Time::from_nanos(((self.last_transmit + DEADLOCK) * 1e9) as u64 + 1_000))
    }

    fn on_feedback(&mut self, _now: Time, _fb: &FeedbackReport) {}
    fn on_congestion_event(&mut self, _now: Time, _ev: &CongestionEvent) {}

    fn target(&self) -> CcTarget {
        let s = &self.stream;
        let mut rate = s.target_bps_h;
        if s.rate_limited {
            rate *= 0.5;
        }
        let pacing = if self.pacing_bps > 0.0 {
            self.pacing_bps
        } else {
            (self.cfg.packet_pacing_headroom * rate).max(50e3)
        };
        CcTarget {
            target_rate: Some(Rate::from_bps(rate as u64)),
            pacing_rate: Some(Rate::from_bps(pacing as u64)),
            ..Default::default()
        }
    }

    fn metrics(&self) -> CcMetrics {
        CcMetrics {
            cwnd_bytes: Some(self.cwnd as u64),
            target_rate: Some(Rate::from_bps(self.stream.target_bps_h as u64)),
            pacing_rate: Some(Rate::from_bps(self.pacing_bps as u64)),
            state: self.cfg.l4s as u8,
            extra: named(&[
                Some(("scream_queue_delay_ms", self.queue_delay * 1e3)),
                Some(("scream_srtt_ms", self.srtt * 1e3)),
                Some(("scream_l4s_alpha", self.l4s_alpha)),
                Some(("scream_bytes_in_flight", self.bytes_in_flight)),
                Some(("scream_window_headroom", self.window_headroom)),
                Some(("scream_rate_adjust", self.stream.rate_adjust_factor)),
                Some(("scream_loss_events", self.stats.loss_events as f64)),
                Some(("scream_ce_events", self.stats.ce_events as f64)),
                Some(("scream_virtual_ce_events", self.stats.virtual_ce_events as f64)),
            ]),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: f64) -> Time {
        Time::from_nanos((v * 1e6) as u64)
    }

    fn sent(seq: u64, size: u32) -> SentPacket {
        SentPacket {
            seq,
            size,
            retransmit: false,
            bytes_in_flight: 0,
            probe_cluster: None,
            queued_bytes: 0,
        }
    }

    /// Sends `n` packets of 1000 B from `first`, one per `gap` ms from `t0`, and returns the
    /// feedback for them: each arrives `owd(i)` ms later (None: lost), CE if `ce(i)`.
    fn round(
        s: &mut Scream,
        first: u64,
        n: u64,
        t0: f64,
        gap: f64,
        owd: impl Fn(u64) -> Option<f64>,
        ce: impl Fn(u64) -> bool,
    ) -> Vec<PacketResult> {
        (0..n)
            .map(|i| {
                let t = t0 + i as f64 * gap;
                s.on_packet_sent(ms(t), &sent(first + i, 1000));
                PacketResult {
                    seq: first + i,
                    send_time: ms(t),
                    arrival: owd(i).map(|d| ms(t + d)),
                    size: 1000,
                    probe_cluster: None,
                    ce: ce(i),
                }
            })
            .collect()
    }

    fn scream(l4s: bool) -> Scream {
        Scream::new(ScreamConfig { l4s, start_bps: 1e6, max_bps: 20e6, ..Default::default() })
    }

    #[test]
    fn the_gate_holds_bytes_in_flight_to_the_window_times_its_headroom() {
        let mut s = scream(false);
        let mut seq = 0;
        while s.may_send(ms(0.0), 1000) {
            s.on_packet_sent(ms(0.0), &sent(seq, 1000));
            seq += 1;
            assert!(seq < 1000);
        }
        // Initial window: 100 ms at 1 Mbit/s = 12,500 B; headroom 5; plus one MSS.
        let limit = 12_500.0 * 5.0 + 1000.0;
        assert!(
            s.bytes_in_flight <= limit && s.bytes_in_flight + 1000.0 > limit,
            "{}",
            s.bytes_in_flight
        );
        assert_eq!(s.poll_timeout(), Some(ms(500.001)));
        // Nothing leaves for half a second: the guard empties the window.
        s.handle_timeout(ms(500.001));
        assert_eq!(s.bytes_in_flight, 0.0);
        assert_eq!(s.poll_timeout(), None);
    }

    #[test]
    fn the_window_grows_on_clean_feedback_and_the_target_follows_it() {
        let mut s = scream(false);
        let mut t = 0.0;
        let mut seq = 0;
        for _ in 0..50 {
            let r = round(&mut s, seq, 10, t, 2.0, |_| Some(10.0), |_| false);
            s.on_transport_feedback(ms(t + 30.0), &r);
            seq += 10;
            t += 30.0;
        }
        assert!(s.cwnd > 12_500.0, "cwnd {}", s.cwnd);
        let target = s.target().target_rate.unwrap().as_bps() as f64;
        assert!(target > 1e6, "target {target}");
        assert_eq!(s.stats.loss_events + s.stats.ce_events + s.stats.virtual_ce_events, 0);
        assert!(s.queue_delay < 1e-6, "constant one-way delay is no queue: {}", s.queue_delay);
    }

    #[test]
    fn a_lone_loss_with_no_queue_is_no_congestion_event() {
        // SCReAM v2 counts a loss only when the loss rate passes 1 % or the queue delay a
        // quarter of its target (`setLossEvent`).
        let mut s = scream(false);
        let r = round(&mut s, 0, 50, 0.0, 2.0, |i| (i != 10).then_some(10.0), |_| false);
        s.on_transport_feedback(ms(200.0), &r);
        assert_eq!(s.stats.lost_packets, 1);
        assert_eq!(s.stats.loss_events, 0);
        // A queue delay above target/4 makes the next loss an event.
        let mut s = scream(false);
        let r = round(&mut s, 0, 20, 0.0, 2.0, |_| Some(10.0), |_| false);
        s.on_transport_feedback(ms(100.0), &r);
        let mut t = 100.0;
        for k in 0..20u64 {
            // The queue grows by 2 ms per round to 40 ms (> 60 ms / 4).
            let d = 10.0 + 2.0 * k as f64;
            let r = round(&mut s, 20 + k * 20, 20, t, 2.0, |_| Some(d), |_| false);
            s.on_transport_feedback(ms(t + 60.0), &r);
            t += 60.0;
        }
        let cwnd = s.cwnd;
        let r = round(&mut s, 420, 20, t, 2.0, |i| (i != 3).then_some(50.0), |_| false);
        s.on_transport_feedback(ms(t + 80.0), &r);
        assert_eq!(s.stats.loss_events, 1, "queue avg {}", s.queue_delay_avg);
        // × 0.7, then the same update's growth from the bytes this feedback acknowledged.
        assert!(s.cwnd < cwnd * 0.71, "{cwnd} -> {}", s.cwnd);
    }

    #[test]
    fn l4s_marks_cut_the_window_by_half_alpha_and_classic_marks_by_beta() {
        for l4s in [true, false] {
            // Twins: the same packets, one sees every packet of the second round CE-marked.
            let run = |marked: bool| {
                let mut s = scream(l4s);
                let r = round(&mut s, 0, 20, 0.0, 2.0, |_| Some(10.0), |_| false);
                s.on_transport_feedback(ms(100.0), &r);
                let r = round(&mut s, 20, 20, 100.0, 2.0, |_| Some(10.0), |_| marked);
                s.on_transport_feedback(ms(200.0), &r);
                s
            };
            let (clean, marked) = (run(false), run(true));
            assert_eq!((clean.stats.ce_events, marked.stats.ce_events), (0, 1), "l4s {l4s}");
            // Marked bytes do not grow the window either: the twin's growth bounds it.
            let ratio = marked.cwnd / clean.cwnd;
            if l4s {
                // α: 0.1, decayed by 1/128 on the unmarked round, then + (1 − α)/8 on the
                // marked one. The cut is α/2, a quarter of it here: the queue is short and
                // the window is at its last maximum (`sclI` 0.1 → 0.25).
                let a0 = 0.1 * (1.0 - 1.0 / 128.0);
                let alpha = a0 + (1.0 - a0) / 8.0;
                assert!((marked.l4s_alpha - alpha).abs() < 1e-9, "{}", marked.l4s_alpha);
                let floor = ((1.0 - alpha / 2.0) * 12_500.0f64).floor();
                assert!(ratio < 1.0 && marked.cwnd >= floor, "{} < {floor}", marked.cwnd);
            } else {
                // × β (0.7) of the initial 12,500 B, then at most the twin's growth.
                assert_eq!(marked.l4s_alpha, 0.0);
                let bound = (0.7 * 12_500.0f64).floor() + (clean.cwnd - 12_500.0) + 1.0;
                assert!(marked.cwnd <= bound, "{} > {bound}", marked.cwnd);
            }
        }
    }
}
