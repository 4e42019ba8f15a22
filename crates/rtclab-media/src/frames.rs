//! Receiver-side frame assembly and video QoE: a frame is complete when all its packets have
//! arrived; its end-to-end delay is completion time − capture time. The received frame rate
//! counts completed frames per second; a stall is a gap between consecutive completed frames
//! longer than `stall_threshold` (fixed), or, when unset, longer than max(3·mean gap,
//! mean gap + 150 ms) over the last second (the WebRTC freeze definition, spec
//! `copa-qlibra-tcp.md` §4.4). Frames that never complete (a packet lost) are counted when a
//! later frame completes.

use rtclab_core::{LogHistogram, Time, TimeDelta};
use std::collections::{BTreeMap, VecDeque};

#[derive(Clone, Debug, Default)]
pub struct FrameStats {
    pub completed: u64,
    pub incomplete: u64,
    /// End-to-end frame delay (ns).
    pub delay: LogHistogram,
    pub stalls: u64,
    pub stall_time: TimeDelta,
}

#[derive(Clone, Debug)]
pub struct FrameAssembler {
    stall_threshold: Option<TimeDelta>,
    /// The stall the last completed frame ended (its length), until taken.
    stall_ended: Option<TimeDelta>,
    /// frame id → (capture time, packets received, packet count)
    partial: BTreeMap<u64, (Time, u32, u32)>,
    last_completed_id: Option<u64>,
    recent: VecDeque<Time>,
    pub stats: FrameStats,
}

impl FrameAssembler {
    pub fn new(stall_threshold: Option<TimeDelta>) -> Self {
        FrameAssembler {
            stall_threshold,
            stall_ended: None,
            partial: BTreeMap::new(),
            last_completed_id: None,
            recent: VecDeque::new(),
            stats: FrameStats { delay: LogHistogram::new(), ..Default::default() },
        }
    }

    /// A packet of frame `frame_id` (packet `count` of the frame) arrived at `now`. Returns
    /// the frame's delay if it completed the frame.
    pub fn on_packet(
        &mut self,
        now: Time,
        frame_id: u64,
        capture: Time,
        count: u32,
    ) -> Option<TimeDelta> {
        if self.last_completed_id.is_some_and(|l| frame_id <= l) {
            return None; // late packet of a frame already given up or completed
        }
        let e = self.partial.entry(frame_id).or_insert((capture, 0, count));
        e.1 += 1;
        if e.1 < e.2 {
            return None;
        }
        self.partial.remove(&frame_id);
        // Older unfinished frames are lost for playback.
        let stale: Vec<u64> = self.partial.range(..frame_id).map(|(k, _)| *k).collect();
        for k in stale {
            self.partial.remove(&k);
            self.stats.incomplete += 1;
        }
        self.last_completed_id = Some(frame_id);
        let delay = now - capture;
        self.stats.completed += 1;
        self.stats.delay.record(delay.as_nanos().max(0) as u64);
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
        Some(delay)
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

    #[test]
    fn delay_loss_and_stall() {
        let mut a = FrameAssembler::new(None);
        let ms = Time::from_millis;
        // 30 fps, 2 packets per frame, 40 ms network delay.
        for f in 0..60u64 {
            let cap = ms(f * 33);
            if f == 30 {
                a.on_packet(cap + TimeDelta::from_millis(40), f, cap, 2); // second packet lost
                continue;
            }
            let arrive = if (40..45).contains(&f) {
                ms(45 * 33 + 40)
            } else {
                cap + TimeDelta::from_millis(40)
            };
            a.on_packet(arrive, f, cap, 2);
            let d = a.on_packet(arrive + TimeDelta::from_millis(1), f, cap, 2).unwrap();
            assert!(d >= TimeDelta::from_millis(41));
        }
        assert_eq!(a.stats.completed, 59);
        assert_eq!(a.stats.incomplete, 1);
        // Frames 40..45 were held back ~200 ms: one stall.
        assert_eq!(a.stats.stalls, 1);
        assert!(a.stats.stall_time >= TimeDelta::from_millis(190));
        // The median delay is 41 ms (to the histogram's 0.8 % resolution).
        let p50 = a.stats.delay.quantile(0.5).unwrap() as f64;
        assert!((p50 / 41e6 - 1.0).abs() < 0.008, "{p50}");
    }

    #[test]
    fn fec_packets_recover_a_lost_media_packet() {
        // 3 media packets + 1 FEC: media packet 1 is lost, FEC (index 3) arrives.
        let mut a = FrameAssembler::new(None);
        let c = Time::ZERO;
        assert!(a.on_packet(Time::from_millis(10), 0, c, 3).is_none());
        assert!(a.on_packet(Time::from_millis(12), 0, c, 3).is_none());
        assert_eq!(a.on_packet(Time::from_millis(13), 0, c, 3), Some(TimeDelta::from_millis(13)));
        // The redundant packet of a recovered frame is ignored.
        assert!(a.on_packet(Time::from_millis(14), 0, c, 3).is_none());
        assert_eq!(a.stats.completed, 1);
    }
}
