//! Middleboxes that understand media (they read or rewrite RTP/RTCP), next to the network
//! crate's registry: `[[middleboxes]] kind = "..."` is looked up here first, then in
//! `rtclab_net::middleboxes`. Adding one is a file (an element plus `pub static KIND:
//! MiddleboxKind`) and its name in `MEDIA_MIDDLEBOXES`.

use rtclab_core::params::{SettingsError, Value};
use rtclab_net::middleboxes::{self as net, BoxedElement, MiddleboxArgs, MiddleboxKind};

/// The media middleboxes.
pub static MEDIA_MIDDLEBOXES: &[&MiddleboxKind] = &[&crate::zhuge::KIND, &crate::abc::KIND];

/// Every middlebox kind a scenario may name.
pub fn kinds() -> impl Iterator<Item = &'static MiddleboxKind> {
    MEDIA_MIDDLEBOXES.iter().chain(net::MIDDLEBOXES.iter()).copied()
}

/// The names `[[middleboxes]] kind` accepts.
pub fn names() -> Vec<&'static str> {
    kinds().map(|k| k.name).collect()
}

/// The kind `kind` (media middleboxes first, then the network crate's), or the error that
/// names it and every accepted kind.
pub fn find(kind: &str) -> Result<&'static MiddleboxKind, SettingsError> {
    kinds().find(|k| k.name == kind).ok_or_else(|| SettingsError::UnknownKind {
        what: "middlebox kind",
        name: kind.to_string(),
        accepted: names(),
    })
}

/// Builds the middlebox `kind`; the error names what is wrong and what is accepted.
pub fn build_with(kind: &str, args: MiddleboxArgs) -> Result<BoxedElement, SettingsError> {
    (find(kind)?.build)(args)
}

/// Checks `kind` and `params` (building with a throw-away random stream).
pub fn build(kind: &str, params: &[(String, Value)]) -> Result<BoxedElement, SettingsError> {
    build_with(kind, net::check_args(params))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_found_builds_and_is_documented() {
        let doc =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scenario.md"))
                .expect("docs/scenario.md");
        for k in kinds() {
            assert!(build(k.name, &[]).is_ok(), "{}", k.name);
            let missing = rtclab_core::params::undocumented(&doc, k.name, &(k.params)());
            assert!(missing.is_empty(), "docs/scenario.md lacks {missing:?}");
        }
        let e = build("zhuje", &[]).err().unwrap();
        let e = e.to_string();
        assert!(e.contains("zhuge") && e.contains("ack_aggregation"), "{e}");
    }
}
