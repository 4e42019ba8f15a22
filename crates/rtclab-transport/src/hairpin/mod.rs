//! Hairpin: joint FEC and retransmission planned against a frame deadline.
//!
//! Lineage: Z. Meng, X. Yao, et al., *Hairpin: Rethinking Packet Loss Recovery in Edge-based
//! Interactive Video Streaming*, USENIX NSDI 2024; chapter 7 of Meng Zili's dissertation
//! (seed `004_0e90cd88815e68a1.txt`); spec `shared/specs/afr-hairpin-confucius.md` §3; the
//! released code hkust-spark/hairpin (`model/fec_w_rtx.py`, `hairpin-policy.cc`).
//!
//! - [`binomial`]: binomial coefficients, correctly rounded from exact integers.
//! - [`solver`]: the Markov chain's transition probabilities and the backward dynamic
//!   programme (Bellman recursion) that picks the parity count per (packets, opportunities).
//! - [`table`]: the whole offline table in the released layout, its strict and online
//!   lookups, and a cell-by-cell comparison (against the published tables in the tests).

pub mod binomial;
pub mod solver;
pub mod table;

pub use table::{Table, TableError};
