//! Total CBOR helpers: a bounded decoder over `ciborium::Value`, lookups that refuse
//! ambiguous (duplicate-key) maps, and a tiny encoder for the few structures we build
//! ourselves (so that building them can never fail and we control every byte).

use ciborium::Value;

/// Deep enough for any DeviceResponse (about 8 levels in practice); shallow enough
/// that hostile nesting cannot exhaust the stack.
const RECURSION_LIMIT: usize = 32;

/// The CBOR tag for an embedded, encoded data item (`#6.24(bstr .cbor X)`).
pub(crate) const TAG_ENCODED_CBOR: u64 = 24;

/// Decodes exactly one CBOR data item; trailing bytes are an error.
pub(crate) fn decode(bytes: &[u8]) -> Option<Value> {
    let mut rest = bytes;
    let value: Value =
        ciborium::de::from_reader_with_recursion_limit(&mut rest, RECURSION_LIMIT).ok()?;
    rest.is_empty().then_some(value)
}

/// The content of `#6.24(bstr)`, i.e. the embedded item's bytes (without the heads).
pub(crate) fn tag24_content(value: &Value) -> Option<&[u8]> {
    match value {
        Value::Tag(TAG_ENCODED_CBOR, inner) => inner.as_bytes().map(Vec::as_slice),
        _ => None,
    }
}

/// The encoded `#6.24(bstr)` item around `content`, for structures the verifier builds
/// itself (`DeviceAuthenticationBytes`): the two heads are written in the preferred
/// (shortest) form. Never used for received items, whose digests and signatures cover
/// their heads as sent (see `raw`).
pub(crate) fn tag24_encoded(content: &[u8]) -> Vec<u8> {
    let mut enc = Enc::default();
    enc.tag(TAG_ENCODED_CBOR).bytes(content);
    enc.finish()
}

/// A map's entries, or None when `value` is not a map.
pub(crate) fn as_map(value: &Value) -> Option<&[(Value, Value)]> {
    value.as_map().map(Vec::as_slice)
}

/// Why a lookup failed: distinguishes "absent" from "present twice" (a map with
/// duplicate keys is invalid CBOR and could be read differently by the issuer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lookup {
    Absent,
    Duplicate,
}

/// The value under text key `key`.
pub(crate) fn get<'a>(map: &'a [(Value, Value)], key: &str) -> Result<&'a Value, Lookup> {
    unique(map, |k| k.as_text() == Some(key))
}

fn unique(map: &[(Value, Value)], is_key: impl Fn(&Value) -> bool) -> Result<&Value, Lookup> {
    let mut found = map.iter().filter(|(k, _)| is_key(k)).map(|(_, v)| v);
    match (found.next(), found.next()) {
        (Some(v), None) => Ok(v),
        (Some(_), Some(_)) => Err(Lookup::Duplicate),
        (None, _) => Err(Lookup::Absent),
    }
}

/// An unsigned integer.
pub(crate) fn uint(value: &Value) -> Option<u64> {
    value
        .as_integer()
        .and_then(|i| u64::try_from(i128::from(i)).ok())
}

/// A minimal CBOR encoder (definite lengths, preferred serialization). Infallible.
#[derive(Default)]
pub(crate) struct Enc(Vec<u8>);

impl Enc {
    fn head(&mut self, major: u8, arg: u64) -> &mut Self {
        let m = major << 5;
        // Each arm's `as` narrows a value its guard has just bounded.
        match arg {
            0..=23 => self.0.push(m | arg as u8),
            24..=0xff => self.0.extend_from_slice(&[m | 24, arg as u8]),
            0x100..=0xffff => {
                self.0.push(m | 25);
                self.0.extend_from_slice(&(arg as u16).to_be_bytes());
            }
            0x1_0000..=0xffff_ffff => {
                self.0.push(m | 26);
                self.0.extend_from_slice(&(arg as u32).to_be_bytes());
            }
            _ => {
                self.0.push(m | 27);
                self.0.extend_from_slice(&arg.to_be_bytes());
            }
        }
        self
    }

    fn len_head(&mut self, major: u8, len: usize) -> &mut Self {
        // usize is at most 64 bits on every supported target.
        self.head(major, u64::try_from(len).unwrap_or(u64::MAX))
    }

    pub(crate) fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.len_head(2, b.len());
        self.0.extend_from_slice(b);
        self
    }

    pub(crate) fn text(&mut self, s: &str) -> &mut Self {
        self.len_head(3, s.len());
        self.0.extend_from_slice(s.as_bytes());
        self
    }

    pub(crate) fn array(&mut self, len: usize) -> &mut Self {
        self.len_head(4, len)
    }

    pub(crate) fn map(&mut self, len: usize) -> &mut Self {
        self.len_head(5, len)
    }

    /// Any integer: major type 0 for n ≥ 0, else major type 1 with argument -1 - n.
    pub(crate) fn int(&mut self, n: i64) -> &mut Self {
        match u64::try_from(n) {
            Ok(u) => self.head(0, u),
            // -1 - n cannot overflow for negative n, and is then ≥ 0.
            Err(_) => self.head(1, (-1 - n).unsigned_abs()),
        }
    }

    pub(crate) fn bool(&mut self, b: bool) -> &mut Self {
        self.0.push(if b { 0xf5 } else { 0xf4 });
        self
    }

    pub(crate) fn tag(&mut self, tag: u64) -> &mut Self {
        self.head(6, tag)
    }

    pub(crate) fn null(&mut self) -> &mut Self {
        self.0.push(0xf6);
        self
    }

    /// Appends an already encoded data item verbatim.
    pub(crate) fn raw(&mut self, item: &[u8]) -> &mut Self {
        self.0.extend_from_slice(item);
        self
    }

    pub(crate) fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ciborium_bytes(v: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        ciborium::ser::into_writer(v, &mut out).expect("encode");
        out
    }

    #[test]
    fn encoder_matches_ciborium_preferred_serialization() {
        for len in [0usize, 1, 23, 24, 255, 256, 65_535, 65_536] {
            let b = vec![7u8; len];
            let t = "x".repeat(len);
            let mut enc = Enc::default();
            enc.array(3).bytes(&b).text(&t).null();
            let expected = Value::Array(vec![Value::Bytes(b), Value::Text(t), Value::Null]);
            assert_eq!(enc.finish(), ciborium_bytes(&expected), "len {len}");
        }
        for n in [
            0i64,
            1,
            23,
            24,
            -1,
            -24,
            -25,
            -256,
            -257,
            i64::MIN,
            i64::MAX,
        ] {
            let mut enc = Enc::default();
            enc.map(1).int(n).bool(n < 0);
            let expected = Value::Map(vec![(Value::from(n), Value::Bool(n < 0))]);
            assert_eq!(enc.finish(), ciborium_bytes(&expected), "int {n}");
        }
        let tagged = Value::Tag(24, Box::new(Value::Bytes(vec![0xa0])));
        assert_eq!(tag24_encoded(&[0xa0]), ciborium_bytes(&tagged));
    }

    #[test]
    fn decode_rejects_trailing_bytes_and_deep_nesting() {
        assert_eq!(decode(&[0x01]), Some(Value::from(1)));
        assert_eq!(decode(&[0x01, 0x02]), None);
        assert_eq!(decode(&[]), None);
        let deep = vec![0x81u8; 1000];
        assert_eq!(decode(&deep), None);
    }

    #[test]
    fn lookups_refuse_duplicate_keys() {
        let map = vec![
            (Value::from("a"), Value::from(1)),
            (Value::from("a"), Value::from(2)),
            (Value::from(1), Value::from(3)),
        ];
        assert_eq!(get(&map, "a"), Err(Lookup::Duplicate));
        assert_eq!(get(&map, "b"), Err(Lookup::Absent));
    }
}
