#!/usr/bin/env python3
"""Makes src/trustlist/testdata: trusted lists signed by tools independent of agegate.

signxml signs XAdES enveloped with inclusive C14N (1.0 RSA, 1.1 ECDSA P-256/P-384); the xmlsec1
command signs templates the way the real EU list is (exclusive C14N, XPath Filter 2.0
subtracting the signature, a XAdES SignedProperties reference), and the refusals that
must be signed to reach their check (an extra reference, an extra transform, a wrong type).
Run with the venv scripts/setup.sh makes (it has signxml and cryptography):
  ~/.cache/agegate-schemathesis-*/bin/python scripts/trustlist-fixtures.py
Keys live only in a temporary directory; certificates are valid 2000-2099.
With `--bench N DIR` it writes instead a list of N providers and its signer's CA to DIR.
With `--refresh` it remakes only the refresh pair (refresh-*.xml, provider-h-added.*).
With `--split` it remakes only the split values (split/*).
With `--chain` it remakes only the lists signed through an intermediate (chain/*).
"""
import base64, datetime, hashlib, json, os, subprocess, sys, tempfile
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID
from lxml import etree
from signxml import methods
from signxml.xades import XAdESSigner

OUT = os.path.join(os.path.dirname(__file__), "..", "src", "trustlist", "testdata")
TMP = tempfile.mkdtemp()
FROM = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)
TO = datetime.datetime(2099, 12, 31, tzinfo=datetime.timezone.utc)


def cert(cn, key, issuer=None, issuer_key=None, ca=False):
    # O and C name the lists' operator and territory (TS 119 602 clause 6.8).
    name = x509.Name([x509.NameAttribute(NameOID.COUNTRY_NAME, "EU"),
                      x509.NameAttribute(NameOID.COMMON_NAME, cn),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "agegate tests")])
    b = (x509.CertificateBuilder().subject_name(name)
         .issuer_name(issuer.subject if issuer else name).public_key(key.public_key())
         .serial_number(x509.random_serial_number()).not_valid_before(FROM).not_valid_after(TO)
         .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    return b.sign(issuer_key or key, hashes.SHA256())


def pem(c):
    return c.public_bytes(serialization.Encoding.PEM).decode()


def b64(c):
    return base64.b64encode(c.public_bytes(serialization.Encoding.DER)).decode()


def write(name, data):
    with open(os.path.join(OUT, name), "w") as f:
        f.write(data)


def keyfile(name, key):
    path = os.path.join(TMP, name)
    with open(path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return path


def certfile(name, c):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(pem(c))
    return path


P = "http://trust.tech.ec.europa.eu/lists/age-verification/"


def service(type_, status, certs, history=()):
    ids = "".join(f"<DigitalId><X509Certificate>{b64(c)}</X509Certificate></DigitalId>" for c in certs)
    hist = "".join(
        f"<ServiceHistory><ServiceHistoryInstance><ServiceTypeIdentifier>{P}service-type/paa"
        f"</ServiceTypeIdentifier><ServiceDigitalIdentity><DigitalId><X509Certificate>{b64(c)}"
        f"</X509Certificate></DigitalId></ServiceDigitalIdentity><ServiceStatus>{P}service-status/"
        f"recognized</ServiceStatus></ServiceHistoryInstance></ServiceHistory>" for c in history)
    return (f"<TSPService><ServiceInformation><ServiceTypeIdentifier>{type_}</ServiceTypeIdentifier>"
            f"<ServiceName><Name xml:lang=\"en\">Proof of age &amp; more</Name></ServiceName>"
            f"<ServiceDigitalIdentity>{ids}</ServiceDigitalIdentity>"
            f"<ServiceStatus>{status}</ServiceStatus></ServiceInformation>{hist}</TSPService>")


def tsl(seq, services, tsl_type=P + "tsl-type", next_update="2099-01-01T00:00:00Z"):
    providers = "".join(
        f"<TrustServiceProvider><TSPInformation><TSPName><Name xml:lang=\"en\">Provider {i}"
        f"</Name></TSPName></TSPInformation><TSPServices>{s}</TSPServices></TrustServiceProvider>"
        for i, s in enumerate(services))
    return (f"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- a comment outside the root -->\n"
            f"<TrustServiceStatusList xmlns=\"http://uri.etsi.org/02231/v2#\" "
            f"xmlns:ns3=\"http://uri.etsi.org/02231/v2/additionaltypes#\" TSLTag=\"http://uri.etsi.org/19612/TSLTag\">\n"
            f"  <SchemeInformation><TSLVersionIdentifier>6</TSLVersionIdentifier>"
            f"<TSLSequenceNumber>{seq}</TSLSequenceNumber><TSLType>{tsl_type}</TSLType>"
            f"<SchemeOperatorName><Name xml:lang=\"en\">Tests &lt;EU&gt; \"operator\"</Name></SchemeOperatorName>"
            f"<ListIssueDateTime>2026-01-01T00:00:00Z</ListIssueDateTime>"
            f"<NextUpdate><dateTime>{next_update}</dateTime></NextUpdate></SchemeInformation>\n"
            f"  <!-- comments are not signed -->\n"
            f"  <TrustServiceProviderList>{providers}</TrustServiceProviderList>\n"
            f"</TrustServiceStatusList>\n")


def signxml_sign(xml, key, chain, alg, c14n):
    """XAdES baseline B by signxml, enveloped."""
    root = etree.fromstring(xml.encode())
    signer = ListSigner(method=methods.enveloped, signature_algorithm=alg, digest_algorithm="sha256",
                         c14n_algorithm=c14n)
    signed = signer.sign(root, key=key, cert=[pem(c) for c in chain])
    return etree.tostring(signed, xml_declaration=True, encoding="UTF-8").decode()


DS = "http://www.w3.org/2000/09/xmldsig#"
EXC = "http://www.w3.org/2001/10/xml-exc-c14n#"


class ListSigner(XAdESSigner):
    """signxml's XAdES (SigningTime, SigningCertificateV2) without its third reference, to
    KeyInfo: the EU's lists, and the profile agegate accepts, carry two (the document and
    the SignedProperties)."""

    def _add_reference_to_signed_info(self, sig_root, node_to_reference, **attrs):
        if node_to_reference.tag != f"{{{DS}}}KeyInfo":
            super()._add_reference_to_signed_info(sig_root, node_to_reference, **attrs)

FILTER2 = ("<ds:Transform Algorithm=\"http://www.w3.org/2002/06/xmldsig-filter2\"><dsig-xpath:XPath "
           "xmlns:dsig-xpath=\"http://www.w3.org/2002/06/xmldsig-filter2\" Filter=\"subtract\">"
           "/descendant::ds:Signature</dsig-xpath:XPath></ds:Transform>")


def xmlsec_sign(xml, key_path, chain, sig_alg, doc_transforms, extra_refs="", props=True, named=None):
    """Signs `xml` with xmlsec1 from a template appended as the root's last child; the
    SignedProperties name the signer (or `named`, for a refusal)."""
    signer_der = (named or chain[0]).public_bytes(serialization.Encoding.DER)
    digest = base64.b64encode(hashlib.sha256(signer_der).digest()).decode()
    props_ref = (f"<ds:Reference Type=\"http://uri.etsi.org/01903#SignedProperties\" URI=\"#xades-sig\">"
                 f"<ds:Transforms><ds:Transform Algorithm=\"{EXC}\"/></ds:Transforms>"
                 f"<ds:DigestMethod Algorithm=\"http://www.w3.org/2001/04/xmlenc#sha256\"/>"
                 f"<ds:DigestValue/></ds:Reference>") if props else ""
    obj = (f"<ds:Object><xades:QualifyingProperties xmlns:xades=\"http://uri.etsi.org/01903/v1.3.2#\" "
           f"Target=\"#sig\"><xades:SignedProperties Id=\"xades-sig\"><xades:SignedSignatureProperties>"
           f"<xades:SigningTime>2026-01-01T00:00:00Z</xades:SigningTime><xades:SigningCertificateV2>"
           f"<xades:Cert><xades:CertDigest><ds:DigestMethod Algorithm=\"http://www.w3.org/2001/04/xmlenc#sha256\"/>"
           f"<ds:DigestValue>{digest}</ds:DigestValue></xades:CertDigest></xades:Cert>"
           f"</xades:SigningCertificateV2></xades:SignedSignatureProperties></xades:SignedProperties>"
           f"</xades:QualifyingProperties></ds:Object>") if props else ""
    template = (f"<ds:Signature xmlns:ds=\"{DS}\" Id=\"sig\"><ds:SignedInfo>"
                f"<ds:CanonicalizationMethod Algorithm=\"{EXC}\"/>"
                f"<ds:SignatureMethod Algorithm=\"http://www.w3.org/2001/04/xmldsig-more#{sig_alg}\"/>"
                f"<ds:Reference URI=\"\"><ds:Transforms>{doc_transforms}</ds:Transforms>"
                f"<ds:DigestMethod Algorithm=\"http://www.w3.org/2001/04/xmlenc#sha256\"/>"
                f"<ds:DigestValue/></ds:Reference>{props_ref}{extra_refs}</ds:SignedInfo>"
                f"<ds:SignatureValue/><ds:KeyInfo><ds:X509Data/></ds:KeyInfo>{obj}</ds:Signature>")
    # An Id on the root, for the refusal that references it (signxml would use it).
    xml = xml.replace("<TrustServiceStatusList ", "<TrustServiceStatusList Id=\"tsl\" ", 1)
    end = xml.rindex("</TrustServiceStatusList>")
    path = os.path.join(TMP, "template.xml")
    with open(path, "w") as f:
        f.write(xml[:end] + template + xml[end:])
    certs = ",".join(certfile(f"c{i}.pem", c) for i, c in enumerate(chain))
    out = subprocess.run(["xmlsec1", "--sign", "--privkey-pem", f"{key_path},{certs}",
                          "--id-attr:Id", "http://uri.etsi.org/01903/v1.3.2#:SignedProperties",
                          "--id-attr:Id", "TrustServiceStatusList", path],
                         check=True, capture_output=True)
    return out.stdout.decode()


def main():
    os.makedirs(OUT, exist_ok=True)
    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca = cert("Test list signing CA", ca_key, ca=True)
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    rsa_signer = cert("Test list signer (RSA)", rsa_key, ca, ca_key)
    ec_key = ec.generate_private_key(ec.SECP256R1())
    ec_signer = cert("Test list signer (P-256)", ec_key)
    ec384_key = ec.generate_private_key(ec.SECP384R1())
    ec384_signer = cert("Test list signer (P-384)", ec384_key)
    providers = {}
    for name in ["a", "b", "c-deprecated", "d-withdrawn", "e-history", "f-other-type", "g-added"]:
        k = ec.generate_private_key(ec.SECP256R1())
        providers[name] = cert(f"Provider {name}", k)
    rsa_provider = cert("Provider RSA", rsa.generate_private_key(public_exponent=65537, key_size=2048))
    write("signer-ca.pem", pem(ca))
    write("signer-rsa.pem", pem(rsa_signer))
    write("signer-ec.pem", pem(ec_signer))
    write("signer-ec384.pem", pem(ec384_signer))
    for name, c in providers.items():
        write(f"provider-{name}.pem", pem(c))

    paa, rec = P + "service-type/paa", P + "service-status/recognized"
    base = [service(paa, rec, [providers["a"]], history=[providers["e-history"]]),
            service("http://uri.etsi.org/TrstSvc/Svctype/CA/QC", rec, [providers["f-other-type"]]),
            service(paa, P + "service-status/deprecated", [providers["c-deprecated"]]),
            service(paa, P + "service-status/withdrawn", [providers["d-withdrawn"]]),
            service("https://trust.ec.europa.eu/lotl/av/TrstSvc/Svctype/PAA",
                    "https://example.eu/TrstSvc/TrustedList/Svcstatus/granted",
                    [providers["b"], rsa_provider])]
    list_a, list_b = tsl(1, base), tsl(2, base + [service(paa, rec, [providers["g-added"]])])

    inc10 = "http://www.w3.org/TR/2001/REC-xml-c14n-20010315"
    write("signxml-rsa-c14n10.xml", signxml_sign(list_a, rsa_key, [rsa_signer, ca], "rsa-sha256", inc10))
    write("signxml-ec-c14n11.xml", signxml_sign(list_a, ec_key, [ec_signer], "ecdsa-sha256",
                                                "http://www.w3.org/2006/12/xml-c14n11"))
    write("signxml-ec384-c14n10.xml", signxml_sign(list_b, ec384_key, [ec384_signer], "ecdsa-sha384", inc10))

    rsa_path, ec_path = keyfile("rsa.pem", rsa_key), keyfile("ec.pem", ec_key)
    exc = f"<ds:Transform Algorithm=\"{EXC}\"/>"
    enveloped = "<ds:Transform Algorithm=\"http://www.w3.org/2000/09/xmldsig#enveloped-signature\"/>"
    write("xmlsec-rsa-filter2-exc.xml", xmlsec_sign(list_a, rsa_path, [rsa_signer, ca], "rsa-sha256", FILTER2 + exc))
    write("xmlsec-rsa-filter2-exc-b.xml", xmlsec_sign(list_b, rsa_path, [rsa_signer, ca], "rsa-sha256", FILTER2 + exc))
    write("xmlsec-ec-enveloped-exc.xml", xmlsec_sign(list_a, ec_path, [ec_signer], "ecdsa-sha512", enveloped + exc))
    # XAdES without its SignedProperties, and with them naming another certificate.
    write("refuse-no-signed-properties.xml", xmlsec_sign(list_a, rsa_path, [rsa_signer, ca], "rsa-sha256",
                                                         FILTER2 + exc, props=False))
    write("refuse-other-signing-certificate.xml", xmlsec_sign(list_a, rsa_path, [rsa_signer, ca], "rsa-sha256",
                                                              FILTER2 + exc, named=ca))
    # Refusals that must be signed to reach their check.
    extra_ref = ("<ds:Reference URI=\"#tsl\"><ds:Transforms>" + exc + "</ds:Transforms><ds:DigestMethod "
                 "Algorithm=\"http://www.w3.org/2001/04/xmlenc#sha256\"/><ds:DigestValue/></ds:Reference>")
    write("refuse-extra-reference.xml", xmlsec_sign(list_a, rsa_path, [rsa_signer, ca], "rsa-sha256",
                                                    FILTER2 + exc, extra_refs=extra_ref))
    write("refuse-extra-transform.xml", xmlsec_sign(list_a, rsa_path, [rsa_signer, ca], "rsa-sha256",
                                                    enveloped + FILTER2 + exc))
    write("refuse-wrong-type.xml", xmlsec_sign(tsl(1, base, tsl_type="http://uri.etsi.org/TrstSvc/TrustedList/TSLType/EUgeneric"),
                                               rsa_path, [rsa_signer, ca], "rsa-sha256", FILTER2 + exc))
    write("refuse-past-next-update.xml", xmlsec_sign(tsl(1, base, next_update="2026-02-01T00:00:00Z"),
                                                     rsa_path, [rsa_signer, ca], "rsa-sha256", FILTER2 + exc))
    write_lotes(providers, rsa_key, rsa_signer, ca, ec_key, ec_signer, ec384_key, ec384_signer)
    refresh_pair()
    split_values()
    chains()
    print("wrote", OUT, file=sys.stderr)


def refresh_pair():
    """Lists A (sequence 1) and B (sequence 2, adding provider h) as the EU signs them, for
    tests/api/trust_refresh.rs. Provider h's CA key is kept (provider-h-added.key, a test
    key and nothing else) so the test kit can issue a credential that only B trusts."""
    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca = cert("Refresh list signing CA", ca_key, ca=True)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    signer = cert("Refresh list signer", key, ca, ca_key)
    a = cert("Provider refresh-a", ec.generate_private_key(ec.SECP256R1()), ca=True)
    h_key = ec.generate_private_key(ec.SECP256R1())
    h = cert("Provider h-added", h_key, ca=True)
    write("refresh-signer-ca.pem", pem(ca))
    write("provider-h-added.pem", pem(h))
    write("provider-h-added.key", h_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()).decode())
    paa, rec = P + "service-type/paa", P + "service-status/recognized"
    exc = f"<ds:Transform Algorithm=\"{EXC}\"/>"
    path = keyfile("refresh.pem", key)
    for name, seq, services in [("refresh-a.xml", 1, [service(paa, rec, [a])]),
                                ("refresh-b.xml", 2, [service(paa, rec, [a]), service(paa, rec, [h])])]:
        write(name, xmlsec_sign(tsl(seq, services), path, [signer, ca], "rsa-sha256", FILTER2 + exc))


def xmlsec_verify(path, ca_path):
    """xmlsec1's own verdict on a signed list (it raises unless the signature holds)."""
    subprocess.run(["xmlsec1", "--verify", "--trusted-pem", ca_path,
                    "--id-attr:Id", "http://uri.etsi.org/01903/v1.3.2#:SignedProperties",
                    "--id-attr:Id", "TrustServiceStatusList", path], check=True, capture_output=True)


def split_values():
    """One list per value agegate reads (sequence, NextUpdate, service type, status,
    certificate) and per way of splitting its text (a comment, a processing instruction, a
    CDATA section), signed as the EU signs. A comment or CDATA section changes nothing
    canonical XML sees, so it is put in after signing (as anyone on the way could) and
    xmlsec1 is asked whether the signature still holds; a processing instruction is signed
    content, so it is there before signing. For src/trustlist/split_tests.rs and
    tests/api/trust_split_values.rs."""
    out = os.path.join(OUT, "split")
    os.makedirs(out, exist_ok=True)
    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca = cert("Split values list signing CA", ca_key, ca=True)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    signer = cert("Split values list signer", key, ca, ca_key)
    provider = cert("Provider split", ec.generate_private_key(ec.SECP256R1()))
    with open(os.path.join(out, "signer-ca.pem"), "w") as f:
        f.write(pem(ca))
    with open(os.path.join(out, "provider.pem"), "w") as f:
        f.write(pem(provider))
    paa, rec = P + "service-type/paa", P + "service-status/recognized"
    base = tsl(17, [service(paa, rec, [provider])])
    der = b64(provider)
    # (name, the value as signed, where it is split)
    values = [("sequence", "<TSLSequenceNumber>17<", 20),
              ("next-update", "<dateTime>2099-01-01T00:00:00Z<", 20),
              ("service-type", f"<ServiceTypeIdentifier>{paa}<", len("<ServiceTypeIdentifier>") + len(P) + 13),
              ("service-status", f"<ServiceStatus>{rec}<", len("<ServiceStatus>") + len(P) + 21),
              ("certificate", f"<X509Certificate>{der}<", len("<X509Certificate>") + 40)]
    splits = [("comment", "<!---->", False), ("pi", "<?agegate split?>", True),
              ("cdata", None, False)]
    key_path, ca_path = keyfile("split.pem", key), certfile("split-ca.pem", ca)
    exc = f"<ds:Transform Algorithm=\"{EXC}\"/>"
    for name, signed, at in values:
        assert base.count(signed) == 1, name
        for how, mark, before_signing in splits:
            head, tail = signed[:at], signed[at:]
            split = f"{head}<![CDATA[{tail[:-1]}]]><" if mark is None else f"{head}{mark}{tail}"
            xml = base.replace(signed, split) if before_signing else base
            xml = xmlsec_sign(xml, key_path, [signer, ca], "rsa-sha256", FILTER2 + exc)
            if not before_signing:
                assert xml.count(signed) == 1, name
                xml = xml.replace(signed, split)
            path = os.path.join(out, f"{name}-{how}.xml")
            with open(path, "w") as f:
                f.write(xml)
            xmlsec_verify(path, ca_path)
    # Two sequence numbers, both signed: no one reading.
    twice = base.replace("<TSLSequenceNumber>", "<TSLSequenceNumber>1</TSLSequenceNumber><TSLSequenceNumber>", 1)
    with open(os.path.join(out, "sequence-twice.xml"), "w") as f:
        f.write(xmlsec_sign(twice, key_path, [signer, ca], "rsa-sha256", FILTER2 + exc))
    # The JSON list's analogue: a member named twice, so readers differ (first or last).
    text = json.dumps(lote("http://uri.etsi.org/19602/LoTEType/EUPIDProvidersList",
                           [("http://uri.etsi.org/19602/SvcType/PID/Issuance", [provider])], seq=1))
    assert text.count('"LoTESequenceNumber": 1,') == 1
    text = text.replace('"LoTESequenceNumber": 1,', '"LoTESequenceNumber": 1, "LoTESequenceNumber": 17,')
    with open(os.path.join(out, "lote-member-twice.jwt"), "w") as f:
        f.write(jws(text.encode(), key, [signer, ca], "RS256"))


def chains():
    """Lists whose signer chains to the pinned CA through an intermediate: a CA (taken)
    and one that is not (basicConstraints cA false: refused, or any certificate the CA
    issued could vouch for a list signer). XML signed by xmlsec1, JSON by jwcrypto. For
    src/trustlist/chain_tests.rs."""
    out = os.path.join(OUT, "chain")
    os.makedirs(out, exist_ok=True)
    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca = cert("Chain test root CA", ca_key, ca=True)
    with open(os.path.join(out, "root-ca.pem"), "w") as f:
        f.write(pem(ca))
    provider = cert("Provider chain", ec.generate_private_key(ec.SECP256R1()))
    with open(os.path.join(out, "provider.pem"), "w") as f:
        f.write(pem(provider))
    paa, rec = P + "service-type/paa", P + "service-status/recognized"
    exc = f"<ds:Transform Algorithm=\"{EXC}\"/>"
    for name, is_ca in [("ca-intermediate", True), ("non-ca-intermediate", False)]:
        mid_key = ec.generate_private_key(ec.SECP256R1())
        mid = cert(f"Chain test intermediate ({name})", mid_key, ca, ca_key, ca=is_ca)
        key = ec.generate_private_key(ec.SECP256R1())
        signer = cert(f"Chain test list signer ({name})", key, mid, mid_key)
        path = os.path.join(out, f"{name}.xml")
        with open(path, "w") as f:
            f.write(xmlsec_sign(tsl(1, [service(paa, rec, [provider])]), keyfile(f"{name}.pem", key),
                                [signer, mid], "ecdsa-sha256", FILTER2 + exc))
        if is_ca:
            xmlsec_verify(path, certfile("chain-ca.pem", ca))
        payload = lote("http://uri.etsi.org/19602/LoTEType/EUPIDProvidersList",
                       [("http://uri.etsi.org/19602/SvcType/PID/Issuance", [provider])])
        with open(os.path.join(out, f"{name}.jwt"), "w") as f:
            f.write(jws(payload, key, [signer, mid], "ES256"))


def lote(lote_type, services, seq=1, operator=({"lang": "en", "value": "agegate tests"},),
         territory="EU"):
    def svc(type_, certs, history=()):
        return {"ServiceInformation": {
                    "ServiceTypeIdentifier": type_,
                    "ServiceDigitalIdentity": {"X509Certificates": [{"val": b64(c)} for c in certs]}},
                "ServiceHistory": [{"ServiceTypeIdentifier": type_, "ServiceDigitalIdentity": {
                    "X509Certificates": [{"val": b64(c)} for c in history]}}] if history else []}
    return {"LoTE": {"ListAndSchemeInformation": {
                "LoTEVersionIdentifier": 1, "LoTESequenceNumber": seq, "LoTEType": lote_type,
                "SchemeOperatorName": list(operator),
                "SchemeTerritory": territory, "ListIssueDateTime": "2026-01-01T00:00:00Z",
                "NextUpdate": "2099-01-01T00:00:00Z"},
            "TrustedEntitiesList": [{"TrustedEntityInformation": {"TEName": [{"lang": "en", "value": "Provider"}]},
                                     "TrustedEntityServices": [svc(*s) for s in services]}]}}


def jws(payload, key, chain, alg):
    """`payload` is a dict, or the exact bytes to sign."""
    from jwcrypto import jwk, jws as jwcrypto_jws
    from jwcrypto.common import json_encode
    token = jwcrypto_jws.JWS(payload if isinstance(payload, bytes) else json_encode(payload).encode())
    k = jwk.JWK.from_pem(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    token.add_signature(k, None, json_encode({"alg": alg, "typ": "JOSE", "x5c": [b64(c) for c in chain]}))
    return token.serialize(compact=True)


def write_lotes(p, rsa_key, rsa_signer, ca, ec_key, ec_signer, ec384_key, ec384_signer):
    pid_type = "http://uri.etsi.org/19602/LoTEType/EUPIDProvidersList"
    pid_services = [("http://uri.etsi.org/19602/SvcType/PID/Issuance", [p["a"]], [p["e-history"]]),
                    ("http://uri.etsi.org/19602/SvcType/PID/Revocation", [p["c-deprecated"]])]
    # The signer's O matches the operator's name in its second language.
    pid = lote(pid_type, pid_services, operator=({"lang": "de", "value": "agegate Tests (Betreiber)"},
                                                 {"lang": "en", "value": "agegate tests"}))
    mdl = lote("http://trust.ec.europa.eu/lists/mDL/mDLProvidersListType",
               [("http://uri.etsi.org/19602/SvcType/mDL/Issuance", [p["b"]]),
                ("http://uri.etsi.org/19602/SvcType/PID/Issuance", [p["f-other-type"]])], seq=3)
    write("lote-pid-es256.jwt", jws(pid, ec_key, [ec_signer], "ES256"))
    write("lote-pid-rs256.jwt", jws(pid, rsa_key, [rsa_signer, ca], "RS256"))
    write("lote-mdl-es384.jwt", jws(mdl, ec384_key, [ec384_signer], "ES384"))
    # Signed by a pinned signer whose subject is not the list's operator or territory.
    other = lote(pid_type, pid_services, operator=({"lang": "en", "value": "Another operator"},))
    write("refuse-lote-other-operator.jwt", jws(other, ec_key, [ec_signer], "ES256"))
    elsewhere = lote(pid_type, pid_services, territory="DE")
    write("refuse-lote-other-territory.jwt", jws(elsewhere, rsa_key, [rsa_signer, ca], "RS256"))


def bench(n, out_dir):
    """A list of `n` recognised providers signed as the EU signs (xmlsec1, RSA, exclusive
    C14N, filter 2.0), and its signer's CA, for examples/trustlist_load.rs."""
    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca = cert("Bench list signing CA", ca_key, ca=True)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    signer = cert("Bench list signer", key, ca, ca_key)
    paa, rec = P + "service-type/paa", P + "service-status/recognized"
    services = [service(paa, rec, [cert(f"Provider {i}", ec.generate_private_key(ec.SECP256R1()))])
                for i in range(n)]
    exc = f"<ds:Transform Algorithm=\"{EXC}\"/>"
    signed = xmlsec_sign(tsl(1, services), keyfile("bench.pem", key), [signer, ca], "rsa-sha256", FILTER2 + exc)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, f"list-{n}.xml"), "w") as f:
        f.write(signed)
    with open(os.path.join(out_dir, "signer-ca.pem"), "w") as f:
        f.write(pem(ca))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--bench":
        bench(int(sys.argv[2]), sys.argv[3])
    elif sys.argv[1:] == ["--refresh"]:
        refresh_pair()
    elif sys.argv[1:] == ["--split"]:
        split_values()
    elif sys.argv[1:] == ["--chain"]:
        chains()
    else:
        main()
