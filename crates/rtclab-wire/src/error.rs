//! Parse errors. Every one says what was being read.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WireError {
    /// The input ended while reading `what`.
    Truncated { what: &'static str, needed: usize, available: usize },
    /// The version field was not 2.
    BadVersion(u8),
    /// A length field disagrees with the data.
    BadLength { what: &'static str, detail: String },
    /// The padding count is zero or larger than the packet.
    BadPadding { count: u8, available: usize },
    /// A field holds a value the format does not allow.
    Invalid { what: &'static str, detail: String },
    /// A value cannot be represented on the wire (emit side).
    Unrepresentable { what: &'static str, detail: String },
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Truncated { what, needed, available } => {
                write!(f, "truncated {what}: needs {needed} bytes, {available} left")
            }
            WireError::BadVersion(v) => write!(f, "version {v}, expected 2"),
            WireError::BadLength { what, detail } => write!(f, "bad length in {what}: {detail}"),
            WireError::BadPadding { count, available } => {
                write!(f, "bad padding count {count} with {available} bytes of payload")
            }
            WireError::Invalid { what, detail } => write!(f, "invalid {what}: {detail}"),
            WireError::Unrepresentable { what, detail } => {
                write!(f, "cannot encode {what}: {detail}")
            }
        }
    }
}

impl std::error::Error for WireError {}
