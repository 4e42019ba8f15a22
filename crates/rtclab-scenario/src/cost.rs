//! What a run will cost before it starts: packets, events and the memory its time series
//! take, estimated from the scenario alone, and the limits beyond which rtclab asks for
//! `--force` (a `duration = "100000000s"` typo should not run for days or fill memory).
//!
//! The estimate is an upper bound of the work the links allow: every link direction busy for
//! the whole run at its mean capacity with the flows' smallest data packet, plus what
//! constant-rate senders offer on top (they may send beyond what a link carries). Each data
//! packet costs a few events (arrival, departure, delivery, its ACK or feedback).

use crate::resolve::{FlowKindSpec, Scenario};
use rtclab_core::Time;

/// The simulator's delivered packets per wall second on one core, for time estimates
/// (docs/benchmarks.md).
pub const PACKET_HOPS_PER_SECOND: f64 = 4.7e6;
/// Packet-hops beyond which a run needs `--force`: about 7 minutes at
/// [`PACKET_HOPS_PER_SECOND`].
pub const MAX_PACKET_HOPS: f64 = 2e9;
/// Memory for the time series beyond which a run needs `--force`.
pub const MAX_SERIES_BYTES: f64 = 4.0 * (1u64 << 30) as f64;
/// Events per data packet-hop (arrival, departure, delivery, feedback), for the estimate.
const EVENTS_PER_PACKET: f64 = 4.0;
/// Columns of a flow row (standard plus controller series), 8 bytes each.
const FLOW_ROW_BYTES: f64 = 30.0 * 8.0;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cost {
    /// Data packets times the links they cross, at most.
    pub packet_hops: f64,
    pub events: f64,
    /// Rows of `flows.parquet` (flows × bins).
    pub series_rows: f64,
    /// Bytes the time series take in memory.
    pub series_bytes: f64,
}

impl Cost {
    /// Wall seconds the run takes at most on one core, at [`PACKET_HOPS_PER_SECOND`].
    pub fn seconds(&self) -> f64 {
        self.packet_hops / PACKET_HOPS_PER_SECOND
    }

    /// Why the run needs `--force`, if it does.
    pub fn over_limits(&self) -> Option<String> {
        if self.packet_hops > MAX_PACKET_HOPS {
            return Some(format!(
                "about {:.1e} packet-hops (limit {:.0e}: some {} of simulation)",
                self.packet_hops,
                MAX_PACKET_HOPS,
                human_secs(self.seconds())
            ));
        }
        if self.series_bytes > MAX_SERIES_BYTES {
            return Some(format!(
                "time series of about {:.1} GiB (limit {:.0} GiB): {:.1e} rows; raise `metrics.bin`",
                self.series_bytes / (1u64 << 30) as f64,
                MAX_SERIES_BYTES / (1u64 << 30) as f64,
                self.series_rows
            ));
        }
        None
    }
}

fn human_secs(s: f64) -> String {
    match s {
        s if s < 120.0 => format!("{s:.0} s"),
        s if s < 7200.0 => format!("{:.0} min", s / 60.0),
        s if s < 172_800.0 => format!("{:.0} h", s / 3600.0),
        s => format!("{:.0} days", s / 86_400.0),
    }
}

impl Scenario {
    /// An upper-bound estimate of what running this scenario costs (see the module docs).
    pub fn cost(&self) -> Cost {
        let end = Time::ZERO + self.duration;
        let min_packet =
            self.flows.iter().map(|f| f.kind.packet_size()).min().unwrap_or(1500).max(40) as f64;
        let mut hops = 0.0;
        for l in &self.links {
            hops += l.forward.capacity.bits_between(Time::ZERO, end) / 8.0 / min_packet;
            if let Some(r) = &l.reverse {
                hops += r.capacity.bits_between(Time::ZERO, end) / 8.0 / min_packet;
            }
        }
        for f in &self.flows {
            if let FlowKindSpec::Cbr { rate, packet_size } = f.kind {
                let active = (f.stop.min(end) - f.start).as_secs_f64().max(0.0);
                hops += rate.as_bps() as f64 * active / 8.0 / packet_size.max(1) as f64;
            }
        }
        let bins = self.duration.as_nanos() as f64 / self.metrics.bin.as_nanos().max(1) as f64;
        let rows = bins * self.flows.len() as f64;
        Cost {
            packet_hops: hops,
            events: hops * EVENTS_PER_PACKET,
            series_rows: rows,
            series_bytes: rows * FLOW_ROW_BYTES + bins * 2.0 * FLOW_ROW_BYTES,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::from_toml_str;
    use std::path::Path;

    fn cost(text: &str) -> super::Cost {
        from_toml_str(text, Path::new(".")).unwrap().cost()
    }

    #[test]
    fn ordinary_runs_pass_and_typos_in_duration_do_not() {
        let base = "duration = \"60s\"\n[link]\ncapacity = \"100Mbps\"\n[[flows]]\nkind = \"tcp\"\nrtt = \"20ms\"\ncount = 10\n";
        let c = cost(base);
        // 100 Mbit/s for 60 s in 1500-byte packets: 500,000 packets.
        assert!((c.packet_hops - 500_000.0).abs() < 1.0, "{c:?}");
        assert!(c.over_limits().is_none());
        let huge = cost(&base.replace("60s", "100000000s"));
        let why = huge.over_limits().unwrap();
        assert!(why.contains("packet-hops") && why.contains("days"), "{why}");
        let rows = cost(
            &base
                .replace("count = 10", "count = 200")
                .replace("60s", "3600s")
                .replace("[link]", "[metrics]\nbin = \"1ms\"\n[link]"),
        );
        assert!(rows.over_limits().unwrap().contains("metrics.bin"), "{rows:?}");
    }
}
