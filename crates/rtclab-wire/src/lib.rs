//! RTP and RTCP wire formats: parse and emit, sans-IO.
//!
//! - RTP fixed header, CSRCs, padding, RFC 8285 header extensions (one-byte and two-byte
//!   forms); the transport-wide sequence number and abs-send-time extensions.
//! - RTCP compound packets: SR and RR with report blocks (RFC 3550), generic NACK (RFC 4585),
//!   REMB (draft-alvestrand-rmcat-remb), transport-wide feedback (TWCC,
//!   draft-holmer-rmcat-transport-wide-cc-extensions-01) and RFC 8888 congestion control
//!   feedback; other packet types are kept as opaque `Other` packets and re-emitted unchanged.
//! - A pcap writer so captures can be opened by tools nobody here wrote (Wireshark, tshark).
//!
//! Invariant: no input makes a parser panic. Parsers read through [`buf::Reader`], which
//! bounds-checks every read; indexing, `unwrap` and `expect` are denied outside tests, and the
//! parsers are fuzzed (`fuzz/`) and property-tested (`tests/malformed.rs`).
#![cfg_attr(
    not(test),
    deny(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod buf;
pub mod error;
pub mod extensions;
pub mod pcap;
pub mod rtcp;
pub mod rtp;

pub use error::WireError;
pub use rtcp::{parse_compound, write_compound, RtcpPacket};
pub use rtp::{ExtensionElement, HeaderExtensions, RtpPacket};
