//! libwebrtc's `OveruseDetectorTest` (modules/remote_bitrate_estimator/
//! overuse_detector_unittest.cc), the deterministic cases (no receive-time noise), run on our
//! Kalman filter + detector with the same harness: RTP timestamps at 90 kHz, integer-ms
//! arrival times, 5 ms groups. The cases with Gaussian noise depend on libwebrtc's own random
//! generator and are not ported.
use rtclab_cc::gcc::detector::DetectorConfig;
use rtclab_cc::gcc::kalman::{DelayStatistic, KalmanConfig, KalmanDelayDetector};
use rtclab_cc::gcc::BandwidthUsage;

struct Harness {
    det: KalmanDelayDetector,
    now_ms: i64,
    receive_ms: i64,
    rtp: u32,
}

impl Harness {
    fn new() -> Self {
        Harness {
            det: KalmanDelayDetector::new(
                KalmanConfig::default(),
                DetectorConfig::libwebrtc(),
                DelayStatistic::RembPath,
            ),
            now_ms: 0,
            receive_ms: 0,
            rtp: 10 * 90,
        }
    }

    fn update(&mut self, rtp: u32, receive_ms: i64, size: i64) {
        let send_ns = rtp as i64 * 1_000_000_000 / 90_000;
        self.det.on_packet(send_ns, receive_ms * 1_000_000, size);
    }

    /// Steady frames with no drift; returns the number of distinct over-use episodes.
    fn run_100000_samples(&mut self, packets_per_frame: usize, size: i64, mean_ms: i64) -> u32 {
        let mut unique = 0;
        let mut last: i64 = -1;
        for i in 0..100_000i64 {
            for _ in 0..packets_per_frame {
                self.update(self.rtp, self.receive_ms, size);
            }
            self.rtp = self.rtp.wrapping_add(mean_ms as u32 * 90);
            self.now_ms += mean_ms;
            self.receive_ms = self.receive_ms.max(self.now_ms);
            if self.det.state() == BandwidthUsage::Overusing {
                if last + 1 != i {
                    unique += 1;
                }
                last = i;
            }
        }
        unique
    }

    /// Frames arriving `drift_ms` later each; returns the frame count until over-use.
    fn run_until_overuse(
        &mut self,
        packets_per_frame: usize,
        size: i64,
        mean_ms: i64,
        drift_ms: i64,
    ) -> Option<u32> {
        for i in 0..1000 {
            for _ in 0..packets_per_frame {
                self.update(self.rtp, self.receive_ms, size);
            }
            self.rtp = self.rtp.wrapping_add(mean_ms as u32 * 90);
            self.now_ms += mean_ms + drift_ms;
            self.receive_ms = self.receive_ms.max(self.now_ms);
            if self.det.state() == BandwidthUsage::Overusing {
                return Some(i + 1);
            }
        }
        None
    }
}

#[test]
fn simple_overuse_2000kbit_30fps() {
    let mut h = Harness::new();
    assert_eq!(h.run_100000_samples(6, 1200, 33), 0);
    assert_eq!(h.run_until_overuse(6, 1200, 33, 1), Some(7));
}

#[test]
fn simple_overuse_100kbit_10fps() {
    let mut h = Harness::new();
    assert_eq!(h.run_100000_samples(1, 1200, 100), 0);
    assert_eq!(h.run_until_overuse(1, 1200, 100, 1), Some(7));
}

#[test]
fn simple_non_overuse_30fps() {
    let mut h = Harness::new();
    let mut rtp = 10 * 90u32;
    for _ in 0..1000 {
        h.update(rtp, h.now_ms, 1200);
        h.now_ms += 33;
        rtp += 33 * 90;
        assert_eq!(h.det.state(), BandwidthUsage::Normal);
    }
}

#[test]
fn non_overuse_with_receive_variance() {
    let mut h = Harness::new();
    let mut rtp = 10 * 90u32;
    for i in 0..1000 {
        h.update(rtp, h.now_ms, 1200);
        rtp += 10 * 90;
        h.now_ms += if i % 2 == 1 { 5 } else { 15 };
        assert_eq!(h.det.state(), BandwidthUsage::Normal, "frame {i}");
    }
}

#[test]
fn non_overuse_with_rtp_timestamp_variance() {
    let mut h = Harness::new();
    let mut rtp = 10 * 90u32;
    for i in 0..1000 {
        h.update(rtp, h.now_ms, 1200);
        h.now_ms += 10;
        rtp += if i % 2 == 1 { 5 * 90 } else { 15 * 90 };
        assert_eq!(h.det.state(), BandwidthUsage::Normal, "frame {i}");
    }
}
