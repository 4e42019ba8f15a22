//! The middlebox registry: `[[middleboxes]] kind = "..."` in a scenario names one of these.
//!
//! A middlebox is a `NetElement` attached at a hop (`at = "<link name>"`): it sits in front of
//! that link on the forward path and behind the link's reverse direction on the way back, so
//! one object sees the data of every flow crossing the hop and the feedback coming back
//! (a wireless access point, a policer, an ACK-thinning box). It is also told of every packet
//! the hop's forward link takes from its queue (`NetElement::observe_dequeue`).
//!
//! Adding a kind is one new file in this folder (an element plus `pub static KIND:
//! MiddleboxKind`) and its name in the `register!` line below.

use crate::element::NetElement;
use crate::queues::ParamInfo;
use rtclab_core::params::{Param, SettingsError, Value};
use rtclab_core::RngStream;

macro_rules! register {
    ($($m:ident),* $(,)?) => {
        $(pub mod $m;)*
        /// Every registered middlebox kind.
        pub static MIDDLEBOXES: &[&MiddleboxKind] = &[$(&$m::KIND),*];
    };
}

register! { ack_aggregation, fast_ack }

/// What a middlebox is built from.
pub struct MiddleboxArgs<'a> {
    /// Named parameters from the scenario.
    pub params: &'a [(String, Value)],
    /// The middlebox's own random stream (label `middleboxes[i]`).
    pub rng: RngStream,
}

impl MiddleboxArgs<'_> {
    /// Sets every given parameter on `cfg` through `table` (kind and range checked).
    pub fn apply<C>(&self, table: &[Param<C>], cfg: &mut C) -> Result<(), SettingsError> {
        Ok(rtclab_core::params::apply(table, cfg, self.params)?)
    }
}

/// A built middlebox.
pub type BoxedElement = Box<dyn NetElement + Send + Sync>;

/// One registry entry.
pub struct MiddleboxKind {
    pub name: &'static str,
    pub help: &'static str,
    pub params: fn() -> Vec<ParamInfo>,
    pub build: fn(MiddleboxArgs) -> Result<BoxedElement, SettingsError>,
    /// It delays, rewrites or answers feedback (ACKs, RTCP) of the data it sees, so it must sit
    /// where some flow's data and feedback both pass (checked by the scenario layer).
    pub acts_on_feedback: bool,
    /// Why a middlebox with these settings runs in the simulator only (None: the emulator runs
    /// it too); checked by the emulator before it starts.
    pub simulator_only: fn(&[(String, Value)]) -> Option<&'static str>,
}

impl std::fmt::Debug for MiddleboxKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// For `MiddleboxKind::simulator_only`: the emulator runs every setting.
pub fn runs_in_both(_: &[(String, Value)]) -> Option<&'static str> {
    None
}

/// The names `[[middleboxes]] kind` accepts.
pub fn names() -> Vec<&'static str> {
    MIDDLEBOXES.iter().map(|k| k.name).collect()
}

/// Builds the middlebox `kind`; the error names what is wrong and what is accepted.
pub fn build_with(kind: &str, args: MiddleboxArgs) -> Result<BoxedElement, SettingsError> {
    match MIDDLEBOXES.iter().find(|k| k.name == kind) {
        Some(k) => (k.build)(args),
        None => Err(SettingsError::UnknownKind {
            what: "middlebox kind",
            name: kind.to_string(),
            accepted: names(),
        }),
    }
}

/// Arguments with a throw-away random stream, for checking a kind and its parameters.
pub fn check_args(params: &[(String, Value)]) -> MiddleboxArgs<'_> {
    MiddleboxArgs { params, rng: rtclab_core::SeedTree::new(0).stream("validate") }
}

/// Checks `kind` and `params` (building with a throw-away random stream).
pub fn build(kind: &str, params: &[(String, Value)]) -> Result<BoxedElement, SettingsError> {
    build_with(kind, check_args(params))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_kinds_are_named() {
        let e = build("zhuge-typo", &[]).err().unwrap().to_string();
        assert!(e.contains("\"zhuge-typo\"") && e.contains("accepted"), "{e}");
    }

    #[test]
    fn every_kind_builds_with_its_defaults_and_is_documented() {
        let doc =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scenario.md"))
                .expect("docs/scenario.md");
        for k in MIDDLEBOXES {
            assert!(build(k.name, &[]).is_ok(), "{}", k.name);
            let missing = rtclab_core::params::undocumented(&doc, k.name, &(k.params)());
            assert!(missing.is_empty(), "docs/scenario.md lacks {missing:?}");
        }
    }
}
