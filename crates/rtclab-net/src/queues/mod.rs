//! The queue-discipline registry: `queue.kind` in a scenario names one of these.
//!
//! Adding a discipline is one new file in this folder (implementing `Qdisc` and exporting a
//! `pub static KIND: QdiscKind`) plus its name in the `register!` line below. Its parameters
//! are a `rtclab_core::params` table, so a scenario sets them by name and a bad value is
//! rejected with its range.

use crate::any_qdisc::AnyQdisc;
use crate::qdisc::QueueLimit;
pub use rtclab_core::params::{describe, ParamInfo};
use rtclab_core::params::{Param, SettingsError, Value};

macro_rules! register {
    ($($m:ident),* $(,)?) => {
        $(pub mod $m;)*
        /// Every registered discipline, in the order the docs list them.
        pub static QDISCS: &[&QdiscKind] = &[$(&$m::KIND),*];
    };
}

pub mod fattest;
pub mod fifo;
pub mod flow_hash;

register! { droptail, codel, drophead, fq_codel, pie, dualpi2, sfq, drr, confucius }

/// What a discipline is built from.
pub struct QdiscArgs<'a> {
    pub limit: QueueLimit,
    /// Named parameters from the scenario, in file order.
    pub params: &'a [(String, Value)],
    /// The largest packet the link carries, bytes (CoDel's "one MTU queued" rule).
    pub mtu: u32,
    /// Seed of the discipline's own random stream (PIE's drop decisions), derived by the
    /// harness from the run's seed and the link's label.
    pub seed: u64,
}

impl QdiscArgs<'_> {
    /// For disciplines without parameters.
    pub fn no_params(&self) -> Result<(), SettingsError> {
        match self.params.first() {
            None => Ok(()),
            Some((n, _)) => Err(SettingsError::NoParams { what: "queue kind", name: n.clone() }),
        }
    }
    /// Sets every given parameter on `cfg` through `table` (kind and range checked).
    pub fn apply<C>(&self, table: &[Param<C>], cfg: &mut C) -> Result<(), SettingsError> {
        Ok(rtclab_core::params::apply(table, cfg, self.params)?)
    }
}

/// One registry entry.
pub struct QdiscKind {
    pub name: &'static str,
    pub help: &'static str,
    pub params: fn() -> Vec<ParamInfo>,
    /// Parses and checks the arguments once; the maker then builds without failing.
    pub prepare: fn(&QdiscArgs) -> Result<QdiscMaker, SettingsError>,
}

/// A checked discipline: makes a fresh one for a seed (its random stream) and cannot fail.
/// The scenario layer prepares one per link direction and the engines make from it, so a
/// queue's settings are parsed once.
#[derive(Clone)]
pub struct QdiscMaker(std::sync::Arc<dyn Fn(u64) -> AnyQdisc + Send + Sync>);

impl QdiscMaker {
    pub fn new(f: impl Fn(u64) -> AnyQdisc + Send + Sync + 'static) -> Self {
        QdiscMaker(std::sync::Arc::new(f))
    }
    /// A fresh discipline; `seed` seeds its random stream.
    pub fn make(&self, seed: u64) -> AnyQdisc {
        (self.0)(seed)
    }
}

impl std::fmt::Debug for QdiscMaker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("QdiscMaker")
    }
}

/// The names `queue.kind` accepts.
pub fn names() -> Vec<&'static str> {
    QDISCS.iter().map(|k| k.name).collect()
}

/// The parameters discipline `kind` takes (None: no such kind).
pub fn params_of(kind: &str) -> Option<Vec<ParamInfo>> {
    QDISCS.iter().find(|k| k.name == kind).map(|k| (k.params)())
}

/// Checks discipline `kind`'s arguments once; the error names what is wrong and what is
/// accepted.
pub fn prepare(kind: &str, args: &QdiscArgs) -> Result<QdiscMaker, SettingsError> {
    match QDISCS.iter().find(|k| k.name == kind) {
        Some(k) => (k.prepare)(args),
        None => Err(SettingsError::UnknownKind {
            what: "queue kind",
            name: kind.to_string(),
            accepted: names(),
        }),
    }
}

/// Builds the discipline `kind` seeded with `args.seed` (`prepare`, then `make`).
pub fn build(kind: &str, args: &QdiscArgs) -> Result<AnyQdisc, SettingsError> {
    prepare(kind, args).map(|m| m.make(args.seed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_kinds_and_parameters_are_named() {
        let args = QdiscArgs { limit: QueueLimit::Packets(10), params: &[], mtu: 1500, seed: 0 };
        let e = build("fifo", &args).unwrap_err();
        assert!(matches!(e, SettingsError::UnknownKind { .. }), "{e}");
        let e = e.to_string();
        assert!(e.contains("\"fifo\"") && e.contains("droptail") && e.contains("codel"), "{e}");
        let p = [("target".to_string(), Value::Num(5.0))];
        let e = build("droptail", &QdiscArgs { params: &p, ..args }).unwrap_err();
        assert_eq!(e.param(), Some("target"), "the error names the parameter at fault");
        assert!(e.to_string().contains("\"target\""), "{e}");
    }

    #[test]
    fn every_kind_builds_with_its_defaults_and_is_documented() {
        let doc =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scenario.md"))
                .expect("docs/scenario.md");
        for k in QDISCS {
            let args =
                QdiscArgs { limit: QueueLimit::Packets(10), params: &[], mtu: 1500, seed: 0 };
            assert!((k.prepare)(&args).is_ok(), "{}", k.name);
            let missing = rtclab_core::params::undocumented(&doc, k.name, &(k.params)());
            assert!(missing.is_empty(), "docs/scenario.md lacks {missing:?}");
        }
    }
}
