//! Scenario configuration: parse (TOML or JSON) into typed structs, validate, and resolve
//! into an engine-ready [`Scenario`] (traces loaded, queue limits in bytes, flows expanded).
//!
//! Every error is a [`ConfigError`] that names the field path, the offending value and what is
//! accepted. Nothing here touches an engine.

pub mod config;
pub mod cost;
pub mod resolve;
pub mod sanity;
pub mod units;

pub use config::ScenarioConfig;
pub use resolve::{
    CcSpec, FlowKindSpec, FlowSpec, LinkSpec, MediaCcSpec, MediaSpec, MetricsSpec, MiddleboxSpec,
    NamedLink, Scenario,
};

use std::fmt;
use std::path::Path;

/// A configuration error: where (`path`, e.g. `flows[1].cc`) and what.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigError {
    pub path: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError { path: path.into(), message: message.into() }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() || self.path == "." {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}

/// Parses TOML text. `base_dir` resolves relative trace paths.
pub fn from_toml_str(text: &str, base_dir: &Path) -> Result<Scenario, ConfigError> {
    let value: toml::Table = toml::from_str(text).map_err(|e| toml_syntax_error(text, &e))?;
    let cfg: ScenarioConfig =
        serde_path_to_error::deserialize(toml::Value::Table(value)).map_err(|e| {
            serde_error(&e.path().to_string(), &clean_serde_message(&e.inner().to_string()))
        })?;
    resolve::resolve(cfg, base_dir)
}

/// Parses JSON text (the Python API hands dictionaries over this way).
pub fn from_json_str(text: &str, base_dir: &Path) -> Result<Scenario, ConfigError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let cfg: ScenarioConfig = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        serde_error(&e.path().to_string(), &clean_serde_message(&e.inner().to_string()))
    })?;
    resolve::resolve(cfg, base_dir)
}

/// A TOML syntax error at the line it is on, naming a duplicated key, with a hint for the
/// most common slip (an unquoted string).
fn toml_syntax_error(text: &str, e: &toml::de::Error) -> ConfigError {
    let msg = e.message().trim_end().to_string();
    let Some(span) = e.span() else {
        return ConfigError::new("", format!("invalid TOML: {msg}"));
    };
    let line = line_of(text, span.start);
    let spanned = text.get(span.clone()).unwrap_or("").trim();
    let src_line = text.lines().nth(line - 1).unwrap_or("").trim();
    let detail = if msg.contains(" as i128") {
        // The TOML reader's own integer is 64-bit: a larger number (a seed of 2^64, say)
        // fails before any field is known, so the key is taken from the line.
        let key = src_line.split_once('=').map_or("a value", |(k, _)| k.trim());
        let shown = key.trim_matches('"');
        let hint = if shown == "seed" {
            format!("; a seed up to {} can be given with --seed", u64::MAX)
        } else {
            String::new()
        };
        return ConfigError::new(
            format!("line {line}"),
            format!(
                "`{shown}`: the number {spanned} is too large for TOML (integers are at most {}){hint}",
                i64::MAX
            ),
        );
    } else if msg.starts_with("duplicate key") {
        let key = spanned.trim_start_matches('[').trim_end_matches(']').trim();
        format!("duplicate key `{key}`: it is already set earlier in the same table")
    } else if let Some((key, v)) = src_line.split_once('=') {
        let v = v.trim();
        let bare = !v.is_empty() && v.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-');
        let plain = v.parse::<f64>().is_ok() || v == "true" || v == "false";
        if bare && !plain {
            format!("{msg} (strings are quoted in TOML: {} = \"{v}\")", key.trim())
        } else {
            msg
        }
    } else {
        msg
    };
    ConfigError::new(format!("line {line}"), format!("invalid TOML: {detail}"))
}

/// serde's messages in the scenario's words: the key a `missing field` error is about goes
/// into the path; "expected u32" becomes the accepted range; "map"/"sequence" become
/// table/list; an unknown key lists the accepted ones.
fn serde_error(path: &str, m: &str) -> ConfigError {
    let join = |key: &str| {
        if path.is_empty() || path == "." {
            key.to_string()
        } else {
            format!("{path}.{key}")
        }
    };
    if let Some(rest) = m.strip_prefix("missing field `") {
        let key = rest.split('`').next().unwrap_or(rest);
        return ConfigError::new(join(key), "is required but missing");
    }
    if let Some(rest) = m.strip_prefix("unknown field `") {
        let (key, tail) = rest.split_once('`').unwrap_or((rest, ""));
        let accepted = tail
            .strip_prefix(", expected one of ")
            .or_else(|| tail.strip_prefix(", expected "))
            .map_or_else(|| "none here".to_string(), str::to_string);
        return ConfigError::new(path, format!("unknown key `{key}`; accepted keys: {accepted}"));
    }
    let typed = m.strip_prefix("invalid type: ").or_else(|| m.strip_prefix("invalid value: "));
    if let Some((got, expected)) = typed.and_then(|r| r.rsplit_once(", expected ")) {
        let want = match expected {
            // A flow entry's count is a u32 whose 0 is refused later: say the range it accepts.
            "u32" if path.ends_with(".count") => {
                format!("a whole number from 1 to {}", resolve::MAX_FLOWS)
            }
            "u8" => format!("a whole number from 0 to {}", u8::MAX),
            "u16" => format!("a whole number from 0 to {}", u16::MAX),
            "u32" => format!("a whole number from 0 to {}", u32::MAX),
            "u64" | "usize" => format!("a whole number from 0 to {}", u64::MAX),
            "i32" | "i64" | "isize" => "a whole number".to_string(),
            "f32" | "f64" => "a number".to_string(),
            "a boolean" => "true or false".to_string(),
            "a sequence" => "a list".to_string(),
            "a map" => "a table".to_string(),
            e if e.starts_with("struct ") || e.starts_with("a map") => "a table".to_string(),
            e => e.to_string(),
        };
        return ConfigError::new(path, format!("must be {want}, got {}", describe_value(got)));
    }
    ConfigError::new(path, m)
}

/// serde's "floating point `1.5`" / "string \"x\"" / "map" as the scenario shows them.
fn describe_value(got: &str) -> String {
    for prefix in ["floating point ", "integer ", "boolean ", "unsigned integer "] {
        if let Some(v) = got.strip_prefix(prefix) {
            return v.trim_matches('`').to_string();
        }
    }
    if let Some(v) = got.strip_prefix("string ") {
        return v.to_string();
    }
    match got {
        "map" => "a table".to_string(),
        "sequence" => "a list".to_string(),
        other => other.to_string(),
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Drops context the path already gives: serde_json's " at line L column C" (meaningless
/// for a dict) and toml's trailing "in `table`" line; says "value" for serde's "variant".
fn clean_serde_message(m: &str) -> String {
    let mut m = m.split("\nin `").next().unwrap_or(m).trim_end().to_string();
    if let Some(i) = m.rfind(" at line ") {
        if m[i..].contains(" column ") {
            m.truncate(i);
        }
    }
    m.replace("unknown variant", "unknown value")
}

#[cfg(test)]
mod tests;
