//! The enveloped XML signature of a trusted list (XAdES baseline B as ETSI TS 119 612
//! lists use it), checked strictly: one `ds:Signature`, the root's last child; a
//! reference to the whole document (`URI=""`, enveloped-signature or XPath Filter 2.0
//! subtracting `/descendant::ds:Signature`, then optionally one canonicalisation) and
//! one to the signature's own `SignedProperties`, whose signing certificate must be the
//! signer; nothing else. What the caller then
//! reads is the very document verified, so no wrapping can show it other content.

use roxmltree::{Document, Node};

use super::c14n::{self, Method};
use super::cert::{check_chain, ChainError, SignerCert};
use super::text;
use crate::pki::{Encoding, Hash, Scheme};

pub const NS_DSIG: &str = "http://www.w3.org/2000/09/xmldsig#";
const NS_XADES: &str = "http://uri.etsi.org/01903/v1.3.2#";
const ENVELOPED: &str = "http://www.w3.org/2000/09/xmldsig#enveloped-signature";
const FILTER2: &str = "http://www.w3.org/2002/06/xmldsig-filter2";
const SIGNED_PROPERTIES_TYPE: &str = "http://uri.etsi.org/01903#SignedProperties";

/// Why a list's signature is refused. One short line each, for the log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("the document has {0} ds:Signature elements, not one")]
    SignatureCount(usize),
    #[error("ds:Signature is not the last child of the root")]
    SignatureNotLast,
    #[error("malformed signature: {0}")]
    Malformed(&'static str),
    #[error("unsupported algorithm {0}")]
    UnsupportedAlgorithm(String),
    #[error("a reference other than the whole document and the SignedProperties: {0}")]
    UnexpectedReference(String),
    #[error("no reference to the whole document")]
    NoDocumentReference,
    #[error("a transform the profile does not allow: {0}")]
    UnexpectedTransform(String),
    #[error("KeyInfo has no usable certificate: {0}")]
    BadSignerCertificate(String),
    #[error(transparent)]
    Chain(#[from] ChainError),
    #[error("the signature value does not verify under the signer's key")]
    SignatureInvalid,
    #[error("digest of the {0} does not match")]
    DigestMismatch(&'static str),
    #[error("no reference to the SignedProperties (XAdES names the signing certificate there)")]
    NoSignedProperties,
    #[error("SignedProperties names no signing certificate")]
    NoSigningCertificate,
    #[error("SignedProperties names another signing certificate")]
    SigningCertificateMismatch,
    #[error("cannot canonicalise: {}", .0 .0)]
    C14n(c14n::C14nError),
}

use SignatureError as E;

impl From<c14n::C14nError> for SignatureError {
    fn from(e: c14n::C14nError) -> Self {
        E::C14n(e)
    }
}

/// What was verified: the signer (DER).
#[derive(Debug, Clone)]
pub struct Signed {
    pub signer: Vec<u8>,
}

/// Verifies the document's enveloped signature against the pinned certificates at
/// `now`. Signature and references are checked before the caller reads anything.
pub fn verify(
    doc: &Document<'_>,
    pinned: &[SignerCert],
    now: i64,
) -> Result<Signed, SignatureError> {
    let signatures: Vec<Node<'_, '_>> = doc
        .descendants()
        .filter(|n| n.has_tag_name((NS_DSIG, "Signature")))
        .collect();
    let [signature] = signatures.as_slice() else {
        return Err(E::SignatureCount(signatures.len()));
    };
    let root = doc.root_element();
    if signature.parent() != Some(root) || root.last_element_child() != Some(*signature) {
        return Err(E::SignatureNotLast);
    }
    let mut parts = signature.children().filter(Node::is_element);
    let signed_info = next_dsig(&mut parts, "SignedInfo")?;
    let value = next_dsig(&mut parts, "SignatureValue")?;
    let key_info = next_dsig(&mut parts, "KeyInfo")?;
    for rest in parts {
        if !rest.has_tag_name((NS_DSIG, "Object")) {
            return Err(E::Malformed(
                "ds:Signature holds something besides ds:Object",
            ));
        }
    }

    let mut info = signed_info.children().filter(Node::is_element);
    let c14n_method = next_dsig(&mut info, "CanonicalizationMethod")?;
    let (method, comments) = c14n_of(c14n_method)?;
    let sig_method = next_dsig(&mut info, "SignatureMethod")?;
    let (scheme, hash) = signature_algorithm(sig_method)?;
    let references: Vec<Node<'_, '_>> = info.collect();
    if references
        .iter()
        .any(|r| !r.has_tag_name((NS_DSIG, "Reference")))
    {
        return Err(E::Malformed(
            "SignedInfo holds something besides ds:Reference",
        ));
    }

    let chain = signer_chain(key_info)?;
    check_chain(&chain, pinned, now)?;
    let signer = chain
        .first()
        .ok_or(E::BadSignerCertificate("none".into()))?;
    let canonical = c14n::subtree(signed_info, &method, comments)?;
    let sig_value = text::base64(value).ok_or(E::Malformed("SignatureValue is not base64"))?;
    if !signer
        .key
        .verifies(scheme, hash, &canonical, &sig_value, Encoding::Raw)
    {
        return Err(E::SignatureInvalid);
    }

    let mut whole_document = false;
    let mut signed_properties = None;
    for reference in references {
        match reference.attribute("URI") {
            Some("") if !whole_document => {
                check_document_reference(doc, *signature, reference)?;
                whole_document = true;
            }
            Some(uri) if uri.starts_with('#') && signed_properties.is_none() => {
                signed_properties = Some(check_properties_reference(doc, *signature, reference)?);
            }
            other => return Err(E::UnexpectedReference(other.unwrap_or("(no URI)").into())),
        }
    }
    if !whole_document {
        return Err(E::NoDocumentReference);
    }
    // XAdES baseline B: the signed properties name the signing certificate, so a
    // `KeyInfo` certificate swapped for another with the same key is caught.
    let props = signed_properties.ok_or(E::NoSignedProperties)?;
    check_signing_certificate(props, signer)?;
    Ok(Signed {
        signer: signer.der().to_vec(),
    })
}

/// The next element of `parts`, which must be `ds:{name}`.
fn next_dsig<'a, 'i>(
    parts: &mut impl Iterator<Item = Node<'a, 'i>>,
    name: &'static str,
) -> Result<Node<'a, 'i>, SignatureError> {
    match parts.next() {
        Some(n) if n.has_tag_name((NS_DSIG, name)) => Ok(n),
        _ => Err(E::Malformed(name)),
    }
}

fn c14n_of(node: Node<'_, '_>) -> Result<(Method, bool), SignatureError> {
    let uri = node.attribute("Algorithm").unwrap_or("");
    let prefixes = node
        .children()
        .find(|c| c.is_element() && c.tag_name().name() == "InclusiveNamespaces")
        .and_then(|c| c.attribute("PrefixList"))
        .map(|l| l.split_ascii_whitespace().map(str::to_owned).collect())
        .unwrap_or_default();
    let other_children = node.children().filter(Node::is_element).any(|c| {
        !(c.has_tag_name((
            "http://www.w3.org/2001/10/xml-exc-c14n#",
            "InclusiveNamespaces",
        )) && uri.starts_with("http://www.w3.org/2001/10/xml-exc-c14n#"))
    });
    if other_children {
        return Err(E::UnexpectedTransform(format!("{uri} with parameters")));
    }
    c14n::method(uri, prefixes).ok_or_else(|| E::UnsupportedAlgorithm(uri.to_owned()))
}

fn signature_algorithm(node: Node<'_, '_>) -> Result<(Scheme, Hash), SignatureError> {
    let uri = node.attribute("Algorithm").unwrap_or("");
    if node.children().any(|c| c.is_element()) {
        return Err(E::UnsupportedAlgorithm(format!("{uri} with parameters")));
    }
    let more = "http://www.w3.org/2001/04/xmldsig-more#";
    let Some(name) = uri.strip_prefix(more) else {
        return Err(E::UnsupportedAlgorithm(uri.to_owned()));
    };
    Ok(match name {
        "rsa-sha256" => (Scheme::RsaPkcs1, Hash::Sha256),
        "rsa-sha384" => (Scheme::RsaPkcs1, Hash::Sha384),
        "rsa-sha512" => (Scheme::RsaPkcs1, Hash::Sha512),
        "ecdsa-sha256" => (Scheme::Ecdsa, Hash::Sha256),
        "ecdsa-sha384" => (Scheme::Ecdsa, Hash::Sha384),
        "ecdsa-sha512" => (Scheme::Ecdsa, Hash::Sha512),
        _ => return Err(E::UnsupportedAlgorithm(uri.to_owned())),
    })
}

fn digest_algorithm(node: Node<'_, '_>) -> Result<Hash, SignatureError> {
    let uri = node.attribute("Algorithm").unwrap_or("");
    match uri {
        "http://www.w3.org/2001/04/xmlenc#sha256" => Ok(Hash::Sha256),
        "http://www.w3.org/2001/04/xmldsig-more#sha384" => Ok(Hash::Sha384),
        "http://www.w3.org/2001/04/xmlenc#sha512" => Ok(Hash::Sha512),
        _ => Err(E::UnsupportedAlgorithm(uri.to_owned())),
    }
}

/// `KeyInfo/X509Data/X509Certificate`s in order: the signer first, then any
/// intermediates.
fn signer_chain(key_info: Node<'_, '_>) -> Result<Vec<SignerCert>, SignatureError> {
    let certs: Vec<SignerCert> = key_info
        .children()
        .filter(|n| n.has_tag_name((NS_DSIG, "X509Data")))
        .flat_map(|d| d.children())
        .filter(|n| n.has_tag_name((NS_DSIG, "X509Certificate")))
        .map(|n| {
            let der = text::base64(n).ok_or(E::BadSignerCertificate("not base64".into()))?;
            SignerCert::from_der(&der).map_err(|e| E::BadSignerCertificate(e.to_string()))
        })
        .collect::<Result<_, _>>()?;
    if certs.is_empty() {
        return Err(E::BadSignerCertificate("no X509Certificate".into()));
    }
    Ok(certs)
}

/// The reference's transforms, digest method and value.
struct ReferenceParts<'a, 'i> {
    transforms: Vec<Node<'a, 'i>>,
    hash: Hash,
    value: Vec<u8>,
}

fn reference_parts<'a, 'i>(
    reference: Node<'a, 'i>,
) -> Result<ReferenceParts<'a, 'i>, SignatureError> {
    let mut parts = reference.children().filter(Node::is_element).peekable();
    let transforms = match parts.peek() {
        Some(t) if t.has_tag_name((NS_DSIG, "Transforms")) => {
            let t = *t;
            parts.next();
            let list: Vec<Node<'a, 'i>> = t.children().filter(Node::is_element).collect();
            if list.iter().any(|n| !n.has_tag_name((NS_DSIG, "Transform"))) {
                return Err(E::Malformed(
                    "Transforms holds something besides ds:Transform",
                ));
            }
            list
        }
        _ => Vec::new(),
    };
    let hash = digest_algorithm(next_dsig(&mut parts, "DigestMethod")?)?;
    let value = text::base64(next_dsig(&mut parts, "DigestValue")?)
        .ok_or(E::Malformed("DigestValue is not base64"))?;
    if parts.next().is_some() {
        return Err(E::Malformed("Reference holds more than its digest"));
    }
    Ok(ReferenceParts {
        transforms,
        hash,
        value,
    })
}

/// `URI=""`: [enveloped-signature | filter 2.0 subtract the signature] then at most one
/// canonicalisation (inclusive C14N 1.0 when none is named).
fn check_document_reference(
    doc: &Document<'_>,
    signature: Node<'_, '_>,
    reference: Node<'_, '_>,
) -> Result<(), SignatureError> {
    let parts = reference_parts(reference)?;
    let (first, rest) = parts
        .transforms
        .split_first()
        .ok_or(E::UnexpectedTransform(
            "none: the signature would sign itself".into(),
        ))?;
    match first.attribute("Algorithm").unwrap_or("") {
        ENVELOPED if !first.children().any(|c| c.is_element()) => {}
        FILTER2 if is_filter2_subtract_signature(*first) => {}
        other => return Err(E::UnexpectedTransform(other.to_owned())),
    }
    // Comments are never in a `URI=""` node-set, whatever the method says.
    let method = final_c14n(rest)?;
    let canonical = c14n::document_without(doc, signature.id(), &method)?;
    if parts.hash.digest(&canonical) != parts.value {
        return Err(E::DigestMismatch("document"));
    }
    Ok(())
}

/// What may end a reference's transforms: nothing (inclusive C14N 1.0 then applies) or
/// one canonicalisation. Anything else is named in the refusal.
fn final_c14n(rest: &[Node<'_, '_>]) -> Result<Method, SignatureError> {
    let algorithm = |n: &Node<'_, '_>| n.attribute("Algorithm").unwrap_or("").to_owned();
    match rest {
        [] => Ok(Method::Inclusive10),
        [c] => c14n_of(*c).map(|(m, _)| m).map_err(|e| match e {
            E::UnsupportedAlgorithm(uri) => E::UnexpectedTransform(uri),
            other => other,
        }),
        [c, extra, ..] => Err(E::UnexpectedTransform(
            if c14n::method(&algorithm(c), Vec::new()).is_none() {
                algorithm(c)
            } else {
                algorithm(extra)
            },
        )),
    }
}

/// `<dsig-xpath:XPath Filter="subtract">/descendant::ds:Signature</dsig-xpath:XPath>`
/// (one, its `ds` prefix bound to XML-DSig). As the document holds one signature, this
/// removes exactly what enveloped-signature removes.
fn is_filter2_subtract_signature(transform: Node<'_, '_>) -> bool {
    let xpaths: Vec<Node<'_, '_>> = transform.children().filter(Node::is_element).collect();
    let [xpath] = xpaths.as_slice() else {
        return false;
    };
    let expr = text::value(*xpath).unwrap_or_default();
    let expr = expr.trim();
    let prefix = expr
        .strip_prefix("/descendant::")
        .and_then(|r| r.strip_suffix(":Signature"));
    xpath.has_tag_name((FILTER2, "XPath"))
        && xpath.attribute("Filter") == Some("subtract")
        && xpath.children().all(|c| c.is_text())
        && prefix.is_some_and(|p| xpath.lookup_namespace_uri(Some(p)) == Some(NS_DSIG))
}

/// `#id` of the `SignedProperties` inside this signature's `QualifyingProperties`; the
/// id must name exactly one element of the document.
fn check_properties_reference<'a, 'i>(
    doc: &'a Document<'i>,
    signature: Node<'a, 'i>,
    reference: Node<'a, 'i>,
) -> Result<Node<'a, 'i>, SignatureError> {
    let uri = reference.attribute("URI").unwrap_or("");
    if reference.attribute("Type") != Some(SIGNED_PROPERTIES_TYPE) {
        return Err(E::UnexpectedReference(uri.to_owned()));
    }
    let id = &uri[1..];
    let targets: Vec<Node<'a, 'i>> = doc
        .descendants()
        .filter(|n| n.attributes().any(|a| a.name() == "Id" && a.value() == id))
        .collect();
    let [target] = targets.as_slice() else {
        return Err(E::UnexpectedReference(uri.to_owned()));
    };
    let in_place = target.has_tag_name((NS_XADES, "SignedProperties"))
        && target
            .parent_element()
            .is_some_and(|q| q.has_tag_name((NS_XADES, "QualifyingProperties")))
        && target
            .ancestors()
            .nth(2)
            .is_some_and(|o| o.has_tag_name((NS_DSIG, "Object")) && o.parent() == Some(signature));
    if !in_place {
        return Err(E::UnexpectedReference(uri.to_owned()));
    }
    let parts = reference_parts(reference)?;
    let method = final_c14n(&parts.transforms)?;
    let canonical = c14n::subtree(*target, &method, false)?;
    if parts.hash.digest(&canonical) != parts.value {
        return Err(E::DigestMismatch("SignedProperties"));
    }
    Ok(*target)
}

/// XAdES `SignedSignatureProperties/SigningCertificateV2` (or v1) `/Cert/CertDigest`
/// must name the certificate that signed: else a substituted `KeyInfo` certificate with
/// the same key would pass unnoticed. Baseline B requires one, so none is refused.
fn check_signing_certificate(
    props: Node<'_, '_>,
    signer: &SignerCert,
) -> Result<(), SignatureError> {
    let xades = |name: &'static str| move |n: &Node<'_, '_>| n.has_tag_name((NS_XADES, name));
    let cert_digests: Vec<Node<'_, '_>> = props
        .children()
        .filter(xades("SignedSignatureProperties"))
        .flat_map(|p| p.children())
        .filter(|n| xades("SigningCertificateV2")(n) || xades("SigningCertificate")(n))
        .flat_map(|c| c.children())
        .filter(xades("Cert"))
        .flat_map(|c| c.children())
        .filter(xades("CertDigest"))
        .collect();
    if cert_digests.is_empty() {
        return Err(E::NoSigningCertificate);
    }
    for digest in cert_digests {
        let mut parts = digest.children().filter(Node::is_element);
        let (Some(method), Some(value)) = (parts.next(), parts.next()) else {
            continue;
        };
        let (Ok(hash), Some(value)) = (digest_algorithm(method), text::base64(value)) else {
            continue;
        };
        if hash.digest(signer.der()) == value {
            return Ok(());
        }
    }
    Err(E::SigningCertificateMismatch)
}
