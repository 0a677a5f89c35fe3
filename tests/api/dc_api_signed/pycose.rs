//! readerAuth checked by an independent COSE implementation: pycose (Python, on OpenSSL
//! through `cryptography`), from the test venv of `scripts/setup.sh`, as receipts are
//! with jwcrypto (tests/api/receipts.rs).

use super::signed_case;
use crate::helpers::Identity;
use crate::helpers::T0;
use crate::wallet::{cbor, cbor_get, dc_annex_c_transcript};
use agegate::testkit::DAY;
use ciborium::Value;

/// Reads the leaf from x5chain itself, verifies the untagged COSE_Sign1 over the
/// detached payload given; exit status 0 only if the signature holds.
const SCRIPT: &str = r#"
import sys, cbor2
from cryptography import x509
from pycose.messages import Sign1Message
from pycose.keys.ec2 import EC2Key
from pycose.keys.curves import P256
raw = cbor2.loads(bytes.fromhex(sys.argv[1]))
chain = raw[1][33]
leaf = chain[0] if isinstance(chain, list) else chain
public = x509.load_der_x509_certificate(leaf).public_key().public_numbers()
# decode() wants tag 18, which ISO/IEC 18013-5 omits; it then reads the array as this.
message = Sign1Message.from_cose_obj(list(raw), True)
message.key = EC2Key(crv=P256, x=public.x.to_bytes(32, "big"), y=public.y.to_bytes(32, "big"))
message.payload = bytes.fromhex(sys.argv[2])
sys.exit(0 if message.verify_signature() else 1)
"#;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[tokio::test]
async fn reader_auth_verifies_with_pycose_over_reader_authentication_bytes() {
    let id = Identity::ca_issued(T0 - 30 * DAY, T0 + 365 * DAY);
    let c = signed_case(&id).await;
    let r2 = c.page.r2();
    let doc_request = &cbor_get(&r2.device_request, "docRequests")
        .as_array()
        .unwrap()[0];
    let reader_auth = cbor(cbor_get(doc_request, "readerAuth"));
    // ReaderAuthenticationBytes = #6.24(bstr .cbor ["ReaderAuthentication",
    // SessionTranscript, ItemsRequestBytes]), for this page's origin, or another's.
    let payload = |origin: &str| {
        let reader_authentication = Value::Array(vec![
            Value::Text("ReaderAuthentication".into()),
            dc_annex_c_transcript(&r2.encryption_info, origin),
            cbor_get(doc_request, "itemsRequest").clone(),
        ]);
        cbor(&Value::Tag(
            24,
            Box::new(Value::Bytes(cbor(&reader_authentication))),
        ))
    };
    let python = crate::schemathesis::venv().join("bin/python");
    let run = |payload: &[u8]| {
        std::process::Command::new(&python)
            .args(["-c", SCRIPT, &hex(&reader_auth), &hex(payload)])
            .output()
            .expect("the test venv's python (bash scripts/setup.sh)")
    };
    let out = run(&payload(&c.origin()));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&payload("https://elsewhere.example"));
    assert_eq!(
        out.status.code(),
        Some(1),
        "another origin's transcript: refused"
    );
}
