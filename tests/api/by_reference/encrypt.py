# The wallet's side of direct_post.jwt, by jwcrypto: encrypts the plaintext (argv[4])
# to the verifier's JWK (argv[1], JSON) as a compact JWE with alg argv[2] and enc
# argv[3]. alg "ECDH-ES" uses that JWK; "other-key" is ECDH-ES to a fresh P-256 key;
# "dir" and "RSA-OAEP" use a fresh key of their kind (what the server must refuse).
import json, sys
from jwcrypto import jwe, jwk

verifier, alg, enc, plaintext = sys.argv[1:5]
if alg == "ECDH-ES":
    key = jwk.JWK(**json.loads(verifier))
elif alg == "other-key":
    alg, key = "ECDH-ES", jwk.JWK.generate(kty="EC", crv="P-256")
elif alg == "dir":
    key = jwk.JWK.generate(kty="oct", size=256 if enc == "A128CBC-HS256" else 128)
elif alg == "RSA-OAEP":
    key = jwk.JWK.generate(kty="RSA", size=2048)
else:
    sys.exit(f"unknown alg {alg}")
token = jwe.JWE(plaintext.encode(), protected=json.dumps({"alg": alg, "enc": enc}))
token.add_recipient(key)
print(token.serialize(compact=True))
