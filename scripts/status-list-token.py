"""Makes a credential status list token for agegate's tests, with implementations nobody
on agegate wrote: the statuses packed and compressed by PyPI's `token-status-list`
(BitArray: bits per entry, least-significant first, zlib), the claims encoded by `cbor2`
and the COSE_Sign1 signed by `pycose` (on OpenSSL, through `cryptography`).

Reads one JSON object on standard input and writes the token (CBOR) on standard output:
  form       "status_list" or "identifier_list"
  uri        the sub claim (2)
  iat, exp   claims 6 and 4 (exp left out when null)
  ttl        claim 65534 (left out when null)
  bits, size, statuses   a status list: `size` entries of `bits`, {"index": value} set
  ids        an identifier list: hex identifiers (each revoked)
  typ        the protected typ (16); default the form's media type
  alg        "ES256" (default) or "ES384"
  key_pem    the signer's private key (PKCS#8 PEM)
  x5chain    hex DER certificates for x5chain (33), leaf first; none when empty
  extra      {"claim": [nesting depth]}: an extra claim of nested arrays
"""

import json
import sys

import cbor2
from pycose.algorithms import Es256, Es384
from pycose.headers import Algorithm, X5chain
from pycose.keys import CoseKey
from pycose.messages import Sign1Message
from token_status_list import BitArray

MEDIA = {
    "status_list": "application/statuslist+cwt",
    "identifier_list": "application/identifierlist+cwt",
}


def claims(spec):
    out = {2: spec["uri"], 6: spec["iat"]}
    if spec.get("exp") is not None:
        out[4] = spec["exp"]
    if spec.get("ttl") is not None:
        out[65534] = spec["ttl"]
    if spec["form"] == "status_list":
        bits = spec["bits"]
        array = BitArray.with_at_least(bits, spec["size"])
        for index, value in spec.get("statuses", {}).items():
            array[int(index)] = value
        out[65533] = {"bits": bits, "lst": array.compressed()}
    else:
        ids = {bytes.fromhex(i): {} for i in spec.get("ids", [])}
        out[65530] = {"identifiers": ids}
    for key, depth in spec.get("extra", {}).items():
        value = 0
        for _ in range(depth):
            value = [value]
        out[int(key)] = value
    return out


def main():
    spec = json.load(sys.stdin)
    alg = Es384 if spec.get("alg") == "ES384" else Es256
    protected = {Algorithm: alg, 16: spec.get("typ") or MEDIA[spec["form"]]}
    unprotected = {}
    chain = [bytes.fromhex(c) for c in spec.get("x5chain", [])]
    if len(chain) == 1:
        unprotected[X5chain] = chain[0]
    elif chain:
        unprotected[X5chain] = chain
    message = Sign1Message(
        phdr=protected, uhdr=unprotected, payload=cbor2.dumps(claims(spec))
    )
    message.key = CoseKey.from_pem_private_key(spec["key_pem"])
    sys.stdout.buffer.write(message.encode(tag=True))


if __name__ == "__main__":
    main()
