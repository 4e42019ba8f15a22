//! Named parameters of controllers and queue disciplines: each publishes a table of its tunables with
//! meaning and valid range, so a scenario can set any of them by name and a bad value is
//! rejected with the range in the message. The tables double as the reference in
//! `docs/scenario.md` (`cargo run -p rtclab-cc --example params_table`).

use crate::TimeDelta;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Real,
    Integer,
    Bool,
}

/// One named parameter of a controller config `C`.
pub struct Param<C> {
    pub name: &'static str,
    pub help: &'static str,
    pub kind: Kind,
    /// Inclusive range (for booleans 0..=1).
    pub min: f64,
    pub max: f64,
    #[doc(hidden)]
    pub set: fn(&mut C, f64),
    #[doc(hidden)]
    pub get: fn(&C) -> f64,
}

impl<C> Param<C> {
    pub fn get(&self, c: &C) -> f64 {
        (self.get)(c)
    }
}

/// A value from a scenario file.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Num(f64),
    Bool(bool),
}

/// A parameter as the docs and error messages show it.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamInfo {
    pub name: &'static str,
    pub help: &'static str,
    pub kind: Kind,
    pub min: f64,
    pub max: f64,
    pub default: f64,
}

/// What `doc` (docs/scenario.md) lacks for a registry entry `name` with `params`: the
/// entry's name in backquotes and a `| \`param\` |` table row per parameter. Registry tests use it.
pub fn undocumented(doc: &str, name: &str, params: &[ParamInfo]) -> Vec<String> {
    let mut missing = Vec::new();
    if !doc.contains(&format!("`{name}`")) {
        missing.push(name.to_string());
    }
    for p in params {
        if !doc.contains(&format!("| `{}` |", p.name)) {
            missing.push(format!("{name}.{}", p.name));
        }
    }
    missing
}

/// `ParamInfo` for each entry of `table`, defaults read from `default`.
pub fn describe<C>(table: &[Param<C>], default: &C) -> Vec<ParamInfo> {
    table
        .iter()
        .map(|p| ParamInfo {
            name: p.name,
            help: p.help,
            kind: p.kind,
            min: p.min,
            max: p.max,
            default: p.get(default),
        })
        .collect()
}

/// Why a `name = value` setting was refused (the registries of queue disciplines,
/// middleboxes, flow kinds and Wi-Fi links pass it up; the scenario layer puts it at the key).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ParamError {
    #[error("unknown parameter {name:?}; known: {}", known.join(", "))]
    Unknown { name: String, known: Vec<String> },
    #[error("{name} takes true or false")]
    NotBool { name: String },
    #[error("{name} takes a number")]
    NotNumber { name: String },
    #[error("{name} takes a whole number, got {value}")]
    NotWhole { name: String, value: f64 },
    #[error("{name} = {value} is out of range: accepted {min}..={max} ({help})")]
    OutOfRange { name: String, value: f64, min: f64, max: f64, help: &'static str },
}

/// Why a registry (queue disciplines, middleboxes, Wi-Fi links) refused a kind and its
/// settings: the typed error that crosses from the element crates to the scenario layer, which
/// puts it at the key that holds the mistake.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SettingsError {
    /// No entry of that name in the registry.
    #[error("unknown {what} {name:?}; accepted: {}", if accepted.is_empty() { "none yet".to_string() } else { accepted.join(", ") })]
    UnknownKind { what: &'static str, name: String, accepted: Vec<&'static str> },
    /// A parameter given to a kind that takes none.
    #[error("unknown parameter {name:?}: this {what} takes none")]
    NoParams { what: &'static str, name: String },
    /// One `name = value` refused by the kind's parameter table.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// Settings that are each accepted but do not fit together, in the kind's own words.
    #[error("{0}")]
    Inconsistent(String),
}

impl SettingsError {
    /// The parameter at fault, where one is.
    pub fn param(&self) -> Option<&str> {
        match self {
            SettingsError::NoParams { name, .. } => Some(name),
            SettingsError::Param(
                ParamError::Unknown { name, .. }
                | ParamError::NotBool { name }
                | ParamError::NotNumber { name }
                | ParamError::NotWhole { name, .. }
                | ParamError::OutOfRange { name, .. },
            ) => Some(name),
            _ => None,
        }
    }
}

/// Callers that still speak in sentences (`Result<_, String>` factories) take the message.
impl From<SettingsError> for String {
    fn from(e: SettingsError) -> String {
        e.to_string()
    }
}

/// Callers that still speak in sentences (`Result<_, String>` factories) take the message.
impl From<ParamError> for String {
    fn from(e: ParamError) -> String {
        e.to_string()
    }
}

/// Sets every `(name, value)` on `cfg` through `table`, in order (kind and range checked).
pub fn apply<C>(
    table: &[Param<C>],
    cfg: &mut C,
    given: &[(String, Value)],
) -> Result<(), ParamError> {
    for (name, v) in given {
        set(table, cfg, name, *v)?;
    }
    Ok(())
}

/// Sets `name` to `value`, checking kind and range.
pub fn set<C>(table: &[Param<C>], cfg: &mut C, name: &str, value: Value) -> Result<(), ParamError> {
    let p = find(table, name, |p| p.name)?;
    let v = checked(name, p.kind, p.min, p.max, p.help, value)?;
    (p.set)(cfg, v);
    Ok(())
}

/// The entry of `table` called `name`, or an error listing the known names.
fn find<'a, T>(table: &'a [T], name: &str, name_of: fn(&T) -> &str) -> Result<&'a T, ParamError> {
    table.iter().find(|p| name_of(p) == name).ok_or_else(|| ParamError::Unknown {
        name: name.to_string(),
        known: table.iter().map(|p| name_of(p).to_string()).collect(),
    })
}

/// The value as a number if it has the parameter's kind and is in its range.
fn checked(
    name: &str,
    kind: Kind,
    min: f64,
    max: f64,
    help: &'static str,
    value: Value,
) -> Result<f64, ParamError> {
    let name_s = || name.to_string();
    let v = match (kind, value) {
        (Kind::Bool, Value::Bool(b)) => b as u8 as f64,
        (Kind::Bool, Value::Num(_)) => return Err(ParamError::NotBool { name: name_s() }),
        (_, Value::Bool(_)) => return Err(ParamError::NotNumber { name: name_s() }),
        (Kind::Integer, Value::Num(x)) if x.fract() != 0.0 => {
            return Err(ParamError::NotWhole { name: name_s(), value: x })
        }
        (_, Value::Num(x)) => x,
    };
    if !(v.is_finite() && v >= min && v <= max) {
        return Err(ParamError::OutOfRange { name: name_s(), value: v, min, max, help });
    }
    Ok(v)
}

/// Milliseconds (how time-valued parameters are given) to a `TimeDelta`.
pub fn ms(v: f64) -> TimeDelta {
    TimeDelta::from_secs_f64(v / 1000.0)
}

/// One `Param` table entry: `param!(Config, "name", "help", Real|Integer|Bool, min, max, |c| get, |c, v| set)`.
#[macro_export]
macro_rules! param {
    // A true/false parameter stored in a bool field: `param!(C, "name", "help", flag a.b)`.
    ($C:ty, $name:literal, $help:literal, flag $($f:ident).+) => {
        $crate::params::Param::<$C> {
            name: $name,
            help: $help,
            kind: $crate::params::Kind::Bool,
            min: 0.0,
            max: 1.0,
            set: |c: &mut $C, v: f64| c.$($f).+ = v != 0.0,
            get: |c: &$C| c.$($f).+ as u8 as f64,
        }
    };
    ($C:ty, $name:literal, $help:literal, $kind:ident, $min:expr, $max:expr, |$c:ident| $field:expr, |$cc:ident, $v:ident| $set:expr) => {
        $crate::params::Param::<$C> {
            name: $name,
            help: $help,
            kind: $crate::params::Kind::$kind,
            min: $min,
            max: $max,
            set: |$cc: &mut $C, $v: f64| $set,
            get: |$c: &$C| $field,
        }
    };
}

pub use crate::param;
