//! A wireless access point's transmit side: the link's queue discipline feeds a MAC queue,
//! which leaves in A-MPDU aggregates over a channel shared, by DCF contention, with other
//! stations. A `Link` with a `WifiMac` uses it instead of its serializer.
//!
//! This is a model of what shapes an RTC flow's latency at a Wi-Fi AP, not 802.11 bit-exactness:
//! - **MAC queue** (ns-3 `WifiMacQueue`, 100 packets) behind the qdisc, flow-controlled the way
//!   ns-3's Wi-Fi device stops its traffic-control queue: the qdisc is dequeued whenever the
//!   MAC queue has room, so the backlog forms in the qdisc once the MAC queue is full.
//! - **A-MPDU aggregation**: when the AP wins the channel it sends everything queued up to
//!   `ampdu_bytes` (65 535, 802.11n), `ampdu_packets` (64, the BlockAck window) and `max_ppdu`
//!   (5.484 ms, HT aPPDUMaxTime) in one PPDU; every packet of it reaches the client at the end
//!   of the PPDU (bursty departures). With `ampdu_wait` > 0 the AP holds a partial aggregate
//!   until its head has waited that long or a full one is queued.
//! - **Airtime** of a PPDU: `preamble` + payload (packets + `mpdu_overhead` each) at the PHY rate,
//!   which follows the link's capacity model (constant, schedule or trace: a trace-driven PHY
//!   rate), then `ack` (SIFS + BlockAck) during which the channel stays busy.
//! - **Channel access** (IEEE 802.11 DCF/EDCA best effort as Bianchi models it: every
//!   contender counts down a random backoff of [0, CW] slots after AIFS of idle channel; the
//!   smallest counter transmits; counters reaching zero in the same slot collide; a collision
//!   doubles CW up to `cw_max`, a success resets it to `cw_min`; backoff counters freeze while
//!   others transmit). The AP keeps a post-backoff counter, so a frame arriving to an idle AP
//!   whose counter already ran out goes after AIFS. A collided aggregate is sent again;
//!   after `retry_limit` retries its packets are dropped (`retry_limit`).
//! - **Contention** (optional): `stations` other saturated stations (bulk uploads, or other APs
//!   on the same channel) contend from `stations_start_s` to `stations_stop_s`, each sending
//!   PPDUs of `station_bytes` at the same PHY rate (capped at `max_ppdu`). They carry no
//!   packets of the scenario: they only take airtime and cause collisions.
//! - **Uplink stations** (optional, `uplink`): the link's reverse direction crosses the same
//!   channel. Each flow whose packets travel it (data of an uplink flow, feedback of a downlink
//!   one) is a client station with its own drop-tail queue (`station_queue` packets) and backoff,
//!   contending with the AP and the saturated stations by the same rules, sending A-MPDUs of
//!   its queued packets at the channel's PHY rate (ns3-rmcat's Wi-Fi cases: a station per flow).
//!
//! Simplifications, documented in docs/algorithms/wifi_ap.md: no PHY errors (put a `loss`
//! on the link for those), no RTS/CTS, no rate adaptation beyond the capacity model, one
//! access category, a collision destroys the whole PPDU, and the AP's frame arriving
//! mid-countdown joins the countdown in progress with its post-backoff counter.
//!
//! Lineage: Bianchi, *Performance Analysis of the IEEE 802.11 Distributed Coordination
//! Function* (JSAC 2000); IEEE 802.11-2016 §10.3 (DCF), §10.22 (EDCA), §10.12 (A-MPDU); the
//! Zhuge evaluation's ns-3 Wi-Fi mode (802.11n 2.4 GHz, `WifiMacQueue` of 100 packets;
//! spec zhuge-metis.md A.8).

use crate::any_qdisc::AnyQdisc;
use crate::capacity::CapacityModel;
use crate::element::{DequeueRecord, Dropped, ElementOutput};
use crate::qdisc::{Backlog, Dequeued, DropReason, Qdisc};
use rtclab_core::params::{describe, Param, ParamInfo};
use rtclab_core::{param, Packet, PacketKind, RngStream, Time, TimeDelta};
use std::collections::VecDeque;

/// The MAC's constants; defaults are 802.11n at 2.4 GHz, best-effort access category.
#[derive(Clone, Debug, PartialEq)]
pub struct WifiConfig {
    /// MAC queue length, packets.
    pub mac_queue: u32,
    pub ampdu_bytes: u32,
    pub ampdu_packets: u32,
    /// Longest PPDU (preamble included).
    pub max_ppdu: TimeDelta,
    /// How long a partial aggregate may wait for more packets before the AP contends.
    pub ampdu_wait: TimeDelta,
    pub slot: TimeDelta,
    /// SIFS + AIFSN × slot.
    pub aifs: TimeDelta,
    pub preamble: TimeDelta,
    /// SIFS + BlockAck after every PPDU (the ACK timeout after a collision).
    pub ack: TimeDelta,
    /// Bytes added to each packet inside an A-MPDU (delimiter, MAC header, LLC, FCS).
    pub mpdu_overhead: u32,
    pub cw_min: u32,
    pub cw_max: u32,
    pub retry_limit: u32,
    /// Other saturated stations sharing the channel.
    pub stations: u32,
    pub stations_start: Time,
    pub stations_stop: Time,
    /// Payload of each of their PPDUs, bytes.
    pub station_bytes: u32,
    /// The link's reverse direction is the clients' uplink on this channel (a station per flow).
    pub uplink: bool,
    /// Each uplink station's queue, packets.
    pub station_queue: u32,
}

impl Default for WifiConfig {
    fn default() -> Self {
        WifiConfig {
            mac_queue: 100,
            ampdu_bytes: 65_535,
            ampdu_packets: 64,
            max_ppdu: TimeDelta::from_micros(5_484),
            ampdu_wait: TimeDelta::ZERO,
            slot: TimeDelta::from_micros(9),
            aifs: TimeDelta::from_micros(37),
            preamble: TimeDelta::from_micros(36),
            ack: TimeDelta::from_micros(42),
            mpdu_overhead: 42,
            cw_min: 15,
            cw_max: 1023,
            retry_limit: 7,
            stations: 0,
            stations_start: Time::ZERO,
            stations_stop: Time::MAX,
            station_bytes: 65_535,
            uplink: false,
            station_queue: 1000,
        }
    }
}

fn us(v: f64) -> TimeDelta {
    TimeDelta::from_secs_f64(v / 1e6)
}

fn secs_or_never(v: f64) -> Time {
    if v >= 1e9 {
        Time::MAX
    } else {
        Time::from_secs_f64(v)
    }
}

#[rustfmt::skip]
pub static WIFI_PARAMS: &[Param<WifiConfig>] = &[
    param!(WifiConfig, "mac_queue", "MAC queue behind the qdisc, packets (100, ns-3 WifiMacQueue)", Integer, 1.0, 100_000.0,
        |c| c.mac_queue as f64, |c, v| c.mac_queue = v as u32),
    param!(WifiConfig, "ampdu_bytes", "largest A-MPDU, bytes (65535, 802.11n)", Integer, 1600.0, 6_500_631.0,
        |c| c.ampdu_bytes as f64, |c, v| c.ampdu_bytes = v as u32),
    param!(WifiConfig, "ampdu_packets", "most packets in one A-MPDU (64, the BlockAck window)", Integer, 1.0, 1024.0,
        |c| c.ampdu_packets as f64, |c, v| c.ampdu_packets = v as u32),
    param!(WifiConfig, "max_ppdu_us", "longest PPDU, preamble included, µs (5484, HT aPPDUMaxTime)", Real, 100.0, 100_000.0,
        |c| c.max_ppdu.as_secs_f64() * 1e6, |c, v| c.max_ppdu = us(v)),
    param!(WifiConfig, "ampdu_wait_ms", "hold a partial aggregate until its head waited this long, ms (0)", Real, 0.0, 100.0,
        |c| c.ampdu_wait.as_millis_f64(), |c, v| c.ampdu_wait = rtclab_core::params::ms(v)),
    param!(WifiConfig, "slot_us", "backoff slot, µs (9)", Real, 1.0, 100.0,
        |c| c.slot.as_secs_f64() * 1e6, |c, v| c.slot = us(v)),
    param!(WifiConfig, "aifs_us", "idle time before the backoff counts, SIFS + AIFSN × slot, µs (37)", Real, 0.0, 1000.0,
        |c| c.aifs.as_secs_f64() * 1e6, |c, v| c.aifs = us(v)),
    param!(WifiConfig, "preamble_us", "PHY preamble and header of a PPDU, µs (36, HT-mixed)", Real, 0.0, 1000.0,
        |c| c.preamble.as_secs_f64() * 1e6, |c, v| c.preamble = us(v)),
    param!(WifiConfig, "ack_us", "SIFS + BlockAck after each PPDU, µs (42)", Real, 0.0, 1000.0,
        |c| c.ack.as_secs_f64() * 1e6, |c, v| c.ack = us(v)),
    param!(WifiConfig, "mpdu_overhead", "bytes added to each packet in an A-MPDU (42)", Integer, 0.0, 1000.0,
        |c| c.mpdu_overhead as f64, |c, v| c.mpdu_overhead = v as u32),
    param!(WifiConfig, "cw_min", "smallest contention window, slots (15)", Integer, 0.0, 1023.0,
        |c| c.cw_min as f64, |c, v| c.cw_min = v as u32),
    param!(WifiConfig, "cw_max", "largest contention window, slots (1023)", Integer, 0.0, 65_535.0,
        |c| c.cw_max as f64, |c, v| c.cw_max = v as u32),
    param!(WifiConfig, "retry_limit", "retries of a collided aggregate before its packets are dropped (7)", Integer, 0.0, 100.0,
        |c| c.retry_limit as f64, |c, v| c.retry_limit = v as u32),
    param!(WifiConfig, "stations", "other saturated stations contending for the channel (0)", Integer, 0.0, 1000.0,
        |c| c.stations as f64, |c, v| c.stations = v as u32),
    param!(WifiConfig, "stations_start_s", "when they start contending, s (0)", Real, 0.0, 1e9,
        |c| c.stations_start.as_secs_f64(), |c, v| c.stations_start = Time::from_secs_f64(v)),
    param!(WifiConfig, "stations_stop_s", "when they stop, s (never: 1e9)", Real, 0.0, 1e9,
        |c| if c.stations_stop == Time::MAX { 1e9 } else { c.stations_stop.as_secs_f64() },
        |c, v| c.stations_stop = secs_or_never(v)),
    param!(WifiConfig, "station_bytes", "payload of each of their PPDUs, bytes (65535)", Integer, 1.0, 6_500_631.0,
        |c| c.station_bytes as f64, |c, v| c.station_bytes = v as u32),
    param!(WifiConfig, "uplink", "the reverse direction is the clients' uplink on this channel: a contending station per flow (false: it crosses for free)", Bool, 0.0, 1.0,
        |c| c.uplink as u8 as f64, |c, v| c.uplink = v != 0.0),
    param!(WifiConfig, "station_queue", "each uplink station's queue, packets (1000)", Integer, 1.0, 1_000_000.0,
        |c| c.station_queue as f64, |c, v| c.station_queue = v as u32),
];

/// The parameters `wifi = { ... }` accepts.
pub fn params() -> Vec<ParamInfo> {
    describe(WIFI_PARAMS, &WifiConfig::default())
}

/// A configuration from named parameters, checked one by one and then together.
pub fn config(
    given: &[(String, rtclab_core::params::Value)],
) -> Result<WifiConfig, rtclab_core::params::SettingsError> {
    use rtclab_core::params::SettingsError::Inconsistent;
    let mut c = WifiConfig::default();
    rtclab_core::params::apply(WIFI_PARAMS, &mut c, given)?;
    if c.cw_max < c.cw_min {
        return Err(Inconsistent(format!("cw_max ({}) is below cw_min ({})", c.cw_max, c.cw_min)));
    }
    if c.stations_stop <= c.stations_start {
        return Err(Inconsistent("stations_stop_s must be after stations_start_s".into()));
    }
    if c.max_ppdu <= c.preamble {
        return Err(Inconsistent("max_ppdu_us must exceed preamble_us".into()));
    }
    Ok(c)
}

/// What happened on the channel, for the summary and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WifiStats {
    /// PPDUs the AP sent successfully, and the packets in them.
    pub ap_txops: u64,
    pub ap_packets: u64,
    /// Successful PPDUs of the other stations.
    pub other_txops: u64,
    /// Slots in which two or more transmitters collided.
    pub collisions: u64,
    /// Packets dropped after `retry_limit` retries.
    pub retry_drops: u64,
    /// Channel time used by the AP's successful PPDUs (+ their ACK), ns.
    pub ap_airtime_ns: u64,
    /// Successful PPDUs of the uplink stations (`uplink`), the packets in them, and how many
    /// stations (flows) sent on the uplink.
    pub uplink_txops: u64,
    pub uplink_packets: u64,
    pub uplink_stations: u64,
}

#[derive(Clone, Copy, Debug)]
struct Backoff {
    counter: u32,
    stage: u32,
}

#[derive(Clone, Copy, Debug)]
struct MacEntry {
    pkt: Packet,
    /// When it entered the MAC queue, and its time in the qdisc before that.
    at: Time,
    qdisc_sojourn: TimeDelta,
}

/// A client station sending on the uplink (`uplink`): one per flow.
struct Station {
    queue: VecDeque<(Packet, Time)>,
    bytes: u64,
    backoff: Backoff,
    retry: Vec<Packet>,
    retry_bytes: u64,
}

impl Station {
    /// When it wants the channel (None: nothing to send).
    fn ready(&self) -> Option<Time> {
        if !self.retry.is_empty() {
            return Some(Time::ZERO);
        }
        self.queue.front().map(|e| e.1)
    }
}

pub struct WifiMac {
    cfg: WifiConfig,
    rng: RngStream,
    mac: VecDeque<MacEntry>,
    mac_bytes: u64,
    /// An aggregate that collided, sent again before anything else.
    retry: Vec<Packet>,
    retry_bytes: u64,
    /// The AP's PPDU on the air and when its last bit arrives.
    air: Vec<Packet>,
    air_end: Option<Time>,
    /// The channel is busy (a PPDU and its ACK) until then; the next countdown starts there.
    busy_until: Time,
    /// When the current countdown ends (the next transmission), if anyone contends.
    next_tx: Option<Time>,
    ap: Backoff,
    others: Vec<Backoff>,
    /// Since when a full aggregate has been queued (with `ampdu_wait`).
    full_since: Option<Time>,
    aggregates: u64,
    stats: WifiStats,
    /// Uplink stations, and the station of each flow id (`uplink`).
    up: Vec<Station>,
    station_of: Vec<u32>,
}

const NO_STATION: u32 = u32::MAX;

impl WifiMac {
    pub fn new(cfg: WifiConfig, mut rng: RngStream) -> Self {
        let draw = |rng: &mut RngStream| rng.below(cfg.cw_min as u64 + 1) as u32;
        let ap = Backoff { counter: draw(&mut rng), stage: 0 };
        let others =
            (0..cfg.stations).map(|_| Backoff { counter: draw(&mut rng), stage: 0 }).collect();
        let mut m = WifiMac {
            cfg,
            rng,
            mac: VecDeque::new(),
            mac_bytes: 0,
            retry: Vec::new(),
            retry_bytes: 0,
            air: Vec::new(),
            air_end: None,
            busy_until: Time::ZERO,
            next_tx: None,
            ap,
            others,
            full_since: None,
            aggregates: 0,
            stats: WifiStats::default(),
            up: Vec::new(),
            station_of: Vec::new(),
        };
        m.schedule();
        m
    }

    pub fn config(&self) -> &WifiConfig {
        &self.cfg
    }

    pub fn stats(&self) -> WifiStats {
        self.stats
    }

    /// Packets and bytes waiting at the AP outside the qdisc (MAC queue and a retried
    /// aggregate), not counting a PPDU on the air.
    pub fn backlog(&self) -> Backlog {
        Backlog {
            packets: (self.mac.len() + self.retry.len()) as u32,
            bytes: self.mac_bytes + self.retry_bytes,
        }
    }

    /// Packets and bytes waiting at the uplink stations (queues and retried aggregates).
    pub fn uplink_backlog(&self) -> Backlog {
        let mut b = Backlog { packets: 0, bytes: 0 };
        for st in &self.up {
            b.packets += (st.queue.len() + st.retry.len()) as u32;
            b.bytes += st.bytes + st.retry_bytes;
        }
        b
    }

    /// (data, acks) held: MAC queue, retried aggregate, the uplink stations' packets and the
    /// PPDU on the air.
    pub fn held_by_kind(&self) -> (u64, u64) {
        let mut held = (0, 0);
        let up = self.up.iter().flat_map(|st| st.queue.iter().map(|e| &e.0).chain(&st.retry));
        let pkts = self.mac.iter().map(|e| &e.pkt).chain(&self.retry).chain(&self.air).chain(up);
        for p in pkts {
            match p.kind {
                PacketKind::Data => held.0 += 1,
                PacketKind::Ack => held.1 += 1,
            }
        }
        held
    }

    pub fn busy(&self) -> bool {
        self.air_end.is_some()
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        match (self.air_end, self.next_tx) {
            (Some(a), Some(t)) => Some(a.min(t)),
            (a, t) => a.or(t),
        }
    }

    fn cw(&self, stage: u32) -> u32 {
        let cw = (self.cfg.cw_min as u64 + 1) << stage.min(20);
        ((cw - 1).min(self.cfg.cw_max as u64)) as u32
    }

    fn draw(&mut self, stage: u32) -> u32 {
        let cw = self.cw(stage);
        self.rng.below(cw as u64 + 1) as u32
    }

    /// Moves packets from the qdisc into the MAC queue while it has room.
    fn refill(&mut self, now: Time, q: &mut AnyQdisc, out: &mut ElementOutput) {
        while (self.mac.len() as u32) < self.cfg.mac_queue {
            let Some(Dequeued { pkt, sojourn }) = q.dequeue(now, out) else { break };
            self.mac_bytes += pkt.size as u64;
            self.mac.push_back(MacEntry { pkt, at: now, qdisc_sojourn: sojourn });
        }
        if self.full_since.is_none() && self.full_aggregate_queued() {
            self.full_since = Some(now);
        }
    }

    fn full_aggregate_queued(&self) -> bool {
        self.mac.len() as u32 >= self.cfg.ampdu_packets
            || self.mac_bytes >= self.cfg.ampdu_bytes as u64
    }

    /// When the AP wants the channel (None: nothing to send).
    fn ap_ready(&self) -> Option<Time> {
        if !self.retry.is_empty() {
            return Some(Time::ZERO);
        }
        let head = self.mac.front()?;
        let waited = head.at + self.cfg.ampdu_wait;
        Some(self.full_since.map_or(waited, |f| f.min(waited)))
    }

    /// The other stations' countdown start, if they contend in the round starting at `rs`.
    fn others_start(&self, rs: Time) -> Option<Time> {
        let c = &self.cfg;
        (c.stations > 0 && rs < c.stations_stop).then(|| rs.max(c.stations_start))
    }

    /// The end of the countdown starting when the channel goes idle, or None if nobody
    /// contends.
    fn schedule(&mut self) {
        let rs = self.busy_until;
        let slot = self.cfg.slot.as_nanos();
        let at =
            |start: Time, n: u32| start + self.cfg.aifs + TimeDelta::from_nanos(slot * n as i64);
        let others = self.others_start(rs).map(|s| {
            let m = self.others.iter().map(|b| b.counter).min().unwrap_or(0);
            at(s, m)
        });
        let ap = self.ap_ready().map(|ready| at(rs, self.ap.counter).max(ready));
        let up = self
            .up
            .iter()
            .filter_map(|st| st.ready().map(|ready| at(rs, st.backoff.counter).max(ready)))
            .min();
        self.next_tx = [others, ap, up].into_iter().flatten().min();
    }

    /// Whole slots counted down between a countdown's start and `t`.
    fn slots_since(&self, start: Time, t: Time) -> u32 {
        let from = start + self.cfg.aifs;
        if t < from {
            return 0;
        }
        ((t - from).as_nanos() / self.cfg.slot.as_nanos()) as u32
    }

    /// The end of a PPDU of `bytes` payload starting at `t` (capacity-integrated, capped at
    /// `max_ppdu`).
    fn ppdu_end(&self, cap: &CapacityModel, t: Time, bytes: u64) -> Time {
        let data_start = t + self.cfg.preamble;
        let end = cap.finish_time(data_start, bytes);
        end.min(t + self.cfg.max_ppdu)
    }

    /// Most payload bytes one aggregate may carry at `t`: the A-MPDU cap, and what the PHY
    /// rate sends within `max_ppdu` after the preamble.
    fn aggregate_limit(&self, cap: &CapacityModel, t: Time) -> u64 {
        let c = &self.cfg;
        let rate = cap.rate_at(t).as_bps() as f64;
        let airtime = if rate > 0.0 {
            ((c.max_ppdu - c.preamble).as_secs_f64() * rate / 8.0) as u64
        } else {
            0
        };
        (c.ampdu_bytes as u64).min(airtime)
    }

    /// Takes the next aggregate from the MAC queue at `t`, reporting each packet as dequeued.
    fn form_aggregate(
        &mut self,
        t: Time,
        cap: &CapacityModel,
        q: &mut AnyQdisc,
        observed: bool,
        out: &mut ElementOutput,
    ) -> (Vec<Packet>, u64) {
        if let Some(retried) = take_retry(&mut self.retry, &mut self.retry_bytes) {
            return retried;
        }
        self.refill(t, q, out);
        let limit = self.aggregate_limit(cap, t);
        let c = &self.cfg;
        let (mut agg, mut bytes) = (Vec::new(), 0u64);
        self.aggregates += 1;
        while let Some(e) = self.mac.front() {
            let add = e.pkt.size as u64 + c.mpdu_overhead as u64;
            let fits = bytes + add <= limit && (agg.len() as u32) < c.ampdu_packets;
            if !agg.is_empty() && !fits {
                break;
            }
            let mut e = self.mac.pop_front().expect("front exists");
            self.mac_bytes -= e.pkt.size as u64;
            let waited = t - e.at;
            e.pkt.queue_delay += e.qdisc_sojourn + waited;
            bytes += add;
            agg.push(e.pkt);
            if observed {
                out.dequeues.push(DequeueRecord {
                    pkt: e.pkt,
                    sojourn: e.qdisc_sojourn + waited,
                    backlog: Backlog { packets: 0, bytes: 0 },
                    aggregate: Some(self.aggregates),
                    leaves_at: None,
                });
            }
        }
        self.full_since = None;
        self.refill(t, q, out);
        if observed {
            // What the AP holds after the aggregate left (qdisc + MAC queue; no aggregate
            // waits for a retry while a new one forms).
            let after = q.backlog() + self.backlog();
            let n = out.dequeues.len();
            for r in &mut out.dequeues[n - agg.len()..] {
                r.backlog = after;
            }
        }
        (agg, bytes)
    }

    /// A packet reached the AP: into the qdisc, and on to the MAC queue if it has room.
    pub fn enqueue(&mut self, now: Time, pkt: Packet, q: &mut AnyQdisc, out: &mut ElementOutput) {
        q.enqueue(now, pkt, out);
        let was_ready = self.ap_ready();
        self.refill(now, q, out);
        if self.ap_ready() != was_ready {
            self.schedule();
        }
    }

    /// A packet of the link's reverse direction reached its client station (`uplink`): into
    /// that flow's station queue (dropped when it is full).
    pub fn enqueue_uplink(&mut self, now: Time, pkt: Packet, out: &mut ElementOutput) {
        let f = pkt.flow.0 as usize;
        if self.station_of.len() <= f {
            self.station_of.resize(f + 1, NO_STATION);
        }
        if self.station_of[f] == NO_STATION {
            self.station_of[f] = self.up.len() as u32;
            let counter = self.draw(0);
            self.up.push(Station {
                queue: VecDeque::new(),
                bytes: 0,
                backoff: Backoff { counter, stage: 0 },
                retry: Vec::new(),
                retry_bytes: 0,
            });
            self.stats.uplink_stations += 1;
        }
        let st = &mut self.up[self.station_of[f] as usize];
        if st.queue.len() as u32 >= self.cfg.station_queue {
            out.drops.push(Dropped { pkt, reason: DropReason::QueueOverflow });
            return;
        }
        let was_idle = st.ready().is_none();
        st.bytes += pkt.size as u64;
        st.queue.push_back((pkt, now));
        if was_idle {
            self.schedule();
        }
    }

    /// Takes station `i`'s next aggregate at `t` (its retried one first).
    fn station_aggregate(&mut self, i: usize, t: Time, cap: &CapacityModel) -> (Vec<Packet>, u64) {
        let limit = self.aggregate_limit(cap, t);
        let c = &self.cfg;
        let st = &mut self.up[i];
        if let Some(retried) = take_retry(&mut st.retry, &mut st.retry_bytes) {
            return retried;
        }
        let (mut agg, mut bytes) = (Vec::new(), 0u64);
        while let Some((p, _)) = st.queue.front() {
            let add = p.size as u64 + c.mpdu_overhead as u64;
            let fits = bytes + add <= limit && (agg.len() as u32) < c.ampdu_packets;
            if !agg.is_empty() && !fits {
                break;
            }
            let (mut p, at) = st.queue.pop_front().expect("front exists");
            st.bytes -= p.size as u64;
            p.queue_delay += t - at;
            bytes += add;
            agg.push(p);
        }
        (agg, bytes)
    }

    /// The qdisc may have dropped or released packets on its own timer: top the MAC queue up.
    pub fn after_qdisc_timer(&mut self, now: Time, q: &mut AnyQdisc, out: &mut ElementOutput) {
        let was_ready = self.ap_ready();
        self.refill(now, q, out);
        if self.ap_ready() != was_ready {
            self.schedule();
        }
    }

    /// Delivers a finished PPDU and resolves countdowns that end by `now`.
    pub fn handle_timeout(
        &mut self,
        now: Time,
        cap: &CapacityModel,
        q: &mut AnyQdisc,
        observed: bool,
        out: &mut ElementOutput,
    ) {
        loop {
            let air = self.air_end.filter(|&a| a <= now);
            let tx = self.next_tx.filter(|&t| t <= now);
            match (air, tx) {
                (Some(a), t) if t.is_none_or(|t| a <= t) => {
                    self.air_end = None;
                    out.packets.append(&mut self.air);
                }
                (_, Some(t)) => self.resolve(t, cap, q, observed, out),
                _ => return,
            }
        }
    }

    /// A sender's collided aggregate: dropped once past `retry_limit` retries (the backoff
    /// starts over), else kept to be sent again with the next backoff stage. Returns the new
    /// backoff and the aggregate to retry (empty when dropped).
    fn after_collision(
        &mut self,
        stage: u32,
        pkts: Vec<Packet>,
        bytes: u64,
        out: &mut ElementOutput,
    ) -> (Backoff, Vec<Packet>, u64) {
        let stage = stage + 1;
        if stage > self.cfg.retry_limit {
            self.stats.retry_drops += pkts.len() as u64;
            for pkt in pkts {
                out.drops.push(Dropped { pkt, reason: DropReason::RetryLimit });
            }
            (Backoff { counter: self.draw(0), stage: 0 }, Vec::new(), 0)
        } else {
            (Backoff { counter: self.draw(stage), stage }, pkts, bytes)
        }
    }

    /// The countdown ended at `t`: whoever reached zero transmits.
    fn resolve(
        &mut self,
        t: Time,
        cap: &CapacityModel,
        q: &mut AnyQdisc,
        observed: bool,
        out: &mut ElementOutput,
    ) {
        let rs = self.busy_until;
        self.next_tx = None;
        let ap_slots = self.slots_since(rs, t);
        let ap_tx = self.ap_ready().is_some_and(|r| r <= t) && self.ap.counter <= ap_slots;
        self.ap.counter = self.ap.counter.saturating_sub(ap_slots);
        let mut winners: Vec<usize> = Vec::new();
        if let Some(s) = self.others_start(rs).filter(|&s| s + self.cfg.aifs <= t) {
            let k = self.slots_since(s, t);
            for (i, b) in self.others.iter_mut().enumerate() {
                b.counter = b.counter.saturating_sub(k);
                if b.counter == 0 {
                    winners.push(i);
                }
            }
        }
        let mut up_winners: Vec<usize> = Vec::new();
        for (i, st) in self.up.iter_mut().enumerate() {
            let ready = st.ready().is_some_and(|r| r <= t);
            if ready && st.backoff.counter <= ap_slots {
                up_winners.push(i);
            }
            st.backoff.counter = st.backoff.counter.saturating_sub(ap_slots);
        }
        let n_tx = winners.len() + ap_tx as usize + up_winners.len();
        if n_tx == 0 {
            // The AP's data left the MAC queue by other means: nothing is sent.
            self.busy_until = t;
            self.schedule();
            return;
        }
        let mut end = t;
        for _ in &winners {
            end = end.max(self.ppdu_end(cap, t, self.cfg.station_bytes as u64));
        }
        let dequeues_before = out.dequeues.len();
        let aggregate = ap_tx.then(|| self.form_aggregate(t, cap, q, observed, out));
        if let Some((_, bytes)) = &aggregate {
            let data_end = self.ppdu_end(cap, t, *bytes);
            end = end.max(data_end);
            if n_tx == 1 {
                for r in &mut out.dequeues[dequeues_before..] {
                    r.leaves_at = Some(data_end);
                }
            }
        }
        let up_aggs: Vec<(usize, Vec<Packet>, u64)> = up_winners
            .iter()
            .map(|&i| {
                let (pkts, bytes) = self.station_aggregate(i, t, cap);
                (i, pkts, bytes)
            })
            .collect();
        for (_, _, bytes) in &up_aggs {
            end = end.max(self.ppdu_end(cap, t, *bytes));
        }
        self.busy_until = end + self.cfg.ack;
        let collided = n_tx > 1;
        if collided {
            self.stats.collisions += 1;
        }
        for i in winners {
            let stage = if collided { self.others[i].stage + 1 } else { 0 };
            let stage = if stage > self.cfg.retry_limit { 0 } else { stage };
            let counter = self.draw(stage);
            self.others[i] = Backoff { counter, stage };
            if !collided {
                self.stats.other_txops += 1;
            }
        }
        for (i, pkts, bytes) in up_aggs {
            if collided {
                let (backoff, retry, retry_bytes) =
                    self.after_collision(self.up[i].backoff.stage, pkts, bytes, out);
                let st = &mut self.up[i];
                (st.backoff, st.retry, st.retry_bytes) = (backoff, retry, retry_bytes);
            } else {
                self.stats.uplink_txops += 1;
                self.stats.uplink_packets += pkts.len() as u64;
                debug_assert!(self.air.is_empty());
                self.air = pkts;
                self.air_end = Some(self.ppdu_end(cap, t, bytes));
                let counter = self.draw(0);
                self.up[i].backoff = Backoff { counter, stage: 0 };
            }
        }
        if let Some((pkts, bytes)) = aggregate {
            if collided {
                (self.ap, self.retry, self.retry_bytes) =
                    self.after_collision(self.ap.stage, pkts, bytes, out);
            } else {
                self.stats.ap_txops += 1;
                self.stats.ap_packets += pkts.len() as u64;
                self.stats.ap_airtime_ns += (self.busy_until - t).as_nanos() as u64;
                let data_end = self.ppdu_end(cap, t, bytes);
                debug_assert!(self.air.is_empty());
                self.air = pkts;
                self.air_end = Some(data_end);
                self.ap = Backoff { counter: self.draw(0), stage: 0 };
            }
        }
        self.schedule();
    }
}

/// A collided aggregate waiting to be sent again, taken (with its bytes) if there is one.
fn take_retry(retry: &mut Vec<Packet>, bytes: &mut u64) -> Option<(Vec<Packet>, u64)> {
    (!retry.is_empty()).then(|| (std::mem::take(retry), std::mem::take(bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::QueueLimit;
    use crate::queues::droptail::DropTail;
    use rtclab_core::{FlowId, Rate};

    fn mac(cfg: WifiConfig) -> (WifiMac, AnyQdisc, CapacityModel) {
        let q = AnyQdisc::DropTail(DropTail::new(QueueLimit::Packets(1_000_000)));
        (
            WifiMac::new(cfg, RngStream::from_seed(7)),
            q,
            CapacityModel::Constant(Rate::from_mbps(65)),
        )
    }

    /// Runs the MAC to `until`, returning (delivery time, packet) pairs.
    fn run(
        m: &mut WifiMac,
        q: &mut AnyQdisc,
        cap: &CapacityModel,
        arrivals: &[(Time, Packet)],
        until: Time,
    ) -> (Vec<(Time, Packet)>, ElementOutput) {
        let mut out = ElementOutput::default();
        let mut got = Vec::new();
        let mut i = 0;
        loop {
            let next_arrival = arrivals.get(i).map(|a| a.0);
            let next_timer = m.poll_timeout();
            let t = match (next_arrival, next_timer) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => match a.or(b) {
                    Some(t) => t,
                    None => break,
                },
            };
            if t > until {
                break;
            }
            if next_arrival == Some(t) {
                m.enqueue(t, arrivals[i].1, q, &mut out);
                i += 1;
            } else {
                m.handle_timeout(t, cap, q, true, &mut out);
            }
            got.extend(out.packets.drain(..).map(|p| (t, p)));
        }
        (got, out)
    }

    fn pkt(seq: u64) -> Packet {
        Packet::data(FlowId(0), seq, 1500, Time::ZERO)
    }

    #[test]
    fn a_lone_packet_goes_after_aifs_and_its_backoff_in_one_ppdu() {
        let (mut m, mut q, cap) = mac(WifiConfig::default());
        m.ap.counter = 3;
        let (got, _) = run(&mut m, &mut q, &cap, &[(Time::ZERO, pkt(0))], Time::from_secs(1));
        // 37 µs AIFS + 3 × 9 µs + 36 µs preamble + 1542 B at 65 Mbit/s (189.785 µs).
        let want = 37_000 + 27_000 + 36_000 + 1542u64 * 8 * 1_000_000_000 / 65_000_000;
        assert_eq!(got.len(), 1);
        assert!((got[0].0.as_nanos() as i64 - want as i64).abs() <= 1, "{:?}", got[0].0);
        assert_eq!(m.stats().ap_txops, 1);
    }

    /// Drives the MAC with station arrivals (`enqueue_uplink`) as well as AP ones.
    fn run_both(
        m: &mut WifiMac,
        q: &mut AnyQdisc,
        cap: &CapacityModel,
        down: &[(Time, Packet)],
        up: &[(Time, Packet)],
        until: Time,
    ) -> (Vec<(Time, Packet)>, ElementOutput) {
        let mut out = ElementOutput::default();
        let mut got = Vec::new();
        let (mut i, mut j) = (0, 0);
        loop {
            let cands = [down.get(i).map(|a| a.0), up.get(j).map(|a| a.0), m.poll_timeout()];
            let Some(t) = cands.iter().flatten().min().copied() else { break };
            if t > until {
                break;
            }
            if cands[0] == Some(t) {
                m.enqueue(t, down[i].1, q, &mut out);
                i += 1;
            } else if cands[1] == Some(t) {
                m.enqueue_uplink(t, up[j].1, &mut out);
                j += 1;
            } else {
                m.handle_timeout(t, cap, q, false, &mut out);
            }
            got.extend(out.packets.drain(..).map(|p| (t, p)));
        }
        (got, out)
    }

    #[test]
    fn a_stations_packet_goes_after_aifs_and_its_backoff_and_counts_as_uplink() {
        let cfg = WifiConfig { uplink: true, ..Default::default() };
        let (mut m, mut q, cap) = mac(cfg);
        let up = Packet::data(FlowId(3), 0, 1500, Time::ZERO);
        let (got, _) = run_both(&mut m, &mut q, &cap, &[], &[(Time::ZERO, up)], Time::from_secs(1));
        assert_eq!(got.len(), 1);
        let counter = {
            // The station's first counter is the MAC's next draw after the AP's.
            let mut rng = RngStream::from_seed(7);
            rng.below(16);
            rng.below(16)
        };
        let want = 37_000 + 9_000 * counter + 36_000 + 1542u64 * 8 * 1_000_000_000 / 65_000_000;
        assert!((got[0].0.as_nanos() as i64 - want as i64).abs() <= 1, "{:?} vs {want}", got[0].0);
        let st = m.stats();
        assert_eq!(
            (st.uplink_txops, st.uplink_packets, st.uplink_stations, st.ap_txops),
            (1, 1, 1, 0)
        );
        assert_eq!(m.uplink_backlog().packets, 0);
    }

    #[test]
    fn stations_queue_per_flow_drop_when_full_and_share_the_channel_with_the_ap() {
        let cfg = WifiConfig { uplink: true, station_queue: 50, ..Default::default() };
        let (mut m, _, _) = mac(cfg);
        let mut out = ElementOutput::default();
        // Two flows' stations: 60 packets each at once; 10 of each are dropped at the queue.
        for s in 0..60 {
            for f in [1, 2] {
                m.enqueue_uplink(
                    Time::ZERO,
                    Packet::data(FlowId(f), s, 1500, Time::ZERO),
                    &mut out,
                );
            }
        }
        assert_eq!(out.drops.len(), 20);
        assert!(out.drops.iter().all(|d| d.reason == DropReason::QueueOverflow));
        assert_eq!(m.uplink_backlog().packets, 100);
        assert_eq!(m.held_by_kind(), (100, 0));
        assert_eq!(m.stats().uplink_stations, 2);
        // With an AP backlog too, everyone gets the channel and every packet arrives, in order
        // per flow.
        let (mut m, mut q, cap) = mac(WifiConfig { uplink: true, ..Default::default() });
        let down: Vec<_> = (0..200).map(|s| (Time::ZERO, pkt(s))).collect();
        let up: Vec<_> =
            (0..200).map(|s| (Time::ZERO, Packet::data(FlowId(5), s, 1500, Time::ZERO))).collect();
        let (got, _) = run_both(&mut m, &mut q, &cap, &down, &up, Time::from_secs(2));
        assert_eq!(got.len(), 400);
        for f in [0, 5] {
            let seqs: Vec<u64> = got.iter().filter(|g| g.1.flow.0 == f).map(|g| g.1.seq).collect();
            assert!(seqs.windows(2).all(|w| w[0] < w[1]) && seqs.len() == 200, "flow {f}");
        }
        let st = m.stats();
        assert!(st.ap_txops > 0 && st.uplink_txops > 0, "{st:?}");
        // Uplink packets carry their wait at the station as queueing delay.
        assert!(got.iter().rfind(|g| g.1.flow.0 == 5).unwrap().1.queue_delay > TimeDelta::ZERO);
    }

    #[test]
    fn a_backlog_leaves_in_aggregates_bounded_by_bytes_and_airtime() {
        // 100 packets at once: 65 535 B per A-MPDU holds 42 packets of 1542 B (64 844 B;
        // 7.98 ms at 65 Mbit/s is over 5.484 ms, so airtime binds first: 28 packets).
        let (mut m, mut q, cap) = mac(WifiConfig::default());
        let arrivals: Vec<_> = (0..100).map(|s| (Time::ZERO, pkt(s))).collect();
        let (got, out) = run(&mut m, &mut q, &cap, &arrivals, Time::from_secs(1));
        assert_eq!(got.len(), 100);
        let mut bursts: Vec<(Time, usize)> = Vec::new();
        for (t, _) in &got {
            match bursts.last_mut() {
                Some((bt, n)) if bt == t => *n += 1,
                _ => bursts.push((*t, 1)),
            }
        }
        let sizes: Vec<usize> = bursts.iter().map(|b| b.1).collect();
        let per = ((5_484.0 - 36.0) * 65.0 / 8.0 / 1542.0) as usize;
        assert_eq!(per, 28);
        assert_eq!(sizes, vec![per, per, per, 100 - 3 * per]);
        // In order; dequeue records mark the aggregates and the backlog left behind.
        assert!(got.windows(2).all(|w| w[0].1.seq < w[1].1.seq));
        let ids: Vec<u64> = out.dequeues.iter().map(|r| r.aggregate.unwrap()).collect();
        assert_eq!(ids.iter().filter(|&&a| a == 1).count(), per);
        assert_eq!(out.dequeues[0].backlog.packets, 100 - per as u32);
        // A byte cap binds when the PHY is fast.
        let cfg = WifiConfig { ampdu_bytes: 10 * 1542, ..Default::default() };
        let (mut m, mut q, _) = mac(cfg);
        let fast = CapacityModel::Constant(Rate::from_mbps(600));
        let (got, _) = run(&mut m, &mut q, &fast, &arrivals[..25], Time::from_secs(1));
        let first = got[0].0;
        assert_eq!(got.iter().filter(|g| g.0 == first).count(), 10);
    }

    #[test]
    fn the_mac_queue_fills_first_and_the_qdisc_holds_the_rest() {
        let (mut m, mut q, _) = mac(WifiConfig { mac_queue: 10, ..Default::default() });
        let mut out = ElementOutput::default();
        for s in 0..25 {
            m.enqueue(Time::ZERO, pkt(s), &mut q, &mut out);
        }
        assert_eq!(m.backlog().packets, 10);
        assert_eq!(q.backlog().packets, 15);
        assert_eq!(m.held_by_kind(), (10, 0));
    }

    #[test]
    fn ampdu_wait_batches_until_the_head_waited_or_a_full_aggregate_is_queued() {
        let cfg = WifiConfig { ampdu_wait: TimeDelta::from_millis(2), ..Default::default() };
        let (mut m, mut q, cap) = mac(cfg.clone());
        m.ap.counter = 0;
        let arrivals: Vec<_> = (0..5).map(|s| (Time::from_micros(300 * s), pkt(s))).collect();
        let (got, _) = run(&mut m, &mut q, &cap, &arrivals, Time::from_secs(1));
        // All five go in one PPDU sent 2 ms after the first arrived.
        assert!(got.iter().all(|g| g.0 == got[0].0), "{got:?}");
        assert!(got[0].0 > Time::from_millis(2));
        let (mut m, mut q, cap) = mac(WifiConfig { ampdu_packets: 3, ..cfg });
        m.ap.counter = 0;
        let (got, _) = run(&mut m, &mut q, &cap, &arrivals, Time::from_secs(1));
        // Three queued at 600 µs make a full aggregate: it goes then (and arrives 605 µs
        // later), not at 2 ms.
        let want = 600_000 + 36_000 + 3 * 1542 * 8_000 / 65;
        assert!(got[0].0.as_nanos().abs_diff(want) <= 1, "{:?}", got[0].0);
    }

    #[test]
    fn contending_stations_share_the_channel_and_collide() {
        // A saturated AP against N saturated stations: DCF gives each about 1/(N+1) of the
        // transmissions, and collisions grow with N (Bianchi: about 10 % of slots' attempts
        // at N = 5 with CW 15).
        for n in [1u32, 5, 20] {
            let cfg = WifiConfig { stations: n, station_bytes: 30_000, ..Default::default() };
            let (mut m, mut q, cap) = mac(cfg);
            let arrivals: Vec<_> = (0..40_000).map(|s| (Time::ZERO, pkt(s))).collect();
            let (_, _) = run(&mut m, &mut q, &cap, &arrivals, Time::from_secs(5));
            assert!(m.backlog().packets > 0, "the AP stays saturated");
            let s = m.stats();
            let share = s.ap_txops as f64 / (s.ap_txops + s.other_txops) as f64;
            let fair = 1.0 / (n as f64 + 1.0);
            assert!((share - fair).abs() < 0.25 * fair, "n={n} share {share} stats {s:?}");
            let coll = s.collisions as f64 / (s.ap_txops + s.other_txops + s.collisions) as f64;
            if n == 1 {
                assert!(coll < 0.1, "{coll}");
            }
            if n == 20 {
                assert!(coll > 0.2, "{coll}");
            }
        }
    }

    #[test]
    fn retries_end_in_retry_limit_drops_under_heavy_collisions() {
        let cfg = WifiConfig {
            stations: 200,
            cw_min: 1,
            cw_max: 1,
            retry_limit: 1,
            station_bytes: 1500,
            ..Default::default()
        };
        let (mut m, mut q, cap) = mac(cfg);
        let arrivals: Vec<_> = (0..50).map(|s| (Time::ZERO, pkt(s))).collect();
        let (got, out) = run(&mut m, &mut q, &cap, &arrivals, Time::from_secs(1));
        assert!(m.stats().retry_drops > 0);
        assert_eq!(out.drops.len() as u64, m.stats().retry_drops);
        assert!(out.drops.iter().all(|d| d.reason == DropReason::RetryLimit));
        // Every packet is delivered, dropped or still held.
        let held = m.held_by_kind().0 + q.held_by_kind().0;
        assert_eq!(got.len() as u64 + m.stats().retry_drops + held, 50);
    }

    #[test]
    fn stations_contend_only_in_their_window() {
        let cfg = WifiConfig {
            stations: 5,
            stations_start: Time::from_secs(1),
            stations_stop: Time::from_secs(2),
            ..Default::default()
        };
        let (mut m, mut q, cap) = mac(cfg);
        let (_, _) = run(&mut m, &mut q, &cap, &[], Time::from_secs(3));
        let s = m.stats();
        // About 1 s of back-to-back 5.5 ms PPDUs.
        assert!(s.other_txops > 120 && s.other_txops < 200, "{s:?}");
        assert_eq!(m.poll_timeout(), None);
    }

    #[test]
    fn config_errors_name_the_problem() {
        let v = |x: f64| rtclab_core::params::Value::Num(x);
        let e = config(&[("cw_min".into(), v(31.0)), ("cw_max".into(), v(15.0))])
            .unwrap_err()
            .to_string();
        assert!(e.contains("cw_max"), "{e}");
        let e = config(&[("mac_queue".into(), v(0.0))]).unwrap_err().to_string();
        assert!(e.contains("mac_queue") && e.contains("1..="), "{e}");
        let e = config(&[("statons".into(), v(1.0))]).unwrap_err().to_string();
        assert!(e.contains("stations"), "{e}");
    }
}
