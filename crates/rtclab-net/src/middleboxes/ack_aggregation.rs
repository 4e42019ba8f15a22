//! ACK aggregation: feedback coming back through the hop is held and released in batches.
//!
//! Wi-Fi and cellular links deliver acknowledgements in bursts (a block-ack or a scheduling
//! grant releases many at once); the sender sees its ACK clock compressed. The BBR team
//! measured aggregation of up to tens of ms on Wi-Fi (Cardwell et al., "BBR v2", IETF 104
//! ICCRG) and TCP's and GCC's reaction to it is a standard test. Model: every packet in the
//! reverse direction (ACKs, RTCP feedback) is held until the next multiple of `interval_ms`
//! (counted from time zero) and released then, in order; data passes untouched.

use crate::element::{ElementOutput, NetElement};
use crate::middleboxes::{MiddleboxArgs, MiddleboxKind};
use crate::queues::describe;
use rtclab_core::params::{ms, param, Param};
use rtclab_core::{Direction, Packet, Time, TimeDelta};
use std::collections::VecDeque;

pub static KIND: MiddleboxKind = MiddleboxKind {
    name: "ack_aggregation",
    help: "holds the feedback crossing the hop and releases it in batches every `interval_ms`",
    params: || describe(PARAMS, &AckAggregationConfig::default()),
    build: |a: MiddleboxArgs| {
        let mut c = AckAggregationConfig::default();
        a.apply(PARAMS, &mut c)?;
        Ok(Box::new(AckAggregation { cfg: c, held: VecDeque::new() }))
    },
    acts_on_feedback: false,
    simulator_only: super::runs_in_both,
};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AckAggregationConfig {
    /// Batch period.
    pub interval: TimeDelta,
}

impl Default for AckAggregationConfig {
    fn default() -> Self {
        AckAggregationConfig { interval: TimeDelta::from_millis(10) }
    }
}

static PARAMS: &[Param<AckAggregationConfig>] = &[param!(
    AckAggregationConfig,
    "interval_ms",
    "batch period: feedback leaves at multiples of it, ms (10)",
    Real,
    0.001,
    10_000.0,
    |c| c.interval.as_millis_f64(),
    |c, v| c.interval = ms(v)
)];

pub struct AckAggregation {
    cfg: AckAggregationConfig,
    /// (release time, packet), in arrival order.
    held: VecDeque<(Time, Packet)>,
}

impl NetElement for AckAggregation {
    fn handle_packet(&mut self, now: Time, dir: Direction, pkt: Packet, out: &mut ElementOutput) {
        match dir {
            Direction::Forward => out.packets.push(pkt),
            Direction::Reverse => {
                let step = self.cfg.interval.as_nanos().max(1);
                let t = (now - Time::ZERO).as_nanos();
                let release = Time::ZERO + TimeDelta::from_nanos((t / step + 1) * step);
                self.held.push_back((release, pkt));
            }
        }
    }

    fn handle_timeout(&mut self, now: Time, out: &mut ElementOutput) {
        while self.held.front().is_some_and(|x| x.0 <= now) {
            out.packets.push(self.held.pop_front().expect("front exists").1);
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.held.front().map(|x| x.0)
    }

    fn held_by_kind(&self) -> (u64, u64) {
        crate::qdisc::count_kinds(self.held.iter().map(|x| &x.1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtclab_core::FlowId;

    #[test]
    fn feedback_leaves_in_batches_data_passes() {
        let p = [("interval_ms".to_string(), rtclab_core::params::Value::Num(10.0))];
        let rng = rtclab_core::SeedTree::new(1).stream("t");
        let mut m = (KIND.build)(MiddleboxArgs { params: &p, rng }).unwrap();
        let mut out = ElementOutput::default();
        m.handle_packet(Time::from_millis(1), Direction::Forward, Packet::data(FlowId(0), 0, 1500, Time::ZERO), &mut out);
        assert_eq!(out.packets.len(), 1);
        out.packets.clear();
        for (i, t) in [2, 7, 9, 12].into_iter().enumerate() {
            let a = Packet::ack(FlowId(0), i as u64, Time::ZERO, 52, Time::from_millis(t));
            m.handle_packet(Time::from_millis(t), Direction::Reverse, a, &mut out);
        }
        assert!(out.packets.is_empty());
        assert_eq!(m.poll_timeout(), Some(Time::from_millis(10)));
        m.handle_timeout(Time::from_millis(10), &mut out);
        assert_eq!(out.packets.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(m.poll_timeout(), Some(Time::from_millis(20)));
    }
}
