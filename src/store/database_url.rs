//! A database URL that cannot be printed with its password. [`DatabaseUrl`] keeps the
//! string as given (it is what connects), and its `Display` and `Debug` are the masked
//! form, so a log line, an error or a `{:?}` of a struct holding one never shows the
//! password by accident; only [`DatabaseUrl::expose`] hands out the raw string, for the
//! code that connects.
//!
//! The masking reads the URL the way the PostgreSQL driver does (user information up to
//! the first `@`, hosts separated by commas, parameters after `?`), and where that
//! reading is in any doubt it shows less, never more: a URL it cannot read is shown as
//! its scheme alone.

use std::convert::Infallible;
use std::fmt;
use std::str::FromStr;

/// What stands for a password that was there.
const MASK: &str = "***";

/// A database URL as the operator gave it; printed only masked (see the module's notes).
#[derive(Clone, PartialEq, Eq)]
pub struct DatabaseUrl(String);

impl DatabaseUrl {
    pub fn new(url: impl Into<String>) -> Self {
        Self(url.into())
    }

    /// The URL with its password, for connecting. Never for a message.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&mask_password(&self.0))
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DatabaseUrl({:?})", mask_password(&self.0))
    }
}

impl FromStr for DatabaseUrl {
    type Err = Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Self::new(s))
    }
}

impl From<&str> for DatabaseUrl {
    fn from(s: &str) -> Self {
        Self::new(s)
    }
}

impl From<String> for DatabaseUrl {
    fn from(s: String) -> Self {
        Self(s)
    }
}

impl From<&String> for DatabaseUrl {
    fn from(s: &String) -> Self {
        Self::new(s.as_str())
    }
}

impl From<&DatabaseUrl> for DatabaseUrl {
    fn from(u: &DatabaseUrl) -> Self {
        u.clone()
    }
}

/// A URL fit for logs: the password in its user information and the value of any
/// parameter whose name (decoded, in any case) contains `pass` replaced by `***`. A URL
/// that cannot be read that way, or any `SCHEME:` without `//` but `sqlite:PATH`, is
/// shown as `SCHEME:<not shown>`; text without a scheme as `<not shown>`.
pub fn mask_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once(':') else {
        return unreadable(None);
    };
    if scheme.is_empty()
        || !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return unreadable(None);
    }
    let Some(rest) = rest.strip_prefix("//") else {
        if !scheme.eq_ignore_ascii_case("sqlite") {
            return unreadable(Some(scheme));
        }
        // `sqlite:PATH`: a file, no user information; only parameters to mask.
        return match rest.split_once('?') {
            Some((path, query)) => format!("{scheme}:{path}?{}", mask_query(query)),
            None => url.to_owned(),
        };
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let mut shown = format!("{scheme}://");
    let hosts_start = match rest.find('@') {
        // The driver takes the user information up to the first `@` wherever it is: one
        // past the authority would make it read a path or parameters as a password.
        Some(at) if at >= authority_end => return unreadable(Some(scheme)),
        Some(_) => {
            // Up to the last `@` of the authority: an unencoded `@` in a password then
            // masks too much rather than shows a piece of it.
            let last_at = rest[..authority_end].rfind('@').unwrap_or(0);
            match rest[..last_at].split_once(':') {
                Some((user, _password)) => shown.push_str(&format!("{user}:{MASK}@")),
                None => shown.push_str(&format!("{}@", &rest[..last_at])),
            }
            last_at + 1
        }
        None => 0,
    };
    let after_authority = &rest[authority_end..];
    shown.push_str(&rest[hosts_start..authority_end]);
    match after_authority.split_once('?') {
        Some((path, query)) => {
            shown.push_str(path);
            shown.push('?');
            shown.push_str(&mask_query(query));
        }
        None => shown.push_str(after_authority),
    }
    shown
}

fn unreadable(scheme: Option<&str>) -> String {
    match scheme {
        Some(scheme) => format!("{scheme}:<not shown>"),
        None => "<not shown>".to_owned(),
    }
}

/// `a=1&password=x` → `a=1&password=***`. A part without `=` right after a password is
/// taken as the rest of it (an unencoded `&` in the password) and masked too; so is a part
/// without `=` whose name still reads as a password.
fn mask_query(query: &str) -> String {
    let mut in_password = false;
    let parts: Vec<String> = query
        .split('&')
        .map(|part| match part.split_once('=') {
            Some((key, _)) => {
                in_password = names_a_password(key);
                if in_password {
                    format!("{key}={MASK}")
                } else {
                    part.to_owned()
                }
            }
            None if in_password || names_a_password(part) => MASK.to_owned(),
            None => part.to_owned(),
        })
        .collect();
    parts.join("&")
}

/// Whether a parameter's name, percent- and `+`-decoded, in any case, around any spaces,
/// contains `pass` (libpq's `password`, and anything near it a driver might accept).
fn names_a_password(raw_key: &str) -> bool {
    let decoded: String = url::form_urlencoded::parse(raw_key.as_bytes())
        .map(|(k, v)| format!("{k}{v}"))
        .collect();
    let folded: String = decoded
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_lowercase();
    folded.contains("pass") || raw_key.to_ascii_lowercase().contains("pass")
}

#[cfg(test)]
#[path = "database_url_tests.rs"]
mod tests;
