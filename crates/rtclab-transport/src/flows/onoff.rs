//! On/off UDP source: constant-bitrate bursts separated by silences.
//!
//! Lineage: ns-3 `OnOffApplication` (src/applications/model/onoff-application.cc): during an
//! "on" period datagrams leave at `rate_mbps`; "off" periods send nothing. Period lengths are
//! constant, or exponentially distributed with the given means (`exponential = true`, drawn
//! from the flow's own random stream, as ns-3's ExponentialRandomVariable would). The
//! receiver is the datagram sink. A classic bursty cross-traffic source.

use crate::cbr::DatagramSink;
use crate::flows::{FlowArgs, FlowKindEntry};
use rtclab_core::params::{apply, describe, param, Param};
use rtclab_core::{
    Endpoint, FlowId, Packet, Payload, Rate, RngStream, Time, TimeDelta, Transmit,
};

pub static KIND: FlowKindEntry = FlowKindEntry {
    name: "onoff",
    help: "UDP bursts at `rate_mbps` for `on_ms`, silent for `off_ms` (ns-3 OnOffApplication)",
    params: || describe(PARAMS, &OnOffConfig::default()),
    build: |a: FlowArgs| {
        let mut c = OnOffConfig::default();
        apply(PARAMS, &mut c, a.params)?;
        let snd = OnOffSender::new(a.flow, a.packet_size, c, a.rng);
        Ok((Box::new(snd), Box::new(DatagramSink::default())))
    },
};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OnOffConfig {
    pub rate_mbps: f64,
    pub on_ms: f64,
    pub off_ms: f64,
    pub exponential: bool,
}

impl Default for OnOffConfig {
    fn default() -> Self {
        OnOffConfig { rate_mbps: 1.0, on_ms: 1000.0, off_ms: 1000.0, exponential: false }
    }
}

static PARAMS: &[Param<OnOffConfig>] = &[
    param!(OnOffConfig, "rate_mbps", "sending rate while on, Mbit/s (1)", Real, 0.001, 100_000.0, |c| c.rate_mbps, |c, v| c.rate_mbps = v),
    param!(OnOffConfig, "on_ms", "length (or mean length) of an on period, ms (1000)", Real, 0.001, 1e9, |c| c.on_ms, |c, v| c.on_ms = v),
    param!(OnOffConfig, "off_ms", "length (or mean length) of an off period, ms (1000)", Real, 0.0, 1e9, |c| c.off_ms, |c, v| c.off_ms = v),
    param!(OnOffConfig, "exponential", "exponentially distributed periods with those means (false)", Bool, 0.0, 1.0, |c| c.exponential as u8 as f64, |c, v| c.exponential = v != 0.0),
];

pub struct OnOffSender {
    flow: FlowId,
    size: u32,
    interval: TimeDelta,
    cfg: OnOffConfig,
    rng: RngStream,
    seq: u64,
    /// Next datagram time while on; None when stopped.
    next: Option<Time>,
    /// End of the current on period.
    on_until: Time,
}

impl OnOffSender {
    pub fn new(flow: FlowId, size: u32, cfg: OnOffConfig, rng: RngStream) -> Self {
        let rate = Rate::from_bps((cfg.rate_mbps * 1e6) as u64);
        OnOffSender { flow, size, interval: rate.tx_time(size as u64), cfg, rng, seq: 0, next: None, on_until: Time::ZERO }
    }

    fn period(&mut self, mean_ms: f64) -> TimeDelta {
        let ms = if self.cfg.exponential {
            // Inverse transform: -mean * ln(U), U in (0, 1].
            let u = 1.0 - self.rng.next_f64();
            -mean_ms * u.ln()
        } else {
            mean_ms
        };
        TimeDelta::from_secs_f64(ms / 1000.0)
    }
}

impl Endpoint for OnOffSender {
    fn start(&mut self, now: Time) {
        self.on_until = now + self.period(self.cfg.on_ms);
        self.next = Some(now);
    }
    fn stop(&mut self) {
        self.next = None;
    }
    fn handle_packet(&mut self, _now: Time, _pkt: &Packet, _payload: Option<Payload>) {}
    fn handle_timeout(&mut self, _now: Time) {}
    fn poll_transmit(&mut self, now: Time) -> Option<Transmit> {
        let mut due = self.next?;
        // Past the on period: skip the off period (and any on periods too short to hold a
        // datagram) to the next datagram time.
        while due >= self.on_until {
            let on_start = self.on_until + self.period(self.cfg.off_ms);
            self.on_until = on_start + self.period(self.cfg.on_ms);
            due = due.max(on_start);
        }
        self.next = Some(due);
        if due > now {
            return None;
        }
        let p = Packet::data(self.flow, self.seq, self.size, now);
        self.seq += 1;
        self.next = Some(due + self.interval);
        Some(Transmit::from(p))
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent_per_second(cfg: OnOffConfig, secs: i64) -> Vec<u64> {
        let rng = rtclab_core::SeedTree::new(3).stream("t");
        let mut s = OnOffSender::new(FlowId(0), 1250, cfg, rng);
        s.start(Time::ZERO);
        let mut counts = vec![0; secs as usize];
        while let Some(t) = s.poll_timeout() {
            if t >= Time::from_secs(secs as u64) {
                break;
            }
            while let Some(x) = s.poll_transmit(t) {
                counts[((x.pkt.sent_at - Time::ZERO).as_nanos() / 1_000_000_000) as usize] += 1;
            }
        }
        counts
    }

    #[test]
    fn constant_periods_alternate_at_the_rate() {
        // 1 Mbit/s of 1250-byte datagrams = 100 per second while on; 1 s on, 1 s off.
        let c = sent_per_second(OnOffConfig::default(), 6);
        assert_eq!(c, vec![100, 0, 100, 0, 100, 0]);
    }

    #[test]
    fn exponential_periods_average_the_duty_cycle() {
        let cfg = OnOffConfig { on_ms: 200.0, off_ms: 600.0, exponential: true, ..Default::default() };
        let total: u64 = sent_per_second(cfg, 400).iter().sum();
        // Duty cycle 0.25 of 100 datagrams/s over 400 s: about 10,000.
        assert!((8_500..11_500).contains(&total), "{total}");
    }
}
