//! The forwarding loop: a thread moves packets from a host's TUN device through the emulated
//! network to the other host's device — one loop per direction when no element serves both
//! (`Path::per_direction`), else one loop reading both devices through one [`Path`], so an
//! element such as a wireless access point can see data going one way and feedback coming
//! back.
//! epoll waits on both devices and a CLOCK_MONOTONIC timerfd armed at the network's next
//! deadline (absolute, with the thread's timer slack set to 1 ns); every packet leaving the
//! network is written at once and its release error — write completion minus the ideal
//! release time the path computed — is recorded.

use crate::held::{Handle, Held};
use crate::offload::{self, SuperPacket, VnetHdr};
use crate::path::Path;
use crate::sys;
use crate::EmuError;
use rtclab_core::{
    Direction, Ecn, FlowId, LogHistogram, Packet, PacketInfo, PacketKind, Payload, Time, TimeDelta,
};
use rtclab_harness::flow_meter::{FlowMeter, MeterWindow};
use std::io::IoSlice;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

/// Pool buffer size: at least the devices' MTU (1500, `netns.rs`).
const MAX_PACKET: usize = 2048;
/// Reads from one device before the loop looks at deadlines again.
const READ_BURST: usize = 64;
/// MTU packets taken in from one device before the loop looks at deadlines again (a read
/// with offloads can bring a super-packet of 45).
const READ_PACKETS: usize = 96;
/// What one read with offloads may bring: a vnet header and a 64 KiB IPv4 packet.
const MAX_READ: usize = offload::VNET_HDR_LEN + offload::MAX_IP;

/// Per-flow, per-direction packet counts of the emulated network (whole run; the engine's own
/// health figures). What the flow's figures are made of goes to its `FlowMeter`.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlowCounters {
    pub in_packets: u64,
    pub in_bytes: u64,
    pub out_packets: u64,
    pub out_bytes: u64,
}

/// What one direction's forwarder measured.
pub struct DirStats {
    /// Per flow (the last index collects unclassified packets).
    pub flows: Vec<FlowCounters>,
    /// Per flow, alongside `flows`: the network half of its meter (what it sent into the
    /// path, what came out, delays, drops and marks).
    pub flow_meters: Vec<FlowMeter>,
    /// Release error in ns (write completion − ideal release time).
    pub release_error: LogHistogram,
    /// Writes refused by a full device queue.
    pub write_drops: u64,
    pub non_ipv4: u64,
    /// Device reads that brought a packet, and writes that carried packets (system calls:
    /// with offloads one carries many MTU packets).
    pub reads: u64,
    pub writes: u64,
    /// With offloads: TCP super-packets read, and the MTU packets they were cut into.
    pub super_packets: u64,
    pub segments: u64,
    /// How long the loop ran (ns).
    pub ran_ns: i64,
    /// Whether the forwarding thread got SCHED_FIFO.
    pub realtime: bool,
    /// Per (link, direction), `HopRef::index`, both directions (kept in the forward
    /// direction's stats only): the same link meters as the simulator's.
    pub meters: Vec<rtclab_harness::link_meter::LinkMeter>,
    /// Per (link, direction), alongside `meters`: wireless links' MAC counters.
    pub wifi: Vec<Option<rtclab_net::WifiStats>>,
    /// Per scenario middlebox, alongside `meters`: its figures, from the loop holding it.
    pub middleboxes: Vec<Option<Vec<(&'static str, f64)>>>,
    /// Per flow: the class a classifying queue discipline held it in, per bin (from the loop
    /// holding that link; None where no discipline classifies the flow).
    pub queue_classes: Vec<Option<Vec<f64>>>,
}

/// Per index, the value of the loop that holds the element (the others report None).
fn keep_held<T>(acc: &mut Vec<Option<T>>, from_loop: Vec<Option<T>>) {
    if acc.len() < from_loop.len() {
        acc.resize_with(from_loop.len(), || None);
    }
    for (i, v) in from_loop.into_iter().enumerate() {
        if v.is_some() {
            acc[i] = v;
        }
    }
}

/// Both directions: [forward (sender → receiver), reverse].
pub struct EngineStats {
    pub dirs: [DirStats; 2],
    /// The devices were read and written with offloads.
    pub offload: bool,
}

/// What one forwarding loop measured: the directions it took in, their counters, and (in
/// `dirs[0].meters`) its copy of every link meter.
pub struct LoopStats {
    pub reads: [bool; 2],
    pub dirs: [DirStats; 2],
}

impl EngineStats {
    /// Joins what the loops measured: each direction's counters from the loop that took it in,
    /// and each link meter from the loop owning the meter's direction (`HopRef::index` parity).
    pub fn merge(loops: Vec<LoopStats>) -> Result<Self, EmuError> {
        let mut dirs: [Option<DirStats>; 2] = [None, None];
        let mut meters: Vec<Option<rtclab_harness::link_meter::LinkMeter>> = Vec::new();
        let mut wifi: Vec<Option<rtclab_net::WifiStats>> = Vec::new();
        let mut middleboxes: Vec<Option<Vec<(&'static str, f64)>>> = Vec::new();
        let mut classes: Vec<Option<Vec<f64>>> = Vec::new();
        for mut l in loops {
            keep_held(&mut middleboxes, std::mem::take(&mut l.dirs[0].middleboxes));
            keep_held(&mut classes, std::mem::take(&mut l.dirs[0].queue_classes));
            keep_held(&mut wifi, std::mem::take(&mut l.dirs[0].wifi));
            let loop_meters = std::mem::take(&mut l.dirs[0].meters);
            if meters.is_empty() {
                meters = vec![None; loop_meters.len()];
            }
            for (h, m) in loop_meters.into_iter().enumerate() {
                if l.reads[h & 1] {
                    meters[h] = Some(m);
                }
            }
            for (d, st) in l.dirs.into_iter().enumerate() {
                if l.reads[d] && dirs[d].is_none() {
                    dirs[d] = Some(st);
                }
            }
        }
        let [Some(fwd), Some(rev)] = dirs else {
            return Err(EmuError::Io("a direction had no forwarding loop".into()));
        };
        let mut st = EngineStats { dirs: [fwd, rev], offload: false };
        st.dirs[0].meters = meters.into_iter().map(Option::unwrap_or_default).collect();
        st.dirs[0].wifi = wifi;
        st.dirs[0].middleboxes = middleboxes;
        st.dirs[0].queue_classes = classes;
        Ok(st)
    }
}

impl EngineStats {
    pub fn ran_ns(&self) -> i64 {
        self.dirs[0].ran_ns.max(self.dirs[1].ran_ns)
    }
}

/// Maps an IPv4 packet to a flow: `port_base + i` is flow i's receiver port (destination
/// going forward, source coming back).
#[derive(Clone, Copy)]
pub struct Classifier {
    pub port_base: u16,
    pub flows: usize,
}

impl Classifier {
    pub fn classify(&self, pkt: &[u8], dir: Direction) -> Option<FlowId> {
        if pkt.len() < 20 || pkt[0] >> 4 != 4 {
            return None;
        }
        let ihl = (pkt[0] & 0x0f) as usize * 4;
        let unknown = Some(FlowId(self.flows as u32));
        if !matches!(pkt[9], 6 | 17) || pkt.len() < ihl + 4 {
            return unknown;
        }
        let at = if dir == Direction::Forward { ihl + 2 } else { ihl };
        let port = u16::from_be_bytes([pkt[at], pkt[at + 1]]);
        match port.checked_sub(self.port_base) {
            Some(i) if (i as usize) < self.flows => Some(FlowId(i as u32)),
            _ => unknown,
        }
    }
}

/// A forwarding loop: reads what the hosts send from the TUN devices it is given to read
/// (`fds[0]`: the sender host's, whose packets travel forward; `fds[1]`: the receiver host's,
/// reverse), runs it through its `path` — the whole network when an element sees both
/// directions, as in the simulator — and writes what leaves to the other host's device.
pub struct Forwarder {
    pub fds: [RawFd; 2],
    /// Which devices this loop reads (both, or one when each direction has its own loop).
    pub reads: [bool; 2],
    pub path: Path,
    pub classifier: Classifier,
    /// CLOCK_MONOTONIC of emulated time zero.
    pub t0: i64,
    pub end: Time,
    /// The meters' measurement window and time-series bins.
    pub window: MeterWindow,
    /// Where packets are captured (pcap), per direction, if asked: as delivered, or as sent
    /// (`capture_sent`: when the forwarder takes them in).
    pub capture: [Option<crate::capture::PcapSink>; 2],
    pub capture_sent: bool,
    /// The devices were opened with offloads (`offload.rs`): every read and write starts
    /// with a vnet header, reads may bring TCP super-packets (cut here into MTU packets) and
    /// consecutive MTU packets of a TCP connection leave as one super-packet.
    pub offload: bool,
}

/// Emulated "now" published for progress reports (ns since t0).
pub static PROGRESS_NS: AtomicI64 = AtomicI64::new(0);

const DIRS: [Direction; 2] = [Direction::Forward, Direction::Reverse];

impl Forwarder {
    /// One MTU packet a host sent, into the network at `at`: classified by flow (an
    /// unclassifiable one goes back to the pools), captured if captures are as sent, counted,
    /// its bytes (or its place in a super-packet) put in the network's payload store.
    fn take_in(
        &mut self,
        st: &mut DirStats,
        dir: Direction,
        mut payload: Payload,
        at: Time,
        pools: &mut Pools,
        scratch: &mut Vec<u8>,
    ) -> Result<(), EmuError> {
        let buf = bytes_of(&mut payload);
        let Some(flow) = self.classifier.classify(buf, dir) else {
            st.non_ipv4 += 1;
            pools.recycle(payload);
            return Ok(());
        };
        let (len, ecn) = (buf.len() as u32, Ecn::from_bits(buf[1]));
        if let Some(cap) = self.capture[dir.index()].as_mut().filter(|_| self.capture_sent) {
            capture_whole(cap, at, buf, self.offload, scratch)?;
        }
        let info = PacketInfo::Payload { id: self.path.payloads().insert(payload) };
        self.inject(st, dir, flow, len, ecn, info, at);
        Ok(())
    }

    /// A packet of `flow`, `len` bytes on the wire, into the network at `at`, counted.
    #[allow(clippy::too_many_arguments)]
    fn inject(
        &mut self,
        st: &mut DirStats,
        dir: Direction,
        flow: FlowId,
        len: u32,
        ecn: Ecn,
        info: PacketInfo,
        at: Time,
    ) {
        let c = &mut st.flows[flow.0 as usize];
        c.in_packets += 1;
        c.in_bytes += len as u64;
        if dir == Direction::Forward {
            st.flow_meters[flow.0 as usize].on_send(at, len);
        }
        let mut p = Packet::data(flow, 0, len, at);
        p.dir = dir;
        if dir == Direction::Reverse {
            p.kind = PacketKind::Ack; // feedback: TCP ACKs, RTCP
        }
        p.info = info;
        p.queue_delay = TimeDelta::ZERO;
        p.set_ecn(ecn);
        self.path.inject(at, p);
    }

    /// Runs until `end` or until `stop` is set; returns each direction's counters.
    pub fn run(mut self, stop: &AtomicBool) -> Result<LoopStats, EmuError> {
        let _ = sys::set_timer_slack(1);
        let realtime = sys::set_realtime(sys::FORWARDER_PRIORITY).is_ok();
        let epoll = sys::Epoll::new().map_err(io)?;
        let timer = sys::TimerFd::new().map_err(io)?;
        for (d, fd) in self.fds.into_iter().enumerate() {
            if self.reads[d] {
                epoll.add(fd, 2 * d as u64).map_err(io)?;
            }
        }
        epoll.add(timer.raw(), 1).map_err(io)?;
        let n = self.classifier.flows + 1;
        let new_stats = || DirStats {
            flows: vec![FlowCounters::default(); n],
            flow_meters: vec![FlowMeter::new(self.window); n],
            release_error: LogHistogram::new(),
            write_drops: 0,
            non_ipv4: 0,
            reads: 0,
            writes: 0,
            super_packets: 0,
            segments: 0,
            ran_ns: 0,
            realtime,
            meters: Vec::new(),
            wifi: Vec::new(),
            middleboxes: Vec::new(),
            queue_classes: Vec::new(),
        };
        let mut stats = [new_stats(), new_stats()];
        // A packet's bytes (the whole IPv4 packet) are its payload in the network's payload
        // store, where elements can read and rewrite them as in the simulator; the buffers
        // are recycled.
        let mut pools = Pools::default();
        let mut ready = Vec::new();
        let mut armed: Option<Time> = None;
        // Packets leaving the network this round: (ideal release time, packet, its bytes).
        let mut out: Vec<(Time, Packet, Bytes)> = Vec::new();
        let mut held = Held::default();
        // A coalesced write's header; a capture's copy with whole checksums; one read.
        let (mut hdr, mut scratch) = (Vec::new(), Vec::new());
        let mut big = if self.offload { vec![0u8; MAX_READ] } else { Vec::new() };
        loop {
            let now = sys::now_at(self.t0);
            PROGRESS_NS.store((now - Time::ZERO).as_nanos(), Ordering::Relaxed);
            if now >= self.end || stop.load(Ordering::Relaxed) {
                self.path.close_bins_to(now.min(self.end));
                // The link meters cover both directions: kept once, with the forward stats.
                stats[0].wifi = self.path.wifi_stats();
                stats[0].middleboxes = self.path.middlebox_metrics();
                stats[0].queue_classes = self.path.take_queue_classes();
                stats[0].meters = std::mem::take(&mut self.path.meters);
                for (d, st) in stats.iter_mut().enumerate() {
                    st.ran_ns = (now - Time::ZERO).as_nanos();
                    if let Some(cap) = self.capture[d].take() {
                        cap.finish().map_err(io)?;
                    }
                }
                return Ok(LoopStats { reads: self.reads, dirs: stats });
            }
            // 1. Release what is due, each at its ideal time.
            self.path.advance(now);
            let mut dropped = std::mem::take(&mut self.path.dropped);
            for dr in dropped.drain(..) {
                // Counted when sent: the bin and window the packet belonged to.
                let m = &mut stats[dr.pkt.dir.index()].flow_meters[dr.pkt.flow.0 as usize];
                m.on_drop(dr.pkt.sent_at, dr.pkt.dir, dr.reason);
                if let PacketInfo::Held { slot, tag } = dr.pkt.info {
                    held.finish(Handle { slot, tag });
                } else if let Some(p) = self.path.take_payload(&dr.pkt) {
                    pools.recycle(p);
                }
            }
            self.path.dropped = dropped;
            for m in self.path.marked.drain(..) {
                let d = m.pkt.dir;
                stats[d.index()].flow_meters[m.pkt.flow.0 as usize].on_mark(m.pkt.sent_at, d);
            }
            let released = std::mem::take(&mut self.path.released);
            for &(ideal, p) in &released {
                let bytes = match p.info {
                    PacketInfo::Held { slot, tag } => {
                        let h = Handle { slot, tag };
                        match held.get(h) {
                            // A segment a queue marked CE leaves on its own, made whole.
                            Some((sp, tos)) if Ecn::from_bits(tos) != p.ecn() => {
                                let mut whole = pools.mtu();
                                sp.write_segment(h.segment(), bytes_of(&mut whole));
                                held.finish(h);
                                Some(Bytes::Owned(whole))
                            }
                            Some(_) => Some(Bytes::Held(h)),
                            None => None,
                        }
                    }
                    _ => self.path.take_payload(&p).map(Bytes::Owned),
                };
                let Some(mut bytes) = bytes else {
                    // An element took the packet's bytes (or handed one packet back twice).
                    stats[p.dir.index()].write_drops += 1;
                    continue;
                };
                if let Bytes::Owned(payload) = &mut bytes {
                    let b = bytes_of(payload);
                    set_ecn(b, p.ecn());
                    if p.dir == Direction::Forward {
                        // Ground truth for the receiver's latency breakdown (rtclab RTP only).
                        let qd = p.queue_delay.as_nanos().max(0) as u64;
                        rtclab_media::rtp_codec::stamp_queue_delay(b, qd);
                    }
                }
                out.push((ideal, p, bytes));
            }
            self.path.released = released;
            // Keeps the allocation.
            self.path.released.clear();
            // Each packet is written as soon as it is due; with offloads, consecutive packets
            // of a TCP connection due together leave in one super-packet.
            let mut i = 0;
            while i < out.len() {
                let d = out[i].1.dir.index();
                let same_dir = out[i..].iter().take_while(|o| o.1.dir.index() == d);
                let n = match (self.offload, &out[i].2) {
                    (false, _) => 1,
                    (true, Bytes::Held(first)) => segment_run(*first, same_dir.map(|o| &o.2)),
                    (true, Bytes::Owned(_)) => {
                        offload::run_length(same_dir.map_while(|o| match &o.2 {
                            Bytes::Owned(p) => p.downcast_ref::<Vec<u8>>().map(Vec::as_slice),
                            Bytes::Held(_) => None,
                        }))
                    }
                }
                .max(1);
                let run = &mut out[i..i + n];
                let ok =
                    write_run(self.fds[1 - d], self.offload, run, &held, &mut hdr).map_err(io)?;
                let done = sys::now_at(self.t0);
                let st = &mut stats[d];
                st.writes += ok as u64;
                for (ideal, p, payload) in run.iter() {
                    let ideal = *ideal;
                    st.release_error.record((done - ideal).as_nanos().max(0) as u64);
                    let (c, meter) =
                        (&mut st.flows[p.flow.0 as usize], &mut st.flow_meters[p.flow.0 as usize]);
                    if !ok {
                        st.write_drops += 1;
                        continue;
                    }
                    if let Some(cap) = self.capture[d].as_mut().filter(|_| !self.capture_sent) {
                        record(cap, ideal, payload, &held, self.offload, &mut scratch)?;
                    }
                    c.out_packets += 1;
                    c.out_bytes += p.size as u64;
                    if p.dir == Direction::Forward {
                        meter.on_arrival(ideal, p.size, p.queue_delay, ideal - p.sent_at);
                        meter.on_bottleneck(ideal, p.size);
                    }
                }
                i += n;
            }
            for o in out.drain(..) {
                match o.2 {
                    Bytes::Owned(p) => pools.recycle(p),
                    Bytes::Held(h) => {
                        held.finish(h);
                    }
                }
            }
            // 2. Take in what each host sent: straight into pool buffers, or with offloads
            // through one large buffer, a super-packet cut into the MTU packets its sender
            // would have sent without TSO.
            for (d, dir) in DIRS.into_iter().enumerate() {
                if !self.reads[d] {
                    continue;
                }
                let mut taken = 0;
                for _ in 0..READ_BURST {
                    if taken >= READ_PACKETS {
                        break;
                    }
                    if !self.offload {
                        let mut payload = pools.mtu();
                        let buf = bytes_of(&mut payload);
                        buf.resize(MAX_PACKET, 0);
                        let Some(len) = sys::read_packet(self.fds[d], buf).map_err(io)? else {
                            pools.recycle(payload);
                            break;
                        };
                        buf.truncate(len);
                        stats[d].reads += 1;
                        taken += 1;
                        let at = sys::now_at(self.t0);
                        self.take_in(&mut stats[d], dir, payload, at, &mut pools, &mut scratch)?;
                        continue;
                    }
                    let Some(len) = sys::read_packet(self.fds[d], &mut big).map_err(io)? else {
                        break;
                    };
                    stats[d].reads += 1;
                    let at = sys::now_at(self.t0);
                    let vh = VnetHdr::parse(&big[..len]).unwrap_or_default();
                    let ip = offload::VNET_HDR_LEN.min(len)..len;
                    if vh.gso_type == offload::GSO_NONE {
                        let mut payload = pools.mtu();
                        let buf = bytes_of(&mut payload);
                        buf.clear();
                        buf.extend_from_slice(&big[ip]);
                        taken += 1;
                        self.take_in(&mut stats[d], dir, payload, at, &mut pools, &mut scratch)?;
                        continue;
                    }
                    // The super-packet keeps the read buffer; the next read gets another.
                    let spare = held.spare_buffer().unwrap_or_else(|| vec![0u8; MAX_READ]);
                    let bytes = std::mem::replace(&mut big, spare);
                    let sp = match SuperPacket::parse(bytes, ip, vh) {
                        Ok(sp) => sp,
                        Err((_, bytes)) => {
                            stats[d].non_ipv4 += 1; // a GSO kind the devices do not offer
                            big = bytes;
                            continue;
                        }
                    };
                    let count = sp.count();
                    stats[d].super_packets += 1;
                    stats[d].segments += count as u64;
                    // Classified once: its segments share the header.
                    let flow = self.classifier.classify(sp.ip(), dir);
                    if self.capture_sent {
                        for k in 0..count {
                            sp.write_segment(k, &mut scratch);
                            offload::complete_checksum(&mut scratch);
                            if let Some(cap) = self.capture[d].as_mut() {
                                cap.record(at, &scratch).map_err(io)?;
                            }
                        }
                    }
                    let ecn = Ecn::from_bits(sp.ip()[1]);
                    match (flow, held.insert(sp)) {
                        (Some(flow), Ok(first)) => {
                            for k in 0..count {
                                let h = Held::handle(first, k);
                                let len = held.get(h).map_or(0, |(sp, _)| sp.segment_len(k) as u32);
                                let info = PacketInfo::Held { slot: h.slot, tag: h.tag };
                                self.inject(&mut stats[d], dir, flow, len, ecn, info, at);
                            }
                        }
                        (_, Err(sp)) => {
                            // Too many segments to hold as one: each becomes a packet of its own.
                            for k in 0..count {
                                let mut payload = pools.mtu();
                                sp.write_segment(k, bytes_of(&mut payload));
                                self.take_in(
                                    &mut stats[d],
                                    dir,
                                    payload,
                                    at,
                                    &mut pools,
                                    &mut scratch,
                                )?;
                            }
                            big = sp.into_bytes();
                        }
                        (None, Ok(first)) => {
                            stats[d].non_ipv4 += count as u64;
                            for k in 0..count {
                                held.finish(Held::handle(first, k));
                            }
                        }
                    }
                    taken += count;
                }
            }
            // 3. Sleep until the next deadline or packet.
            let now = sys::now_at(self.t0);
            let next = self.path.next_deadline();
            if next.is_some_and(|t| t <= now) {
                continue;
            }
            let wake = next.map_or(self.end, |t| t.min(self.end));
            if armed != Some(wake) {
                timer.set(Some(self.t0 + (wake - Time::ZERO).as_nanos())).map_err(io)?;
                armed = Some(wake);
            }
            epoll.wait(&mut ready, 50).map_err(io)?;
            if ready.contains(&1) {
                timer.drain();
                armed = None;
            }
        }
    }
}

/// The bytes of an emulated packet's payload (the engine makes every one a byte buffer).
fn bytes_of(p: &mut Payload) -> &mut Vec<u8> {
    p.downcast_mut::<Vec<u8>>().expect("the emulator's payloads are packet bytes")
}

fn bytes_ref(p: &Payload) -> &[u8] {
    p.downcast_ref::<Vec<u8>>().expect("the emulator's payloads are packet bytes")
}

/// Writes a run of packets to the device `fd`: one plain write without offloads; with them,
/// a vnet header in front — the packet alone with its checksum left partial, or (a run of
/// two or more, `offload::run_length`) one TCP super-packet gathered from the packets'
/// payloads behind one rewritten header. False when the device queue was full (all dropped).
fn write_run(
    fd: RawFd,
    offload: bool,
    run: &mut [(Time, Packet, Bytes)],
    held: &Held,
    hdr: &mut Vec<u8>,
) -> std::io::Result<bool> {
    if let Bytes::Held(first) = run[0].2 {
        let Some((sp, _)) = held.get(first) else { return Ok(false) };
        let k0 = first.segment();
        let vh = sp.range_header(k0, k0 + run.len(), hdr).to_bytes();
        let payload = sp.payload(k0, k0 + run.len());
        return sys::write_gathered(
            fd,
            &[IoSlice::new(&vh), IoSlice::new(hdr), IoSlice::new(payload)],
        );
    }
    if !offload {
        return sys::write_packet(fd, owned(&mut run[0].2));
    }
    if let [(_, _, one)] = run {
        let b = owned(one);
        let vh = offload::partial_checksum(b).to_bytes();
        return sys::write_gathered(fd, &[IoSlice::new(&vh), IoSlice::new(b)]);
    }
    let mut refs: [&[u8]; offload::MAX_RUN] = [&[]; offload::MAX_RUN];
    for (r, o) in refs.iter_mut().zip(run.iter()) {
        if let Bytes::Owned(p) = &o.2 {
            *r = bytes_ref(p);
        }
    }
    let pkts = &refs[..run.len()];
    let vh = offload::coalesced_header(pkts, hdr);
    let vh_bytes = vh.to_bytes();
    let mut iov = [IoSlice::new(&[]); offload::MAX_RUN + 2];
    iov[0] = IoSlice::new(&vh_bytes);
    iov[1] = IoSlice::new(hdr);
    for (v, p) in iov[2..].iter_mut().zip(pkts) {
        *v = IoSlice::new(&p[vh.hdr_len as usize..]);
    }
    sys::write_gathered(fd, &iov[..run.len() + 2])
}

/// A released packet's bytes: its own (a payload of the network's store) or a segment of a
/// super-packet the forwarder holds.
enum Bytes {
    Owned(Payload),
    Held(Handle),
}

fn owned(b: &mut Bytes) -> &mut Vec<u8> {
    match b {
        Bytes::Owned(p) => bytes_of(p),
        Bytes::Held(_) => unreachable!("a held segment is written from its super-packet"),
    }
}

/// How many of `rest` (from the first, a segment) leave with it as one packet: the
/// following segments of the same super-packet, in order, that the network left unchanged.
fn segment_run<'a>(first: Handle, rest: impl Iterator<Item = &'a Bytes>) -> usize {
    rest.enumerate()
        .take_while(|(j, b)| {
            matches!(b, Bytes::Held(h) if h.slot == first.slot
                && h.tag == Held::handle(first, first.segment() + j).tag)
        })
        .count()
}

/// Records a released packet in a capture, made whole (`capture_whole`).
fn record(
    cap: &mut crate::capture::PcapSink,
    at: Time,
    bytes: &Bytes,
    held: &Held,
    offload: bool,
    scratch: &mut Vec<u8>,
) -> Result<(), EmuError> {
    match bytes {
        Bytes::Owned(p) => capture_whole(cap, at, bytes_ref(p), offload, scratch),
        Bytes::Held(h) => {
            if let Some((sp, _)) = held.get(*h) {
                sp.write_segment(h.segment(), scratch);
                offload::complete_checksum(scratch);
                cap.record(at, scratch).map_err(io)?;
            }
            Ok(())
        }
    }
}

/// Records a packet in a capture. With offloads its TCP/UDP checksum may be partial (the
/// kernel completes it), so the capture gets a copy with the whole checksum.
fn capture_whole(
    cap: &mut crate::capture::PcapSink,
    at: Time,
    bytes: &[u8],
    offload: bool,
    scratch: &mut Vec<u8>,
) -> Result<(), EmuError> {
    if !offload {
        return cap.record(at, bytes).map_err(io);
    }
    scratch.clear();
    scratch.extend_from_slice(bytes);
    offload::complete_checksum(scratch);
    cap.record(at, scratch).map_err(io)
}

/// MTU packets' buffers for reuse (a payload holding a byte vector), keeping the allocator
/// out of the per-packet path.
#[derive(Default)]
struct Pools {
    mtu: Vec<Payload>,
}

impl Pools {
    fn mtu(&mut self) -> Payload {
        self.mtu.pop().unwrap_or_else(|| Payload::bytes(Vec::with_capacity(MAX_PACKET)))
    }

    /// Takes back a packet's payload after the network is done with it.
    fn recycle(&mut self, p: Payload) {
        self.mtu.push(p);
    }
}

fn io(e: std::io::Error) -> EmuError {
    EmuError::Io(e.to_string())
}

/// Writes `ecn` into an IPv4 header's two ECN bits (a queue marked the packet CE), fixing
/// the header checksum (RFC 1624 incremental update of the 16-bit word holding the TOS byte).
fn set_ecn(ip: &mut [u8], ecn: Ecn) {
    if ip.len() < 20 || ip[0] >> 4 != 4 || Ecn::from_bits(ip[1]) == ecn {
        return;
    }
    let old = u16::from_be_bytes([ip[0], ip[1]]);
    ip[1] = (ip[1] & !0b11) | ecn.bits();
    let new = u16::from_be_bytes([ip[0], ip[1]]);
    // HC' = ~(~HC + ~m + m')
    let hc = u16::from_be_bytes([ip[10], ip[11]]);
    let mut sum = (!hc as u32) + (!old as u32) + new as u32;
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    let hc = !(sum as u16);
    ip[10..12].copy_from_slice(&hc.to_be_bytes());
}

#[cfg(test)]
mod ecn_tests {
    use super::*;

    fn checksum(h: &[u8]) -> u16 {
        let mut sum: u32 = h.chunks(2).map(|w| u16::from_be_bytes([w[0], w[1]]) as u32).sum();
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        !(sum as u16)
    }

    #[test]
    fn marking_ce_keeps_the_ipv4_checksum_valid() {
        let mut h = [
            0x45, 0x02, 0x00, 0x54, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0, 0, 10, 77, 0, 1, 10, 77,
            0, 2,
        ];
        let c = checksum(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        set_ecn(&mut h, Ecn::Ce);
        assert_eq!(h[1] & 0b11, 0b11);
        assert_eq!(h[1] >> 2, 0);
        assert_eq!(checksum(&h), 0, "a valid header sums to zero");
    }
}
