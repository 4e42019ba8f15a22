//! An element on both directions of the path: it sees data going forward and ACKs coming
//! back (the shape of Zhuge's access point), and can delay the feedback.
mod common;
use common::*;
use rtclab_core::{Direction, Packet, PacketKind, Time, TimeDelta};
use rtclab_net::{AnyElement, ElementOutput, NetElement};
use rtclab_sim::Simulation;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Passes data through, holds ACKs for a fixed time; counts what it saw each way.
struct AckHolder {
    hold: TimeDelta,
    held: VecDeque<(Time, Packet)>,
    data_seen: Arc<AtomicU64>,
    acks_seen: Arc<AtomicU64>,
}

impl NetElement for AckHolder {
    fn handle_packet(&mut self, now: Time, dir: Direction, pkt: Packet, out: &mut ElementOutput) {
        match (dir, pkt.kind) {
            (Direction::Forward, PacketKind::Data) => {
                self.data_seen.fetch_add(1, Ordering::Relaxed);
                out.packets.push(pkt);
            }
            (Direction::Reverse, PacketKind::Ack) => {
                self.acks_seen.fetch_add(1, Ordering::Relaxed);
                self.held.push_back((now + self.hold, pkt));
            }
            _ => panic!("unexpected {dir:?} {:?}", pkt.kind),
        }
    }
    fn handle_timeout(&mut self, now: Time, out: &mut ElementOutput) {
        while self.held.front().is_some_and(|x| x.0 <= now) {
            out.packets.push(self.held.pop_front().unwrap().1);
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.held.front().map(|x| x.0)
    }
}

const SCN: &str = r#"duration = "10s"
[link]
capacity = "10Mbps"
queue = { limit = "100pkt" }
[[flows]]
kind = "tcp"
cc = "cubic"
rtt = "40ms"
"#;

#[test]
fn middlebox_sees_both_directions_and_delays_feedback() {
    let (plain, _) = run(parse(SCN), 1);
    let data = Arc::new(AtomicU64::new(0));
    let acks = Arc::new(AtomicU64::new(0));
    let mut sim = Simulation::new(parse(SCN), 1);
    sim.attach_middlebox(
        AnyElement::Custom(Box::new(AckHolder {
            hold: TimeDelta::from_millis(10),
            held: VecDeque::new(),
            data_seen: data.clone(),
            acks_seen: acks.clone(),
        })),
        true,
        true,
    );
    assert!(!sim.run_until(Time::from_secs(5)));
    assert_eq!(sim.now(), Time::from_secs(5));
    assert!(sim.run_until(Time::from_secs(60)));
    let out = sim.finish();
    let st = out.stats;
    assert_eq!(data.load(Ordering::Relaxed), st.sent_packets);
    assert_eq!(acks.load(Ordering::Relaxed), st.sent_acks);
    // The RTT with an empty queue (the minimum smoothed RTT) grows by the 10 ms hold.
    let srtt = |o: &rtclab_sim::RunOutput| {
        col(&o.flows, "srtt_ms").iter().copied().filter(|x| x.is_finite()).fold(f64::MAX, f64::min)
    };
    let (a, b) = (srtt(&plain), srtt(&out));
    assert!((b - a - 10.0).abs() < 3.0, "srtt {a:.1} -> {b:.1} ms");
}
