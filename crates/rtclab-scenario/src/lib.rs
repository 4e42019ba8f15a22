//! Scenario configuration: parse (TOML or JSON) into typed structs, validate, and resolve
//! into an engine-ready [`Scenario`] (traces loaded, queue limits in bytes, flows expanded).
//!
//! Every error is a [`ConfigError`] that names the field path, the offending value and what is
//! accepted. Nothing here touches an engine.

pub mod config;
pub mod cost;
pub mod resolve;
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
    let value: toml::Table = toml::from_str(text).map_err(|e| {
        let span = e.span().map(|s| line_of(text, s.start));
        let msg = e.message().to_string();
        match span {
            Some(line) => ConfigError::new(format!("line {line}"), format!("invalid TOML: {msg}")),
            None => ConfigError::new("", format!("invalid TOML: {msg}")),
        }
    })?;
    let cfg: ScenarioConfig =
        serde_path_to_error::deserialize(toml::Value::Table(value)).map_err(|e| {
            ConfigError::new(e.path().to_string(), clean_serde_message(&e.inner().to_string()))
        })?;
    resolve::resolve(cfg, base_dir)
}

/// Parses JSON text (the Python API hands dictionaries over this way).
pub fn from_json_str(text: &str, base_dir: &Path) -> Result<Scenario, ConfigError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let cfg: ScenarioConfig = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        ConfigError::new(e.path().to_string(), clean_serde_message(&e.inner().to_string()))
    })?;
    resolve::resolve(cfg, base_dir)
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
