//! The network's shape: the named links (or the `[link]` shorthand), each flow's forward and
//! reverse path, and the middleboxes at links.

use super::link::LinkParts;
use super::spec::*;
use super::values::*;
use crate::config::*;
use crate::ConfigError;
use rtclab_core::TimeDelta;

/// A topology before its links are resolved: (name, delay, forward, reverse) per link.
pub(super) struct Topology<'a> {
    pub(super) links: Vec<(String, TimeDelta, LinkParts<'a>, Option<LinkParts<'a>>)>,
    /// `[link]` (+ `[reverse_link]`) rather than `[[links]]`.
    pub(super) shorthand: bool,
}

pub(super) const SHORTHAND_LINK: &str = "bottleneck";

pub(super) fn topology(cfg: &ScenarioConfig) -> Result<Topology<'_>, ConfigError> {
    match (&cfg.link, &cfg.links) {
        (Some(_), Some(_)) => Err(ConfigError::new(
            "links",
            "give either [link] (one link crossed by every flow) or [[links]], not both",
        )),
        (None, None) => Err(ConfigError::new(
            "link",
            "missing: give [link] (one link crossed by every flow) or [[links]] with flow paths",
        )),
        (Some(l), None) => Ok(Topology {
            links: vec![(
                SHORTHAND_LINK.to_string(),
                TimeDelta::ZERO,
                l.into(),
                cfg.reverse_link.as_ref().map(Into::into),
            )],
            shorthand: true,
        }),
        (None, Some(ls)) => {
            if cfg.reverse_link.is_some() {
                return Err(ConfigError::new(
                    "reverse_link",
                    "goes with [link]; with [[links]] give each link's `reverse` instead",
                ));
            }
            if ls.is_empty() {
                return Err(ConfigError::new("links", "at least one link is needed"));
            }
            let mut out = Vec::new();
            for (i, l) in ls.iter().enumerate() {
                let ok = !l.name.is_empty()
                    && l.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                if !ok {
                    return Err(ConfigError::new(
                        format!("links[{i}].name"),
                        format!("{:?}: use letters, digits, '_' and '-'", l.name),
                    ));
                }
                if ls[..i].iter().any(|o| o.name == l.name) {
                    return Err(ConfigError::new(
                        format!("links[{i}].name"),
                        format!("{:?} is used by an earlier link", l.name),
                    ));
                }
                let delay = l.delay.map_or(TimeDelta::ZERO, |d| d.0);
                if delay < TimeDelta::ZERO {
                    return Err(ConfigError::new(
                        format!("links[{i}].delay"),
                        "must not be negative",
                    ));
                }
                let parts = LinkParts {
                    capacity: &l.capacity,
                    queue: &l.queue,
                    loss: l.loss.as_ref(),
                    wifi: l.wifi.as_ref(),
                    conditions: l.conditions.as_ref(),
                };
                out.push((l.name.clone(), delay, parts, l.reverse.as_ref().map(Into::into)));
            }
            Ok(Topology { links: out, shorthand: false })
        }
    }
}

pub(super) fn flow_paths(
    f: &FlowConfig,
    topo: &Topology,
    at: &dyn Fn(&str) -> String,
) -> Result<(Vec<usize>, Vec<usize>), ConfigError> {
    let names = || topo.links.iter().map(|l| format!("{:?}", l.0)).collect::<Vec<_>>().join(", ");
    let lookup = |hops: &[String], field: &str| -> Result<Vec<usize>, ConfigError> {
        if hops.is_empty() {
            return Err(ConfigError::new(at(field), "must name at least one link"));
        }
        let mut out = Vec::new();
        for (k, h) in hops.iter().enumerate() {
            let Some(i) = topo.links.iter().position(|l| &l.0 == h) else {
                return Err(ConfigError::new(
                    format!("{}[{k}]", at(field)),
                    format!("no link named {h:?}; links: {}", names()),
                ));
            };
            if out.contains(&i) {
                return Err(ConfigError::new(
                    format!("{}[{k}]", at(field)),
                    format!("{h:?} appears twice on the path"),
                ));
            }
            out.push(i);
        }
        Ok(out)
    };
    let path = match &f.path {
        Some(p) => lookup(p, "path")?,
        None if topo.links.len() == 1 => vec![0],
        None => {
            return Err(ConfigError::new(
                at("path"),
                format!("needed when the scenario has several links ({})", names()),
            ))
        }
    };
    let reverse_path = match &f.reverse_path {
        Some(p) => lookup(p, "reverse_path")?,
        None => path.iter().rev().copied().collect(),
    };
    Ok((path, reverse_path))
}

pub(super) fn middlebox_specs(
    cfg: &ScenarioConfig,
    links: &[NamedLink],
) -> Result<Vec<MiddleboxSpec>, ConfigError> {
    let mut out = Vec::new();
    for (i, m) in cfg.middleboxes.iter().enumerate() {
        let Some(at) = links.iter().position(|l| l.name == m.at) else {
            let names: Vec<String> = links.iter().map(|l| format!("{:?}", l.name)).collect();
            return Err(ConfigError::new(
                format!("middleboxes[{i}].at"),
                format!("no link named {:?}; links: {}", m.at, names.join(", ")),
            ));
        };
        let params = param_values(&m.params, &format!("middleboxes[{i}]"))?;
        let table = format!("middleboxes[{i}]");
        let entry =
            rtclab_media::middleboxes::find(&m.kind).map_err(|e| settings_error(e, &table))?;
        // Built once with a throw-away stream; the typed error is put at the key at fault.
        (entry.build)(rtclab_net::middleboxes::check_args(&params))
            .map_err(|e| settings_error(e, &table))?;
        let spec = MiddleboxSpec { kind: m.kind.clone(), entry, at, params };
        out.push(spec);
    }
    Ok(out)
}

/// Middleboxes that act on feedback (their entry says so: Zhuge, FastAck) must sit where some flow's data and
/// feedback both pass: a hop on its forward path and on its reverse path.
pub(super) fn feedback_paths(
    middleboxes: &[MiddleboxSpec],
    flows: &[FlowSpec],
    links: &[NamedLink],
) -> Result<(), ConfigError> {
    for (i, m) in middleboxes.iter().enumerate() {
        if !m.entry.acts_on_feedback {
            continue;
        }
        let sees_both =
            flows.iter().any(|f| f.path.contains(&m.at) && f.reverse_path.contains(&m.at));
        if !sees_both {
            let name = &links[m.at].name;
            return Err(ConfigError::new(
                format!("middleboxes[{i}].at"),
                format!(
                    "a {} middlebox at {name:?} sees no feedback path: no flow crosses {name:?} \
                     both ways, so the ACKs or RTCP it must delay, rewrite or answer would \
                     bypass it; place it at a link on the flows' forward and reverse paths",
                    m.kind
                ),
            ));
        }
    }
    Ok(())
}
