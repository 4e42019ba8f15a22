//! Sets of sequence numbers as sorted, disjoint half-open ranges [start, end): the TCP
//! receiver's out-of-order data, the TCP sender's SACKed segments, and FastAck's view at the
//! access point (what its link has sent, what the client has SACKed).

/// The parts of [s, e) that no range of `ranges` (sorted, disjoint) covers.
pub fn uncovered(ranges: &[(u64, u64)], s: u64, e: u64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut at = s;
    let first = ranges.partition_point(|r| r.1 <= s);
    for &(a, b) in &ranges[first..] {
        if a >= e {
            break;
        }
        if a > at {
            out.push((at, a));
        }
        at = at.max(b);
        if at >= e {
            break;
        }
    }
    if at < e {
        out.push((at, e));
    }
    out
}

/// Adds [s, e) to `ranges` (sorted, disjoint), merging what it touches.
pub fn insert_range(ranges: &mut Vec<(u64, u64)>, s: u64, e: u64) {
    let lo = ranges.partition_point(|r| r.1 < s);
    let hi = ranges.partition_point(|r| r.0 <= e);
    if lo == hi {
        ranges.insert(lo, (s, e));
    } else {
        let merged = (ranges[lo].0.min(s), ranges[hi - 1].1.max(e));
        ranges.splice(lo..hi, std::iter::once(merged));
    }
}

/// Drops everything below `s` from `ranges` (sorted, disjoint).
pub fn remove_below(ranges: &mut Vec<(u64, u64)>, s: u64) {
    ranges.retain(|r| r.1 > s);
    if let Some(first) = ranges.first_mut() {
        first.0 = first.0.max(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_find_what_is_new_and_merge() {
        let mut r = Vec::new();
        insert_range(&mut r, 10, 20);
        insert_range(&mut r, 30, 40);
        assert_eq!(uncovered(&r, 5, 45), vec![(5, 10), (20, 30), (40, 45)]);
        assert_eq!(uncovered(&r, 12, 18), vec![]);
        assert_eq!(uncovered(&r, 15, 35), vec![(20, 30)]);
        insert_range(&mut r, 20, 30);
        assert_eq!(r, vec![(10, 40)]);
        insert_range(&mut r, 5, 8);
        insert_range(&mut r, 40, 41);
        assert_eq!(r, vec![(5, 8), (10, 41)]);
        remove_below(&mut r, 12);
        assert_eq!(r, vec![(12, 41)]);
        remove_below(&mut r, 41);
        assert_eq!(r, vec![]);
    }
}
