//! Copa: practical delay-based congestion control (Arun, Balakrishnan, NSDI 2018), spec
//! `copa-qlibra-tcp.md` §1, with every deviation of the public implementations
//! (venkatarun95/genericCC `markoviancc.cc`, facebook/mvfst `Copa.cpp`) as a switch.
//! Default = the paper.
//!
//! Per ACK: `d_q = RTT_standing − RTT_min` (standing = min RTT over srtt/2, min over 10 s),
//! target rate `λ_t = 1/(δ·d_q)` packets/s, current rate `λ = cwnd/RTT_standing`;
//! `cwnd ± v/(δ·cwnd)` per packet acknowledged toward the target. Slow start grows while
//! `λ ≤ λ_t` and ends at the first ACK above it. Velocity `v` doubles once the window has moved
//! the same way for `velocity_wait` rounds, and resets to 1 on a change. Pacing at
//! `2·cwnd/RTT_standing`.
//!
//! Competitive mode: if no "nearly empty" queue (`d_q < 0.1·(RTT_max − RTT_min)`, RTT_max over
//! the last 4 RTTs) was seen in the last 5 RTTs, a buffer-filler is present: δ then follows
//! AIMD on 1/δ (+1 per round without loss, δ doubled on loss at most once per round, δ ≤ 0.5),
//! and is reset to the default when the queue empties again.
//!
//! Windows are exact (monotonic deques), not mvfst's 3-sample approximation. In default mode
//! loss is ignored (paper; the reliable transport still retransmits), or the window is cut
//! ×0.7 when more than 30 % of a 2-RTT interval was lost (genericCC's post-paper
//! `ReduceOnLoss`, `loss_reduce`); a retransmission timeout resets the window to the minimum
//! only with `timeout_reset` (mvfst's persistent congestion).

use crate::{CcMetrics, CcTarget, CongestionController, CongestionEvent, FeedbackReport};
use rtclab_core::{Rate, Time, TimeDelta};
use std::collections::VecDeque;

/// How slow start grows the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopaSlowStart {
    /// +1 packet per packet acknowledged: doubling per RTT (paper, genericCC).
    PerAck,
    /// One doubling step at most once per srtt (mvfst).
    DoublePerSrtt,
}

/// Which delay the target uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopaQueueDelay {
    /// RTT_standing − RTT_min (paper).
    Standing,
    /// Latest RTT − RTT_min (mvfst's default `copaUseRttStanding = false`).
    Latest,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CopaConfig {
    pub packet_size: u32,
    pub delta: f64,
    pub srtt_gain: f64,
    pub rtt_min_window: TimeDelta,
    /// The RTT_min window is at least this many RTT_min (genericCC: 20, so 16 s on an 800 ms
    /// path); 0 = the fixed window alone (the paper's text).
    pub rtt_min_window_rtts: f64,
    /// RTT_standing window as a fraction of srtt (0.5).
    pub standing_window_frac: f64,
    pub velocity_wait: u32,
    /// Halve v while v/δ exceeds the window (genericCC, xquic).
    pub velocity_cap: bool,
    /// mvfst: a per-ACK signal against the current direction resets v to 1 at once.
    pub reset_v_on_opposite_signal: bool,
    pub pacing_gain: f64,
    /// Competitive mode on/off (off = "Copa D", a constant δ).
    pub mode_switch: bool,
    pub empty_window_rtts: f64,
    pub rttmax_window_rtts: f64,
    pub nearly_empty_frac: f64,
    /// Competitive mode: additive increase of 1/δ per round without loss.
    pub competitive_ai: f64,
    pub delta_cap: f64,
    /// genericCC's post-paper rule: ×0.7 when > 30 % of 2 RTTs (≥ 20 packets) were lost.
    pub loss_reduce: bool,
    pub initial_window: u32,
    pub min_cwnd: f64,
    pub slow_start: CopaSlowStart,
    pub queue_delay: CopaQueueDelay,
    /// Increase only when λ < λ_t strictly (genericCC) instead of λ ≤ λ_t.
    pub strict_increase: bool,
    /// A retransmission timeout resets the window to the minimum (mvfst's persistent
    /// congestion); the paper ignores loss in default mode.
    pub timeout_reset: bool,
    /// Not in any Copa: no window increase on an ACK the sender marks application-limited
    /// (RFC 7661's rule, as Linux applies to CUBIC). Off by default; a cause experiment for
    /// video over TCP, where Copa's window otherwise grows without bound
    /// (docs/algorithms/tcp_video.md).
    pub app_limited_hold: bool,
}

impl Default for CopaConfig {
    fn default() -> Self {
        CopaConfig {
            packet_size: 1500,
            delta: 0.5,
            srtt_gain: 1.0 / 8.0,
            rtt_min_window: TimeDelta::from_secs(10),
            rtt_min_window_rtts: 0.0,
            standing_window_frac: 0.5,
            velocity_wait: 3,
            velocity_cap: true,
            reset_v_on_opposite_signal: false,
            pacing_gain: 2.0,
            mode_switch: true,
            empty_window_rtts: 5.0,
            rttmax_window_rtts: 4.0,
            nearly_empty_frac: 0.1,
            competitive_ai: 1.0,
            delta_cap: 0.5,
            loss_reduce: false,
            initial_window: 10,
            min_cwnd: 2.0,
            slow_start: CopaSlowStart::PerAck,
            queue_delay: CopaQueueDelay::Standing,
            strict_increase: false,
            timeout_reset: false,
            app_limited_hold: false,
        }
    }
}

impl CopaConfig {
    /// The paper (NSDI'18), which is also the default.
    pub fn paper() -> Self {
        Self::default()
    }
    /// The authors' genericCC (`do_ss:auto:0.5`): srtt gain 1/16, RTT_min over max(10 s,
    /// 20·RTT_min), no wait before doubling v,
    /// strict increase test, the post-paper loss reduction.
    pub fn genericcc() -> Self {
        CopaConfig {
            srtt_gain: 1.0 / 16.0,
            rtt_min_window_rtts: 20.0,
            velocity_wait: 1,
            strict_increase: true,
            loss_reduce: true,
            empty_window_rtts: 4.0,
            ..Self::default()
        }
    }
    /// facebook/mvfst: δ 0.05, d_q from the latest RTT, slow start doubling once per srtt,
    /// v reset on an opposite signal, no velocity cap, no competitive mode.
    pub fn mvfst() -> Self {
        CopaConfig {
            delta: 0.05,
            velocity_cap: false,
            reset_v_on_opposite_signal: true,
            mode_switch: false,
            slow_start: CopaSlowStart::DoublePerSrtt,
            queue_delay: CopaQueueDelay::Latest,
            timeout_reset: true,
            ..Self::default()
        }
    }
}

/// Exact windowed minimum or maximum over time (monotonic deque). Any suffix window up to the
/// stored span can be queried.
#[derive(Clone, Debug, Default)]
struct WindowedExtreme {
    max: bool,
    samples: VecDeque<(Time, TimeDelta)>,
}

impl WindowedExtreme {
    fn new(max: bool) -> Self {
        WindowedExtreme { max, samples: VecDeque::new() }
    }
    fn push(&mut self, now: Time, v: TimeDelta, keep: TimeDelta) {
        while self.samples.back().is_some_and(|b| if self.max { b.1 <= v } else { b.1 >= v }) {
            self.samples.pop_back();
        }
        self.samples.push_back((now, v));
        while self.samples.len() > 1 && self.samples.front().is_some_and(|f| now - f.0 > keep) {
            self.samples.pop_front();
        }
    }
    /// The extreme over samples no older than `window`.
    fn over(&self, now: Time, window: TimeDelta) -> Option<TimeDelta> {
        let from = now - window;
        let i = self.samples.partition_point(|s| s.0 < from);
        self.samples.get(i).or_else(|| self.samples.back()).map(|s| s.1)
    }
    fn all(&self) -> Option<TimeDelta> {
        self.samples.front().map(|s| s.1)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    None,
    Up,
    Down,
}

#[derive(Clone, Debug)]
pub struct Copa {
    cfg: CopaConfig,
    cwnd: f64,
    delta: f64,
    velocity: f64,
    direction: Direction,
    same_dir_count: u32,
    slow_start: bool,
    competitive: bool,
    srtt: Option<TimeDelta>,
    rtt_min: WindowedExtreme,
    rtt_max: WindowedExtreme,
    latest_rtt: TimeDelta,
    last_empty: Option<Time>,
    round_end: u64,
    round_start_cwnd: f64,
    loss_in_round: bool,
    last_delta_md: Option<Time>,
    last_ss_double: Option<Time>,
    // genericCC loss reduction: packets and losses in the current 2-RTT interval
    lr_start: Option<Time>,
    lr_packets: u64,
    lr_lost: u64,
    // for metrics
    dq: TimeDelta,
    standing: TimeDelta,
}

impl Copa {
    pub fn new(cfg: CopaConfig) -> Self {
        Copa {
            cwnd: cfg.initial_window as f64,
            delta: cfg.delta,
            velocity: 1.0,
            direction: Direction::None,
            same_dir_count: 0,
            slow_start: true,
            competitive: false,
            srtt: None,
            rtt_min: WindowedExtreme::new(false),
            rtt_max: WindowedExtreme::new(true),
            latest_rtt: TimeDelta::ZERO,
            last_empty: None,
            round_end: 0,
            round_start_cwnd: cfg.initial_window as f64,
            loss_in_round: false,
            last_delta_md: None,
            last_ss_double: None,
            lr_start: None,
            lr_packets: 0,
            lr_lost: 0,
            dq: TimeDelta::ZERO,
            standing: TimeDelta::ZERO,
            cfg,
        }
    }

    pub fn cwnd_packets(&self) -> f64 {
        self.cwnd
    }
    pub fn delta(&self) -> f64 {
        self.delta
    }
    pub fn velocity(&self) -> f64 {
        self.velocity
    }
    pub fn in_competitive_mode(&self) -> bool {
        self.competitive
    }
    pub fn in_slow_start(&self) -> bool {
        self.slow_start
    }
    pub fn queue_delay(&self) -> TimeDelta {
        self.dq
    }

    fn srtt_or(&self, d: TimeDelta) -> TimeDelta {
        self.srtt.unwrap_or(d)
    }

    /// Competitive-mode detection on every ACK.
    fn update_mode(&mut self, now: Time, rtt_min: TimeDelta) {
        if !self.cfg.mode_switch {
            return;
        }
        let srtt = self.srtt_or(self.latest_rtt);
        let rtt_max = self
            .rtt_max
            .over(now, srtt.mul_f64(self.cfg.rttmax_window_rtts))
            .unwrap_or(self.latest_rtt);
        let spread = (rtt_max - rtt_min).max(TimeDelta::ZERO);
        if self.dq.as_nanos() as f64 <= self.cfg.nearly_empty_frac * spread.as_nanos() as f64 {
            self.last_empty = Some(now);
        }
        let empty_window = srtt.mul_f64(self.cfg.empty_window_rtts);
        let filler = self.last_empty.is_none_or(|t| now - t > empty_window);
        if filler && !self.competitive {
            self.competitive = true;
        } else if !filler && self.competitive {
            self.competitive = false;
            self.delta = self.cfg.delta;
        }
    }

    fn end_of_round(&mut self, fb: &FeedbackReport) {
        // Velocity: compare the window with the one at the start of the round (the window
        // when the packet that ends the round was sent).
        let dir = if self.cwnd > self.round_start_cwnd {
            Direction::Up
        } else if self.cwnd < self.round_start_cwnd {
            Direction::Down
        } else {
            self.direction
        };
        if !self.slow_start {
            if dir == self.direction && dir != Direction::None {
                self.same_dir_count += 1;
                if self.same_dir_count >= self.cfg.velocity_wait {
                    self.velocity *= 2.0;
                }
            } else {
                self.same_dir_count = 0;
                self.velocity = 1.0;
            }
            if self.cfg.velocity_cap {
                while self.velocity > 1.0 && self.velocity / self.delta > self.cwnd {
                    self.velocity = (self.velocity / 2.0).max(1.0);
                }
            }
        }
        self.direction = dir;
        // Competitive mode: 1/δ grows by one per round without loss.
        if self.competitive && !self.loss_in_round {
            self.delta = 1.0 / (1.0 / self.delta + self.cfg.competitive_ai);
        }
        self.loss_in_round = false;
        self.round_end = fb.snd_nxt;
        self.round_start_cwnd = self.cwnd;
    }
}

impl CongestionController for Copa {
    fn name(&self) -> &'static str {
        "copa"
    }

    fn on_feedback(&mut self, now: Time, fb: &FeedbackReport) {
        let acked = fb.acked_packets as f64;
        if let Some(rtt) = fb.rtt {
            self.latest_rtt = rtt;
            self.srtt = Some(match self.srtt {
                None => rtt,
                Some(s) => s + (rtt - s).mul_f64(self.cfg.srtt_gain),
            });
            let keep = self.cfg.rtt_min_window.max(rtt.mul_f64(self.cfg.rttmax_window_rtts * 4.0));
            let min_window = match self.rtt_min.all() {
                Some(m) if self.cfg.rtt_min_window_rtts > 0.0 => {
                    self.cfg.rtt_min_window.max(m.min(rtt).mul_f64(self.cfg.rtt_min_window_rtts))
                }
                _ => self.cfg.rtt_min_window,
            };
            self.rtt_min.push(now, rtt, min_window);
            self.rtt_max.push(now, rtt, keep);
        }
        if self.cfg.loss_reduce {
            self.lr_packets += fb.acked_packets as u64;
        }
        let (Some(rtt_min), Some(srtt)) = (self.rtt_min.all(), self.srtt) else { return };
        let standing = self
            .rtt_min
            .over(now, srtt.mul_f64(self.cfg.standing_window_frac))
            .unwrap_or(self.latest_rtt);
        self.standing = standing;
        let delay = match self.cfg.queue_delay {
            CopaQueueDelay::Standing => standing,
            CopaQueueDelay::Latest => self.latest_rtt,
        };
        self.dq = (delay - rtt_min).max(TimeDelta::ZERO);
        // Compare rates as windows: increase iff cwnd ≤ target window = RTT_standing/(δ·d_q).
        let dq_s = self.dq.as_secs_f64();
        let target_window =
            if dq_s > 0.0 { standing.as_secs_f64() / (self.delta * dq_s) } else { f64::INFINITY };
        let increase = if self.cfg.strict_increase {
            self.cwnd < target_window
        } else {
            self.cwnd <= target_window
        };
        self.update_mode(now, rtt_min);

        // The cause-experiment switch: hold the window while the application limits the sender.
        let hold = self.cfg.app_limited_hold && fb.app_limited;
        if self.slow_start {
            if increase && hold {
                // Neither grow nor leave slow start.
            } else if increase {
                match self.cfg.slow_start {
                    CopaSlowStart::PerAck => self.cwnd += acked,
                    CopaSlowStart::DoublePerSrtt => {
                        if self.last_ss_double.is_none_or(|t| now - t >= srtt) {
                            self.cwnd *= 2.0;
                            self.last_ss_double = Some(now);
                        }
                    }
                }
            } else {
                self.slow_start = false;
            }
        }
        if !self.slow_start {
            let opposite = match self.direction {
                Direction::Up => !increase,
                Direction::Down => increase,
                Direction::None => false,
            };
            if self.cfg.reset_v_on_opposite_signal && opposite && self.velocity > 1.0 {
                self.velocity = 1.0;
                self.same_dir_count = 0;
            }
            let step = acked * self.velocity / (self.delta * self.cwnd);
            if increase {
                if !hold {
                    self.cwnd += step;
                }
            } else {
                self.cwnd -= step;
            }
            self.cwnd = self.cwnd.max(self.cfg.min_cwnd);
        }
        if fb.snd_una > self.round_end {
            self.end_of_round(fb);
        }
        if self.cfg.loss_reduce {
            let start = *self.lr_start.get_or_insert(now);
            if now - start >= srtt.mul_f64(2.0) {
                if self.lr_packets + self.lr_lost > 20
                    && self.lr_lost as f64 / (self.lr_packets + self.lr_lost) as f64 > 0.3
                {
                    self.cwnd = (self.cwnd * 0.7).max(self.cfg.min_cwnd);
                }
                self.lr_start = Some(now);
                self.lr_packets = 0;
                self.lr_lost = 0;
            }
        }
    }

    fn on_congestion_event(&mut self, now: Time, ev: &CongestionEvent) {
        match ev {
            CongestionEvent::Loss { .. } => {
                self.loss_in_round = true;
                self.lr_lost += 1;
                if self.competitive {
                    let srtt = self.srtt_or(self.latest_rtt);
                    if self.last_delta_md.is_none_or(|t| now - t >= srtt) {
                        self.delta = (self.delta * 2.0).min(self.cfg.delta_cap);
                        self.last_delta_md = Some(now);
                    }
                }
            }
            CongestionEvent::Timeout => {
                self.loss_in_round = true;
                if self.cfg.timeout_reset {
                    self.cwnd = self.cfg.min_cwnd;
                    self.velocity = 1.0;
                    self.same_dir_count = 0;
                }
            }
        }
    }

    fn target(&self) -> CcTarget {
        let mss = self.cfg.packet_size as f64;
        let cwnd_bytes = (self.cwnd * mss) as u64;
        let pacing = (self.standing > TimeDelta::ZERO).then(|| {
            Rate::from_bps(
                (self.cfg.pacing_gain * self.cwnd * mss * 8.0 / self.standing.as_secs_f64()) as u64,
            )
        });
        CcTarget { cwnd_bytes: Some(cwnd_bytes), pacing_rate: pacing, ..Default::default() }
    }

    fn metrics(&self) -> CcMetrics {
        let t = self.target();
        CcMetrics {
            cwnd_bytes: t.cwnd_bytes,
            pacing_rate: t.pacing_rate,
            state: if self.slow_start {
                0
            } else if self.competitive {
                2
            } else {
                1
            },
            extra: crate::named(&[
                Some(("delta", self.delta)),
                Some(("velocity", self.velocity)),
                Some(("dq_ms", self.dq.as_millis_f64())),
                Some(("rtt_standing_ms", self.standing.as_millis_f64())),
                self.rtt_min.all().map(|r| ("rtt_min_ms", r.as_millis_f64())),
                Some(("competitive", self.competitive as u8 as f64)),
            ]),
            ..Default::default()
        }
    }
}

/// Every Copa tunable by name (see [`crate::params`]).
pub static COPA_PARAMS: &[crate::params::Param<CopaConfig>] = {
    use crate::params::{ms, param};
    &[
        param!(
            CopaConfig,
            "delta",
            "δ, delay weight; 1/δ packets of queue per flow (0.5)",
            Real,
            0.001,
            10.0,
            |c| c.delta,
            |c, v| c.delta = v
        ),
        param!(
            CopaConfig,
            "srtt_gain",
            "EWMA gain of srtt (1/8; genericCC 1/16)",
            Real,
            0.001,
            1.0,
            |c| c.srtt_gain,
            |c, v| c.srtt_gain = v
        ),
        param!(
            CopaConfig,
            "rtt_min_window_ms",
            "window of RTT_min, ms (10000)",
            Real,
            1.0,
            3600000.0,
            |c| c.rtt_min_window.as_millis_f64(),
            |c, v| c.rtt_min_window = ms(v)
        ),
        param!(
            CopaConfig,
            "rtt_min_window_rtts",
            "RTT_min window of at least this many RTT_min (0; genericcc 20)",
            Real,
            0.0,
            1000.0,
            |c| c.rtt_min_window_rtts,
            |c, v| c.rtt_min_window_rtts = v
        ),
        param!(
            CopaConfig,
            "standing_window_frac",
            "RTT_standing window / srtt (0.5; mvfst flag 1.0)",
            Real,
            0.01,
            10.0,
            |c| c.standing_window_frac,
            |c, v| c.standing_window_frac = v
        ),
        param!(
            CopaConfig,
            "velocity_wait",
            "rounds in one direction before v doubles (3)",
            Integer,
            1.0,
            1000.0,
            |c| c.velocity_wait as f64,
            |c, v| c.velocity_wait = v as u32
        ),
        param!(
            CopaConfig,
            "velocity_cap",
            "halve v while v/δ exceeds the window (true)",
            Bool,
            0.0,
            1.0,
            |c| c.velocity_cap as u8 as f64,
            |c, v| c.velocity_cap = v != 0.0
        ),
        param!(
            CopaConfig,
            "reset_v_on_opposite_signal",
            "mvfst: reset v on an opposite per-ACK signal (false)",
            Bool,
            0.0,
            1.0,
            |c| c.reset_v_on_opposite_signal as u8 as f64,
            |c, v| c.reset_v_on_opposite_signal = v != 0.0
        ),
        param!(
            CopaConfig,
            "pacing_gain",
            "pacing rate × RTT_standing / cwnd (2)",
            Real,
            0.1,
            100.0,
            |c| c.pacing_gain,
            |c, v| c.pacing_gain = v
        ),
        param!(
            CopaConfig,
            "mode_switch",
            "competitive mode against buffer fillers (true; false = Copa D)",
            Bool,
            0.0,
            1.0,
            |c| c.mode_switch as u8 as f64,
            |c, v| c.mode_switch = v != 0.0
        ),
        param!(
            CopaConfig,
            "empty_window_rtts",
            "RTTs without a nearly empty queue before competitive mode (5)",
            Real,
            0.5,
            1000.0,
            |c| c.empty_window_rtts,
            |c, v| c.empty_window_rtts = v
        ),
        param!(
            CopaConfig,
            "rttmax_window_rtts",
            "window of RTT_max in RTTs (4)",
            Real,
            0.5,
            1000.0,
            |c| c.rttmax_window_rtts,
            |c, v| c.rttmax_window_rtts = v
        ),
        param!(
            CopaConfig,
            "nearly_empty_frac",
            "queue below this × (RTT_max − RTT_min) is nearly empty (0.1)",
            Real,
            0.0,
            1.0,
            |c| c.nearly_empty_frac,
            |c, v| c.nearly_empty_frac = v
        ),
        param!(
            CopaConfig,
            "competitive_ai",
            "competitive mode: 1/δ increase per lossless round (1)",
            Real,
            0.0,
            1000.0,
            |c| c.competitive_ai,
            |c, v| c.competitive_ai = v
        ),
        param!(
            CopaConfig,
            "delta_cap",
            "largest δ in competitive mode (0.5)",
            Real,
            0.001,
            10.0,
            |c| c.delta_cap,
            |c, v| c.delta_cap = v
        ),
        param!(
            CopaConfig,
            "loss_reduce",
            "genericCC: ×0.7 when > 30 % of 2 RTTs is lost (false)",
            Bool,
            0.0,
            1.0,
            |c| c.loss_reduce as u8 as f64,
            |c, v| c.loss_reduce = v != 0.0
        ),
        param!(
            CopaConfig,
            "min_cwnd",
            "smallest window, packets (2)",
            Real,
            1.0,
            1000.0,
            |c| c.min_cwnd,
            |c, v| c.min_cwnd = v
        ),
        param!(
            CopaConfig,
            "timeout_reset",
            "mvfst: a retransmission timeout resets the window to the minimum (false)",
            Bool,
            0.0,
            1.0,
            |c| c.timeout_reset as u8 as f64,
            |c, v| c.timeout_reset = v != 0.0
        ),
        param!(
            CopaConfig,
            "app_limited_hold",
            "not in any Copa (a cause experiment): no increase on application-limited ACKs, RFC 7661's rule (false)",
            Bool,
            0.0,
            1.0,
            |c| c.app_limited_hold as u8 as f64,
            |c, v| c.app_limited_hold = v != 0.0
        ),
        param!(
            CopaConfig,
            "strict_increase",
            "genericCC: increase only when strictly below the target (false)",
            Bool,
            0.0,
            1.0,
            |c| c.strict_increase as u8 as f64,
            |c, v| c.strict_increase = v != 0.0
        ),
        param!(
            CopaConfig,
            "slow_start_per_srtt",
            "mvfst: slow start doubles once per srtt instead of +1 per ACK (false)",
            Bool,
            0.0,
            1.0,
            |c| (c.slow_start == CopaSlowStart::DoublePerSrtt) as u8 as f64,
            |c, v| c.slow_start =
                if v != 0.0 { CopaSlowStart::DoublePerSrtt } else { CopaSlowStart::PerAck }
        ),
        param!(
            CopaConfig,
            "queue_delay_latest",
            "mvfst default: d_q from the latest RTT, not RTT_standing (false)",
            Bool,
            0.0,
            1.0,
            |c| (c.queue_delay == CopaQueueDelay::Latest) as u8 as f64,
            |c, v| c.queue_delay =
                if v != 0.0 { CopaQueueDelay::Latest } else { CopaQueueDelay::Standing }
        ),
    ]
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_round_trip_and_reject_bad_delta() {
        use crate::params::{set, Value};
        let mut c = CopaConfig::default();
        for p in COPA_PARAMS {
            let v = p.get(&c);
            assert!(v >= p.min && v <= p.max, "{}", p.name);
        }
        let e = set(COPA_PARAMS, &mut c, "delta", Value::Num(0.0)).unwrap_err().to_string();
        assert!(e.contains("delta = 0 is out of range: accepted 0.001..=10"), "{e}");
        set(COPA_PARAMS, &mut c, "queue_delay_latest", Value::Bool(true)).unwrap();
        assert_eq!(c.queue_delay, CopaQueueDelay::Latest);
        crate::params::assert_documented(COPA_PARAMS);
    }

    fn ack(c: &mut Copa, now_ms: u64, rtt_ms: u64, una: u64, nxt: u64) {
        let fb = FeedbackReport {
            acked_bytes: 1500,
            acked_packets: 1,
            rtt: Some(TimeDelta::from_millis(rtt_ms as i64)),
            snd_una: una,
            snd_nxt: nxt,
            ..Default::default()
        };
        c.on_feedback(Time::from_millis(now_ms), &fb);
    }

    #[test]
    fn windowed_min_answers_any_suffix() {
        let mut w = WindowedExtreme::new(false);
        let keep = TimeDelta::from_secs(10);
        for (t, v) in [(0u64, 50i64), (100, 40), (200, 60), (300, 55)] {
            w.push(Time::from_millis(t), TimeDelta::from_millis(v), keep);
        }
        let now = Time::from_millis(300);
        assert_eq!(w.all(), Some(TimeDelta::from_millis(40)));
        assert_eq!(w.over(now, TimeDelta::from_millis(150)), Some(TimeDelta::from_millis(55)));
        assert_eq!(w.over(now, TimeDelta::from_millis(0)), Some(TimeDelta::from_millis(55)));
        // Old samples leave the 10 s window, but one always stays.
        w.push(Time::from_millis(20_000), TimeDelta::from_millis(70), keep);
        assert_eq!(w.all(), Some(TimeDelta::from_millis(70)));
    }

    /// On an 800 ms path a standing queue that outlives 10 s becomes the paper's RTT_min;
    /// genericCC's window of 20·RTT_min (16 s) still remembers the empty path.
    #[test]
    fn the_rtt_min_window_can_scale_with_rtt_min() {
        for (rtts, want) in [(0.0, 1200), (20.0, 800)] {
            let mut c =
                Copa::new(CopaConfig { rtt_min_window_rtts: rtts, ..CopaConfig::default() });
            ack(&mut c, 0, 800, 1, 10);
            for t in 1..=12 {
                ack(&mut c, t * 1000, 1200, 1 + t, 10 + t);
            }
            let min = c.rtt_min.all().unwrap().as_millis_f64() as i64;
            assert_eq!(min, want, "window of {rtts} RTT_min");
        }
    }

    /// Every Copa grows on an empty queue whether or not the application keeps the window
    /// full; `app_limited_hold` (the cause experiment) grows only on ACKs that are not
    /// application-limited, and still shrinks toward the target.
    #[test]
    fn app_limited_hold_grows_only_when_the_window_is_used() {
        let app_limited = |c: &mut Copa, now_ms: u64, rtt_ms: u64| {
            let fb = FeedbackReport {
                acked_bytes: 1500,
                acked_packets: 1,
                rtt: Some(TimeDelta::from_millis(rtt_ms as i64)),
                snd_una: 1,
                snd_nxt: 2,
                app_limited: true,
                ..Default::default()
            };
            c.on_feedback(Time::from_millis(now_ms), &fb);
        };
        for (hold, want) in [(false, 20.0), (true, 10.0)] {
            let mut c = Copa::new(CopaConfig { app_limited_hold: hold, ..CopaConfig::default() });
            for i in 0..10 {
                app_limited(&mut c, 100 + i, 100);
            }
            assert_eq!(c.cwnd_packets(), want, "hold {hold}");
            assert!(c.in_slow_start());
        }
        // With the hold, a queue above the target still shrinks the window.
        let mut c = Copa::new(CopaConfig { app_limited_hold: true, ..CopaConfig::default() });
        app_limited(&mut c, 100, 100);
        for i in 0..20 {
            app_limited(&mut c, 200 + i, 160);
        }
        assert!(!c.in_slow_start() && c.cwnd_packets() < 10.0, "{}", c.cwnd_packets());
    }

    #[test]
    fn slow_start_until_the_target_then_steps_of_v_over_delta_cwnd() {
        let mut c = Copa::new(CopaConfig::default());
        // No queue: target infinite, slow start grows one packet per packet acked.
        for i in 0..10 {
            ack(&mut c, 100 + i, 100, i + 1, 20);
        }
        assert!(c.in_slow_start());
        assert_eq!(c.cwnd_packets(), 20.0);
        // A 20 ms standing queue: target window = 0.12/(0.5·0.02) = 12 < 20 → leave slow start
        // and decrease by v/(δ·cwnd) = 1/(0.5·20) = 0.1.
        for i in 0..30 {
            ack(&mut c, 200 + i, 120, 11, 40);
        }
        assert!(!c.in_slow_start());
        assert!(c.cwnd_packets() < 20.0 && c.cwnd_packets() > 12.0, "{}", c.cwnd_packets());
        let before = c.cwnd_packets();
        ack(&mut c, 500, 120, 11, 40);
        let step = before - c.cwnd_packets();
        assert!((step - 1.0 / (0.5 * before)).abs() < 1e-9, "step {step}");
        // Below the target window it grows by the same step.
        c.cwnd = 10.0;
        ack(&mut c, 501, 120, 11, 40);
        assert!((c.cwnd_packets() - 10.2).abs() < 1e-9);
    }

    #[test]
    fn velocity_doubles_after_three_rounds_in_one_direction() {
        let mut c = Copa::new(CopaConfig::default());
        c.slow_start = false;
        c.cwnd = 100.0;
        // Empty queue: every ACK increases; one round = 10 packets.
        let mut seen = Vec::new();
        let mut una = 0;
        for round in 0..6u64 {
            for k in 0..10u64 {
                una += 1;
                ack(&mut c, round * 100 + k, 100, una, una + 10);
            }
            seen.push(c.velocity());
        }
        // Rounds: first sets the direction, then 3 agreeing rounds before doubling.
        assert_eq!(seen, vec![1.0, 1.0, 1.0, 2.0, 4.0, 8.0]);
    }

    #[test]
    fn competitive_mode_when_the_queue_never_empties() {
        let mut c = Copa::new(CopaConfig::default());
        c.slow_start = false;
        c.cwnd = 50.0;
        // RTT_min 50 ms from the start, then a standing queue that varies but never drains.
        ack(&mut c, 0, 50, 1, 50);
        let mut una = 1;
        for i in 1..400u64 {
            una += 1;
            let rtt = 150 + (i % 7) * 5;
            ack(&mut c, i * 5, rtt, una, una + 50);
        }
        assert!(c.in_competitive_mode());
        let d = c.delta();
        assert!(d < 0.5, "1/δ grew per lossless round: δ = {d}");
        c.on_congestion_event(
            Time::from_millis(2_000),
            &CongestionEvent::Loss { bytes_in_flight: 0 },
        );
        assert!((c.delta() - (2.0 * d).min(0.5)).abs() < 1e-12);
        // The queue drains: default mode, δ back to 0.5.
        for i in 0..20u64 {
            una += 1;
            ack(&mut c, 2_100 + i * 5, 51, una, una + 50);
        }
        assert!(!c.in_competitive_mode());
        assert_eq!(c.delta(), 0.5);
    }
}
