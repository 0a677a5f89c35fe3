//! CBOR data items as received: byte spans over the raw DeviceResponse.
//!
//! Digests and signatures over embedded items (`IssuerSignedItemBytes`,
//! `DeviceNameSpacesBytes`) cover the bytes the wallet sent (ISO/IEC 18013-5 section 9.1.2.5),
//! which a decoded `Value` cannot give back: the heads may use a longer form than
//! ours. This walker finds those spans. It is total: every read is bounds-checked,
//! every offset is checked arithmetic, and nesting is bounded.
//!
//! Hand-written on purpose: ciborium and coset decode to values and re-encode, so
//! neither can say where an item's received bytes begin and end.

use ciborium::Value;

use super::cbor;

/// Above the decoder's own limit (`cbor::RECURSION_LIMIT` counts containers), so that
/// anything the decoder accepted can be walked; still small enough for the stack.
const DEPTH_LIMIT: usize = 64;

/// The "break" stop code that ends an indefinite-length item.
const BREAK: u8 = 0xff;

/// Exactly one well-formed CBOR data item, as a slice of the received bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Raw<'a>(&'a [u8]);

/// A data item's initial byte and argument.
struct Head {
    major: u8,
    /// None for an indefinite length (additional information 31).
    arg: Option<u64>,
    /// Bytes the head occupies.
    len: usize,
}

fn head(buf: &[u8], at: usize) -> Option<Head> {
    let initial = *buf.get(at)?;
    let (major, info) = (initial >> 5, initial & 0x1f);
    let size = match info {
        0..=23 => {
            return Some(Head {
                major,
                arg: Some(u64::from(info)),
                len: 1,
            })
        }
        24 => 1,
        25 => 2,
        26 => 4,
        27 => 8,
        31 => {
            return Some(Head {
                major,
                arg: None,
                len: 1,
            })
        }
        // 28–30 are reserved: not well-formed.
        _ => return None,
    };
    let start = at.checked_add(1)?;
    let arg_bytes = buf.get(start..start.checked_add(size)?)?;
    // At most 8 bytes, so the shifts never lose a set bit.
    let arg = arg_bytes
        .iter()
        .fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
    Some(Head {
        major,
        arg: Some(arg),
        len: size.checked_add(1)?,
    })
}

/// The end offset of the data item starting at `at`, or None if it is not one
/// well-formed item within `buf` (RFC 8949 section 3, appendix C).
fn item_end(buf: &[u8], at: usize, depth: usize) -> Option<usize> {
    if depth > DEPTH_LIMIT {
        return None;
    }
    let h = head(buf, at)?;
    let body = at.checked_add(h.len)?;
    let nested = depth.checked_add(1)?;
    match (h.major, h.arg) {
        // Integers, simple values and floats: the head is the whole item. A one-byte
        // simple value below 32 is not well-formed (RFC 8949 section 3.3).
        (7, Some(n)) if h.len == 2 && n < 32 => None,
        (0 | 1 | 7, Some(_)) => Some(body),
        (2 | 3, Some(n)) => {
            let end = body.checked_add(usize::try_from(n).ok()?)?;
            (end <= buf.len()).then_some(end)
        }
        // Indefinite strings: definite chunks of the same major type, then a break.
        (2 | 3, None) => {
            let mut pos = body;
            loop {
                if *buf.get(pos)? == BREAK {
                    return pos.checked_add(1);
                }
                let chunk = head(buf, pos)?;
                if chunk.major != h.major || chunk.arg.is_none() {
                    return None;
                }
                pos = item_end(buf, pos, nested)?;
            }
        }
        // Each child takes at least one byte, so a huge count fails on running out of
        // input long before it could loop for long.
        (4 | 5, Some(n)) => {
            let count = if h.major == 5 { n.checked_mul(2)? } else { n };
            let mut pos = body;
            for _ in 0..count {
                pos = item_end(buf, pos, nested)?;
            }
            Some(pos)
        }
        (4 | 5, None) => {
            let mut pos = body;
            let mut odd = false;
            loop {
                if *buf.get(pos)? == BREAK {
                    // A map needs a value for its last key.
                    return (h.major == 4 || !odd).then_some(pos.checked_add(1)?);
                }
                pos = item_end(buf, pos, nested)?;
                odd = !odd;
            }
        }
        (6, Some(_)) => item_end(buf, body, nested),
        // Indefinite integers or tags, and a break where an item should start.
        _ => None,
    }
}

impl<'a> Raw<'a> {
    /// `bytes` if they are exactly one well-formed data item.
    pub(crate) fn new(bytes: &'a [u8]) -> Option<Self> {
        (item_end(bytes, 0, 0)? == bytes.len()).then_some(Raw(bytes))
    }

    /// The item's bytes exactly as received.
    pub(crate) fn bytes(self) -> &'a [u8] {
        self.0
    }

    /// Whether these bytes decode to `value`: ties a span to the decoded item it is
    /// used for, so that a walker/decoder disagreement refuses rather than accepts.
    pub(crate) fn same_as(self, value: &Value) -> bool {
        cbor::decode(self.0).as_ref() == Some(value)
    }

    /// The elements of an array, in order as received.
    pub(crate) fn array_items(self) -> Option<Vec<Raw<'a>>> {
        self.children(4)
    }

    /// The entries of a map, in order as received (the order the decoder keeps too).
    pub(crate) fn map_entries(self) -> Option<Vec<(Raw<'a>, Raw<'a>)>> {
        let children = self.children(5)?;
        let pairs = children.chunks_exact(2);
        if !pairs.remainder().is_empty() {
            return None;
        }
        Some(pairs.map(|p| (p[0], p[1])).collect())
    }

    /// The value under text key `key`; None when absent, present twice (as
    /// `cbor::get` refuses), or when this is not a map. Keys are compared after
    /// decoding, exactly as the decoded lookup compares them.
    pub(crate) fn get(self, key: &str) -> Option<Raw<'a>> {
        let entries = self.map_entries()?;
        let mut found = entries
            .iter()
            .filter(|(k, _)| cbor::decode(k.0).as_ref().and_then(Value::as_text) == Some(key))
            .map(|(_, v)| *v);
        match (found.next(), found.next()) {
            (Some(v), None) => Some(v),
            _ => None,
        }
    }

    /// The child items of an array (major 4) or map (major 5, keys and values
    /// alternating). `self` is one well-formed item, so its children end exactly at
    /// its end, or at the break of an indefinite length.
    fn children(self, major: u8) -> Option<Vec<Raw<'a>>> {
        let h = head(self.0, 0)?;
        if h.major != major {
            return None;
        }
        let mut out = Vec::new();
        let mut pos = h.len;
        while pos < self.0.len() {
            // No item starts with the break byte, so the first one here ends the list.
            if h.arg.is_none() && self.0.get(pos) == Some(&BREAK) {
                break;
            }
            let end = item_end(self.0, pos, 1)?;
            out.push(Raw(self.0.get(pos..end)?));
            pos = end;
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
            .collect()
    }

    fn enc(v: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        ciborium::ser::into_writer(v, &mut out).expect("encode");
        out
    }

    /// RFC 8949 appendix A examples and long-form heads, covering every major type.
    #[test]
    fn every_major_type_spans_exactly_one_item() {
        // Tag 24 written with a two-byte argument around a tag-24 empty bstr: d90018d81840.
        const ITEMS: &str = "
            00 17 1818 190100 1a000f4240 1b000000e8d4a51000 20 3863 40 4401020304
            5a0000000101 60 6449455446 7800 80 83010203 9a00000001f6 a0 a201020304
            a26161016162820203 c074323031332d30332d32315432303a30343a30305a d818456449455446
            d90018d81840 f4 f5 f6 f7 f820 f90000 fa47c35000 fb3ff199999999999a
            5f42010243030405ff 7f657374726561646d696e67ff 9fff 9f018202039f0405ffff
            bf61610161629f0203ffff c1fb41d452d9ec200000";
        for item in ITEMS.split_whitespace() {
            let mut bytes = hex(item);
            assert_eq!(Raw::new(&bytes).map(Raw::bytes), Some(&bytes[..]), "{item}");
            // One byte short is never an item; one byte extra is never exactly one.
            assert_eq!(Raw::new(&bytes[..bytes.len() - 1]), None, "{item} short");
            bytes.push(0);
            assert_eq!(Raw::new(&bytes), None, "{item} long");
        }
    }

    #[test]
    fn ill_formed_items_are_refused() {
        assert_eq!(Raw::new(&[]), None);
        // Reserved heads, misplaced breaks, indefinite integers and tags, mixed or
        // nested indefinite chunks, odd maps, truncation, low simple values, and
        // lengths or counts far beyond the input.
        const BAD: &str = "
            1c 3d 5e ff 1f df00 5f01ff 5f5fffff 7f40ff bf01ff a1 81 9f f801 f818
            5bffffffffffffffff 9bffffffffffffffff00 bbffffffffffffffff00 d8 c6";
        for bad in BAD.split_whitespace() {
            assert_eq!(Raw::new(&hex(bad)), None, "{bad}");
        }
        for deep in [
            vec![0x81u8; 10_000],
            vec![0xc6u8; 10_000],
            vec![0x9fu8; 10_000],
        ] {
            let mut bytes = deep;
            bytes.push(0);
            assert_eq!(Raw::new(&bytes), None);
        }
    }

    #[test]
    fn navigation_keeps_the_received_bytes() {
        // {"a": 24(h'a0') with a 4-byte bstr length, "b": [_ 1, 2]}
        let bytes = hex("a2 6161 d8185a00000001a0 6162 9f0102ff");
        let root = Raw::new(&bytes).expect("item");
        let a = root.get("a").expect("a");
        assert_eq!(a.bytes(), &hex("d8185a00000001a0")[..]);
        assert!(a.same_as(&Value::Tag(24, Box::new(Value::Bytes(vec![0xa0])))));
        assert!(!a.same_as(&Value::Tag(24, Box::new(Value::Bytes(vec![0xa1])))));
        let b = root.get("b").expect("b").array_items().expect("array");
        assert_eq!(b, vec![Raw(&[0x01]), Raw(&[0x02])]);
        assert_eq!(root.get("c"), None);
        assert_eq!(root.array_items(), None);
        assert_eq!(a.map_entries(), None);
        // An indefinite-length text key matches as the decoder reads it.
        let bytes = hex("bf 7f61616162ff 01 ff");
        assert_eq!(
            Raw::new(&bytes).and_then(|r| r.get("ab")),
            Some(Raw(&[0x01]))
        );
    }

    #[test]
    fn duplicate_keys_are_not_found() {
        let bytes = hex("a2 616101 616102");
        assert_eq!(Raw::new(&bytes).expect("item").get("a"), None);
    }

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            any::<i64>().prop_map(Value::from),
            any::<bool>().prop_map(Value::Bool),
            Just(Value::Null),
            proptest::collection::vec(any::<u8>(), 0..40).prop_map(Value::Bytes),
            ".{0,20}".prop_map(Value::Text),
            any::<f32>().prop_map(|f| Value::Float(f64::from(f))),
        ];
        leaf.prop_recursive(4, 64, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::vec((inner.clone(), inner.clone()), 0..4)
                    .prop_map(Value::Map),
                (0u64..100_000, inner).prop_map(|(t, v)| Value::Tag(t, Box::new(v))),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// The walker agrees with the encoder on where every item and child ends.
        #[test]
        fn spans_of_encoded_values_round_trip(v in value()) {
            let bytes = enc(&v);
            let raw = Raw::new(&bytes);
            prop_assert_eq!(raw.map(Raw::bytes), Some(&bytes[..]));
            let raw = raw.expect("checked");
            match &v {
                Value::Array(items) => {
                    let spans = raw.array_items().expect("array");
                    prop_assert_eq!(spans.len(), items.len());
                    for (span, item) in spans.iter().zip(items) {
                        prop_assert_eq!(span.bytes(), &enc(item)[..]);
                    }
                }
                Value::Map(entries) => {
                    let spans = raw.map_entries().expect("map");
                    prop_assert_eq!(spans.len(), entries.len());
                    for ((k, v), (ke, ve)) in spans.iter().zip(entries) {
                        prop_assert_eq!(k.bytes(), &enc(ke)[..]);
                        prop_assert_eq!(v.bytes(), &enc(ve)[..]);
                    }
                }
                _ => {}
            }
        }

        /// Never panics; whatever the decoder accepts, the walker spans whole.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let raw = Raw::new(&bytes);
            if cbor::decode(&bytes).is_some() {
                prop_assert!(raw.is_some());
            }
            if let Some(raw) = raw {
                let _ = (raw.array_items(), raw.map_entries(), raw.get("a"));
            }
        }
    }
}
