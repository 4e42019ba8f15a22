//! The flow-kind registry: `kind = "<name>"` in a `[[flows]]` table names one of these, beside
//! the built-in `tcp`, `cbr` and `media`.
//!
//! A registered kind is a pair of endpoints (sender, receiver) speaking the one `Endpoint`
//! interface, built from named parameters (`[flows.params]`, checked against the kind's
//! table) and the flow's own random stream. Adding a kind is one new file in this folder
//! (the endpoints plus `pub static KIND: FlowKindEntry`) and its name in the `register!` line
//! below; both engines' generic paths then run it (the emulator over UDP: payloads must be
//! bytes, `Payload::bytes`, to cross it — a structured payload is refused with a message).

use rtclab_core::params::{ParamInfo, Value};
use rtclab_core::{Endpoint, FlowId, RngStream};

macro_rules! register {
    ($($m:ident),* $(,)?) => {
        $(pub mod $m;)*
        /// Every registered flow kind.
        pub static FLOW_KINDS: &[&FlowKindEntry] = &[
            $(&$m::KIND,)*
            &edge_stream::HAIRPIN, &edge_stream::HAIRPIN_ONE, &edge_stream::RTX, &edge_stream::FIXED,
            &edge_stream::FIXED_RTX, &edge_stream::BOLOT, &edge_stream::USF,
            &edge_stream::WEBRTC, &edge_stream::AWEBRTC, &edge_stream::LIN,
        ];
    };
}

/// Edge game streaming with a choice of loss recovery (several kinds from one module).
pub mod edge_stream;

register! { onoff, poisson }

/// A boxed endpoint of a registered kind.
pub type BoxedEndpoint = Box<dyn Endpoint + Send + Sync>;

/// What a flow of a registered kind is built from.
pub struct FlowArgs<'a> {
    pub flow: FlowId,
    /// Bytes on the wire per data packet (`packet_size`, default 1500).
    pub packet_size: u32,
    /// Named parameters from `[flows.params]`.
    pub params: &'a [(String, Value)],
    /// The flow's own random stream (label `flow<N>.kind`).
    pub rng: RngStream,
}

/// One registry entry.
pub struct FlowKindEntry {
    pub name: &'static str,
    pub help: &'static str,
    pub params: fn() -> Vec<ParamInfo>,
    /// (sender, receiver).
    pub build: fn(FlowArgs) -> Result<(BoxedEndpoint, BoxedEndpoint), String>,
}

impl std::fmt::Debug for FlowKindEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FlowKindEntry({})", self.name)
    }
}

/// The registered kind `name`, if any.
pub fn find(name: &str) -> Option<&'static FlowKindEntry> {
    FLOW_KINDS.iter().copied().find(|k| k.name == name)
}

/// Registered kind names.
pub fn names() -> Vec<&'static str> {
    FLOW_KINDS.iter().map(|k| k.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_builds_with_its_defaults_and_is_documented() {
        let doc =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scenario.md"))
                .expect("docs/scenario.md");
        for k in FLOW_KINDS {
            let rng = rtclab_core::SeedTree::new(1).stream("t");
            let args = FlowArgs { flow: FlowId(0), packet_size: 1500, params: &[], rng };
            assert!((k.build)(args).is_ok(), "{}", k.name);
            let missing = rtclab_core::params::undocumented(&doc, k.name, &(k.params)());
            assert!(missing.is_empty(), "docs/scenario.md lacks {missing:?}");
        }
    }
}
