//! Packet grouping and inter-group deltas (libwebrtc `InterArrival` / `InterArrivalDelta`,
//! spec `gcc.md` §2.2).
//!
//! A packet starts a new group when it is not part of a burst and was sent more than 5 ms
//! after the group's first packet. Burst rule: same send time, or arriving closer than 5 ms
//! after the group's last arrival while the propagation delta (Δarrival − Δsend) is negative,
//! within 100 ms of the group's first arrival. A group's send time is its latest send time,
//! its completion time the arrival of its last packet. For each completed group after the
//! first, the deltas to the previous group are emitted. Out-of-order packets (sent before the
//! group's first) are ignored; negative arrival deltas are dropped, three in a row reset; an
//! arrival jump 3 s beyond the local clock resets.

use rtclab_core::TimeDelta;

pub const GROUP_LENGTH_NS: i64 = 5_000_000;
pub const BURST_DELTA_THRESHOLD_NS: i64 = 5_000_000;
pub const MAX_BURST_DURATION_NS: i64 = 100_000_000;
pub const REORDERED_RESET_THRESHOLD: u32 = 3;
pub const ARRIVAL_TIME_OFFSET_THRESHOLD_NS: i64 = 3_000_000_000;

/// Deltas between two consecutive groups.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroupDeltas {
    pub send_delta: TimeDelta,
    pub arrival_delta: TimeDelta,
    pub size_delta: i64,
}

#[derive(Clone, Copy, Debug)]
struct Group {
    size: i64,
    first_send: i64,
    send: i64,
    first_arrival: i64,
    complete: i64,
    last_system: i64,
}

impl Group {
    /// A group whose first packet is (send, arrival); its size is added by the caller.
    fn starting(send: i64, arrival: i64, system: i64) -> Self {
        Group {
            size: 0,
            first_send: send,
            send,
            first_arrival: arrival,
            complete: arrival,
            last_system: system,
        }
    }
}

#[derive(Clone, Debug)]
pub struct InterArrival {
    group_length_ns: i64,
    burst_grouping: bool,
    current: Option<Group>,
    prev: Option<Group>,
    reordered: u32,
}

impl Default for InterArrival {
    fn default() -> Self {
        Self::new(GROUP_LENGTH_NS, true)
    }
}

impl InterArrival {
    pub fn new(group_length_ns: i64, burst_grouping: bool) -> Self {
        InterArrival { group_length_ns, burst_grouping, current: None, prev: None, reordered: 0 }
    }

    pub fn reset(&mut self) {
        self.current = None;
        self.prev = None;
        self.reordered = 0;
    }

    fn belongs_to_burst(&self, g: &Group, send: i64, arrival: i64) -> bool {
        if !self.burst_grouping {
            return false;
        }
        let arrival_delta = arrival - g.complete;
        let send_delta = send - g.send;
        if send_delta == 0 {
            return true;
        }
        let propagation_delta = arrival_delta - send_delta;
        propagation_delta < 0
            && arrival_delta <= BURST_DELTA_THRESHOLD_NS
            && arrival - g.first_arrival < MAX_BURST_DURATION_NS
    }

    /// Feeds one packet: send time and arrival time (ns on any consistent clocks), the local
    /// clock when it was processed, and its size. Returns the deltas when a group completes.
    pub fn compute_deltas(
        &mut self,
        send: i64,
        arrival: i64,
        system: i64,
        size: i64,
    ) -> Option<GroupDeltas> {
        let mut out = None;
        match self.current {
            None => {
                self.current = Some(Group::starting(send, arrival, system));
            }
            Some(g) => {
                if send < g.first_send {
                    return None; // out of order
                }
                let new_group = !self.belongs_to_burst(&g, send, arrival)
                    && send - g.first_send > self.group_length_ns;
                if new_group {
                    if let Some(p) = self.prev {
                        let send_delta = g.send - p.send;
                        let arrival_delta = g.complete - p.complete;
                        let system_delta = g.last_system - p.last_system;
                        if arrival_delta - system_delta >= ARRIVAL_TIME_OFFSET_THRESHOLD_NS {
                            self.reset();
                            return None;
                        }
                        if arrival_delta < 0 {
                            self.reordered += 1;
                            if self.reordered >= REORDERED_RESET_THRESHOLD {
                                self.reset();
                            }
                            return None;
                        }
                        self.reordered = 0;
                        out = Some(GroupDeltas {
                            send_delta: TimeDelta::from_nanos(send_delta),
                            arrival_delta: TimeDelta::from_nanos(arrival_delta),
                            size_delta: g.size - p.size,
                        });
                    }
                    self.prev = Some(g);
                    self.current = Some(Group::starting(send, arrival, system));
                } else if let Some(c) = &mut self.current {
                    c.send = c.send.max(send);
                }
            }
        }
        if let Some(c) = &mut self.current {
            c.size += size;
            c.complete = arrival;
            c.last_system = system;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    #[test]
    fn groups_of_5ms_and_deltas() {
        let mut ia = InterArrival::default();
        // Frames every 20 ms, 3 packets each sent at the same time, arriving 1 ms apart.
        let mut out = Vec::new();
        for f in 0..4 {
            for p in 0..3 {
                let send = f * 20 * MS;
                let arrival = 100 * MS + f * 20 * MS + p * MS;
                if let Some(d) = ia.compute_deltas(send, arrival, arrival, 1000) {
                    out.push(d);
                }
            }
        }
        assert_eq!(out.len(), 2, "{out:?}");
        for d in out {
            assert_eq!(d.send_delta, TimeDelta::from_millis(20));
            assert_eq!(d.arrival_delta, TimeDelta::from_millis(20));
            assert_eq!(d.size_delta, 0);
        }
    }

    #[test]
    fn burst_joins_a_group() {
        let mut ia = InterArrival::default();
        // Sent 10 ms apart but arriving back to back (queue drained): one group.
        assert!(ia.compute_deltas(0, 50 * MS, 0, 100).is_none());
        assert!(ia.compute_deltas(10 * MS, 51 * MS, 0, 100).is_none());
        // A packet well after: starts a group, no previous group yet -> none.
        assert!(ia.compute_deltas(40 * MS, 80 * MS, 0, 100).is_none());
        let d = ia.compute_deltas(60 * MS, 100 * MS, 0, 100).unwrap();
        assert_eq!(d.send_delta, TimeDelta::from_millis(30)); // 40 - 10 (latest send of group 1)
        assert_eq!(d.arrival_delta, TimeDelta::from_millis(29)); // 80 - 51
        assert_eq!(d.size_delta, -100);
    }

    #[test]
    fn three_reordered_groups_reset() {
        // Without burst grouping (with it, early arrivals join the group as a burst).
        let mut ia = InterArrival::new(GROUP_LENGTH_NS, false);
        ia.compute_deltas(0, 100 * MS, 0, 1);
        ia.compute_deltas(10 * MS, 110 * MS, 0, 1);
        ia.compute_deltas(20 * MS, 120 * MS, 0, 1).unwrap();
        // A group completing before the previous one: its deltas are dropped, and after three
        // such attempts in a row the state resets.
        ia.compute_deltas(30 * MS, 50 * MS, 0, 1).unwrap();
        for k in 0..3 {
            assert!(ia.compute_deltas((40 + 10 * k) * MS, 60 * MS, 0, 1).is_none());
        }
        assert!(
            ia.prev.is_none() && ia.current.is_none(),
            "reset, and the packet that triggered it dropped"
        );
    }
}
