//! A flow's window-based controller: a built-in one from its typed settings table, or one from
//! the registry (`rtclab_cc::registry`, built once here to check its `params`).

use super::entry::{ParamMap, WindowCc};
use super::spec::*;
use super::values::*;
use crate::config::*;
use crate::ConfigError;
use rtclab_cc::registry::Role;
use rtclab_cc::{CubicConfig, RenoConfig};

/// A registered controller: its settings come from `[flows.params]`; one instance is built
/// with them now, so a bad name or value is reported here, at the key that holds it.
fn registered_cc(
    entry: &rtclab_cc::registry::Entry,
    given: Option<&ParamMap>,
    packet_size: u32,
    iw: u32,
    role: Role,
    media: Option<rtclab_cc::registry::MediaArgs>,
    at: &dyn Fn(&str) -> String,
) -> Result<CcSpec, ConfigError> {
    let empty = ParamMap::new();
    let params = param_values(given.unwrap_or(&empty), &at("params"))?;
    let args = rtclab_cc::registry::ControllerArgs {
        flow: 0,
        role,
        packet_size,
        initial_window: iw,
        params: &params,
        seed: 0,
        media,
    };
    match entry.build(&args) {
        Ok(_) => {}
        Err(e @ rtclab_cc::registry::ControllerError::RoleNotServed { .. }) => {
            return Err(ConfigError::new(at("cc"), e.to_string()))
        }
        Err(rtclab_cc::registry::ControllerError::Refused(e)) => {
            // The factory's own words: name the parameter at fault where they say which.
            let key = params
                .iter()
                .find(|(k, _)| {
                    e.contains(&format!("`{k}`"))
                        || e.contains(&format!("\"{k}\""))
                        || e.starts_with(&format!("{k} = "))
                })
                .map_or_else(|| at("cc"), |(k, _)| at(&format!("params.{k}")));
            return Err(ConfigError::new(key, e));
        }
    }
    Ok(CcSpec::Registered(Box::new(RegisteredCc {
        entry: entry.clone(),
        role,
        params,
        packet_size,
        initial_window: iw,
        media,
    })))
}

/// A window-based controller (tcp flows, or media flows driven by one) or a registered media
/// controller, with its parameters; `media`: the media flow's rates and ECN setting.
pub(super) fn window_cc_spec(
    cc: &WindowCc,
    packet_size: u32,
    iw: u32,
    role: Role,
    media: Option<rtclab_cc::registry::MediaArgs>,
    at: &dyn Fn(&str) -> String,
) -> Result<CcSpec, ConfigError> {
    Ok(match cc {
        WindowCc::Registered { entry, params } => {
            registered_cc(entry, *params, packet_size, iw, role, media, at)?
        }
        WindowCc::Reno => CcSpec::Reno(RenoConfig { packet_size, initial_window: iw }),
        WindowCc::Abc => CcSpec::Abc(rtclab_cc::AbcConfig {
            packet_size,
            initial_window: iw,
            ..Default::default()
        }),
        WindowCc::Qlibra(given) => {
            let mut q =
                rtclab_cc::QlibraConfig { packet_size, initial_window: iw, ..Default::default() };
            apply_params(rtclab_cc::qlibra::QLIBRA_PARAMS, &mut q, *given, "qlibra", &at)?;
            CcSpec::Qlibra(q)
        }
        WindowCc::Bbr => CcSpec::Bbr(rtclab_cc::BbrConfig {
            packet_size,
            initial_window: iw,
            ..Default::default()
        }),
        WindowCc::Copa(given) => CcSpec::Copa(copa_config(*given, packet_size, iw, &at)?),
        WindowCc::Cubic(given) => {
            CcSpec::Cubic(cubic_config(*given, packet_size, iw, &at("cubic"))?)
        }
    })
}

pub(super) fn copa_config(
    given: Option<&std::collections::BTreeMap<String, crate::config::ParamValue>>,
    packet_size: u32,
    iw: u32,
    at: &dyn Fn(&str) -> String,
) -> Result<rtclab_cc::CopaConfig, ConfigError> {
    use crate::config::ParamValue;
    use rtclab_cc::copa::COPA_PARAMS;
    use rtclab_cc::params::{set, Value};
    use rtclab_cc::CopaConfig;
    let mut c = match given.and_then(|g| g.get("variant")) {
        None => CopaConfig::paper(),
        Some(ParamValue::Str(v)) => match v.as_str() {
            "paper" => CopaConfig::paper(),
            "genericcc" => CopaConfig::genericcc(),
            "mvfst" => CopaConfig::mvfst(),
            other => {
                return Err(ConfigError::new(
                    at("copa.variant"),
                    format!(
                        "unknown variant {other:?}; accepted: \"paper\", \"genericcc\", \"mvfst\""
                    ),
                ))
            }
        },
        Some(_) => {
            return Err(ConfigError::new(
                at("copa.variant"),
                "takes a string: \"paper\", \"genericcc\" or \"mvfst\"",
            ))
        }
    };
    c.packet_size = packet_size;
    c.initial_window = iw;
    for (name, v) in given.into_iter().flatten() {
        if name == "variant" {
            continue;
        }
        let v = match v {
            ParamValue::Bool(b) => Value::Bool(*b),
            ParamValue::Num(x) => Value::Num(*x),
            ParamValue::Str(s) => {
                return Err(ConfigError::new(
                    at(&format!("copa.{name}")),
                    format!("takes a number or true/false, got {s:?}"),
                ))
            }
        };
        set(COPA_PARAMS, &mut c, name, v)
            .map_err(|e| ConfigError::new(at(&format!("copa.{name}")), e))?;
    }
    if c.delta > c.delta_cap && c.mode_switch {
        return Err(ConfigError::new(
            at("copa"),
            format!("need delta <= delta_cap with mode_switch, got {} > {}", c.delta, c.delta_cap),
        ));
    }
    Ok(c)
}

pub(super) fn cubic_config(
    p: Option<&CubicParams>,
    packet_size: u32,
    iw: u32,
    at: &str,
) -> Result<CubicConfig, ConfigError> {
    let mut c = CubicConfig { packet_size, initial_window: iw, ..Default::default() };
    let Some(p) = p else { return Ok(c) };
    if let Some(b) = p.beta {
        if !(b > 0.0 && b < 1.0) {
            return Err(ConfigError::new(
                format!("{at}.beta"),
                format!("{b} is out of range: accepted (0, 1), Linux 0.7"),
            ));
        }
        c.beta = (b * 1024.0).round() as u32;
    }
    if let Some(cc) = p.c {
        if !(cc > 0.0 && cc <= 100.0) {
            return Err(ConfigError::new(
                format!("{at}.c"),
                format!("{cc} is out of range: accepted (0, 100], Linux 0.4"),
            ));
        }
        // C = bic_scale * 10 / 1024
        c.bic_scale = ((cc * 1024.0 / 10.0).round() as u32).max(1);
    }
    if let Some(v) = p.fast_convergence {
        c.fast_convergence = v;
    }
    if let Some(v) = p.tcp_friendliness {
        c.tcp_friendliness = v;
    }
    if let Some(v) = p.hystart {
        c.hystart = v;
    }
    Ok(c)
}
