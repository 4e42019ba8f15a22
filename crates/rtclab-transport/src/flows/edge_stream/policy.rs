//! How much parity a batch carries: the recovery policies the Hairpin chapter compares
//! (spec `afr-hairpin-confucius.md` §3.4, §3.7), behind one interface the sender asks once per
//! batch (a frame's first transmission, each retransmission round).

use crate::hairpin::Table;
use std::sync::Arc;

/// What the sender knows when it builds a batch.
#[derive(Clone, Copy, Debug)]
pub struct BatchContext {
    /// Estimated loss rate (the sender's window estimator).
    pub loss: f64,
    /// Data packets in the frame, and in this batch.
    pub frame_packets: u32,
    pub batch_packets: u32,
    /// Milliseconds left to the deadline (first transmission: deadline − F·dispersion; a
    /// retransmission: deadline − age of the frame), floored.
    pub ddl_left_ms: i64,
    /// RTT the policy plans with: ⌈srtt + rttvar⌉ ms.
    pub rtt_ms: u32,
    pub retransmission: bool,
    /// When (ms since the start), and the frame's data in kbit.
    pub now_ms: i64,
    pub frame_kbits: f64,
}

#[derive(Clone, Debug)]
pub enum RecoveryPolicy {
    /// Hairpin: the solved table (spec §3.4 runtime quantities).
    Hairpin { table: Arc<Table>, one_layer: bool },
    /// Retransmission only.
    Rtx,
    /// A fixed redundancy β on first transmissions, none on retransmissions.
    Fixed { beta: f64 },
    /// A fixed redundancy β on retransmissions only (the released `fixedrtx`).
    FixedRtx { beta: f64 },
    /// Bolot et al. (INFOCOM'99) as an average-rate state machine over ten combinations
    /// (released `BolotPolicy`): up one when loss / reward > 3 %, down one when loss < 3 %.
    Bolot { comb: usize },
    /// Padhye et al.'s USF (INFOCOM'00), nine combinations (released `UsfPolicy`): up when
    /// loss / reward > 3 %, down when loss < 3 % and it fell by more than 3 points since the
    /// last frame, back to 0 when loss < 1 %.
    Usf { comb: usize, previous: f64 },
    /// WebRTC's table-driven FEC (`webrtc.rs`): WebRTC_NOW (Chromium m88), or WebRTC14 with
    /// the hybrid NACK/FEC RTT scaling (`hybrid`).
    WebRtc { hybrid: bool, filter: super::webrtc::MaxLossFilter },
    /// Hairpin-lin (dissertation eq. 7.2): β = min(k · RTT / t · β₀, 1) with β₀ WebRTC_NOW's
    /// redundancy and t the time left to the deadline, on every round.
    Linear { k: f64, filter: super::webrtc::MaxLossFilter },
}

const BOLOT_RATE: [f64; 10] = [0.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 3.0, 3.0, 4.0];
const BOLOT_REWARD: [f64; 10] = [1.0, 4.0, 4.0, 8.0, 8.0, 8.0, 8.0, 18.0, 18.0, 18.0];
const USF_RATE: [f64; 9] = [0.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0];
const USF_REWARD: [f64; 9] = [1.0, 4.0, 4.0, 8.0, 8.0, 18.0, 18.0, 18.0, 18.0];
/// Both state machines' thresholds (`k_bolotHigh`, `k_bolotLow`, `k_minThresh`).
const STEP: f64 = 0.03;

impl RecoveryPolicy {
    pub fn name(&self) -> &'static str {
        match self {
            RecoveryPolicy::Hairpin { one_layer: false, .. } => "hairpin",
            RecoveryPolicy::Hairpin { one_layer: true, .. } => "hairpinone",
            RecoveryPolicy::Rtx => "rtx",
            RecoveryPolicy::Fixed { .. } => "fixed",
            RecoveryPolicy::FixedRtx { .. } => "fixedrtx",
            RecoveryPolicy::Bolot { .. } => "bolot",
            RecoveryPolicy::Usf { .. } => "usf",
            RecoveryPolicy::WebRtc { hybrid: false, .. } => "webrtc",
            RecoveryPolicy::WebRtc { hybrid: true, .. } => "awebrtc",
            RecoveryPolicy::Linear { .. } => "lin",
        }
    }

    /// Parity packets for the batch (the state machines move once per frame).
    pub fn parity(&mut self, c: &BatchContext) -> u32 {
        let n = c.batch_packets as f64;
        match self {
            RecoveryPolicy::Hairpin { table, one_layer } => {
                // The released sender: T' = max(0, left − rtt), L = ⌊T'/rtt⌋ in [1, 15]
                // (one layer more conservative than eq. 7.3); `hairpinone` always plans a
                // single round.
                let left = (c.ddl_left_ms - c.rtt_ms as i64).max(0) as u32;
                let (left, rtt) = if *one_layer { (1, 1) } else { (left, c.rtt_ms.max(1)) };
                table.lookup(c.loss, c.frame_packets as usize, left, rtt, c.batch_packets as usize)
                    as u32
            }
            RecoveryPolicy::Rtx => 0,
            RecoveryPolicy::Fixed { beta } => {
                if c.retransmission {
                    0
                } else {
                    (*beta * n).round() as u32
                }
            }
            RecoveryPolicy::FixedRtx { beta } => {
                if c.retransmission {
                    (*beta * n).round() as u32
                } else {
                    0
                }
            }
            // The released code lets the combination reach 10 (Bolot) or 9 (USF), one past its
            // tables; here it stops at the last combination.
            RecoveryPolicy::Bolot { comb } => {
                if c.retransmission {
                    return 0;
                }
                if c.loss / BOLOT_REWARD[*comb] > STEP {
                    *comb = (*comb + 1).min(BOLOT_RATE.len() - 1);
                }
                if c.loss < STEP {
                    *comb = comb.saturating_sub(1);
                }
                (BOLOT_RATE[*comb] * n).round() as u32
            }
            RecoveryPolicy::Usf { comb, previous } => {
                if c.retransmission {
                    return 0;
                }
                if c.loss / USF_REWARD[*comb] > STEP {
                    *comb = (*comb + 1).min(USF_RATE.len() - 1);
                }
                if c.loss < STEP && *previous - c.loss > STEP {
                    *comb = comb.saturating_sub(1);
                }
                *previous = c.loss;
                if c.loss < 0.01 {
                    *comb = 0;
                }
                (USF_RATE[*comb] * n).round() as u32
            }
            RecoveryPolicy::WebRtc { hybrid, filter } => {
                use super::webrtc::{frame_protection_factor, parity_packets};
                let rtt = hybrid.then_some(c.rtt_ms);
                let pf = frame_protection_factor(
                    filter,
                    c.now_ms,
                    c.loss,
                    c.frame_kbits,
                    c.frame_packets,
                    rtt,
                );
                if c.retransmission {
                    return 0;
                }
                parity_packets(c.batch_packets, pf)
            }
            RecoveryPolicy::Linear { k, filter } => {
                let beta0 = super::webrtc::frame_protection_factor(
                    filter,
                    c.now_ms,
                    c.loss,
                    c.frame_kbits,
                    c.frame_packets,
                    None,
                ) as f64
                    / 256.0;
                // No time left: as much as the formula allows (β = 1).
                let scale = if c.ddl_left_ms > 0 {
                    *k * c.rtt_ms.max(1) as f64 / c.ddl_left_ms as f64
                } else {
                    f64::INFINITY
                };
                let beta = if beta0 > 0.0 { (scale * beta0).min(1.0) } else { 0.0 };
                (beta * n).round() as u32
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hairpin::table::CELLS;

    #[test]
    fn hairpin_reads_the_layer_the_released_sender_reads() {
        // A table whose cells hold their own layer number.
        let mut bytes = vec![0u8; CELLS];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = ((i % (15 * 55)) / 55 + 1) as u8;
        }
        let table = Arc::new(Table::from_bytes(1e-4, bytes).unwrap());
        let mut p = RecoveryPolicy::Hairpin { table: table.clone(), one_layer: false };
        let c = BatchContext {
            loss: 0.2,
            frame_packets: 25,
            batch_packets: 25,
            ddl_left_ms: 100,
            rtt_ms: 20,
            retransmission: false,
            now_ms: 0,
            frame_kbits: 233.0,
        };
        // (100 − 20) / 20 = 4 layers.
        assert_eq!(p.parity(&c), 4);
        assert_eq!(p.parity(&BatchContext { ddl_left_ms: 30, ..c }), 1);
        assert_eq!(p.parity(&BatchContext { ddl_left_ms: 1000, rtt_ms: 10, ..c }), 15);
        let mut one = RecoveryPolicy::Hairpin { table, one_layer: true };
        assert_eq!(one.parity(&c), 1);
        assert_eq!(RecoveryPolicy::Fixed { beta: 0.2 }.parity(&c), 5);
        assert_eq!(
            RecoveryPolicy::Fixed { beta: 0.2 }.parity(&BatchContext { retransmission: true, ..c }),
            0
        );
        assert_eq!(RecoveryPolicy::FixedRtx { beta: 0.2 }.parity(&c), 0);
        let rtx = BatchContext { retransmission: true, ..c };
        assert_eq!(RecoveryPolicy::FixedRtx { beta: 0.2 }.parity(&rtx), 5);
    }

    #[test]
    fn hairpin_lin_scales_webrtc_by_the_rounds_left() {
        let c = BatchContext {
            loss: 0.2,
            frame_packets: 25,
            batch_packets: 25,
            ddl_left_ms: 80,
            rtt_ms: 20,
            retransmission: false,
            now_ms: 0,
            frame_kbits: 233.0,
        };
        let mut w = RecoveryPolicy::WebRtc { hybrid: false, filter: Default::default() };
        let web = w.parity(&c);
        // k = 1, RTT / t = 1/4: a quarter of WebRTC's redundancy on the first round...
        let mut lin = RecoveryPolicy::Linear { k: 1.0, filter: Default::default() };
        let first = lin.parity(&c);
        assert!(first > 0 && first < web, "{first} vs {web}");
        // ...and more as the deadline nears, retransmissions included; β ≤ 1.
        let late = lin.parity(&BatchContext {
            ddl_left_ms: 10,
            batch_packets: 4,
            retransmission: true,
            ..c
        });
        assert_eq!(late, 4);
        let mut lin4 = RecoveryPolicy::Linear { k: 4.0, filter: Default::default() };
        assert!(lin4.parity(&c) > first);
        // No loss, no parity.
        let mut lin = RecoveryPolicy::Linear { k: 1.0, filter: Default::default() };
        assert_eq!(lin.parity(&BatchContext { loss: 0.0, ..c }), 0);
    }

    #[test]
    fn bolot_and_usf_step_through_their_combinations() {
        let c = BatchContext {
            loss: 0.2,
            frame_packets: 10,
            batch_packets: 10,
            ddl_left_ms: 100,
            rtt_ms: 20,
            retransmission: false,
            now_ms: 0,
            frame_kbits: 233.0,
        };
        // 20 % loss: 0.2/1 > 3 % → comb 1 (rate 1.0); 0.2/4 > 3 % → 2; 0.2/4 → 3 (rate 2);
        // 0.2/8 = 2.5 % stays.
        let mut b = RecoveryPolicy::Bolot { comb: 0 };
        let ks: Vec<u32> = (0..4).map(|_| b.parity(&c)).collect();
        assert_eq!(ks, vec![10, 10, 20, 20]);
        assert_eq!(b.parity(&BatchContext { retransmission: true, ..c }), 0);
        // Loss below 3 %: down one combination per frame.
        assert_eq!(b.parity(&BatchContext { loss: 0.02, ..c }), 10);
        // USF: below 1 % resets at once.
        let mut u = RecoveryPolicy::Usf { comb: 0, previous: 0.0 };
        assert_eq!(u.parity(&c), 10);
        assert_eq!(u.parity(&c), 10);
        assert_eq!(u.parity(&c), 20);
        assert_eq!(u.parity(&BatchContext { loss: 0.005, ..c }), 0);
        // Saturation: at 90 % loss Bolot stops at its last combination (rate 4).
        let mut b = RecoveryPolicy::Bolot { comb: 0 };
        for _ in 0..20 {
            b.parity(&BatchContext { loss: 0.9, ..c });
        }
        assert_eq!(b.parity(&BatchContext { loss: 0.9, ..c }), 40);
    }
}
