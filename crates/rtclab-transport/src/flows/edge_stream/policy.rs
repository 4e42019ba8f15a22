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
}

#[derive(Clone, Debug)]
pub enum RecoveryPolicy {
    /// Hairpin: the solved table (spec §3.4 runtime quantities).
    Hairpin { table: Arc<Table>, one_layer: bool },
    /// Retransmission only.
    Rtx,
    /// A fixed redundancy β on first transmissions, none on retransmissions.
    Fixed { beta: f64 },
}

impl RecoveryPolicy {
    pub fn name(&self) -> &'static str {
        match self {
            RecoveryPolicy::Hairpin { one_layer: false, .. } => "hairpin",
            RecoveryPolicy::Hairpin { one_layer: true, .. } => "hairpinone",
            RecoveryPolicy::Rtx => "rtx",
            RecoveryPolicy::Fixed { .. } => "fixed",
        }
    }

    /// Parity packets for the batch.
    pub fn parity(&self, c: &BatchContext) -> u32 {
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
                    (beta * c.batch_packets as f64).round() as u32
                }
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
        let p = RecoveryPolicy::Hairpin { table: table.clone(), one_layer: false };
        let c = BatchContext {
            loss: 0.2,
            frame_packets: 25,
            batch_packets: 25,
            ddl_left_ms: 100,
            rtt_ms: 20,
            retransmission: false,
        };
        // (100 − 20) / 20 = 4 layers.
        assert_eq!(p.parity(&c), 4);
        assert_eq!(p.parity(&BatchContext { ddl_left_ms: 30, ..c }), 1);
        assert_eq!(p.parity(&BatchContext { ddl_left_ms: 1000, rtt_ms: 10, ..c }), 15);
        let one = RecoveryPolicy::Hairpin { table, one_layer: true };
        assert_eq!(one.parity(&c), 1);
        assert_eq!(RecoveryPolicy::Fixed { beta: 0.2 }.parity(&c), 5);
        assert_eq!(
            RecoveryPolicy::Fixed { beta: 0.2 }.parity(&BatchContext { retransmission: true, ..c }),
            0
        );
    }
}
