//! Poisson UDP source: datagrams whose gaps are exponentially distributed.
//!
//! Lineage: the traffic model of the datasets RouteNet was trained on (Rusek et al., "RouteNet:
//! Leveraging Graph Neural Networks for network modeling and optimization in SDN", IEEE JSAC
//! 2020, §V: per source-destination pair, packets arrive as a Poisson process whose mean rate
//! is the traffic matrix's entry), and of M/M/1-style textbook queues. A datagram of
//! `packet_size` bytes leaves at each arrival; inter-arrival gaps are drawn by inverse
//! transform from the flow's own random stream, so a seed gives the same arrivals in every
//! run. Packet sizes are constant (`packet_size`): the queues are M/D/1 per hop. The receiver
//! is the datagram sink, whose one-way delays are the path's delay.

use crate::cbr::DatagramSink;
use crate::flows::{FlowArgs, FlowKindEntry};
use rtclab_core::params::{apply, describe, param, Param};
use rtclab_core::{Endpoint, FlowId, Packet, Payload, RngStream, Time, TimeDelta, Transmit};

pub static KIND: FlowKindEntry = FlowKindEntry {
    name: "poisson",
    help: "UDP datagrams with exponential gaps at a mean `rate_mbps` (a Poisson arrival process)",
    params: || describe(PARAMS, &PoissonConfig::default()),
    build: |a: FlowArgs| {
        let mut c = PoissonConfig::default();
        apply(PARAMS, &mut c, a.params)?;
        let snd = PoissonSender::new(a.flow, a.packet_size, c, a.rng);
        Ok((Box::new(snd), Box::new(DatagramSink::default())))
    },
};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PoissonConfig {
    pub rate_mbps: f64,
}

impl Default for PoissonConfig {
    fn default() -> Self {
        PoissonConfig { rate_mbps: 1.0 }
    }
}

static PARAMS: &[Param<PoissonConfig>] = &[param!(
    PoissonConfig,
    "rate_mbps",
    "mean sending rate, Mbit/s (1)",
    Real,
    0.000_001,
    100_000.0,
    |c| c.rate_mbps,
    |c, v| c.rate_mbps = v
)];

pub struct PoissonSender {
    flow: FlowId,
    size: u32,
    /// Mean gap between datagrams, seconds.
    mean_gap_s: f64,
    rng: RngStream,
    seq: u64,
    /// The next arrival; None when stopped.
    next: Option<Time>,
}

impl PoissonSender {
    pub fn new(flow: FlowId, size: u32, cfg: PoissonConfig, rng: RngStream) -> Self {
        let mean_gap_s = size as f64 * 8.0 / (cfg.rate_mbps * 1e6);
        PoissonSender { flow, size, mean_gap_s, rng, seq: 0, next: None }
    }

    /// An exponential gap: -mean · ln(U), U in (0, 1].
    fn gap(&mut self) -> TimeDelta {
        let u = 1.0 - self.rng.next_f64();
        TimeDelta::from_secs_f64(-self.mean_gap_s * u.ln())
    }
}

impl Endpoint for PoissonSender {
    fn start(&mut self, now: Time) {
        // The first arrival is one gap after the start, as in any Poisson process.
        let g = self.gap();
        self.next = Some(now + g);
    }
    fn stop(&mut self) {
        self.next = None;
    }
    fn handle_packet(&mut self, _now: Time, _pkt: &Packet, _payload: Option<Payload>) {}
    fn handle_timeout(&mut self, _now: Time) {}
    fn poll_transmit(&mut self, now: Time) -> Option<Transmit> {
        let due = self.next?;
        if due > now {
            return None;
        }
        let p = Packet::data(self.flow, self.seq, self.size, now);
        self.seq += 1;
        let g = self.gap();
        self.next = Some(due + g);
        Some(Transmit::from(p))
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gaps(rate_mbps: f64, n: usize) -> Vec<f64> {
        let rng = rtclab_core::SeedTree::new(7).stream("t");
        let mut s = PoissonSender::new(FlowId(0), 1250, PoissonConfig { rate_mbps }, rng);
        s.start(Time::ZERO);
        let mut last = Time::ZERO;
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let t = s.poll_timeout().unwrap();
            let x = s.poll_transmit(t).expect("due at its own timeout");
            out.push((x.pkt.sent_at - last).as_secs_f64());
            last = x.pkt.sent_at;
            assert!(s.poll_transmit(t).is_none() || s.poll_timeout() == Some(t));
        }
        out
    }

    #[test]
    fn mean_rate_and_exponential_spread() {
        // 1 Mbit/s of 1250-byte datagrams: mean gap 10 ms. An exponential's standard deviation
        // equals its mean and P(gap > mean) = 1/e.
        let g = gaps(1.0, 40_000);
        let n = g.len() as f64;
        let mean = g.iter().sum::<f64>() / n;
        let sd = (g.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
        let above = g.iter().filter(|&&x| x > 0.010).count() as f64 / n;
        assert!((mean - 0.010).abs() < 0.0003, "mean {mean}");
        assert!((sd / mean - 1.0).abs() < 0.03, "cv {}", sd / mean);
        assert!((above - (-1f64).exp()).abs() < 0.01, "P(gap > mean) {above}");
    }

    #[test]
    fn same_seed_same_arrivals() {
        assert_eq!(gaps(3.0, 100), gaps(3.0, 100));
    }
}
