//! Learned controllers, sans-IO: what the Gymnasium environments, Metis (policy → decision
//! tree) and tree controllers share in the core.
//!
//! - [`abr`]: the Pensieve ABR environment (Mao et al., SIGCOMM'17; the Metis/PiTree copies
//!   of its chunk-level simulator), with snapshots for Metis's reward-aware relabelling.
//! - [`qoe`]: the linear, log and HD QoE metrics of Pensieve and PiTree.
//! - [`tree`]: a flat-array decision tree (classification or regression) loaded from
//!   rtclab's tree JSON, the online half of Metis (Meng et al., SIGCOMM'20).
//! - [`pensieve_net`]: the released Pensieve actor/critic forward pass, for decision-latency
//!   comparisons in the same language as the tree.
//!
//! No clock and no I/O here: traces and files are parsed from text the caller read.

pub mod abr;
pub mod pensieve_net;
pub mod qoe;
pub mod tree;
