//! Validation and resolution of a parsed [`ScenarioConfig`] into a [`Scenario`]: the topology
//! first, then each flow (`flow.rs`: tcp, cbr, `media.rs`, registered kinds, with controllers
//! from `cc.rs`), the links sized by the flows' round trips (`link.rs`), the middleboxes and the
//! measurement settings. The resolved types are in `spec.rs`.

mod cc;
mod entry;
mod flow;
mod link;
mod media;
mod spec;
mod topology;
mod values;

pub use flow::MAX_FLOWS;
pub use spec::*;
pub use values::MAX_INPUT_FILE_BYTES;

use crate::config::*;
use crate::ConfigError;
use rtclab_core::{Time, TimeDelta};
use std::path::Path;

pub(crate) fn resolve(cfg: ScenarioConfig, base_dir: &Path) -> Result<Scenario, ConfigError> {
    let duration = cfg.duration.0;
    if duration <= TimeDelta::ZERO {
        return Err(ConfigError::new("duration", "must be positive (e.g. \"60s\")"));
    }
    let end = Time::ZERO + duration;
    if cfg.flows.is_empty() {
        return Err(ConfigError::new("flows", "at least one flow is needed ([[flows]] tables)"));
    }

    let topo = topology::topology(&cfg)?;
    let flows = flow::flow_specs(&cfg, &topo, end, base_dir)?;
    let links = link::link_specs(&topo, &flows, base_dir, duration)?;
    let middleboxes = topology::middlebox_specs(&cfg, &links)?;
    let metrics = metrics_spec(&cfg.metrics, duration)?;
    topology::feedback_paths(&middleboxes, &flows, &links)?;
    Ok(Scenario {
        name: cfg.name.clone().unwrap_or_else(|| "scenario".into()),
        description: cfg.description.clone(),
        duration,
        seed: cfg.seed,
        links,
        flows,
        middleboxes,
        metrics,
    })
}

/// `[metrics]`: the time-series bin, the warm-up and the fairness window.
fn metrics_spec(m: &MetricsConfig, duration: TimeDelta) -> Result<MetricsSpec, ConfigError> {
    if m.bin.0 < TimeDelta::from_millis(1) {
        return Err(ConfigError::new("metrics.bin", "must be at least 1ms"));
    }
    if m.warmup.0 >= duration {
        return Err(ConfigError::new("metrics.warmup", "must be shorter than the duration"));
    }
    if duration - m.warmup.0 < m.bin.0 {
        // Not one time-series bin would complete: there is nothing to measure.
        let at = if m.warmup.0 > TimeDelta::ZERO { "metrics.warmup" } else { "duration" };
        return Err(ConfigError::new(
            at,
            format!(
                "leaves a measurement window of {} s, shorter than one time-series bin \
                 (metrics.bin = {} s): no result can be measured; lengthen the run or shorten the bin",
                (duration - m.warmup.0).as_secs_f64(),
                m.bin.0.as_secs_f64()
            ),
        ));
    }
    if m.fairness_window.0 < m.bin.0 || m.fairness_window.0.as_nanos() % m.bin.0.as_nanos() != 0 {
        return Err(ConfigError::new(
            "metrics.fairness_window",
            "must be a whole multiple of metrics.bin",
        ));
    }
    Ok(MetricsSpec { bin: m.bin.0, warmup: m.warmup.0, fairness_window: m.fairness_window.0 })
}
