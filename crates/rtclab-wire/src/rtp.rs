//! RTP packets (RFC 3550 section 5.1) with RFC 8285 header extensions.
//!
//! ```text
//!  0                   1                   2                   3
//! |V=2|P|X|  CC   |M|     PT      |       sequence number         |
//! |                           timestamp                           |
//! |           synchronization source (SSRC) identifier            |
//! |            contributing source (CSRC) identifiers ...         |
//! |  0xBEDE (one-byte) or 0x100x (two-byte) |      length (words) |
//! |                     extension elements, padded to 32 bits     |
//! |                            payload ...    | padding | count   |
//! ```

use crate::buf::{put_u16, put_u32, Reader};
use crate::WireError;

const ONE_BYTE_PROFILE: u16 = 0xBEDE;
const TWO_BYTE_PROFILE_MASK: u16 = 0xFFF0;
const TWO_BYTE_PROFILE: u16 = 0x1000;

/// One header extension element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtensionElement {
    pub id: u8,
    pub data: Vec<u8>,
}

/// The header extension block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeaderExtensions {
    /// RFC 8285 elements (one-byte or two-byte form, chosen on emit).
    Elements(Vec<ExtensionElement>),
    /// Another profile: kept as raw words.
    Raw { profile: u16, data: Vec<u8> },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RtpPacket {
    pub marker: bool,
    pub payload_type: u8,
    pub sequence_number: u16,
    pub timestamp: u32,
    pub ssrc: u32,
    pub csrcs: Vec<u32>,
    pub extensions: Option<HeaderExtensions>,
    pub payload: Vec<u8>,
    /// Padding bytes at the end (0 = none); the last of them holds the count.
    pub padding: u8,
}

impl RtpPacket {
    /// A packet with no CSRCs, extensions or padding.
    pub fn new(
        payload_type: u8,
        sequence_number: u16,
        timestamp: u32,
        ssrc: u32,
        payload: Vec<u8>,
    ) -> Self {
        RtpPacket {
            marker: false,
            payload_type,
            sequence_number,
            timestamp,
            ssrc,
            csrcs: Vec::new(),
            extensions: None,
            payload,
            padding: 0,
        }
    }

    /// The data of extension `id`, if present.
    pub fn extension(&self, id: u8) -> Option<&[u8]> {
        match &self.extensions {
            Some(HeaderExtensions::Elements(els)) => {
                els.iter().find(|e| e.id == id).map(|e| e.data.as_slice())
            }
            _ => None,
        }
    }

    /// Sets (or replaces) extension `id`.
    pub fn set_extension(&mut self, id: u8, data: Vec<u8>) {
        let els = match &mut self.extensions {
            Some(HeaderExtensions::Elements(els)) => els,
            _ => {
                self.extensions = Some(HeaderExtensions::Elements(Vec::new()));
                match &mut self.extensions {
                    Some(HeaderExtensions::Elements(els)) => els,
                    _ => return,
                }
            }
        };
        match els.iter_mut().find(|e| e.id == id) {
            Some(e) => e.data = data,
            None => els.push(ExtensionElement { id, data }),
        }
    }

    pub fn parse(buf: &[u8]) -> Result<RtpPacket, WireError> {
        let mut r = Reader::new(buf);
        let b0 = r.u8("RTP header")?;
        let version = b0 >> 6;
        if version != 2 {
            return Err(WireError::BadVersion(version));
        }
        let has_padding = b0 & 0x20 != 0;
        let has_ext = b0 & 0x10 != 0;
        let cc = b0 & 0x0F;
        let b1 = r.u8("RTP header")?;
        let sequence_number = r.u16("RTP sequence number")?;
        let timestamp = r.u32("RTP timestamp")?;
        let ssrc = r.u32("RTP SSRC")?;
        let mut csrcs = Vec::with_capacity(cc as usize);
        for _ in 0..cc {
            csrcs.push(r.u32("RTP CSRC list")?);
        }
        let extensions = if has_ext {
            let profile = r.u16("RTP extension profile")?;
            let words = r.u16("RTP extension length")? as usize;
            let data = r.bytes(words * 4, "RTP header extension")?;
            Some(parse_extensions(profile, data)?)
        } else {
            None
        };
        let mut body = r.rest();
        let mut padding = 0;
        if has_padding {
            let count = *body.last().ok_or(WireError::BadPadding { count: 0, available: 0 })?;
            if count == 0 || count as usize > body.len() {
                return Err(WireError::BadPadding { count, available: body.len() });
            }
            padding = count;
            body = body.get(..body.len() - count as usize).unwrap_or(&[]);
        }
        Ok(RtpPacket {
            marker: b1 & 0x80 != 0,
            payload_type: b1 & 0x7F,
            sequence_number,
            timestamp,
            ssrc,
            csrcs,
            extensions,
            payload: body.to_vec(),
            padding,
        })
    }

    pub fn write(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        if self.csrcs.len() > 15 {
            return Err(WireError::Unrepresentable {
                what: "CSRC list",
                detail: format!("{} > 15 entries", self.csrcs.len()),
            });
        }
        if self.payload_type > 127 {
            return Err(WireError::Unrepresentable {
                what: "payload type",
                detail: format!("{} > 127", self.payload_type),
            });
        }
        let b0 = 0x80
            | if self.padding > 0 { 0x20 } else { 0 }
            | if self.extensions.is_some() { 0x10 } else { 0 }
            | self.csrcs.len() as u8;
        out.push(b0);
        out.push(if self.marker { 0x80 } else { 0 } | self.payload_type);
        put_u16(out, self.sequence_number);
        put_u32(out, self.timestamp);
        put_u32(out, self.ssrc);
        for c in &self.csrcs {
            put_u32(out, *c);
        }
        if let Some(ext) = &self.extensions {
            write_extensions(ext, out)?;
        }
        out.extend_from_slice(&self.payload);
        if self.padding > 0 {
            out.extend(std::iter::repeat_n(0u8, self.padding as usize - 1));
            out.push(self.padding);
        }
        Ok(())
    }

    pub fn to_bytes(&self) -> Result<Vec<u8>, WireError> {
        let mut v = Vec::with_capacity(12 + self.payload.len() + 32);
        self.write(&mut v)?;
        Ok(v)
    }
}

fn parse_extensions(profile: u16, data: &[u8]) -> Result<HeaderExtensions, WireError> {
    let two_byte = profile & TWO_BYTE_PROFILE_MASK == TWO_BYTE_PROFILE;
    if profile != ONE_BYTE_PROFILE && !two_byte {
        return Ok(HeaderExtensions::Raw { profile, data: data.to_vec() });
    }
    let mut r = Reader::new(data);
    let mut els = Vec::new();
    while !r.is_empty() {
        let b = r.u8("extension element header")?;
        if two_byte {
            if b == 0 {
                continue; // padding
            }
            let len = r.u8("extension element length")? as usize;
            let d = r.bytes(len, "extension element data")?;
            els.push(ExtensionElement { id: b, data: d.to_vec() });
        } else {
            let id = b >> 4;
            if id == 0 {
                continue; // padding byte
            }
            if id == 15 {
                break; // reserved: stop processing (RFC 8285 section 4.2)
            }
            let len = (b & 0x0F) as usize + 1;
            let d = r.bytes(len, "extension element data")?;
            els.push(ExtensionElement { id, data: d.to_vec() });
        }
    }
    Ok(HeaderExtensions::Elements(els))
}

fn write_extensions(ext: &HeaderExtensions, out: &mut Vec<u8>) -> Result<(), WireError> {
    let mut body = Vec::new();
    let profile = match ext {
        HeaderExtensions::Raw { profile, data } => {
            if data.len() % 4 != 0 {
                return Err(WireError::Unrepresentable {
                    what: "raw header extension",
                    detail: "length is not a multiple of 4".into(),
                });
            }
            body.extend_from_slice(data);
            *profile
        }
        HeaderExtensions::Elements(els) => {
            let one_byte =
                els.iter().all(|e| (1..=14).contains(&e.id) && (1..=16).contains(&e.data.len()));
            for e in els {
                if one_byte {
                    body.push((e.id << 4) | (e.data.len() as u8 - 1));
                } else {
                    if e.id == 0 || e.data.len() > 255 {
                        return Err(WireError::Unrepresentable {
                            what: "header extension element",
                            detail: format!("id {} with {} bytes", e.id, e.data.len()),
                        });
                    }
                    body.push(e.id);
                    body.push(e.data.len() as u8);
                }
                body.extend_from_slice(&e.data);
            }
            while body.len() % 4 != 0 {
                body.push(0);
            }
            if one_byte {
                ONE_BYTE_PROFILE
            } else {
                TWO_BYTE_PROFILE
            }
        }
    };
    let words = u16::try_from(body.len() / 4).map_err(|_| WireError::Unrepresentable {
        what: "header extension",
        detail: "longer than 65535 words".into(),
    })?;
    put_u16(out, profile);
    put_u16(out, words);
    out.extend_from_slice(&body);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> RtpPacket {
        let mut p = RtpPacket::new(96, 65535, 0xDEADBEEF, 0x11223344, vec![1, 2, 3, 4, 5]);
        p.marker = true;
        p.csrcs = vec![7, 8];
        p.set_extension(3, vec![0x12, 0x34]);
        p.set_extension(5, vec![0xAB, 0xCD, 0xEF]);
        p
    }

    #[test]
    fn round_trip_one_byte_extensions() {
        let p = sample();
        let b = p.to_bytes().unwrap();
        assert_eq!(&b[12 + 8..12 + 8 + 2], &[0xBE, 0xDE]);
        assert_eq!(RtpPacket::parse(&b).unwrap(), p);
        assert_eq!(RtpPacket::parse(&b).unwrap().extension(3), Some(&[0x12, 0x34][..]));
    }

    #[test]
    fn round_trip_two_byte_extensions_and_padding() {
        let mut p = sample();
        p.set_extension(20, vec![9; 20]);
        p.set_extension(6, vec![]);
        p.padding = 3;
        let b = p.to_bytes().unwrap();
        assert_eq!(&b[12 + 8..12 + 8 + 2], &[0x10, 0x00]);
        assert_eq!(b.len() % 4, 0);
        assert_eq!(RtpPacket::parse(&b).unwrap(), p);
    }

    /// RFC 8285 section 4.2 example layout: one-byte header, ID 1 with 1 byte, ID 2 with 2
    /// bytes, padding.
    #[test]
    fn parses_hand_built_one_byte_block() {
        let b = [
            0x90, 0x60, 0x00, 0x01, 0, 0, 0, 1, 0, 0, 0, 2, // V=2 X=1 PT=96 seq=1 ts=1 ssrc=2
            0xBE, 0xDE, 0x00, 0x02, // profile, 2 words
            0x10, 0xAA, 0x21, 0xBB, 0xCC, 0x00, 0x00, 0x00, // id1 len1, id2 len2, padding
            0x55, // payload
        ];
        let p = RtpPacket::parse(&b).unwrap();
        assert_eq!(p.extension(1), Some(&[0xAA][..]));
        assert_eq!(p.extension(2), Some(&[0xBB, 0xCC][..]));
        assert_eq!(p.payload, vec![0x55]);
    }

    #[test]
    fn rejects_bad_input() {
        assert_eq!(RtpPacket::parse(&[0x40; 12]), Err(WireError::BadVersion(1)));
        assert!(matches!(RtpPacket::parse(&[0x80; 11]), Err(WireError::Truncated { .. })));
        let mut b = sample().to_bytes().unwrap();
        b[0] |= 0x20; // padding flag, last byte 5 > ...
        *b.last_mut().unwrap() = 200;
        assert!(matches!(RtpPacket::parse(&b), Err(WireError::BadPadding { .. })));
    }
}
