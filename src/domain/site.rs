use std::fmt;
use std::str::FromStr;
use uuid::Uuid;

/// Identifier of a site configuration: a UUID, always rendered hyphenated lower-case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SiteId(Uuid);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("site id '{0}' is not a UUID")]
pub struct SiteIdError(pub String);

impl SiteId {
    pub fn generate() -> Self {
        Self(Uuid::new_v4())
    }

    pub fn parse(s: &str) -> Result<Self, SiteIdError> {
        Uuid::try_parse(s)
            .map(Self)
            .map_err(|_| SiteIdError(s.to_owned()))
    }
}

impl FromStr for SiteId {
    type Err = SiteIdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl fmt::Display for SiteId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0.hyphenated(), f)
    }
}

/// A site's human-readable name: 1 to 200 characters, no control characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteName(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SiteNameError {
    #[error("site name must not be empty")]
    Empty,
    #[error("site name must be at most 200 characters")]
    TooLong,
    #[error("site name must not contain control characters")]
    ControlCharacter,
}

impl SiteName {
    pub fn parse(s: &str) -> Result<Self, SiteNameError> {
        let s = s.trim();
        if s.is_empty() {
            Err(SiteNameError::Empty)
        } else if s.chars().count() > 200 {
            Err(SiteNameError::TooLong)
        } else if s.chars().any(char::is_control) {
            Err(SiteNameError::ControlCharacter)
        } else {
            Ok(Self(s.to_owned()))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// An absolute http(s) URL with a host: a site's redirect or webhook target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteUrl(url::Url);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SiteUrlError {
    #[error("'{0}' is not a valid URL")]
    Malformed(String),
    #[error("'{0}' must use http or https")]
    Scheme(String),
    #[error("'{0}' must not carry a username or password")]
    Userinfo(String),
}

impl SiteUrl {
    pub fn parse(s: &str) -> Result<Self, SiteUrlError> {
        let url = url::Url::parse(s).map_err(|_| SiteUrlError::Malformed(s.to_owned()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(SiteUrlError::Scheme(s.to_owned()));
        }
        if url.host().is_none() {
            return Err(SiteUrlError::Malformed(s.to_owned()));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(SiteUrlError::Userinfo(s.to_owned()));
        }
        Ok(Self(url))
    }

    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

/// Whether a site's wallet requests ask for a zero-knowledge proof of age
/// (docs/zk.md#zero-knowledge-proofs); it matters only on a server with circuits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ZkPolicy {
    /// Ask for a plain presentation only, as without circuits.
    Off,
    /// Ask for a proof or a plain presentation, the proof first.
    #[default]
    Prefer,
    /// Ask for a proof only; a plain answer is refused.
    Require,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the zero-knowledge policy must be off, prefer or require, not '{0}'")]
pub struct ZkPolicyError(pub String);

impl ZkPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            ZkPolicy::Off => "off",
            ZkPolicy::Prefer => "prefer",
            ZkPolicy::Require => "require",
        }
    }

    pub fn parse(s: &str) -> Result<Self, ZkPolicyError> {
        match s {
            "off" => Ok(ZkPolicy::Off),
            "prefer" => Ok(ZkPolicy::Prefer),
            "require" => Ok(ZkPolicy::Require),
            _ => Err(ZkPolicyError(s.to_owned())),
        }
    }
}

impl FromStr for ZkPolicy {
    type Err = ZkPolicyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl fmt::Display for ZkPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn site_ids_render_hyphenated_lowercase() {
        let id = SiteId::parse("6F9619FF-8B86-D011-B42D-00CF4FC964FF").unwrap();
        assert_eq!(id.to_string(), "6f9619ff-8b86-d011-b42d-00cf4fc964ff");
        assert!(SiteId::parse("not-a-uuid").is_err());
        assert!(SiteId::parse("").is_err());
    }

    #[test]
    fn site_names_are_trimmed_and_bounded() {
        assert_eq!(SiteName::parse("  Shop ").unwrap().as_str(), "Shop");
        assert_eq!(SiteName::parse("   "), Err(SiteNameError::Empty));
        assert_eq!(
            SiteName::parse(&"x".repeat(201)),
            Err(SiteNameError::TooLong)
        );
        assert_eq!(
            SiteName::parse("a\nb"),
            Err(SiteNameError::ControlCharacter)
        );
    }

    #[test]
    fn site_urls_must_be_absolute_http() {
        assert!(SiteUrl::parse("https://shop.example/done?x=1").is_ok());
        assert!(SiteUrl::parse("http://127.0.0.1:9000/hook").is_ok());
        assert!(matches!(
            SiteUrl::parse("ftp://x.example/"),
            Err(SiteUrlError::Scheme(_))
        ));
        assert!(matches!(
            SiteUrl::parse("/relative"),
            Err(SiteUrlError::Malformed(_))
        ));
        assert!(matches!(
            SiteUrl::parse("https://u:p@x.example/"),
            Err(SiteUrlError::Userinfo(_))
        ));
    }

    #[test]
    fn zk_policies_parse_and_print_and_default_to_prefer() {
        for p in [ZkPolicy::Off, ZkPolicy::Prefer, ZkPolicy::Require] {
            assert_eq!(ZkPolicy::parse(p.as_str()), Ok(p));
            assert_eq!(p.to_string(), p.as_str());
        }
        assert_eq!(ZkPolicy::default(), ZkPolicy::Prefer);
        assert_eq!(
            ZkPolicy::parse("Require").unwrap_err().to_string(),
            "the zero-knowledge policy must be off, prefer or require, not 'Require'"
        );
        assert!(ZkPolicy::parse("").is_err());
    }
}
