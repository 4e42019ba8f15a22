//! WebRTC's FEC amount, the Hairpin chapter's WebRTC_NOW and WebRTC14 baselines (spec
//! `afr-hairpin-confucius.md` §3.7; libwebrtc `modules/video_coding/media_opt_util.cc`,
//! `VCMFecMethod::ProtectionFactor`, `VCMNackFecMethod`; Holmer et al., ICIP 2013 for the
//! hybrid NACK/FEC). Our own code over WebRTC's two data tables, vendored as data in
//! `crates/rtclab-transport/data/` with their BSD notice.
//!
//! Per frame (first transmissions only; retransmissions carry no FEC):
//! - loss: the maximum over the last 10 s of 1-second averages of the sender's loss
//!   estimate, in 1/255 units, capped at 128 (the table's 50 %);
//! - effective rate = kbit per frame × (1920·1080 / (704·576))^−0.3 (cloud gaming at 1080p
//!   against WebRTC's reference size); rate index = clamp((eff − 5) / 5, 0, 49);
//! - code rate δ = `kFecRateTable[rate index · 129 + loss]`, at least 0.2·255 = 51 whenever
//!   loss > 0 and the frame has more than one packet, at most 128;
//! - WebRTC14 (hybrid NACK/FEC): δ × `VCMNackFecTable[min(rtt ms, 99)]` / 100 (a sigmoid: 0 up
//!   to 10 ms, 0.51 at 37 ms, ≥ 0.95 from 51 ms);
//! - protection factor pf = ⌊0.5 + 255·δ / (255 − δ)⌋, at most 255 (β ≤ 1);
//! - parity per group of at most 48 media packets: ⌊(g·pf + 128) / 256⌋, at least 1 when
//!   pf > 0 (`ForwardErrorCorrection::NumFecPackets`).

use std::collections::VecDeque;
use std::sync::OnceLock;

const RATE_TABLE_TEXT: &str = include_str!("../../../data/webrtc_fec_rate_table.txt");
const NACK_TABLE_TEXT: &str = include_str!("../../../data/webrtc_nack_fec_table.txt");
const LOSS_COLUMNS: usize = 129;
const RATE_ROWS: usize = 50;
/// The code-rate floor when there is loss (`firstPartitionProt` = 0.2 · 255).
const FIRST_PARTITION_PROT: u32 = 51;
/// Media packets per FEC group (`kUlpfecMaxMediaPackets`).
pub const MAX_GROUP: u32 = 48;

fn numbers(text: &str) -> Vec<u8> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .flat_map(str::split_whitespace)
        .map(|x| x.parse().expect("the vendored WebRTC tables hold numbers 0..=255"))
        .collect()
}

/// `kFecRateTable`, 50 × 129.
pub fn rate_table() -> &'static [u8] {
    static T: OnceLock<Vec<u8>> = OnceLock::new();
    T.get_or_init(|| numbers(RATE_TABLE_TEXT))
}

/// `VCMNackFecTable`, 100 percentages by RTT (ms).
pub fn nack_fec_table() -> &'static [u8] {
    static T: OnceLock<Vec<u8>> = OnceLock::new();
    T.get_or_init(|| numbers(NACK_TABLE_TEXT))
}

/// WebRTC's resolution factor for 1080p against 704 × 576, (w·h / (704·576))^−0.3.
pub fn resolution_factor(width: u32, height: u32) -> f64 {
    (width as f64 * height as f64 / (704.0 * 576.0)).powf(-0.3)
}

/// The code rate δ (0..=128, in 1/255) for a frame of `kbit_per_frame` at `loss255` (0..=255)
/// over `packets` media packets; `rtt_ms` applies the hybrid NACK/FEC scaling (WebRTC14).
pub fn code_rate(kbit_per_frame: f64, loss255: u32, packets: u32, rtt_ms: Option<u32>) -> u32 {
    let eff = (kbit_per_frame * resolution_factor(1920, 1080)).clamp(0.0, u16::MAX as f64) as i64;
    let rate = ((eff - 5) / 5).clamp(0, RATE_ROWS as i64 - 1) as usize;
    let loss = (loss255 as usize).min(LOSS_COLUMNS - 1);
    let mut delta = rate_table()[rate * LOSS_COLUMNS + loss] as u32;
    if loss > 0 && packets > 1 {
        delta = delta.max(FIRST_PARTITION_PROT);
    }
    delta = delta.min(LOSS_COLUMNS as u32 - 1);
    if let Some(rtt) = rtt_ms {
        let pct = nack_fec_table()[(rtt as usize).min(99)] as f64 / 100.0;
        delta = (pct * delta as f64) as u32;
    }
    delta
}

/// The protection factor (FEC packets per media packet, in 1/256) for code rate δ.
pub fn protection_factor(delta: u32) -> u32 {
    if delta == 0 {
        return 0;
    }
    ((0.5 + 255.0 * delta as f64 / (255 - delta.min(254)) as f64) as u32).min(255)
}

/// Parity packets for `n` media packets at protection factor `pf`, in groups of ≤ 48.
pub fn parity_packets(n: u32, pf: u32) -> u32 {
    if pf == 0 || n == 0 {
        return 0;
    }
    let groups = n.div_ceil(MAX_GROUP);
    (0..groups)
        .map(|g| {
            let size = if g + 1 == groups { n - g * MAX_GROUP } else { MAX_GROUP };
            ((size * pf + 128) >> 8).max(1)
        })
        .sum()
}

/// The protection factor WebRTC gives a frame of `kbit_per_frame` over `packets` media
/// packets, the sender's loss estimate `loss` (at `now_ms`) taken into `filter` first;
/// `rtt_ms` for WebRTC14's scaling.
pub fn frame_protection_factor(
    filter: &mut MaxLossFilter,
    now_ms: i64,
    loss: f64,
    kbit_per_frame: f64,
    packets: u32,
    rtt_ms: Option<u32>,
) -> u32 {
    let loss255 = (filter.update(now_ms, loss) * 255.0).round().clamp(0.0, 255.0) as u32;
    protection_factor(code_rate(kbit_per_frame, loss255, packets, rtt_ms))
}

/// The loss filter: the maximum of the 1-second averages of the last ten seconds and the
/// current second's.
#[derive(Clone, Debug, Default)]
pub struct MaxLossFilter {
    /// (second, mean loss) of the seconds that ended.
    done: VecDeque<(i64, f64)>,
    second: Option<i64>,
    sum: f64,
    n: u32,
}

impl MaxLossFilter {
    /// A loss sample at `now_ms`; returns the filtered loss.
    pub fn update(&mut self, now_ms: i64, loss: f64) -> f64 {
        let s = now_ms.div_euclid(1000);
        if let Some(cur) = self.second.filter(|c| *c != s) {
            self.done.push_back((cur, self.sum / self.n.max(1) as f64));
            self.sum = 0.0;
            self.n = 0;
        }
        while self.done.front().is_some_and(|(sec, _)| s - sec > 10) {
            self.done.pop_front();
        }
        self.second = Some(s);
        self.sum += loss;
        self.n += 1;
        let current = self.sum / self.n as f64;
        self.done.iter().map(|x| x.1).fold(current, f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vendored_tables_have_their_shapes_and_known_cells() {
        let t = rate_table();
        assert_eq!(t.len(), RATE_ROWS * LOSS_COLUMNS);
        // Every row starts at zero protection for zero loss.
        assert!((0..RATE_ROWS).all(|r| t[r * LOSS_COLUMNS] == 0));
        // Row 0 (lowest rate): 0 up to loss 32, then 11, 39, and 51 to the end.
        assert_eq!((t[32], t[33], t[48], t[96], t[128]), (0, 11, 39, 51, 51));
        // The last row saturates at 127 from loss 28.
        let last = &t[49 * LOSS_COLUMNS..];
        assert_eq!((last[1], last[2], last[27], last[28], last[128]), (13, 27, 126, 127, 127));
        let nack = nack_fec_table();
        assert_eq!(nack.len(), 100);
        // The spec's points of the sigmoid: 0 up to 10 ms, 0.51 at 37 ms, ≥ 0.95 from 51 ms.
        assert_eq!((nack[10], nack[37], nack[51], nack[99]), (0, 51, 95, 100));
    }

    #[test]
    fn code_rate_protection_factor_and_parity_follow_webrtc() {
        // 14 Mbit/s at 60 fps = 233 kbit per frame × 0.613 = 143 → rate index 27.
        let kbit = 14_000.0 / 60.0;
        assert!((resolution_factor(1920, 1080) - 0.6129).abs() < 1e-3);
        let t = rate_table();
        // 20 % loss = 51/255.
        let d = code_rate(kbit, 51, 25, None);
        assert_eq!(d, (t[27 * LOSS_COLUMNS + 51] as u32).clamp(51, 128));
        // No loss, no FEC; any loss at least the 51 floor.
        assert_eq!(code_rate(kbit, 0, 25, None), 0);
        assert!(code_rate(kbit, 1, 25, None) >= 51);
        // WebRTC14: no FEC below 10 ms RTT, about half at 37 ms.
        assert_eq!(code_rate(kbit, 51, 25, Some(5)), 0);
        assert_eq!(code_rate(kbit, 51, 25, Some(37)), (d as f64 * 0.51) as u32);
        // δ = 51 (20 %) → pf = 64 (25 % of the media packets); δ = 128 → 255.
        assert_eq!(protection_factor(51), 64);
        assert_eq!(protection_factor(128), 255);
        assert_eq!(parity_packets(25, 64), 6); // (25·64 + 128) >> 8
        assert_eq!(parity_packets(3, 10), 1); // at least one
        assert_eq!(parity_packets(100, 255), 48 + 48 + 4); // groups of 48
    }

    #[test]
    fn the_loss_filter_keeps_the_worst_second_for_ten_seconds() {
        let mut f = MaxLossFilter::default();
        assert_eq!(f.update(0, 0.2), 0.2);
        assert_eq!(f.update(500, 0.0), 0.1); // the current second's mean
        assert_eq!(f.update(1_500, 0.0), 0.1); // second 0 (mean 0.1) is remembered
        assert_eq!(f.update(10_500, 0.0), 0.1);
        assert_eq!(f.update(11_500, 0.0), 0.0, "more than ten seconds later");
    }
}
