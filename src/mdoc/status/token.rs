//! A Status List Token or identifier list in CWT form (COSE_Sign1, ES256 or ES384): its
//! `typ`, claims and content ([`ListToken::parse`]), then whether the credential's
//! issuer stands behind its signer ([`ListToken::check_signer`]). The two steps are
//! apart because one fetched list serves many credentials, each naming its signer.

use std::collections::HashSet;

use ciborium::Value;
use coset::Label;

use super::bits::{inflate_bounded, PackedStatuses, MAX_INFLATED};
use super::ListForm;
use crate::mdoc::cose::{Sign1, Sign1Error, ALG_ES256, ALG_ES384};
use crate::mdoc::{PresentationError, TrustAnchors};
use crate::pki::{Cert, CertError, PublicKey};

/// Largest token accepted, as fetched.
pub const MAX_TOKEN_BYTES: usize = 4 * 1024 * 1024;
/// Deepest CBOR nesting accepted in a token or its claims: a list needs five.
const MAX_DEPTH: usize = 16;
/// Longest x5chain accepted.
const MAX_CHAIN: usize = 8;

const LABEL_TYP: i64 = 16;
const CLAIM_SUB: i64 = 2;
const CLAIM_EXP: i64 = 4;
const CLAIM_IAT: i64 = 6;
const CLAIM_IDENTIFIER_LIST: i64 = 65530;
const CLAIM_STATUS_LIST: i64 = 65533;
const CLAIM_TTL: i64 = 65534;

/// Why a list token is refused. Display is one short line for logs and refusals.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("larger than {MAX_TOKEN_BYTES} bytes")]
    TooLarge,
    #[error("not one cbor item nested at most {MAX_DEPTH} levels")]
    NotCbor,
    #[error("not a cose_sign1: {0}")]
    NotSign1(&'static str),
    #[error("signature algorithm is not es256 or es384")]
    UnsupportedAlgorithm,
    #[error("protected typ is not {0}")]
    WrongType(&'static str),
    #[error("payload is detached")]
    DetachedPayload,
    #[error("malformed claims: {0}")]
    MalformedClaims(&'static str),
    #[error("sub is not the uri the credential names")]
    WrongSubject,
    #[error("the list has expired (exp passed)")]
    Expired,
    #[error("lst does not inflate to at most {MAX_INFLATED} bytes")]
    Inflate,
    #[error("no x5chain and no certificate named by the credential")]
    MissingX5chain,
    #[error("malformed signer certificate: {0}")]
    MalformedCertificate(String),
    #[error("the list's signer does not chain to an anchor of the credential's kind")]
    UntrustedSigner,
    #[error("the list's signer certificate is not valid now: {0}")]
    SignerValidity(String),
    #[error("signature algorithm does not match the signer's key")]
    AlgorithmKeyMismatch,
    #[error("signature is invalid")]
    SignatureInvalid,
}

use TokenError as E;

/// What a list holds.
#[derive(Debug, Clone)]
pub enum Content {
    Statuses(PackedStatuses),
    /// Identifiers of revoked credentials.
    Identifiers(HashSet<Vec<u8>>),
}

/// Who must have signed a list, by the credential's word.
#[derive(Debug, Clone, Copy)]
pub enum Signer<'a> {
    /// The MSO status's `certificate` (DER).
    Certificate(&'a [u8]),
    /// No certificate named: the token's `x5chain` leaf, chaining to these anchors (the
    /// credential's kind's).
    Anchors(&'a TrustAnchors),
}

/// A list token whose structure, `typ`, `sub` and content hold; its signer is checked
/// apart ([`ListToken::check_signer`]).
#[derive(Debug)]
pub struct ListToken {
    pub form: ListForm,
    pub iat: i64,
    pub exp: Option<i64>,
    /// Seconds the list may be used before it should be fetched again.
    pub ttl: Option<u64>,
    pub content: Content,
    sign1: Sign1,
    alg: i64,
    /// Bytes held by the token as received (its signature covers them).
    size: usize,
}

impl ListToken {
    /// Parses `bytes` as a list of `form` published at `uri`, at `now` (Unix seconds):
    /// COSE_Sign1 (tag 18 optional) with ES256 or ES384, protected `typ` the form's media
    /// type, claims `sub` = `uri`, `iat`, `exp` not passed (required for identifier
    /// lists), `ttl` optional, and the form's content.
    pub fn parse(bytes: &[u8], form: ListForm, uri: &str, now: i64) -> Result<Self, TokenError> {
        if bytes.len() > MAX_TOKEN_BYTES {
            return Err(E::TooLarge);
        }
        let value = decode(bytes)?;
        let (sign1, alg) = Sign1::parse_any_alg(&value).map_err(|e| match e {
            Sign1Error::Malformed(what) => E::NotSign1(what),
            Sign1Error::NotEs256 => E::UnsupportedAlgorithm,
        })?;
        let alg = alg
            .filter(|a| [ALG_ES256, ALG_ES384].contains(a))
            .ok_or(E::UnsupportedAlgorithm)?;
        let typ = sign1
            .protected_header(Label::Int(LABEL_TYP))
            .and_then(Value::as_text);
        if typ != Some(form.media_type()) {
            return Err(E::WrongType(form.media_type()));
        }
        let payload = sign1.payload().ok_or(E::DetachedPayload)?;
        let claims = decode(payload)?;
        let claims = claims
            .as_map()
            .ok_or(E::MalformedClaims("not a map"))?
            .as_slice();
        let sub = claim(claims, CLAIM_SUB)?
            .and_then(Value::as_text)
            .ok_or(E::MalformedClaims("sub"))?;
        if sub != uri {
            return Err(E::WrongSubject);
        }
        let iat = claim(claims, CLAIM_IAT)?
            .and_then(int)
            .ok_or(E::MalformedClaims("iat"))?;
        let exp = match claim(claims, CLAIM_EXP)? {
            None => None,
            Some(v) => Some(int(v).ok_or(E::MalformedClaims("exp"))?),
        };
        if exp.is_some_and(|exp| exp <= now) {
            return Err(E::Expired);
        }
        let ttl = match claim(claims, CLAIM_TTL)? {
            None => None,
            Some(v) => Some(
                super::super::cbor::uint(v)
                    .filter(|t| *t > 0)
                    .ok_or(E::MalformedClaims("ttl"))?,
            ),
        };
        let status_list = claim(claims, CLAIM_STATUS_LIST)?;
        let identifier_list = claim(claims, CLAIM_IDENTIFIER_LIST)?;
        let content = match (form, status_list, identifier_list) {
            (ListForm::StatusList, Some(list), None) => Content::Statuses(statuses(list)?),
            (ListForm::StatusList, _, _) => {
                return Err(E::MalformedClaims(
                    "a status list has status_list (65533) and no identifier list",
                ))
            }
            (ListForm::IdentifierList, None, Some(list)) if exp.is_some() => {
                Content::Identifiers(identifiers(list)?)
            }
            (ListForm::IdentifierList, None, Some(_)) => {
                return Err(E::MalformedClaims("an identifier list has exp"))
            }
            (ListForm::IdentifierList, _, _) => {
                return Err(E::MalformedClaims(
                    "an identifier list has its list (65530) and no status_list",
                ))
            }
        };
        Ok(ListToken {
            form,
            iat,
            exp,
            ttl,
            content,
            sign1,
            alg,
            size: bytes.len(),
        })
    }

    /// Whether `signer` signed this list, at `now`: the named certificate's key, valid
    /// now; or the token's x5chain leaf, chaining (through CA intermediates in the chain)
    /// to one of the anchors, every certificate followed valid now.
    pub fn check_signer(&self, signer: Signer<'_>, now: i64) -> Result<(), TokenError> {
        let cert_error = |e: CertError| match e {
            CertError::Malformed(why) | CertError::UnsupportedKey(why) => {
                E::MalformedCertificate(why)
            }
        };
        let key_cert = match signer {
            Signer::Certificate(der) => {
                let cert = Cert::from_der_ec(der).map_err(cert_error)?;
                let (not_before, not_after) = cert.validity();
                if now < not_before {
                    return Err(E::SignerValidity("not yet valid".into()));
                }
                if now > not_after {
                    return Err(E::SignerValidity("expired".into()));
                }
                cert
            }
            Signer::Anchors(anchors) => {
                let chain = match self.sign1.x5chain() {
                    None => return Err(E::MissingX5chain),
                    Some(Err(what)) => return Err(E::MalformedCertificate(what.into())),
                    Some(Ok(chain)) if chain.len() > MAX_CHAIN => {
                        return Err(E::MalformedCertificate("x5chain is too long".into()))
                    }
                    Some(Ok(chain)) => chain
                        .into_iter()
                        .map(Cert::from_der_ec)
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(cert_error)?,
                };
                anchors.check_chain(&chain, now).map_err(|e| match e {
                    PresentationError::UntrustedIssuer => E::UntrustedSigner,
                    other => E::SignerValidity(other.to_string()),
                })?;
                chain.into_iter().next().ok_or(E::MissingX5chain)?
            }
        };
        match (&key_cert.key, self.alg) {
            (PublicKey::P256(_), ALG_ES256) | (PublicKey::P384(_), ALG_ES384) => {}
            _ => return Err(E::AlgorithmKeyMismatch),
        }
        if self.sign1.verify_ec(&key_cert.key) {
            Ok(())
        } else {
            Err(E::SignatureInvalid)
        }
    }

    /// Bytes this list holds in memory: the token as received and its content.
    pub fn held_bytes(&self) -> usize {
        let content = match &self.content {
            Content::Statuses(s) => s.held_bytes(),
            Content::Identifiers(ids) => ids.iter().map(|id| id.len() + 24).sum(),
        };
        self.size + content
    }

    /// The status of `entry`: 0 valid, 1 revoked (an identifier present), 2 suspended,
    /// others as the list says; `None` past the list's end or for the other form's entry.
    pub fn status_of(&self, entry: &super::Entry) -> Option<u8> {
        match (&self.content, entry) {
            (Content::Statuses(s), super::Entry::Index(i)) => s.get(*i),
            (Content::Identifiers(ids), super::Entry::Identifier(id)) => {
                Some(u8::from(ids.contains(id)))
            }
            _ => None,
        }
    }

    /// The token's size as received.
    pub fn size(&self) -> usize {
        self.size
    }

    /// How many entries it lists.
    pub fn entries(&self) -> u64 {
        match &self.content {
            Content::Statuses(s) => s.len(),
            Content::Identifiers(ids) => u64::try_from(ids.len()).unwrap_or(u64::MAX),
        }
    }
}

fn decode(bytes: &[u8]) -> Result<Value, TokenError> {
    let mut rest = bytes;
    let value: Value = ciborium::de::from_reader_with_recursion_limit(&mut rest, MAX_DEPTH)
        .map_err(|_| E::NotCbor)?;
    if rest.is_empty() {
        Ok(value)
    } else {
        Err(E::NotCbor)
    }
}

/// The claim under integer key `key`; a claim present twice is refused.
fn claim(claims: &[(Value, Value)], key: i64) -> Result<Option<&Value>, TokenError> {
    let mut found = claims
        .iter()
        .filter(|(k, _)| k.as_integer() == Some(key.into()))
        .map(|(_, v)| v);
    match (found.next(), found.next()) {
        (_, Some(_)) => Err(E::MalformedClaims("a claim appears twice")),
        (v, None) => Ok(v),
    }
}

fn int(value: &Value) -> Option<i64> {
    value
        .as_integer()
        .and_then(|i| i64::try_from(i128::from(i)).ok())
}

/// `status_list` (65533): `{"bits": 1|2|4|8, "lst": bstr}`, `lst` inflated.
fn statuses(list: &Value) -> Result<PackedStatuses, TokenError> {
    const WHAT: TokenError = E::MalformedClaims("status_list");
    let map = list.as_map().ok_or(WHAT)?;
    let field = |name: &str| super::super::cbor::get(map, name).map_err(|_| WHAT);
    let bits = super::super::cbor::uint(field("bits")?).ok_or(WHAT)?;
    let lst = field("lst")?.as_bytes().ok_or(WHAT)?;
    let bytes = inflate_bounded(lst, MAX_INFLATED).ok_or(E::Inflate)?;
    PackedStatuses::new(bits, bytes).ok_or(E::MalformedClaims("status_list.bits"))
}

/// The identifier list (65530): `{"identifiers": {id: {...}, ...}}`.
fn identifiers(list: &Value) -> Result<HashSet<Vec<u8>>, TokenError> {
    const WHAT: TokenError = E::MalformedClaims("identifier_list");
    let map = list.as_map().ok_or(WHAT)?;
    let ids = super::super::cbor::get(map, "identifiers")
        .map_err(|_| WHAT)?
        .as_map()
        .ok_or(WHAT)?;
    let mut out = HashSet::with_capacity(ids.len());
    for (id, _) in ids {
        let id = id.as_bytes().ok_or(WHAT)?;
        if !out.insert(id.clone()) {
            return Err(E::MalformedClaims("an identifier appears twice"));
        }
    }
    Ok(out)
}
