//! A Token Status List's `lst`: zlib (RFC 1950) of statuses packed `bits` to a value,
//! least-significant bits first within each byte (the IETF Token Status List draft).
//! Inflated under a cap measured before anything is kept, so a small body that would
//! inflate to gigabytes costs a bounded amount of time and no memory.

use std::io::Read;

/// Largest inflated list accepted: 64 MiB (512 Mi one-bit entries).
pub const MAX_INFLATED: usize = 64 * 1024 * 1024;

/// zlib-inflates `compressed` if it comes to at most `cap` bytes; `None` when it is not
/// one whole zlib stream or would be larger. The length is measured first into a sink,
/// then the bytes are inflated into a buffer of exactly that size.
pub fn inflate_bounded(compressed: &[u8], cap: usize) -> Option<Vec<u8>> {
    let limit = u64::try_from(cap).ok()?.saturating_add(1);
    let mut measure = flate2::read::ZlibDecoder::new(compressed).take(limit);
    let length = std::io::copy(&mut measure, &mut std::io::sink()).ok()?;
    let length = usize::try_from(length).ok().filter(|n| *n <= cap)?;
    let mut out = Vec::with_capacity(length);
    flate2::read::ZlibDecoder::new(compressed)
        .take(limit)
        .read_to_end(&mut out)
        .ok()?;
    (out.len() == length).then_some(out)
}

/// A status list, inflated: `bits` (1, 2, 4 or 8) per entry.
#[derive(Clone, PartialEq, Eq)]
pub struct PackedStatuses {
    bits: u8,
    bytes: Vec<u8>,
}

impl std::fmt::Debug for PackedStatuses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackedStatuses")
            .field("bits", &self.bits)
            .field("entries", &self.len())
            .finish()
    }
}

impl PackedStatuses {
    /// `None` unless `bits` is 1, 2, 4 or 8.
    pub fn new(bits: u64, bytes: Vec<u8>) -> Option<Self> {
        let bits = match bits {
            1 | 2 | 4 | 8 => u8::try_from(bits).ok()?,
            _ => return None,
        };
        Some(Self { bits, bytes })
    }

    pub fn bits(&self) -> u8 {
        self.bits
    }

    /// How many entries the list holds.
    pub fn len(&self) -> u64 {
        let per_byte = 8 / u64::from(self.bits);
        u64::try_from(self.bytes.len())
            .unwrap_or(u64::MAX)
            .saturating_mul(per_byte)
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Bytes held.
    pub fn held_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// The status at `index`; `None` past the end.
    pub fn get(&self, index: u64) -> Option<u8> {
        let bits = u64::from(self.bits);
        let per_byte = 8 / bits;
        let byte = usize::try_from(index / per_byte).ok()?;
        let shift = (index % per_byte) * bits;
        let mask = u8::MAX >> (8 - self.bits);
        // shift < 8: it is (index % per_byte) * bits with per_byte * bits = 8.
        self.bytes.get(byte).map(|b| (b >> shift) & mask)
    }
}
