//! A media controller driven from outside, step by step (the Gymnasium environment
//! `rtclab/BandwidthEstimation-v0`; sans-IO like every controller: the engine owns the clock).
//!
//! The environment holds an [`AgentHandle`]; between simulation steps it sets the estimate
//! (`target_rate`) and closes the step's observation. An optional *shadow* controller (e.g.
//! GCC) receives the same packets and feedback but does not drive the flow: its target is
//! what that controller would estimate from the same history — the teacher's label when a
//! learned policy imitates it (DAgger: the student drives, the teacher relabels).

use super::obs::{BweObserver, OBS_LEN};
use crate::{
    CcMetrics, CcTarget, CongestionController, CongestionEvent, FeedbackReport, PacketResult,
    SentPacket,
};
use rtclab_core::{Rate, Time, TimeDelta};
use std::sync::{Arc, Mutex, MutexGuard};

/// State shared between the controller (inside the engine) and the environment.
#[derive(Debug)]
pub struct AgentState {
    pub estimate_bps: f64,
    pub observer: BweObserver,
    /// The shadow controller's current target (bit/s), if there is one.
    pub shadow_bps: Option<f64>,
}

/// The environment's end of an agent.
#[derive(Clone, Debug)]
pub struct AgentHandle(Arc<Mutex<AgentState>>);

impl AgentHandle {
    pub fn new(start_bps: f64) -> Self {
        AgentHandle(Arc::new(Mutex::new(AgentState {
            estimate_bps: start_bps,
            observer: BweObserver::default(),
            shadow_bps: None,
        })))
    }

    pub fn lock(&self) -> MutexGuard<'_, AgentState> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Forgets everything (a new episode); `start_bps` is the first estimate.
    pub fn reset(&self, start_bps: f64) {
        let mut s = self.lock();
        s.estimate_bps = start_bps;
        s.observer = BweObserver::default();
        s.shadow_bps = None;
    }

    pub fn set_estimate(&self, bps: f64) {
        self.lock().estimate_bps = bps;
    }

    /// Closes a step of length `step`: (observation, challenge network score, shadow target).
    pub fn close_step(&self, step: TimeDelta) -> ([f64; OBS_LEN], f64, Option<f64>) {
        let mut s = self.lock();
        let est = s.estimate_bps;
        let obs = s.observer.close(step, est);
        (obs, s.observer.network_score(), s.shadow_bps)
    }

    /// A controller for one flow of the run (one flow per agent: a second flow naming the
    /// same agent would feed the same observation).
    pub fn controller(
        &self,
        shadow: Option<Box<dyn CongestionController + Send + Sync>>,
    ) -> AgentController {
        AgentController { shared: self.clone(), shadow }
    }
}

/// The engine's end.
pub struct AgentController {
    shared: AgentHandle,
    shadow: Option<Box<dyn CongestionController + Send + Sync>>,
}

impl AgentController {
    fn sync_shadow(&mut self) {
        if let Some(sh) = &self.shadow {
            let t = sh.target().target_rate.map(|r| r.as_bps() as f64);
            self.shared.lock().shadow_bps = t;
        }
    }
}

impl CongestionController for AgentController {
    fn name(&self) -> &'static str {
        "agent"
    }
    fn on_packet_sent(&mut self, now: Time, pkt: &SentPacket) {
        self.shared.lock().observer.on_sent(pkt.size);
        if let Some(sh) = &mut self.shadow {
            sh.on_packet_sent(now, pkt);
        }
    }
    fn on_feedback(&mut self, now: Time, fb: &FeedbackReport) {
        if let Some(sh) = &mut self.shadow {
            sh.on_feedback(now, fb);
        }
    }
    fn on_congestion_event(&mut self, now: Time, ev: &CongestionEvent) {
        if let Some(sh) = &mut self.shadow {
            sh.on_congestion_event(now, ev);
        }
    }
    fn on_transport_feedback(&mut self, now: Time, packets: &[PacketResult]) {
        self.shared.lock().observer.on_feedback(packets);
        if let Some(sh) = &mut self.shadow {
            sh.on_transport_feedback(now, packets);
        }
        self.sync_shadow();
    }
    fn on_receiver_estimate(&mut self, now: Time, bitrate: Rate) {
        if let Some(sh) = &mut self.shadow {
            sh.on_receiver_estimate(now, bitrate);
        }
        self.sync_shadow();
    }
    fn on_loss_report(&mut self, now: Time, fraction_lost: f64, rtt: Option<TimeDelta>) {
        if let Some(sh) = &mut self.shadow {
            sh.on_loss_report(now, fraction_lost, rtt);
        }
        self.sync_shadow();
    }
    fn handle_timeout(&mut self, now: Time) {
        if let Some(sh) = &mut self.shadow {
            sh.handle_timeout(now);
        }
        self.sync_shadow();
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.shadow.as_ref().and_then(|s| s.poll_timeout())
    }
    fn target(&self) -> CcTarget {
        let bps = self.shared.lock().estimate_bps.max(0.0);
        crate::rate_target(bps, super::PACING_FACTOR)
    }
    fn metrics(&self) -> CcMetrics {
        let s = self.shared.lock();
        let mut m = CcMetrics {
            target_rate: Some(Rate::from_bps(s.estimate_bps.max(0.0) as u64)),
            ..Default::default()
        };
        if let Some(b) = s.shadow_bps {
            m.extra[0] = Some(("shadow_target_mbps", b / 1e6));
        }
        m
    }
}
