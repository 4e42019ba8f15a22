//! Flow classification for flow-queueing disciplines: a packet's flow to a bucket.
//!
//! Linux hashes the 5-tuple with a random perturbation (`jhash`), so two flows may share a
//! bucket. Here the flow id (filled by both engines: the simulator from the endpoint, the
//! emulator from addresses and ports) is mixed with `salt` by SplitMix64's finaliser, which
//! is deterministic: the same scenario gives the same collisions on every run and machine.
//! Collisions happen as with any hash (with 1024 buckets two given flows share one with
//! probability 1/1024); change `salt` to draw another assignment.

use rtclab_core::FlowId;

/// The bucket of `flow` among `buckets` (> 0).
#[inline]
pub fn bucket(flow: FlowId, salt: u32, buckets: u32) -> usize {
    let mut z = (flow.0 as u64) ^ ((salt as u64) << 32);
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    // Lemire's multiply-shift instead of a modulo.
    (((z >> 32) * buckets as u64) >> 32) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_in_range_stable_and_spread() {
        let mut used = vec![0u32; 1024];
        for f in 0..1024 {
            let b = bucket(FlowId(f), 0, 1024);
            assert_eq!(b, bucket(FlowId(f), 0, 1024));
            used[b] += 1;
        }
        // 1024 flows into 1024 buckets: about 1 - 1/e = 63 % of buckets used.
        let n = used.iter().filter(|&&c| c > 0).count();
        assert!((560..=730).contains(&n), "{n}");
        assert_ne!(
            (0..64).map(|f| bucket(FlowId(f), 0, 1024)).collect::<Vec<_>>(),
            (0..64).map(|f| bucket(FlowId(f), 7, 1024)).collect::<Vec<_>>()
        );
    }
}
