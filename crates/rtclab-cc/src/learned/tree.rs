//! `cc = "tree"`: a media flow's bandwidth estimate from a regression tree over the step
//! observation ([`super::obs`]), evaluated every step (60 ms by default, as the OpenNetLab
//! gym) — the online half of Metis (Meng et al., SIGCOMM'20), with trees written by
//! `rtclab.metis` for the BandwidthEstimation environment. The tree's output is the new
//! estimate in bit/s, clamped to the flow's [min, max] bitrate; before the first step the
//! flow sends at its start bitrate.

use super::obs::{BweObserver, StepClock, OBS_LEN};
use crate::{
    CcMetrics, CcTarget, CongestionController, CongestionEvent, FeedbackReport, PacketResult,
    SentPacket,
};
use rtclab_core::{Rate, Time, TimeDelta};
use rtclab_learn::tree::FlatTree;
use std::sync::Arc;

#[derive(Clone, Debug)]
pub struct TreeCcConfig {
    pub tree: Arc<FlatTree>,
    pub step: TimeDelta,
    pub start_bps: f64,
    pub min_bps: f64,
    pub max_bps: f64,
}

impl TreeCcConfig {
    /// Checks that the tree reads the observation.
    pub fn check(&self) -> Result<(), String> {
        if self.tree.n_features != OBS_LEN {
            return Err(format!(
                "the tree reads {} features; the bandwidth-estimation observation has {OBS_LEN}",
                self.tree.n_features
            ));
        }
        if self.step <= TimeDelta::ZERO {
            return Err("the step must be positive".into());
        }
        Ok(())
    }
}

pub struct TreeController {
    cfg: TreeCcConfig,
    observer: BweObserver,
    clock: StepClock,
    estimate_bps: f64,
    decisions: u64,
}

impl TreeController {
    pub fn new(cfg: TreeCcConfig) -> Self {
        let estimate_bps = cfg.start_bps;
        TreeController {
            clock: StepClock::new(cfg.step),
            cfg,
            observer: BweObserver::default(),
            estimate_bps,
            decisions: 0,
        }
    }

    fn tick(&mut self, now: Time) {
        while self.clock.due(now) {
            let obs = self.observer.close(self.cfg.step, self.estimate_bps);
            let out = self.cfg.tree.predict(&obs);
            if out.is_finite() {
                self.estimate_bps = out.clamp(self.cfg.min_bps, self.cfg.max_bps);
            }
            self.decisions += 1;
        }
    }
}

impl CongestionController for TreeController {
    fn name(&self) -> &'static str {
        "tree"
    }
    fn on_packet_sent(&mut self, now: Time, pkt: &SentPacket) {
        self.tick(now);
        self.observer.on_sent(pkt.size);
    }
    fn on_feedback(&mut self, _now: Time, _fb: &FeedbackReport) {}
    fn on_congestion_event(&mut self, _now: Time, _ev: &CongestionEvent) {}
    fn on_transport_feedback(&mut self, now: Time, packets: &[PacketResult]) {
        self.tick(now);
        self.observer.on_feedback(packets);
    }
    fn handle_timeout(&mut self, now: Time) {
        self.tick(now);
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.clock.next
    }
    fn target(&self) -> CcTarget {
        crate::rate_target(self.estimate_bps, super::PACING_FACTOR)
    }
    fn metrics(&self) -> CcMetrics {
        let mut m = CcMetrics {
            target_rate: Some(Rate::from_bps(self.estimate_bps as u64)),
            ..Default::default()
        };
        m.extra[0] = Some(("tree_decisions", self.decisions as f64));
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decides_every_step_from_the_observation() {
        // estimate = 2 Mbit/s when the mean delay above base <= 10 ms, else 500 kbit/s.
        let json = r#"{"format": "rtclab-tree", "version": 1, "task": "regression", "n_features": 9,
            "nodes": {"feature": [1, -1, -1], "threshold": [10, 0, 0], "left": [1, -1, -1],
                      "right": [2, -1, -1], "value": [0, 2000000, 500000]}}"#;
        let tree = Arc::new(FlatTree::from_json("t", json).unwrap());
        let cfg = TreeCcConfig {
            tree,
            step: TimeDelta::from_millis(60),
            start_bps: 300e3,
            min_bps: 100e3,
            max_bps: 1e7,
        };
        cfg.check().unwrap();
        let mut c = TreeController::new(cfg);
        let t = |ms: i64| Time::ZERO + TimeDelta::from_millis(ms);
        c.handle_timeout(t(0));
        assert_eq!(c.poll_timeout(), Some(t(60)));
        let p = |s: i64, a: i64| PacketResult {
            seq: 0,
            send_time: t(s),
            arrival: Some(t(a)),
            size: 1200,
            probe_cluster: None,
            ce: false,
        };
        c.on_transport_feedback(t(30), &[p(0, 20), p(10, 30)]);
        c.handle_timeout(t(60));
        assert_eq!(c.target().target_rate, Some(Rate::from_bps(2_000_000)));
        assert_eq!(c.target().pacing_rate, Some(Rate::from_bps(5_000_000)));
        c.on_transport_feedback(t(90), &[p(60, 100)]); // 40 ms one-way: 20 above base
        c.handle_timeout(t(120));
        assert_eq!(c.target().target_rate, Some(Rate::from_bps(500_000)));
        let bad = TreeCcConfig {
            tree: Arc::new(
                FlatTree::from_json("t", &json.replace("\"n_features\": 9", "\"n_features\": 3"))
                    .unwrap(),
            ),
            step: TimeDelta::from_millis(60),
            start_bps: 1.0,
            min_bps: 1.0,
            max_bps: 2.0,
        };
        assert!(bad.check().unwrap_err().contains("reads 3 features"));
    }
}
