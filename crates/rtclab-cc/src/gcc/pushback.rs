//! Congestion-window pushback: libwebrtc `CongestionWindowPushbackController` and
//! `GoogCcNetworkController::UpdateCongestionWindowSize` (spec `gcc.md` §2.10; default
//! `WebRTC-CongestionWindow` = `QueueSize:350,MinBitrate:30000,DropFrame:true`).
//!
//! The data window is `target × (min over the last 32 feedbacks of their max RTT + 350 ms)`,
//! at least 3000 B, averaged with the previous window. Every update (`MaybeTriggerOnNetworkChanged`:
//! each sent packet, each feedback and each 25 ms process interval) compares the bytes in
//! flight (as of the last sent packet or feedback, whichever came last) with it and moves an
//! encoding ratio: ×0.9 above 1.5 windows, ×0.95 above one, reset to 1 under 10 %, else ×1.05
//! (capped at 1). The pushback rate is
//! `target × ratio`, not below 30 kbit/s. In `DropFrame` mode (the default) the target is left
//! alone and the encoder is told to drop frames in proportion instead.

use rtclab_core::TimeDelta;
use std::collections::VecDeque;

const MIN_WINDOW_BYTES: f64 = 2.0 * 1500.0;
const RTT_HISTORY: usize = 32;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PushbackConfig {
    pub enabled: bool,
    /// Queue the window allows on top of the RTT (`QueueSize`, ms).
    pub accepted_queue: TimeDelta,
    pub min_pushback_bps: f64,
    /// Drop frames instead of lowering the target (`DropFrame`).
    pub drop_frame_only: bool,
}

impl Default for PushbackConfig {
    fn default() -> Self {
        PushbackConfig {
            enabled: true,
            accepted_queue: TimeDelta::from_millis(350),
            min_pushback_bps: 30_000.0,
            drop_frame_only: true,
        }
    }
}

#[derive(Clone, Debug)]
pub struct CongestionWindowPushback {
    cfg: PushbackConfig,
    feedback_max_rtts: VecDeque<TimeDelta>,
    window_bytes: Option<f64>,
    outstanding_bytes: u64,
    ratio: f64,
}

impl CongestionWindowPushback {
    pub fn new(cfg: PushbackConfig) -> Self {
        CongestionWindowPushback {
            cfg,
            feedback_max_rtts: VecDeque::new(),
            window_bytes: None,
            outstanding_bytes: 0,
            ratio: 1.0,
        }
    }

    pub fn config(&self) -> &PushbackConfig {
        &self.cfg
    }

    pub fn set_outstanding(&mut self, bytes: u64) {
        self.outstanding_bytes = bytes;
    }

    /// One feedback's largest RTT (feedback time − send time over its packets).
    pub fn on_feedback_rtt(&mut self, max_rtt: TimeDelta) {
        self.feedback_max_rtts.push_back(max_rtt);
        if self.feedback_max_rtts.len() > RTT_HISTORY {
            self.feedback_max_rtts.pop_front();
        }
    }

    /// Recomputes the data window for the loss-based target (`UpdateCongestionWindowSize`).
    pub fn update_window(&mut self, target_bps: f64) {
        let Some(min_rtt) = self.feedback_max_rtts.iter().min() else { return };
        let span = (*min_rtt + self.cfg.accepted_queue).as_secs_f64();
        let w = target_bps * span / 8.0;
        let w = match self.window_bytes {
            Some(prev) => ((w + prev) / 2.0).max(MIN_WINDOW_BYTES),
            None => w.max(MIN_WINDOW_BYTES),
        };
        self.window_bytes = Some(w);
    }

    /// The pushback rate for `target_bps` (moves the encoding ratio; call once per update).
    pub fn update_target(&mut self, target_bps: f64) -> f64 {
        let Some(window) = self.window_bytes.filter(|w| *w > 0.0) else { return target_bps };
        let fill = self.outstanding_bytes as f64 / window;
        if fill > 1.5 {
            self.ratio *= 0.9;
        } else if fill > 1.0 {
            self.ratio *= 0.95;
        } else if fill < 0.1 {
            self.ratio = 1.0;
        } else {
            self.ratio = (self.ratio * 1.05).min(1.0);
        }
        let adjusted = (target_bps * self.ratio).max(self.cfg.min_pushback_bps);
        if target_bps < self.cfg.min_pushback_bps {
            target_bps
        } else {
            adjusted
        }
    }

    pub fn window_bytes(&self) -> Option<f64> {
        self.window_bytes
    }
    pub fn ratio(&self) -> f64 {
        self.ratio
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn controller(rtt_ms: i64, target_bps: f64) -> CongestionWindowPushback {
        let mut c = CongestionWindowPushback::new(PushbackConfig::default());
        c.on_feedback_rtt(TimeDelta::from_millis(rtt_ms));
        c.update_window(target_bps);
        c
    }

    #[test]
    fn full_window_pushes_back_and_empty_window_resets() {
        // Window = 1 Mbit/s × (100 + 350) ms = 56 250 B.
        let mut c = controller(100, 1_000_000.0);
        assert_eq!(c.window_bytes(), Some(56_250.0));
        c.set_outstanding(100_000); // fill 1.78
        assert!((c.update_target(1_000_000.0) - 900_000.0).abs() < 1e-6);
        c.set_outstanding(60_000); // fill 1.07
        assert!((c.update_target(1_000_000.0) - 855_000.0).abs() < 1e-6);
        c.set_outstanding(20_000); // 0.36: recover by 5 %
        assert!((c.update_target(1_000_000.0) - 897_750.0).abs() < 1e-6);
        c.set_outstanding(1_000); // < 10 %: reset
        assert_eq!(c.update_target(1_000_000.0), 1_000_000.0);
    }

    #[test]
    fn floor_and_small_targets() {
        // libwebrtc CongestionWindowPushbackControllerTest: never below 30 kbit/s unless the
        // target itself is lower.
        let mut c = controller(100, 40_000.0);
        c.set_outstanding(1_000_000);
        let mut r = 0.0;
        for _ in 0..100 {
            r = c.update_target(40_000.0);
        }
        assert_eq!(r, 30_000.0);
        assert_eq!(c.update_target(20_000.0), 20_000.0);
        // The window never goes below two full packets.
        let c = controller(0, 1_000.0);
        assert_eq!(c.window_bytes(), Some(3_000.0));
    }
}
