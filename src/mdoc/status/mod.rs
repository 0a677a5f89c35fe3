//! Credential status (docs/credential-status.md): where an MSO says its status is
//! published (ISO/IEC 18013-5 second edition, 12.3.6), and the two kinds of list found
//! there — an IETF Token Status List (CWT form) and ISO's identifier list — checked and
//! read. Pure: no I/O, no clock (the caller passes `now`); total: every input gives a
//! value or an error, never a panic.

mod bits;
mod token;

#[cfg(test)]
mod tests;

use ciborium::Value;

use super::cbor::{self, Lookup};

pub use bits::{inflate_bounded, PackedStatuses, MAX_INFLATED};
pub use token::{ListToken, Signer, TokenError, MAX_TOKEN_BYTES};

/// Which of the two mechanisms a credential's status is published by, and its entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// `status_list`: the index of the credential's status in the Token Status List.
    Index(u64),
    /// `identifier_list`: the credential's identifier; present in the list is revoked.
    Identifier(Vec<u8>),
}

/// The two forms of list, as the `Accept` header, the token's `typ` and the database
/// name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ListForm {
    StatusList,
    IdentifierList,
}

impl ListForm {
    /// The media type: the `Accept` header of a fetch and the token's `typ` (16).
    pub fn media_type(self) -> &'static str {
        match self {
            ListForm::StatusList => "application/statuslist+cwt",
            ListForm::IdentifierList => "application/identifierlist+cwt",
        }
    }

    /// The member of the MSO's `status` that names it, which is also its name in the
    /// database, logs and `trust show`.
    pub fn as_str(self) -> &'static str {
        match self {
            ListForm::StatusList => "status_list",
            ListForm::IdentifierList => "identifier_list",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "status_list" => Some(ListForm::StatusList),
            "identifier_list" => Some(ListForm::IdentifierList),
            _ => None,
        }
    }
}

/// Where an MSO says the credential's status is published: `{"status_list": {"idx",
/// "uri", ? "certificate"}}` or `{"identifier_list": {"id", "uri", ? "certificate"}}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusRef {
    pub entry: Entry,
    /// The list's location, as the issuer signed it (checked by the fetcher).
    pub uri: String,
    /// The list signer's certificate (DER), when the issuer names it; otherwise the
    /// list's own `x5chain` must chain to an anchor of the credential's kind.
    pub certificate: Option<Vec<u8>>,
}

impl StatusRef {
    pub fn form(&self) -> ListForm {
        match self.entry {
            Entry::Index(_) => ListForm::StatusList,
            Entry::Identifier(_) => ListForm::IdentifierList,
        }
    }
}

/// What the MSO says of its status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatusClaim {
    /// The MSO has no `status`.
    Absent,
    /// A list to look in: the status list when both are named.
    Listed(StatusRef),
    /// A `status` that cannot be read; names the part at fault. The credential's status
    /// is then unknown (the issuer signed it, but nothing can be looked up).
    Malformed(&'static str),
    /// A zero-knowledge proof: the MSO, and so its status, is never shown.
    Hidden,
}

/// The MSO's `status` member (`None`: absent; `Some(Err(..))`: present twice).
pub(crate) fn parse_status(status: Result<&Value, Lookup>) -> StatusClaim {
    match status {
        Err(Lookup::Absent) => StatusClaim::Absent,
        Err(Lookup::Duplicate) => StatusClaim::Malformed("status appears twice"),
        Ok(value) => match listed(value) {
            Ok(r) => StatusClaim::Listed(r),
            Err(what) => StatusClaim::Malformed(what),
        },
    }
}

fn listed(value: &Value) -> Result<StatusRef, &'static str> {
    let map = cbor::as_map(value).ok_or("status is not a map")?;
    // With both named, the status list is used (docs/credential-status.md).
    match cbor::get(map, "status_list") {
        Ok(list) => return entry(list, ListForm::StatusList),
        Err(Lookup::Duplicate) => return Err("status_list appears twice"),
        Err(Lookup::Absent) => {}
    }
    match cbor::get(map, "identifier_list") {
        Ok(list) => entry(list, ListForm::IdentifierList),
        Err(Lookup::Duplicate) => Err("identifier_list appears twice"),
        Err(Lookup::Absent) => Err("status names neither status_list nor identifier_list"),
    }
}

fn entry(value: &Value, form: ListForm) -> Result<StatusRef, &'static str> {
    let map = cbor::as_map(value).ok_or(match form {
        ListForm::StatusList => "status_list is not a map",
        ListForm::IdentifierList => "identifier_list is not a map",
    })?;
    let entry = match form {
        ListForm::StatusList => cbor::get(map, "idx")
            .ok()
            .and_then(cbor::uint)
            .map(Entry::Index)
            .ok_or("status_list.idx is not an unsigned integer")?,
        ListForm::IdentifierList => cbor::get(map, "id")
            .ok()
            .and_then(Value::as_bytes)
            .map(|id| Entry::Identifier(id.clone()))
            .ok_or("identifier_list.id is not a byte string")?,
    };
    let uri = cbor::get(map, "uri")
        .ok()
        .and_then(Value::as_text)
        .filter(|uri| !uri.is_empty() && uri.len() <= 2048)
        .ok_or("uri is not a text of at most 2048 bytes")?
        .to_owned();
    let certificate = match cbor::get(map, "certificate") {
        Err(Lookup::Absent) => None,
        Ok(Value::Bytes(der)) => Some(der.clone()),
        _ => return Err("certificate is not a byte string"),
    };
    Ok(StatusRef {
        entry,
        uri,
        certificate,
    })
}
