//! Scenarios that are valid but whose results would mean little: a flow that is never active
//! in the measurement window, a round trip long against the time a flow is measured, a
//! fairness window that never completes. `resolve` turns the cases where no result can exist
//! at all (a measurement window shorter than one bin, a queue smaller than a packet) into
//! errors; these are warnings that
//! `validate` lists and `run` prints, and the run goes on.

use rtclab_core::{Time, TimeDelta};

use crate::{ConfigError, Scenario};

/// Round trips a flow should have in the measurement window for its numbers to mean much
/// (slow start alone takes several).
pub const MIN_ROUND_TRIPS: i64 = 4;

fn secs(d: TimeDelta) -> String {
    format!("{:.3}s", d.as_secs_f64()).replace(".000s", "s")
}

impl Scenario {
    /// What in this scenario makes its results questionable, one entry per finding.
    pub fn warnings(&self) -> Vec<ConfigError> {
        let mut out = Vec::new();
        let end = Time::ZERO + self.duration;
        let w0 = Time::ZERO + self.metrics.warmup;
        let window = end - w0;
        for f in &self.flows {
            let active = f.stop.min(end) - f.start.max(w0);
            let at = format!("flows ({})", f.name);
            if active <= TimeDelta::ZERO {
                out.push(ConfigError::new(
                    at,
                    format!(
                        "runs from {} to {}, outside the measurement window {}..{}: its numbers will be empty",
                        secs(f.start - Time::ZERO),
                        secs(f.stop.min(end) - Time::ZERO),
                        secs(self.metrics.warmup),
                        secs(self.duration)
                    ),
                ));
            } else if f.base_rtt.as_nanos() * MIN_ROUND_TRIPS > active.as_nanos() {
                out.push(ConfigError::new(
                    at,
                    format!(
                        "its round trip ({}) fits fewer than {MIN_ROUND_TRIPS} times into its {} in the \
                         measurement window: its controller cannot settle and its numbers mean little",
                        secs(f.base_rtt),
                        secs(active)
                    ),
                ));
            }
        }
        for f in &self.flows {
            let cc = f.kind.cc_name();
            let needs = rtclab_cc::registry::capabilities(cc).and_then(|c| c.needs_middlebox);
            let Some((kind, without)) = needs else { continue };
            if !self.middleboxes.iter().any(|m| m.kind == kind && f.path.contains(&m.at)) {
                out.push(ConfigError::new(
                    format!("flows ({})", f.name),
                    format!(
                        "runs {cc:?} but no `{kind}` middlebox sits on its path: {without} (add \
                         [[middleboxes]] kind = \"{kind}\" at its bottleneck)"
                    ),
                ));
            }
        }
        for f in &self.flows {
            // A reversed flow's data crosses the links' reverse directions, which have a
            // bottleneck only where one is given (or a Wi-Fi link carries its uplink).
            let bottleneck = f.path.iter().any(|&l| self.links[l].reverse.is_some());
            if f.reversed && !bottleneck {
                out.push(ConfigError::new(
                    format!("flows ({})", f.name),
                    "sends over the links' reverse direction, and none of its links has a reverse \
                     bottleneck: its data is only delayed, never queued (a bulk TCP flow's window then \
                     grows without bound); give a link `reverse = { capacity = ... }`",
                ));
            }
        }
        if self.metrics.fairness_window > window && self.flows.len() > 1 {
            out.push(ConfigError::new(
                "metrics.fairness_window",
                format!(
                    "{} is longer than the measurement window ({}): no fairness window completes, so \
                     the per-window Jain index will be null",
                    secs(self.metrics.fairness_window),
                    secs(window)
                ),
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    fn warnings(text: &str) -> Vec<String> {
        crate::from_toml_str(text, Path::new("."))
            .unwrap()
            .warnings()
            .into_iter()
            .map(|e| e.to_string())
            .collect()
    }

    const OK: &str = "duration = \"20s\"\n[link]\ncapacity = \"10Mbps\"\n[[flows]]\nkind = \"tcp\"\nrtt = \"40ms\"\ncount = 2\n";

    #[test]
    fn a_reversed_flow_without_a_reverse_bottleneck_is_flagged() {
        let rev = OK.replace("count = 2\n", "direction = \"reverse\"\n");
        let w = warnings(&rev);
        assert!(w.iter().any(|m| m.contains("none of its links")), "{w:?}");
        let with = format!("{rev}[reverse_link]\ncapacity = \"5Mbps\"\n");
        assert!(warnings(&with).is_empty(), "{:?}", warnings(&with));
    }

    #[test]
    fn a_sensible_scenario_has_no_warnings() {
        assert!(warnings(OK).is_empty(), "{:?}", warnings(OK));
    }

    #[test]
    fn long_round_trips_late_flows_and_short_windows_are_flagged() {
        let w = warnings(&OK.replace("rtt = \"40ms\"", "rtt = \"6s\""));
        assert!(w.iter().any(|m| m.contains("fits fewer than 4 times")), "{w:?}");
        let w = warnings(&format!("{OK}[metrics]\nwarmup = \"10s\"\nfairness_window = \"12s\"\n"));
        assert!(w.iter().any(|m| m.starts_with("metrics.fairness_window:")), "{w:?}");
        let w = warnings(
            &OK.replace("count = 2", "count = 2\nstop = \"2s\"")
                .replace("duration = \"20s\"", "duration = \"20s\"\n[metrics]\nwarmup = \"5s\""),
        );
        assert!(w.iter().any(|m| m.contains("outside the measurement window")), "{w:?}");
    }
}
