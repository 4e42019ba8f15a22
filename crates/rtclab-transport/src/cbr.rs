//! Constant-bitrate UDP source: fixed-size datagrams at a fixed interval, no feedback; and
//! the datagram sink that receives them.

use rtclab_core::{
    Endpoint, EndpointEvent, FlowId, Packet, Payload, Rate, Time, TimeDelta, Transmit,
};

#[derive(Clone, Copy, Debug)]
pub struct CbrConfig {
    pub rate: Rate,
    pub packet_size: u32,
}

pub struct CbrSender {
    flow: FlowId,
    interval: TimeDelta,
    size: u32,
    next: Option<Time>,
    seq: u64,
}

impl CbrSender {
    pub fn new(flow: FlowId, cfg: CbrConfig) -> Self {
        CbrSender {
            flow,
            interval: cfg.rate.tx_time(cfg.packet_size as u64),
            size: cfg.packet_size,
            next: None,
            seq: 0,
        }
    }
    pub fn start(&mut self, now: Time) {
        self.next = Some(now);
    }
    pub fn stop(&mut self) {
        self.next = None;
    }
    pub fn packets_sent(&self) -> u64 {
        self.seq
    }
    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        let due = self.next?;
        if due > now {
            return None;
        }
        let p = Packet::data(self.flow, self.seq, self.size, now);
        self.seq += 1;
        self.next = Some(due + self.interval);
        Some(p)
    }
    pub fn poll_timeout(&self) -> Option<Time> {
        self.next
    }
}

impl Endpoint for CbrSender {
    fn start(&mut self, now: Time) {
        CbrSender::start(self, now)
    }
    fn stop(&mut self) {
        CbrSender::stop(self)
    }
    fn handle_packet(&mut self, _now: Time, _pkt: &Packet, _payload: Option<Payload>) {}
    fn handle_timeout(&mut self, _now: Time) {}
    fn poll_transmit(&mut self, now: Time) -> Option<Transmit> {
        CbrSender::poll_transmit(self, now).map(Transmit::from)
    }
    fn poll_timeout(&self) -> Option<Time> {
        CbrSender::poll_timeout(self)
    }
}

/// Receives datagrams; every byte counts as delivered (no ordering, no feedback).
#[derive(Debug, Default)]
pub struct DatagramSink {
    pub received_packets: u64,
    delivered: Option<u64>,
}

impl Endpoint for DatagramSink {
    fn handle_packet(&mut self, _now: Time, pkt: &Packet, _payload: Option<Payload>) {
        self.received_packets += 1;
        *self.delivered.get_or_insert(0) += pkt.size as u64;
    }
    fn handle_timeout(&mut self, _now: Time) {}
    fn poll_transmit(&mut self, _now: Time) -> Option<Transmit> {
        None
    }
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    fn poll_event(&mut self) -> Option<EndpointEvent> {
        self.delivered.take().map(|goodput_bytes| EndpointEvent::Delivered { goodput_bytes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emits_at_the_configured_rate() {
        let mut s =
            CbrSender::new(FlowId(0), CbrConfig { rate: Rate::from_mbps(1), packet_size: 1250 });
        s.start(Time::ZERO);
        let mut n = 0;
        while let Some(t) = s.poll_timeout() {
            if t >= Time::from_secs(1) {
                break;
            }
            while s.poll_transmit(t).is_some() {
                n += 1;
            }
        }
        assert_eq!(n, 100); // 1 Mbit/s / 10 kbit per packet
    }
}
