//! A link direction: capacity (fixed, piecewise or a trace), delay, loss, queue discipline and
//! limit, or a Wi-Fi MAC; replayed path conditions.

use super::spec::*;
use super::values::*;
use crate::config::*;
use crate::units::QueueLimitValue;
use crate::ConfigError;
use rtclab_core::{Rate, Time, TimeDelta};
use rtclab_net::capacity::Piecewise;
use rtclab_net::{
    parse_bandwidth_trace, parse_mahimahi_trace, CapacityModel, LossModel, QueueLimit,
};
use std::path::Path;

/// The parts of a link direction a scenario describes.
#[derive(Clone, Copy)]
pub(super) struct LinkParts<'a> {
    pub(super) capacity: &'a CapacityConfig,
    pub(super) queue: &'a QueueConfig,
    pub(super) loss: Option<&'a LossConfig>,
    pub(super) wifi: Option<&'a std::collections::BTreeMap<String, ParamValue>>,
    pub(super) conditions: Option<&'a crate::config::ConditionsConfig>,
}

impl<'a> From<&'a LinkConfig> for LinkParts<'a> {
    fn from(l: &'a LinkConfig) -> Self {
        LinkParts {
            capacity: &l.capacity,
            queue: &l.queue,
            loss: l.loss.as_ref(),
            wifi: l.wifi.as_ref(),
            conditions: l.conditions.as_ref(),
        }
    }
}

/// A `conditions` table: the trace read and parsed (errors name the file and line).
pub(super) fn conditions_spec(
    c: &crate::config::ConditionsConfig,
    at: &str,
    base_dir: &Path,
) -> Result<std::sync::Arc<rtclab_net::PathTrace>, ConfigError> {
    let interval = c.interval.map_or(TimeDelta::from_millis(16), |d| d.0);
    if interval <= TimeDelta::ZERO {
        return Err(ConfigError::new(format!("{at}.conditions.interval"), "must be positive"));
    }
    let full = base_dir.join(&c.trace);
    let shown = full.display().to_string();
    let text = read_input_file(&full).map_err(|e| {
        ConfigError::new(format!("{at}.conditions.trace"), format!("trace file {shown}: {e}"))
    })?;
    let t = match c.format {
        crate::config::ConditionsFormat::Hairpin => {
            rtclab_net::PathTrace::parse_hairpin(&shown, &text, interval)
        }
    }
    .map_err(|e| ConfigError::new(format!("{at}.conditions.trace"), e.to_string()))?;
    Ok(std::sync::Arc::new(t))
}

pub(super) fn link_spec(
    l: LinkParts,
    at: &str,
    base_dir: &Path,
    duration: TimeDelta,
    max_rtt: TimeDelta,
    mtu: u32,
) -> Result<LinkSpec, ConfigError> {
    let cap_at = format!("{at}.capacity");
    let (capacity, capacity_desc) = match l.capacity {
        CapacityConfig::Constant(r) => {
            if r.0 == Rate::ZERO {
                return Err(ConfigError::new(cap_at, "must be positive (e.g. \"10Mbps\")"));
            }
            (CapacityModel::Constant(r.0), format!("{}", r.0))
        }
        CapacityConfig::Schedule(steps) => {
            let s: Vec<(Time, Rate)> =
                steps.iter().map(|s| (Time::ZERO + s.at.0, s.rate.0)).collect();
            if s.iter().all(|x| x.1 == Rate::ZERO) {
                return Err(ConfigError::new(cap_at, "the schedule is zero throughout"));
            }
            let p = Piecewise::new(&s, None)
                .map_err(|e| ConfigError::new(format!("{cap_at}.schedule"), e.0))?;
            (CapacityModel::Piecewise(p), format!("schedule of {} steps", s.len()))
        }
        CapacityConfig::Trace { path, format } => {
            let full = base_dir.join(path);
            let shown = full.display().to_string();
            let text = read_input_file(&full).map_err(|e| {
                ConfigError::new(format!("{cap_at}.trace"), format!("trace file {shown}: {e}"))
            })?;
            let m = match format {
                TraceFormat::Mahimahi => parse_mahimahi_trace(&shown, &text),
                TraceFormat::Bandwidth => parse_bandwidth_trace(&shown, &text),
            }
            .map_err(|e| ConfigError::new(format!("{cap_at}.trace"), e.to_string()))?;
            (m, format!("trace {path}"))
        }
    };
    let mean = capacity.mean_rate(Time::ZERO, Time::ZERO + duration);
    let q = l.queue;
    let bdp_rtt = q.bdp_rtt.map_or(max_rtt, |d| d.0);
    let queue_limit = match q.limit {
        QueueLimitValue::Packets(n) => QueueLimit::Packets(n),
        QueueLimitValue::Bytes(b) => QueueLimit::Bytes(b),
        QueueLimitValue::Time(t) => QueueLimit::Bytes(mean.bytes_in(t)),
        QueueLimitValue::Bdp(k) => {
            QueueLimit::Bytes((mean.bytes_in(bdp_rtt) as f64 * k).round() as u64)
        }
    };
    if let QueueLimit::Bytes(b) = queue_limit {
        if b < 1500 && !q.limit_given {
            // The user wrote no limit: say that the default is what does not fit, and what to write.
            return Err(ConfigError::new(
                format!("{at}.queue"),
                format!(
                    "the default queue limit (1 BDP: {b} bytes at the link's mean capacity {mean} and \
                     RTT {bdp_rtt}) is smaller than one packet; set a limit, e.g. \
                     queue = {{ limit = \"20pkt\" }} or {{ limit = \"100ms\" }}"
                ),
            ));
        }
        if b < 1500 {
            return Err(ConfigError::new(
                format!("{at}.queue.limit"),
                format!("resolves to {b} bytes at the link's mean capacity {mean}: smaller than one packet"),
            ));
        }
    }
    let loss = match l.loss {
        None => None,
        Some(LossConfig::Iid { rate }) => {
            check_prob(*rate, &format!("{at}.loss.rate"))?;
            Some(LossModel::Iid { rate: *rate })
        }
        Some(LossConfig::GilbertElliott {
            p_good_to_bad,
            p_bad_to_good,
            loss_in_good,
            loss_in_bad,
        }) => {
            check_prob(*p_good_to_bad, &format!("{at}.loss.p_good_to_bad"))?;
            check_prob(*p_bad_to_good, &format!("{at}.loss.p_bad_to_good"))?;
            check_prob(*loss_in_good, &format!("{at}.loss.loss_in_good"))?;
            check_prob(*loss_in_bad, &format!("{at}.loss.loss_in_bad"))?;
            Some(LossModel::GilbertElliott {
                p_good_to_bad: *p_good_to_bad,
                p_bad_to_good: *p_bad_to_good,
                loss_in_good: *loss_in_good,
                loss_in_bad: *loss_in_bad,
            })
        }
    };
    let queue_known: Option<Vec<&str>> = rtclab_net::queues::params_of(&q.kind).map(|ps| {
        ["kind", "limit", "bdp_rtt"].into_iter().chain(ps.iter().map(|p| p.name)).collect()
    });
    let queue_params = param_values_of(&q.params, &format!("{at}.queue"), queue_known.as_deref())?;
    let wifi = match l.wifi {
        None => None,
        Some(given) => {
            if matches!(capacity, CapacityModel::Opportunities(_)) {
                return Err(ConfigError::new(
                    format!("{at}.wifi"),
                    "a wireless link's capacity is its PHY rate: give a rate, a schedule or a \
                     bandwidth trace, not mahimahi delivery opportunities",
                ));
            }
            let infos = rtclab_net::wifi::params();
            let known: Vec<&str> = infos.iter().map(|p| p.name).collect();
            let params = param_values_of(given, &format!("{at}.wifi"), Some(&known))?;
            let c = rtclab_net::wifi::config(&params)
                .map_err(|e| settings_error(e, &format!("{at}.wifi")))?;
            Some(c)
        }
    };
    let queue_kind = q.kind.clone();
    // Prepared once: the typed error says whether the kind, one parameter or only their
    // combination (Confucius' ordered targets) is wrong, and is put at that key.
    let args =
        rtclab_net::queues::QdiscArgs { limit: queue_limit, params: &queue_params, mtu, seed: 0 };
    let queue = rtclab_net::queues::prepare(&queue_kind, &args)
        .map_err(|e| settings_error(e, &format!("{at}.queue")))?;
    Ok(LinkSpec {
        capacity,
        capacity_desc,
        queue_limit,
        queue_kind,
        queue_params,
        queue,
        mtu,
        loss,
        wifi,
    })
}

/// Every link of the topology, both directions, once the flows (whose round trips size "bdp"
/// limits) are known.
pub(super) fn link_specs(
    topo: &super::topology::Topology,
    flows: &[FlowSpec],
    base_dir: &Path,
    duration: TimeDelta,
) -> Result<Vec<NamedLink>, ConfigError> {
    let mtu = flows.iter().map(|f| f.kind.packet_size()).max().unwrap_or(1500);
    let mut links = Vec::new();
    for (li, (name, delay, parts, rev)) in topo.links.iter().enumerate() {
        // "bdp" limits use the largest base RTT among the flows crossing the link.
        let max_rtt = flows
            .iter()
            .filter(|f| f.path.contains(&li) || f.reverse_path.contains(&li))
            .map(|f| f.base_rtt)
            .max()
            .unwrap_or(TimeDelta::ZERO);
        let (at, rev_at, label, reverse_label) = if topo.shorthand {
            (
                "link".to_string(),
                "reverse_link".to_string(),
                "link".to_string(),
                "reverse_link".to_string(),
            )
        } else {
            (
                format!("links[{li}]"),
                format!("links[{li}].reverse"),
                format!("links.{name}"),
                format!("links.{name}.reverse"),
            )
        };
        if rev.is_some_and(|r| r.conditions.is_some()) {
            return Err(ConfigError::new(
                format!("{rev_at}.conditions"),
                "goes on the forward link: it sets the delay of both directions and the loss of the forward one",
            ));
        }
        let conditions = match parts.conditions {
            Some(c) => Some(conditions_spec(c, &at, base_dir)?),
            None => None,
        };
        // A replayed RTT adds to the flows' own for "bdp" limits (its largest value).
        let max_rtt = max_rtt
            + conditions
                .as_ref()
                .and_then(|t| t.samples.iter().map(|x| x.rtt).max())
                .unwrap_or(TimeDelta::ZERO);
        let forward = link_spec(*parts, &at, base_dir, duration, max_rtt, mtu)?;
        let uplink = forward.wifi.as_ref().filter(|w| w.uplink).map(|w| w.station_queue);
        let reverse =
            match (rev, uplink) {
                (Some(_), Some(_)) => return Err(ConfigError::new(
                    rev_at,
                    "goes with a wifi link only without `uplink`: with `wifi.uplink = true` the \
                     reverse direction is the clients' stations on the same channel",
                )),
                (Some(r), None) => Some(link_spec(*r, &rev_at, base_dir, duration, max_rtt, mtu)?),
                // The uplink stations on the channel: the summary's reverse direction (the
                // network builds no link of its own for it: the forward MAC carries it).
                (None, Some(q)) => Some(LinkSpec {
                    queue_limit: QueueLimit::Packets(q),
                    queue_kind: "droptail".into(),
                    queue_params: Vec::new(),
                    queue: rtclab_net::queues::QdiscMaker::new(move |_| {
                        rtclab_net::DropTail::new(QueueLimit::Packets(q)).into()
                    }),
                    loss: None,
                    wifi: None,
                    ..forward.clone()
                }),
                (None, None) => None,
            };
        links.push(NamedLink {
            name: name.clone(),
            label,
            reverse_label,
            delay: *delay,
            forward,
            reverse,
            conditions,
        });
    }
    Ok(links)
}
