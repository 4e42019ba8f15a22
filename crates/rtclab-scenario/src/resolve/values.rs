//! Reading values the scenario names: parameter tables (`[flows.copa]`, `params`, a queue's
//! keys), probabilities, and the input files (traces, frame sizes) it points to.

use crate::config::*;
use crate::ConfigError;
use std::path::Path;

/// The largest input file (trace, frame sizes) a scenario may read: 256 MiB (the largest of
/// the papers' traces is a few MB).
pub const MAX_INPUT_FILE_BYTES: u64 = 256 << 20;

/// Reads a trace or frame-size file: a regular file (not a device or a pipe, which may never
/// end) no larger than [`MAX_INPUT_FILE_BYTES`], as UTF-8 text.
pub(super) fn read_input_file(full: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(full).map_err(|e| format!("cannot read it: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file (a device, pipe or directory cannot be a trace)".into());
    }
    if meta.len() > MAX_INPUT_FILE_BYTES {
        return Err(format!(
            "{} MiB, above the {} MiB limit for input files",
            meta.len() >> 20,
            MAX_INPUT_FILE_BYTES >> 20
        ));
    }
    std::fs::read_to_string(full).map_err(|e| format!("cannot read it: {e}"))
}

/// Reads a frame-size file: one size in bytes per line; blank lines and `#` comments skipped.
pub(super) fn read_frame_sizes(
    base_dir: &Path,
    path: &str,
    at: &str,
) -> Result<Vec<u32>, ConfigError> {
    let full = base_dir.join(path);
    let text = read_input_file(&full)
        .map_err(|e| ConfigError::new(at, format!("frame-size file {}: {e}", full.display())))?;
    let mut sizes = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.split('#').next().unwrap_or("").trim();
        if l.is_empty() {
            continue;
        }
        match l.parse::<u32>() {
            Ok(v) if v > 0 && v <= 10_000_000 => sizes.push(v),
            _ => {
                return Err(ConfigError::new(
                    at,
                    format!(
                        "{path}:{}: expected a frame size in bytes (1..=10000000), got {l:?}",
                        i + 1
                    ),
                ))
            }
        }
    }
    if sizes.is_empty() {
        return Err(ConfigError::new(at, format!("{path} holds no frame sizes")));
    }
    Ok(sizes)
}

pub(super) fn apply_params<C>(
    table: &[rtclab_cc::params::Param<C>],
    cfg: &mut C,
    given: Option<&std::collections::BTreeMap<String, crate::config::ParamValue>>,
    prefix: &str,
    at: &dyn Fn(&str) -> String,
) -> Result<(), ConfigError> {
    use rtclab_cc::params::{set, Value};
    for (name, v) in given.into_iter().flatten() {
        let v = match v {
            crate::config::ParamValue::Bool(b) => Value::Bool(*b),
            crate::config::ParamValue::Num(x) => Value::Num(*x),
            crate::config::ParamValue::Str(s) => {
                return Err(ConfigError::new(
                    at(&format!("{prefix}.{name}")),
                    format!("takes a number or true/false, got {s:?}"),
                ))
            }
        };
        set(table, cfg, name, v)
            .map_err(|e| ConfigError::new(at(&format!("{prefix}.{name}")), e))?;
    }
    Ok(())
}

/// Named numeric/boolean parameters in file order; a string value is an error at `at.<name>`.
pub(super) fn param_values(
    given: &std::collections::BTreeMap<String, ParamValue>,
    at: &str,
) -> Result<Vec<(String, rtclab_core::params::Value)>, ConfigError> {
    param_values_of(given, at, None)
}

/// `param_values` for a table whose accepted keys are known (`known`: the element's parameters
/// and the table's own keys): a misspelt key with a string value is named as unknown, so
/// `queue = { limt = "100pkt" }` says "unknown key `limt`", not that it takes a number.
pub(super) fn param_values_of(
    given: &std::collections::BTreeMap<String, ParamValue>,
    at: &str,
    known: Option<&[&str]>,
) -> Result<Vec<(String, rtclab_core::params::Value)>, ConfigError> {
    let mut out = Vec::new();
    for (name, v) in given {
        // Numbers and flags reach the element's own check ("unknown parameter ...; known: ...",
        // "takes none"); a string under an unknown name is named as unknown here, not as a
        // value of the wrong type.
        if let (ParamValue::Str(_), Some(known)) = (v, known) {
            if !known.contains(&name.as_str()) {
                return Err(ConfigError::new(
                    format!("{at}.{name}"),
                    format!("unknown key `{name}`; accepted: {}", known.join(", ")),
                ));
            }
        }
        let v = match v {
            ParamValue::Bool(b) => rtclab_core::params::Value::Bool(*b),
            ParamValue::Num(x) => rtclab_core::params::Value::Num(*x),
            ParamValue::Str(s) => {
                return Err(ConfigError::new(
                    format!("{at}.{name}"),
                    format!("takes a number or true/false, got {s:?}"),
                ))
            }
        };
        out.push((name.clone(), v));
    }
    Ok(out)
}

pub(super) fn check_prob(p: f64, at: &str) -> Result<(), ConfigError> {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        Err(ConfigError::new(at, format!("{p} is not a probability: accepted 0.0..=1.0")))
    }
}

/// A registry's refusal (queue discipline, middlebox, Wi-Fi link) put at the key at fault
/// inside table `table`: `kind` for an unknown kind, the parameter's own key, or the table
/// itself when only the combination of settings is wrong.
pub(super) fn settings_error(e: rtclab_core::params::SettingsError, table: &str) -> ConfigError {
    use rtclab_core::params::SettingsError;
    let path = match (&e, e.param()) {
        (SettingsError::UnknownKind { .. }, _) => format!("{table}.kind"),
        (_, Some(name)) => format!("{table}.{name}"),
        _ => table.to_string(),
    };
    ConfigError::new(path, e)
}
