"""Keeps a server's proof pool saturated, for bench/zk.sh (run in the ZK venv).

Usage: zk_poster.py GATEWAY_URL VECTORS_DIR GO_FILE STOP_FILE CONCURRENCY [FLOOD [PAUSE_MS [TARGET]]]
Reads the invite's by-reference request off its gateway page (the link that offers proofs:
the request object fetched with GET), mints with tests/api/zk/mint_answer.py a proof for
that request's SessionTranscript (OpenID4VP B.2.6.1 with the encryption key's thumbprint;
mDL, the claim asked for, now), encrypts the answer to the request's key (ECDH-ES,
A128GCM, by `cryptography`) as direct_post.jwt sends it, flips one bit
of it (so it passes every cheap check and costs a check on the pool, yet never uses the
request up) and prints `ready`; then, while GO_FILE exists, keeps CONCURRENCY answers in
flight, until STOP_FILE exists. FLOOD more senders (default 0) post the same answer again
PAUSE_MS (default 20) after each answer, turned away or not: a flood of proofs while the
pool is full; TARGET: the URL they post to instead of the request's (the ceiling's `/busy`,
for a control). Prints one JSON line: the answers by status ("reset": the server closed the
connection before the client read an answer), and the flood's answers per second.
"""

import hashlib
import html
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from base64 import urlsafe_b64decode, urlsafe_b64encode
from datetime import UTC, datetime

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.concatkdf import ConcatKDFHash

MDL, MDL_NS = "org.iso.18013.5.1.mDL", "org.iso.18013.5.1"


def b64(data):
    return urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text):
    return urlsafe_b64decode(text + "=" * (-len(text) % 4))


def link_request(gateway_url):
    """The payload of the request object the page's by-reference link names."""
    page = urllib.request.urlopen(gateway_url).read().decode()
    start = page.index('id="signed-link" href="') + len('id="signed-link" href="')
    href = html.unescape(page[start:page.index('"', start)])
    request_uri = dict(urllib.parse.parse_qsl(href.split("?", 1)[1]))["request_uri"]
    jws = urllib.request.urlopen(request_uri).read().decode()
    return json.loads(unb64(jws.split(".")[1]))


def thumbprint(jwk):
    """RFC 7638: SHA-256 of the key's required members, sorted, no white space."""
    members = {k: jwk[k] for k in ("crv", "kty", "x", "y")}
    return hashlib.sha256(json.dumps(members, separators=(",", ":"),
                                     sort_keys=True).encode()).digest()


def encrypt(jwk, plaintext):
    """A compact JWE: ECDH-ES (direct key agreement, RFC 7518 4.6) and A128GCM."""
    recipient = ec.EllipticCurvePublicNumbers(
        int.from_bytes(unb64(jwk["x"]), "big"), int.from_bytes(unb64(jwk["y"]), "big"),
        ec.SECP256R1()).public_key()
    ephemeral = ec.generate_private_key(ec.SECP256R1())
    numbers = ephemeral.public_key().public_numbers()
    epk = {"kty": "EC", "crv": "P-256", "x": b64(numbers.x.to_bytes(32, "big")),
           "y": b64(numbers.y.to_bytes(32, "big"))}
    header = b64(json.dumps({"alg": "ECDH-ES", "enc": "A128GCM", "epk": epk}).encode())
    shared = ephemeral.exchange(ec.ECDH(), recipient)
    field = lambda data: len(data).to_bytes(4, "big") + data
    other = field(b"A128GCM") + field(b"") + field(b"") + (128).to_bytes(4, "big")
    key = ConcatKDFHash(hashes.SHA256(), 16, other).derive(shared)
    iv = os.urandom(12)
    sealed = AESGCM(key).encrypt(iv, plaintext, header.encode())
    return ".".join([header, "", b64(iv), b64(sealed[:-16]), b64(sealed[-16:])])


def mint(params, vectors):
    jwk = params["client_metadata"]["jwks"]["keys"][0]
    info = [params["client_id"], params["nonce"], thumbprint(jwk), params["response_uri"]]
    handover = ["OpenID4VPHandover", hashlib.sha256(cbor2.dumps(info)).digest()]
    transcript = cbor2.dumps([None, None, handover])
    dcql = params["dcql_query"]
    zk = next(c for c in dcql["credentials"]
              if c["format"] == "mso_mdoc_zk" and c["meta"]["doctype_value"] == MDL)
    claim = zk["claims"][0]["path"][1]
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    jobs = [
        {"id": "valid", "transcript": transcript.hex(), "docType": MDL, "namespace": MDL_NS,
         "claim": claim, "value": True, "timestamp": now, "circuit": "google-v7-1attr",
         "backend": "google-cpp"},
        {"id": "flipped", "reuse": "valid", "proof": "bit-flipped"},
    ]
    tool = os.path.join(os.path.dirname(__file__), "../tests/api/zk/mint_answer.py")
    out = subprocess.run([sys.executable, tool, vectors], check=True, capture_output=True,
                         input="".join(json.dumps(j) + "\n" for j in jobs), text=True).stdout
    answers = [json.loads(line) for line in out.splitlines()][1:]
    response = bytes.fromhex(answers[1]["deviceResponse"])
    answer = {"state": params["state"], "vp_token": {zk["id"]: [b64(response)]}}
    return urllib.parse.urlencode({"response": encrypt(jwk, json.dumps(answer).encode())}).encode()


def main():
    gateway_url, vectors, go_file, stop_file, concurrency = sys.argv[1:6]
    flood = int(sys.argv[6]) if len(sys.argv) > 6 else 0
    pause = (int(sys.argv[7]) if len(sys.argv) > 7 else 20) / 1000
    params = link_request(gateway_url)
    body = mint(params, vectors)
    target = sys.argv[8] if len(sys.argv) > 8 else params["response_uri"]
    counts, flooded, lock = {}, {"answers": 0, "seconds": 0.0}, threading.Lock()

    def send(url=params["response_uri"]):
        request = urllib.request.Request(url, data=body, headers={
            "content-type": "application/x-www-form-urlencoded"})
        try:
            return urllib.request.urlopen(request).status
        except urllib.error.HTTPError as e:
            e.read()
            return e.code
        except (urllib.error.URLError, ConnectionError):
            return "reset"

    def post():
        while not os.path.exists(stop_file):
            if not os.path.exists(go_file):
                time.sleep(0.05)
                continue
            status = send()
            with lock:
                counts[status] = counts.get(status, 0) + 1
            if status == 503:
                # Full: wait, so that these posts keep the pool full without flooding it.
                time.sleep(0.25)

    def flood_post():
        while not os.path.exists(stop_file):
            if not os.path.exists(go_file):
                time.sleep(0.05)
                continue
            started = time.monotonic()
            status = send(target)
            with lock:
                key = f"flood {status}"
                counts[key] = counts.get(key, 0) + 1
                flooded["answers"] += 1
                flooded["seconds"] += time.monotonic() - started + pause
            time.sleep(pause)

    print("ready", flush=True)
    threads = [threading.Thread(target=post) for _ in range(int(concurrency))]
    threads += [threading.Thread(target=flood_post) for _ in range(flood)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rate = flood * flooded["answers"] / flooded["seconds"] if flooded["seconds"] else 0
    print(json.dumps({"answers by status": counts, "flood answers/s": round(rate, 1)}))


main()
