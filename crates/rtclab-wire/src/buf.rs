//! A bounds-checked reader and big-endian write helpers.

use crate::WireError;

/// Reads big-endian fields; every read is checked and reports what it was reading.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }
    pub fn position(&self) -> usize {
        self.pos
    }

    pub fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], WireError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or(WireError::Truncated { what, needed: n, available: self.remaining() })?;
        let out = self.buf.get(self.pos..end).ok_or(WireError::Truncated {
            what,
            needed: n,
            available: 0,
        })?;
        self.pos = end;
        Ok(out)
    }

    pub fn rest(&mut self) -> &'a [u8] {
        let out = self.buf.get(self.pos..).unwrap_or(&[]);
        self.pos = self.buf.len();
        out
    }

    pub fn u8(&mut self, what: &'static str) -> Result<u8, WireError> {
        Ok(self.array::<1>(what)?[0])
    }
    pub fn u16(&mut self, what: &'static str) -> Result<u16, WireError> {
        Ok(u16::from_be_bytes(self.array(what)?))
    }
    pub fn u24(&mut self, what: &'static str) -> Result<u32, WireError> {
        let [a, b, c] = self.array(what)?;
        Ok(u32::from_be_bytes([0, a, b, c]))
    }
    pub fn u32(&mut self, what: &'static str) -> Result<u32, WireError> {
        Ok(u32::from_be_bytes(self.array(what)?))
    }
    pub fn u64(&mut self, what: &'static str) -> Result<u64, WireError> {
        Ok(u64::from_be_bytes(self.array(what)?))
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], WireError> {
        let b = self.bytes(N, what)?;
        let mut out = [0u8; N];
        out.copy_from_slice(b);
        Ok(out)
    }
}

pub fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_be_bytes());
}
pub fn put_u24(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes()[1..]);
}
pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes());
}
pub fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Sign-extends a 24-bit two's-complement value.
pub fn sign_extend_24(v: u32) -> i32 {
    ((v << 8) as i32) >> 8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_checked() {
        let mut r = Reader::new(&[1, 2, 3]);
        assert_eq!(r.u16("a").unwrap(), 0x0102);
        assert_eq!(r.u16("b"), Err(WireError::Truncated { what: "b", needed: 2, available: 1 }));
        assert_eq!(r.u8("c").unwrap(), 3);
        assert!(r.is_empty());
        assert!(Reader::new(&[]).bytes(usize::MAX, "x").is_err());
    }

    #[test]
    fn sign_extension() {
        assert_eq!(sign_extend_24(0xFFFFFF), -1);
        assert_eq!(sign_extend_24(0x7FFFFF), 8_388_607);
        assert_eq!(sign_extend_24(0x800000), -8_388_608);
    }
}
