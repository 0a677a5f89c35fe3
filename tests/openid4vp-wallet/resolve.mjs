// Plays a wallet built on @openid4vc/openid4vp (Credo, Paradym): resolves the
// authorization request URI given as the first argument as the library does for any
// wallet — fetches the request object from its request_uri (POST with the wallet's
// metadata when the link says request_uri_method=post), verifies its ES256 signature by
// the leaf of x5c (Node's own crypto), checks the x509_hash client id against that leaf
// (the library), validates the request (the library) — and prints what a wallet then
// reads, as JSON. The second argument, optional, is the wallet metadata JSON to post.
// Any failure exits 1 with the reason on stderr.
import { createHash, createPublicKey, verify, X509Certificate } from "node:crypto";
import { setGlobalConfig } from "@openid4vc/oauth2";
import { Openid4vpClient } from "@openid4vc/openid4vp";

// The test server is plain HTTP on loopback (the tests' network rule).
setGlobalConfig({ allowInsecureUrls: true });

const [uri, metadataJson] = process.argv.slice(2);
const params = Object.fromEntries(new URL(uri).searchParams);
const metadata = metadataJson ? JSON.parse(metadataJson) : undefined;

const b64url = (bytes) => Buffer.from(bytes).toString("base64url");

const callbacks = {
  fetch: (input, init) => fetch(input, init),
  hash: (data, alg) => {
    if (alg !== "sha-256") throw new Error(`unexpected hash ${alg}`);
    return new Uint8Array(createHash("sha256").update(data).digest());
  },
  getX509CertificateMetadata: (certificate) => {
    const cert = new X509Certificate(Buffer.from(certificate, "base64"));
    const names = (cert.subjectAltName ?? "").split(", ");
    return {
      sanDnsNames: names.filter((n) => n.startsWith("DNS:")).map((n) => n.slice(4)),
      sanUriNames: names.filter((n) => n.startsWith("URI:")).map((n) => n.slice(4)),
    };
  },
  verifyJwt: async (signer, jwt) => {
    if (signer.method !== "x5c" || jwt.header.alg !== "ES256") {
      return { verified: false };
    }
    const leaf = new X509Certificate(Buffer.from(signer.x5c[0], "base64"));
    const key = createPublicKey(leaf.publicKey.export({ format: "pem", type: "spki" }));
    const [h, p, s] = jwt.compact.split(".");
    const ok = verify(
      "sha256",
      Buffer.from(`${h}.${p}`),
      { key, dsaEncoding: "ieee-p1363" },
      Buffer.from(s, "base64url"),
    );
    const signerJwk = key.export({ format: "jwk" });
    return ok ? { verified: true, signerJwk } : { verified: false, signerJwk };
  },
};

try {
  const client = new Openid4vpClient({ callbacks });
  const resolved = await client.resolveOpenId4vpAuthorizationRequest({
    authorizationRequestPayload: params,
    wallet: metadata ? { metadata } : undefined,
  });
  const header = JSON.parse(Buffer.from(resolved.jar.jwt.compact.split(".")[0], "base64url"));
  console.log(
    JSON.stringify({
      client: { prefix: resolved.client.prefix, identifier: resolved.client.identifier },
      sendBy: resolved.jar.sendBy,
      header,
      payload: resolved.authorizationRequestPayload,
      dcql: resolved.dcql?.query ?? null,
      version: resolved.version,
      leafSha256: b64url(createHash("sha256").update(Buffer.from(header.x5c[0], "base64")).digest()),
    }),
  );
} catch (e) {
  console.error(`${e?.name ?? "Error"}: ${e?.message ?? e} ${e?.errorResponse ? JSON.stringify(e.errorResponse) : ""}`);
  process.exit(1);
}
