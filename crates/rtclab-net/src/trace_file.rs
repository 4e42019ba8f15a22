//! Capacity trace file parsers. Errors name the file and the line.
//!
//! Formats (provenance of the shipped traces: `python/rtclab/data/README.md`,
//! `python/rtclab/scenarios/traces/README.md`):
//! - mahimahi packet-delivery opportunities: one integer millisecond timestamp per line,
//!   non-decreasing; the trace loops with its last timestamp as the period.
//! - "time bandwidth": `<time in s> <Mbit/s>` per line, times strictly increasing; each rate
//!   holds until the next sample. The trace loops; its period is the last time plus the last
//!   sampling interval, so the last sample holds as long as the one before it.

use crate::capacity::{CapacityModel, Opportunities, Piecewise, MAHIMAHI_OPPORTUNITY_BYTES};
use rtclab_core::{Rate, Time, TimeDelta};
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub struct TraceError {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: {}", self.file, l, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

fn err(file: &str, line: Option<usize>, message: String) -> TraceError {
    TraceError { file: file.to_string(), line, message }
}

fn content_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

/// Parses a mahimahi trace (`file` is used in messages only).
pub fn parse_mahimahi_trace(file: &str, text: &str) -> Result<CapacityModel, TraceError> {
    let mut ms = Vec::new();
    for (n, line) in content_lines(text) {
        let v: u64 = line.parse().map_err(|_| {
            err(
                file,
                Some(n),
                format!("expected a millisecond timestamp (an integer), found {line:?}"),
            )
        })?;
        if let Some(&prev) = ms.last() {
            if v < prev {
                return Err(err(
                    file,
                    Some(n),
                    format!("timestamp {v} is before the previous one ({prev})"),
                ));
            }
        }
        ms.push(v);
    }
    Opportunities::new(&ms, MAHIMAHI_OPPORTUNITY_BYTES)
        .map(CapacityModel::Opportunities)
        .map_err(|e| err(file, None, e.0))
}

/// Parses a "time bandwidth" trace (`<seconds> <Mbit/s>` per line).
pub fn parse_bandwidth_trace(file: &str, text: &str) -> Result<CapacityModel, TraceError> {
    let mut samples: Vec<(f64, f64)> = Vec::new();
    for (n, line) in content_lines(text) {
        let mut it = line.split_whitespace();
        let (Some(a), Some(b), None) = (it.next(), it.next(), it.next()) else {
            return Err(err(
                file,
                Some(n),
                format!("expected \"<time s> <bandwidth Mbit/s>\", found {line:?}"),
            ));
        };
        let t: f64 =
            a.parse().map_err(|_| err(file, Some(n), format!("time {a:?} is not a number")))?;
        let bw: f64 = b
            .parse()
            .map_err(|_| err(file, Some(n), format!("bandwidth {b:?} is not a number")))?;
        if !t.is_finite() || t < 0.0 {
            return Err(err(file, Some(n), format!("time {a} must be a non-negative number")));
        }
        if !bw.is_finite() || bw < 0.0 {
            return Err(err(file, Some(n), format!("bandwidth {b} must be a non-negative number")));
        }
        if let Some(&(pt, _)) = samples.last() {
            if t <= pt {
                return Err(err(
                    file,
                    Some(n),
                    format!("time {t} is not after the previous sample ({pt})"),
                ));
            }
        }
        samples.push((t, bw));
    }
    if samples.is_empty() {
        return Err(err(file, None, "the trace has no samples".into()));
    }
    let t0 = samples[0].0;
    let steps: Vec<(Time, Rate)> = samples
        .iter()
        .map(|&(t, bw)| (Time::from_secs_f64(t - t0), Rate::from_mbps_f64(bw)))
        .collect();
    let last = steps.last().unwrap().0;
    let interval =
        if steps.len() >= 2 { last - steps[steps.len() - 2].0 } else { TimeDelta::from_secs(1) };
    Piecewise::new(&steps, Some((last + interval) - Time::ZERO))
        .map(CapacityModel::Piecewise)
        .map_err(|e| err(file, None, e.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mahimahi_errors_name_the_line() {
        let e = parse_mahimahi_trace("t.up", "1\n2\nx\n").unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.to_string().starts_with("t.up:3:"), "{e}");
        let e = parse_mahimahi_trace("t.up", "5\n3\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(parse_mahimahi_trace("t.up", "\n").is_err());
    }

    #[test]
    fn bandwidth_trace_loops_and_holds() {
        let m = parse_bandwidth_trace("b", "0.2 10\n0.4 20\n").unwrap();
        // Relative to the first sample: 10 Mbit/s in [0, 0.2), 20 in [0.2, 0.4), then loop.
        assert_eq!(m.rate_at(Time::from_millis(100)), Rate::from_mbps(10));
        assert_eq!(m.rate_at(Time::from_millis(300)), Rate::from_mbps(20));
        assert_eq!(m.rate_at(Time::from_millis(500)), Rate::from_mbps(10));
        let e = parse_bandwidth_trace("b", "0 1\n1 -2\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        let e = parse_bandwidth_trace("b", "0 1 2\n").unwrap_err();
        assert_eq!(e.line, Some(1));
    }

    #[test]
    fn real_mahimahi_trace_has_plausible_mean() {
        // The 30 s cut of mahimahi's TMobile-LTE-short.down shipped with the built-in scenarios
        // (in the repository: the test never depends on files beside the checkout).
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../python/rtclab/scenarios/traces/TMobile-LTE-short-30s.down"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let m = parse_mahimahi_trace("down", &text).unwrap();
        let mbps = m.mean_rate(Time::ZERO, Time::from_millis(29_998)).as_mbps_f64();
        // 42,293 opportunities * 1504 B * 8 / 29.998 s (one period) = 16.96 Mbit/s.
        assert!((mbps - 16.96).abs() < 0.05, "{mbps}");
    }
}
