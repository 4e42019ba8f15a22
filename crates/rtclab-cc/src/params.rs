//! Named controller parameters: the shared machinery lives in `rtclab_core::params` (queue
//! disciplines use it too); re-exported here so controller code reads `crate::params`.

pub use rtclab_core::params::*;

/// Test helper: `docs/scenario.md` lists every parameter of `table` (regenerate the tables
/// with `cargo run -p rtclab-cc --example params_table`).
#[cfg(test)]
pub(crate) fn assert_documented<C>(table: &[Param<C>]) {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scenario.md"))
            .expect("docs/scenario.md");
    for p in table {
        assert!(doc.contains(&format!("| `{}` |", p.name)), "docs/scenario.md lacks {}", p.name);
    }
}
