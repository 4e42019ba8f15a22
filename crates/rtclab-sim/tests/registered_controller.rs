//! A controller registered from Rust at run time (`rtclab_cc::registry`) drives a flow with
//! no edit to the engines: a Vegas-style delay-target window (Brakmo & Peterson 1995's
//! alpha/beta rule on the queue the flow builds), with its parameters from `[flows.params]`.
mod common;
use common::*;
use rtclab_cc::capabilities::Capabilities;
use rtclab_cc::registry::{self, BoxedController, ControllerArgs};
use rtclab_cc::{CcMetrics, CcTarget, CongestionController, CongestionEvent, FeedbackReport};
use rtclab_core::params::Value;
use rtclab_core::Time;
use std::sync::Arc;

/// Vegas: expected = cwnd / base RTT, actual = cwnd / RTT; diff = (expected − actual) ×
/// base RTT packets queued. Grow by one packet per RTT below alpha, shrink above beta.
struct Vegas {
    cwnd: f64,
    mss: f64,
    alpha: f64,
    beta: f64,
    queued: f64,
}

impl CongestionController for Vegas {
    fn name(&self) -> &'static str {
        "vegas_test"
    }
    fn on_feedback(&mut self, _now: Time, fb: &FeedbackReport) {
        let (Some(rtt), Some(base)) = (fb.rtt, fb.min_rtt) else { return };
        let pkts = self.cwnd / self.mss;
        self.queued = pkts * (1.0 - base.as_secs_f64() / rtt.as_secs_f64());
        let per_ack = fb.acked_packets as f64 / pkts; // one packet per RTT in total
        if self.queued < self.alpha {
            self.cwnd += self.mss * per_ack;
        } else if self.queued > self.beta {
            self.cwnd = (self.cwnd - self.mss * per_ack).max(2.0 * self.mss);
        }
    }
    fn on_congestion_event(&mut self, _now: Time, _ev: &CongestionEvent) {
        self.cwnd = (self.cwnd * 0.75).max(2.0 * self.mss);
    }
    fn target(&self) -> CcTarget {
        CcTarget { cwnd_bytes: Some(self.cwnd as u64), ..Default::default() }
    }
    fn metrics(&self) -> CcMetrics {
        CcMetrics {
            extra: rtclab_cc::named(&[Some(("vegas_queued_pkts", self.queued))]),
            ..Default::default()
        }
    }
}

fn factory(a: &ControllerArgs) -> Result<BoxedController, String> {
    let mut v = Vegas {
        cwnd: (a.initial_window * a.packet_size) as f64,
        mss: a.packet_size as f64,
        alpha: 2.0,
        beta: 4.0,
        queued: 0.0,
    };
    for (k, val) in a.params {
        match (k.as_str(), val) {
            ("alpha", Value::Num(x)) => v.alpha = *x,
            ("beta", Value::Num(x)) => v.beta = *x,
            _ => return Err(format!("unknown parameter `{k}`: accepted alpha, beta")),
        }
    }
    if v.alpha > v.beta {
        return Err("`alpha` must not exceed `beta`".into());
    }
    Ok(Box::new(v))
}

const SCENARIO: &str = r#"
duration = "30s"
[link]
capacity = "10Mbps"
queue = { limit = "200ms" }
[metrics]
warmup = "10s"
[[flows]]
kind = "tcp"
cc = "vegas_test"
rtt = "50ms"
params = { alpha = 4, beta = 6 }
"#;

#[test]
fn a_rust_controller_registered_at_run_time_runs_and_keeps_its_queue_target() {
    registry::register("vegas_test", Capabilities::TCP, Arc::new(factory)).unwrap();
    let (out, _) = run(parse(SCENARIO), 1);
    let f = &out.summary["flows"][0];
    assert_eq!(f["cc"], "vegas_test");
    assert!(out.summary["link"]["utilization"].as_f64().unwrap() > 0.95);
    // Vegas holds alpha..beta = 4..6 packets in the queue: 4.8-7.2 ms at 10 Mbit/s, with
    // no loss (a loss-based flow would fill the 200 ms buffer).
    let q = f["queuing_delay_ms"]["p50"].as_f64().unwrap();
    assert!((4.0..8.0).contains(&q), "median queuing delay {q} ms");
    assert_eq!(out.summary["link"]["drops"]["queue_overflow"], 0);
    let queued = col(&out.flows, "vegas_queued_pkts");
    assert!(queued.iter().rev().take(50).all(|q| (3.0..7.5).contains(q)));
    // Its parameters are checked where the scenario is read.
    let bad = SCENARIO.replace("alpha = 4", "alpha = 9");
    let e = rtclab_scenario::from_toml_str(&bad, std::path::Path::new(".")).unwrap_err();
    assert_eq!(e.path, "flows[0].params.alpha");
    assert!(e.message.contains("must not exceed"), "{e}");
}
