//! Refuses webhook targets on loopback, private, link-local and other non-public
//! networks (server-side request forgery), unless explicitly allowed. The check is on
//! the resolved addresses, and the client connects only to addresses that passed, so a
//! name that resolves to a private address (or changes its answer) cannot slip through.

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Whether `ip` is an ordinary public unicast address.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_documentation()
        || ip.is_multicast()
        || a == 0                                  // "this network"
        || (a == 100 && (64..128).contains(&b))    // shared address space (CGNAT)
        || (a == 192 && b == 0 && c == 0)          // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19))      // benchmarking
        || a >= 240) // reserved
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let s = ip.segments();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (s[0] & 0xfe00) == 0xfc00                 // unique local
        || (s[0] & 0xffc0) == 0xfe80                 // link-local
        || (s[0] & 0xffc0) == 0xfec0                 // site-local (deprecated)
        || (s[0] == 0x2001 && s[1] == 0x0db8)        // documentation
        || (s[0] == 0x2001 && s[1] < 0x0200)         // Teredo, benchmarking, ORCHID...
        || s[0] == 0x2002                            // 6to4: embeds an IPv4 address
        || (s[0] == 0x0064 && s[1] == 0xff9b)        // NAT64: embeds an IPv4 address
        || (s[0] == 0 && s[1] == 0 && s[2] == 0 && s[3] == 0 && s[4] == 0 && s[5] == 0))
    // IPv4-compatible
}

#[derive(Debug, thiserror::Error)]
#[error("refused: {host} resolves to a non-public address ({ip}); see --allow-private-webhooks")]
pub struct PrivateAddress {
    pub host: String,
    pub ip: IpAddr,
}

/// Checks a URL whose host is an IP literal (the resolver never sees those).
pub fn check_literal(url: &url::Url, allow_private: bool) -> Result<(), PrivateAddress> {
    let ip = match url.host() {
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip),
        _ => return Ok(()),
    };
    if allow_private || is_public(ip) {
        Ok(())
    } else {
        Err(PrivateAddress {
            host: ip.to_string(),
            ip,
        })
    }
}

/// A DNS resolver for the webhook client that drops the whole answer when any address
/// in it is not public.
#[derive(Debug, Clone, Copy)]
pub struct GuardedResolver {
    pub allow_private: bool,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if !allow_private {
                if let Some(bad) = addrs.iter().find(|a| !is_public(a.ip())) {
                    return Err(Box::new(PrivateAddress { host, ip: bad.ip() })
                        as Box<dyn std::error::Error + Send + Sync>);
                }
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn non_public_addresses_are_refused() {
        for s in [
            "127.0.0.1",
            "127.1.2.3",
            "10.0.0.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "192.0.2.1",
            "198.18.0.1",
            "240.0.0.1",
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "2001:db8::1",
            "64:ff9b::a00:1",
            "2002:a00:1::",
        ] {
            assert!(!is_public(ip(s)), "{s} should be refused");
        }
    }

    #[test]
    fn public_addresses_are_allowed() {
        for s in [
            "1.1.1.1",
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "2a00:1450::1",
            "::ffff:1.1.1.1",
        ] {
            assert!(is_public(ip(s)), "{s} should be allowed");
        }
    }

    #[test]
    fn ip_literal_urls_are_checked_unless_allowed() {
        let url = url::Url::parse("http://127.0.0.1:9000/hook").unwrap();
        assert!(check_literal(&url, false).is_err());
        assert!(check_literal(&url, true).is_ok());
        let url = url::Url::parse("http://[::1]/hook").unwrap();
        assert!(check_literal(&url, false).is_err());
        let url = url::Url::parse("https://hooks.example/x").unwrap();
        assert!(check_literal(&url, false).is_ok());
    }
}
