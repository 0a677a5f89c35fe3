//! Signed requests by reference (docs/wallets.md#signed-requests-by-reference): which
//! wallet links a gateway page shows, the by-reference link itself and the request
//! URI it names. No I/O; the request object is built and signed in [`crate::dcapi`].

/// The scheme of the by-reference link by default: HAIP 1.0's.
pub const DEFAULT_SIGNED_WALLET_SCHEME: &str = "haip-vp";

/// Which wallet links the pending page shows (`--wallet-links`); the Digital
/// Credentials API is offered either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalletLinks {
    /// The unsigned request by value only (the EU Age Verification app).
    Value,
    /// The signed request by reference only (EUDI wallets, Multipaz and others).
    Reference,
    Both,
}

impl WalletLinks {
    pub fn parse(s: &str) -> Result<Self, String> {
        match s.trim() {
            "value" => Ok(WalletLinks::Value),
            "reference" => Ok(WalletLinks::Reference),
            "both" => Ok(WalletLinks::Both),
            other => Err(format!("'{other}' is not value, reference or both")),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            WalletLinks::Value => "value",
            WalletLinks::Reference => "reference",
            WalletLinks::Both => "both",
        }
    }

    pub fn by_value(self) -> bool {
        matches!(self, WalletLinks::Value | WalletLinks::Both)
    }

    pub fn by_reference(self) -> bool {
        matches!(self, WalletLinks::Reference | WalletLinks::Both)
    }
}

/// Where a wallet fetches request `request_id` of the invite whose page is `gateway_url`.
pub fn request_uri(gateway_url: &str, request_id: &str) -> String {
    format!("{gateway_url}/request/{request_id}")
}

/// `{scheme}://authorize?client_id=…&request_uri=…&request_uri_method=post`: a few
/// hundred characters whatever the request offers.
pub fn by_reference_uri(scheme: &str, client_id: &str, request_uri: &str) -> String {
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("client_id", client_id)
        .append_pair("request_uri", request_uri)
        .append_pair("request_uri_method", "post")
        .finish();
    format!("{scheme}://authorize?{query}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wallet_links_parse() {
        assert_eq!(WalletLinks::parse("both"), Ok(WalletLinks::Both));
        assert_eq!(WalletLinks::parse("value"), Ok(WalletLinks::Value));
        assert_eq!(WalletLinks::parse("reference"), Ok(WalletLinks::Reference));
        assert!(WalletLinks::parse("all").is_err());
        assert!(WalletLinks::Both.by_value() && WalletLinks::Both.by_reference());
        assert!(!WalletLinks::Reference.by_value());
        assert!(!WalletLinks::Value.by_reference());
    }

    #[test]
    fn the_by_reference_link_is_short_and_encoded() {
        let client_id = format!("x509_hash:{}", "A".repeat(43));
        let request_uri = request_uri(
            "https://age.example/gateway/inv_0123456789abcdefghijklmnopq",
            &"r".repeat(22),
        );
        let link = by_reference_uri("haip-vp", &client_id, &request_uri);
        assert!(
            link.starts_with("haip-vp://authorize?client_id=x509_hash%3AAAA"),
            "{link}"
        );
        assert!(link.ends_with("&request_uri_method=post"), "{link}");
        assert!(link.contains("request_uri=https%3A%2F%2Fage.example%2Fgateway%2F"));
        assert!(link.len() < 400, "{}", link.len());
    }
}
