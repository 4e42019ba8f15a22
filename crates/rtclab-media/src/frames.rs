//! Receiver-side frame assembly and video QoE: a frame is complete when all its packets have
//! arrived or FEC recovers the missing ones — with a Reed-Solomon (MDS) code any `n` of the
//! frame's `n + k` packets do; with k XOR parity packets (FlexFEC-style, parity j over the
//! media packets i ≡ j mod k) each group may miss one media packet if its parity arrived.
//! Recovery is decided by which packets arrived (the payload is synthetic, so no parity bytes
//! are computed); its end-to-end delay is
//! completion time − capture time. The received frame rate counts completed frames per
//! second; a stall is a gap between consecutive completed frames longer than
//! `stall_threshold` (fixed), or, when unset, longer than max(3·mean gap, mean gap + 150 ms)
//! over the last second (the WebRTC freeze definition, spec `copa-qlibra-tcp.md` §4.4).
//!
//! **Frame buffer** (libwebrtc's packet buffer + frame buffer, in decode order): complete
//! frames leave in frame order, so a frame after a missing one waits for it — for its
//! retransmission — as a WebRTC receiver's frame buffer holds frames until they are
//! continuous. The wait ends when the missing frame completes, when a later key frame is
//! complete (nothing before it is needed), or after the wait limit since the first frame
//! behind the gap completed: [`GIVE_UP`] (libwebrtc asks for a key frame after 200 ms without
//! a decodable frame, `max_wait_for_keyframe`) when the sender retransmits, zero when it does
//! not (nothing would fill the gap). Frames given up count as incomplete, and the delta
//! frames released after them are undecodable until the next key frame. The hold is part of
//! the frame's retransmission wait in the latency breakdown.

use crate::playout::AssembledFrame;
use rtclab_core::{LogHistogram, Time, TimeDelta};
use std::collections::{BTreeMap, VecDeque};

/// How long complete frames wait behind a missing one before it is given up, when the sender
/// retransmits.
pub const GIVE_UP: TimeDelta = TimeDelta::from_millis(200);

#[derive(Clone, Debug, Default)]
pub struct FrameStats {
    pub completed: u64,
    pub incomplete: u64,
    /// End-to-end frame delay (ns).
    pub delay: LogHistogram,
    pub stalls: u64,
    pub stall_time: TimeDelta,
}

/// A frame being assembled: packets received, packet count, bytes; for an XOR-coded frame
/// which of its media and parity packets arrived; the frame once complete.
#[derive(Clone, Debug)]
struct Slot {
    received: u32,
    count: u32,
    bytes: u32,
    xor: Option<(u8, Vec<bool>)>,
    complete: Option<AssembledFrame>,
}

impl Slot {
    /// Whether what arrived recovers the frame.
    fn recoverable(&self) -> bool {
        match &self.xor {
            None => self.received >= self.count,
            Some((k, got)) => {
                let (n, k) = (self.count as usize, *k as usize);
                (0..k).all(|g| {
                    let missing = (g..n).step_by(k).filter(|&i| !got[i]).count();
                    missing == 0 || (missing == 1 && got[n + g])
                })
            }
        }
    }
}

#[derive(Clone, Debug)]
pub struct FrameAssembler {
    stall_threshold: Option<TimeDelta>,
    /// The stall the last completed frame ended (its length), until taken.
    stall_ended: Option<TimeDelta>,
    /// Frames at or after `next_id`, by id.
    slots: BTreeMap<u64, Slot>,
    /// The next frame to release in order (None until the first frame completes).
    next_id: Option<u64>,
    /// Frames released in order, to be taken by the receiver.
    released: VecDeque<AssembledFrame>,
    /// How long complete frames wait behind a gap (0 = not at all).
    wait: TimeDelta,
    recent: VecDeque<Time>,
    pub stats: FrameStats,
}

impl FrameAssembler {
    pub fn new(stall_threshold: Option<TimeDelta>) -> Self {
        FrameAssembler {
            stall_threshold,
            stall_ended: None,
            slots: BTreeMap::new(),
            next_id: None,
            released: VecDeque::new(),
            wait: TimeDelta::ZERO,
            recent: VecDeque::new(),
            stats: FrameStats { delay: LogHistogram::new(), ..Default::default() },
        }
    }

    /// Complete frames wait up to `wait` behind a missing one (its retransmission); [`GIVE_UP`]
    /// for a sender that retransmits. Zero (the default) skips a gap at once.
    pub fn with_wait(mut self, wait: TimeDelta) -> Self {
        self.set_wait(wait);
        self
    }
    pub fn set_wait(&mut self, wait: TimeDelta) {
        self.wait = wait;
    }

    /// A packet of frame `f.id` (packet `index` of `count` media packets, `size` bytes; the
    /// frame has `xor_groups` XOR parity packets, 0 for a Reed-Solomon or unprotected frame)
    /// arrived at `now`; `f` carries the frame's details as this packet knows them (its send
    /// instants, queueing). Returns the frame's delay if the packet completed the frame; the
    /// frames it lets go in order are then in [`Self::poll_frame`].
    pub fn on_packet(
        &mut self,
        now: Time,
        f: AssembledFrame,
        count: u32,
        size: u32,
        index: u32,
        xor_groups: u8,
    ) -> Option<TimeDelta> {
        if self.next_id.is_some_and(|n| f.id < n) {
            return None; // late packet of a frame already released or given up
        }
        let slot = self.slots.entry(f.id).or_insert_with(|| Slot {
            received: 0,
            count,
            bytes: 0,
            xor: (xor_groups > 0)
                .then(|| (xor_groups, vec![false; count as usize + xor_groups as usize])),
            complete: None,
        });
        if slot.complete.is_some() {
            return None; // a redundant packet of a complete frame
        }
        if let Some((_, got)) = &mut slot.xor {
            match got.get_mut(index as usize) {
                Some(g) if !*g => *g = true,
                _ => return None, // a duplicate, or a packet outside the frame's code
            }
        }
        slot.received += 1;
        slot.bytes = slot.bytes.saturating_add(size);
        if !slot.recoverable() {
            return None;
        }
        slot.complete = Some(AssembledFrame { bytes: slot.bytes, complete_at: now, ..f });
        let delay = now - f.capture;
        self.stats.completed += 1;
        self.stats.delay.record(delay.as_nanos().max(0) as u64);
        self.note_completion(now);
        self.release(now);
        Some(delay)
    }

    fn note_completion(&mut self, now: Time) {
        if let Some(&prev) = self.recent.back() {
            let gap = now - prev;
            let threshold = self.stall_threshold.unwrap_or_else(|| {
                let n = self.recent.len() as i64;
                let mean = if n >= 2 {
                    TimeDelta::from_nanos((prev - self.recent[0]).as_nanos() / (n - 1))
                } else {
                    gap
                };
                TimeDelta::from_nanos((3 * mean.as_nanos()).max(mean.as_nanos() + 150_000_000))
            });
            if gap > threshold {
                self.stats.stalls += 1;
                self.stats.stall_time += gap;
                self.stall_ended = Some(gap);
            }
        }
        self.recent.push_back(now);
        while self.recent.front().is_some_and(|&t| now - t > TimeDelta::from_secs(1)) {
            self.recent.pop_front();
        }
    }

    /// Lets complete frames go in order; skips a gap when a complete key frame is behind it
    /// or the first complete frame behind it has waited [`GIVE_UP`].
    fn release(&mut self, now: Time) {
        loop {
            let Some((&id, slot)) = self.slots.first_key_value() else { return };
            let in_order = self.next_id.is_none_or(|n| n == id);
            match slot.complete {
                Some(f) if in_order => {
                    self.slots.remove(&id);
                    self.next_id = Some(id + 1);
                    self.released.push_back(AssembledFrame { in_order: now, ..f });
                }
                _ => {
                    // A gap (missing frames, or an incomplete frame) before the first
                    // complete frame: skip it if that frame is a key frame or has waited.
                    let Some((&cid, c)) = self.slots.iter().find(|(_, s)| s.complete.is_some())
                    else {
                        return;
                    };
                    let c = c.complete.expect("complete");
                    if !(c.key || now >= c.complete_at + self.wait) {
                        return;
                    }
                    // Frames skipped: every id from the next expected one, or (before any
                    // frame was released) the frames already seen before this one.
                    let skipped = match self.next_id {
                        Some(n) => cid - n,
                        None => self.slots.range(..cid).count() as u64,
                    };
                    self.stats.incomplete += skipped;
                    self.slots.retain(|&k, _| k >= cid);
                    self.next_id = Some(cid);
                }
            }
        }
    }

    /// When a gap is given up unless the missing frame completes first.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.slots.values().find_map(|s| s.complete).map(|f| f.complete_at + self.wait)
    }

    pub fn handle_timeout(&mut self, now: Time) {
        self.release(now);
    }

    /// The next frame released in order.
    pub fn poll_frame(&mut self) -> Option<AssembledFrame> {
        self.released.pop_front()
    }

    /// The stall the frame just completed ended, if it ended one (once).
    pub fn take_stall(&mut self) -> Option<TimeDelta> {
        self.stall_ended.take()
    }

    /// Completed frames in the last second.
    pub fn frame_rate(&self) -> usize {
        self.recent.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(a: &mut FrameAssembler, at: Time, id: u64, count: u32, key: bool) -> Option<TimeDelta> {
        let f = AssembledFrame::at(id, Time::from_millis(id * 33), at, key);
        a.on_packet(at, f, count, 1000, 0, 0)
    }

    fn released(a: &mut FrameAssembler) -> Vec<(u64, Time)> {
        std::iter::from_fn(|| a.poll_frame()).map(|f| (f.id, f.in_order)).collect()
    }

    #[test]
    fn delay_and_stall() {
        let mut a = FrameAssembler::new(None);
        let ms = Time::from_millis;
        // 30 fps, 2 packets per frame, 40 ms network delay; frames 40..45 held back ~200 ms.
        for f in 0..60u64 {
            let cap = ms(f * 33);
            let arrive = if (40..45).contains(&f) {
                ms(45 * 33 + 40)
            } else {
                cap + TimeDelta::from_millis(40)
            };
            pkt(&mut a, arrive, f, 2, f == 0);
            let d = pkt(&mut a, arrive + TimeDelta::from_millis(1), f, 2, f == 0).unwrap();
            assert!(d >= TimeDelta::from_millis(41));
        }
        assert_eq!(a.stats.completed, 60);
        assert_eq!(released(&mut a).len(), 60);
        assert_eq!(a.stats.stalls, 1);
        assert!(a.stats.stall_time >= TimeDelta::from_millis(190));
        // The median delay is 41 ms (to the histogram's 0.8 % resolution).
        let p50 = a.stats.delay.quantile(0.5).unwrap() as f64;
        assert!((p50 / 41e6 - 1.0).abs() < 0.008, "{p50}");
    }

    #[test]
    fn later_frames_wait_in_order_for_a_retransmission() {
        let mut a = FrameAssembler::new(None).with_wait(GIVE_UP);
        let ms = Time::from_millis;
        pkt(&mut a, ms(40), 0, 2, true);
        pkt(&mut a, ms(41), 0, 2, true);
        pkt(&mut a, ms(73), 1, 2, false); // frame 1's second packet is lost...
        pkt(&mut a, ms(106), 2, 1, false);
        pkt(&mut a, ms(139), 3, 1, false);
        assert_eq!(released(&mut a), vec![(0, ms(41))]);
        // ...and resent: frame 1 completes at 150 ms, 2 and 3 follow at once.
        assert!(pkt(&mut a, ms(150), 1, 2, false).is_some());
        assert_eq!(released(&mut a), vec![(1, ms(150)), (2, ms(150)), (3, ms(150))]);
        assert_eq!(a.stats.incomplete, 0);
        // A late copy of a released frame is ignored.
        assert!(pkt(&mut a, ms(160), 1, 2, false).is_none());
    }

    #[test]
    fn a_gap_is_given_up_after_the_wait_or_at_once_for_a_key_frame() {
        let mut a = FrameAssembler::new(None).with_wait(GIVE_UP);
        let ms = Time::from_millis;
        pkt(&mut a, ms(40), 0, 1, true);
        // Frame 1 never arrives; frame 2 completes at 106 ms and waits until 306 ms.
        pkt(&mut a, ms(106), 2, 1, false);
        assert_eq!(released(&mut a).len(), 1);
        assert_eq!(a.poll_timeout(), Some(ms(306)));
        a.handle_timeout(ms(305));
        assert!(released(&mut a).is_empty());
        a.handle_timeout(ms(306));
        assert_eq!(released(&mut a), vec![(2, ms(306))]);
        assert_eq!(a.stats.incomplete, 1);
        // Frame 3 half arrives; key frame 4 completes: 3 is given up at once.
        pkt(&mut a, ms(140), 3, 2, false);
        pkt(&mut a, ms(173), 4, 1, true);
        assert_eq!(released(&mut a), vec![(4, ms(173))]);
        assert_eq!(a.stats.incomplete, 2);
        assert_eq!(a.poll_timeout(), None);
        // Without retransmission there is nothing to wait for: frame 2 goes at once.
        let mut a = FrameAssembler::new(None);
        pkt(&mut a, ms(40), 0, 1, true);
        pkt(&mut a, ms(106), 2, 1, false);
        assert_eq!(released(&mut a), vec![(0, ms(40)), (2, ms(106))]);
        assert_eq!(a.stats.incomplete, 1);
        // A first frame that never completes is counted too.
        let mut a = FrameAssembler::new(None);
        pkt(&mut a, ms(40), 0, 2, true);
        pkt(&mut a, ms(73), 1, 1, false);
        assert_eq!(released(&mut a), vec![(1, ms(73))]);
        assert_eq!(a.stats.incomplete, 1);
    }

    #[test]
    fn fec_packets_recover_a_lost_media_packet() {
        // 3 media packets + 1 FEC: media packet 1 is lost, FEC (index 3) arrives.
        let mut a = FrameAssembler::new(None);
        let ms = Time::from_millis;
        assert!(pkt(&mut a, ms(10), 0, 3, true).is_none());
        assert!(pkt(&mut a, ms(12), 0, 3, true).is_none());
        assert_eq!(pkt(&mut a, ms(13), 0, 3, true), Some(TimeDelta::from_millis(13)));
        // The redundant packet of a recovered frame is ignored.
        assert!(pkt(&mut a, ms(14), 0, 3, true).is_none());
        assert_eq!(a.stats.completed, 1);
    }

    #[test]
    fn xor_parity_recovers_one_loss_per_group_and_reed_solomon_any_k() {
        // 6 media packets, 2 parity packets: groups {0, 2, 4} (parity 6) and {1, 3, 5} (7).
        let xor = |arrived: &[u32]| {
            let mut a = FrameAssembler::new(None);
            let f = AssembledFrame::at(0, Time::ZERO, Time::from_millis(10), true);
            arrived.iter().any(|&i| a.on_packet(Time::from_millis(10), f, 6, 100, i, 2).is_some())
        };
        assert!(xor(&[0, 1, 2, 3, 4, 5]));
        assert!(xor(&[0, 1, 3, 4, 5, 6]), "2 lost, its group's parity 6 arrived");
        assert!(xor(&[1, 2, 3, 4, 5, 6, 7]) && xor(&[0, 2, 3, 4, 7, 1]));
        assert!(!xor(&[1, 3, 4, 5, 6, 7]), "0 and 2 lost: one group misses two");
        assert!(!xor(&[0, 1, 2, 3, 4, 6]), "5 lost, the parity that arrived is the other group's");
        assert!(!xor(&[0, 0, 1, 2, 3, 4]), "a duplicate counts once");
        // Reed-Solomon: any 6 of the 8.
        let mut a = FrameAssembler::new(None);
        let f = AssembledFrame::at(0, Time::ZERO, Time::from_millis(10), true);
        let done: Vec<bool> = [1, 3, 4, 5, 6, 7]
            .iter()
            .map(|&i| a.on_packet(Time::from_millis(10), f, 6, 100, i, 0).is_some())
            .collect();
        assert_eq!(done, [false, false, false, false, false, true]);
    }
}
