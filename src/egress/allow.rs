//! A host list (`network = ["api.github.com:443", "*.githubusercontent.com:443"]`) as the
//! proxy applies it: which names and ports a request may ask for, and which of the addresses
//! a name resolved to it may then reach.

use std::net::{IpAddr, SocketAddr};

use super::address::{Kind, canonical, kind};

/// One entry's host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    /// `*`: any name or address (public addresses only, as for any name).
    Any,
    /// An IP literal: that address, whatever its kind.
    Address(IpAddr),
    /// A name, lower case, without a trailing dot.
    Name(String),
    /// `*.example.com`: any name ending in `.example.com` (not `example.com` itself).
    Suffix(String),
}

impl Host {
    /// Parses an entry's host; `None` when it is not a host name, `*`, `*.name` or an
    /// IP literal.
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.strip_suffix('.').unwrap_or(text);
        if text == "*" {
            return Some(Self::Any);
        }
        if let Ok(address) = text.parse::<IpAddr>() {
            return Some(Self::Address(canonical(address)));
        }
        let lower = text.to_ascii_lowercase();
        match lower.strip_prefix("*.") {
            Some(suffix) => is_name(suffix).then(|| Self::Suffix(suffix.to_owned())),
            None => is_name(&lower).then_some(Self::Name(lower)),
        }
    }

    /// `localhost` or a name beneath it (RFC 6761 §6.3: loopback, never asked of DNS).
    pub fn is_localhost(&self) -> bool {
        match self {
            Self::Name(name) => name == "localhost" || name.ends_with(".localhost"),
            _ => false,
        }
    }

    /// A request's host, as the proxy reads it from `CONNECT host:port` or a URL.
    pub fn target(text: &str) -> Option<Self> {
        match Self::parse(text)? {
            Self::Any | Self::Suffix(_) => None,
            host => Some(host),
        }
    }

    /// Whether this entry's host covers a request's (or another entry's) host.
    pub fn covers(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Any, _) => true,
            (Self::Suffix(suffix), Self::Name(name) | Self::Suffix(name)) => {
                name.strip_suffix(suffix.as_str())
                    .is_some_and(|head| head.ends_with('.'))
                    || matches!(other, Self::Suffix(same) if same == suffix)
            }
            (mine, theirs) => mine == theirs,
        }
    }

    /// Names a host (not `*`, not an address).
    pub fn is_name(&self) -> bool {
        matches!(self, Self::Name(_) | Self::Suffix(_))
    }
}

impl std::fmt::Display for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Any => f.write_str("*"),
            Self::Address(IpAddr::V6(v6)) => write!(f, "[{v6}]"),
            Self::Address(address) => write!(f, "{address}"),
            Self::Name(name) => f.write_str(name),
            Self::Suffix(suffix) => write!(f, "*.{suffix}"),
        }
    }
}

/// Letters, digits, `-` and `_` in dot-separated labels of 1 to 63, at most 253 in all.
fn is_name(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 253
        && text.split('.').all(|label| {
            (1..=63).contains(&label.len())
                && label
                    .bytes()
                    .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
        })
        // Not all digits and dots: that is a mistyped address, not a name.
        && !text.bytes().all(|byte| byte.is_ascii_digit() || byte == b'.')
}

/// One entry: a host and a port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub host: Host,
    pub port: u16,
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.host, self.port)
    }
}

/// Why the list refuses a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No entry names this host.
    NotListed,
    /// An entry names this host, on another port.
    Port,
    /// The name resolved only to addresses of this kind, none listed literally.
    Address(Kind),
}

impl Refusal {
    /// The metric label and log word.
    pub fn label(self) -> &'static str {
        match self {
            Self::NotListed => "not-listed",
            Self::Port => "port",
            Self::Address(kind) => kind.label(),
        }
    }
}

/// A tool's host list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowance {
    pub rules: Vec<Rule>,
}

impl Allowance {
    /// Whether a request for `host:port` may go on to be resolved.
    pub fn admits(&self, host: &Host, port: u16) -> Result<(), Refusal> {
        let named = |rule: &&Rule| rule.host.covers(host);
        if self
            .rules
            .iter()
            .filter(named)
            .any(|rule| rule.port == port)
        {
            Ok(())
        } else if self.rules.iter().any(|rule| named(&rule)) {
            Err(Refusal::Port)
        } else {
            Err(Refusal::NotListed)
        }
    }

    /// Whether an address that an admitted request's `host` resolved to may be reached:
    /// public ones; others when an entry lists that address and port literally; loopback
    /// when the host is a `localhost` name (RFC 6761: it names loopback by definition) that
    /// an entry names on that port by name, not by `*`.
    pub fn admits_address(&self, host: &Host, address: SocketAddr) -> Result<(), Refusal> {
        let ip = canonical(address.ip());
        let on_port = |rule: &&Rule| rule.port == address.port();
        match kind(ip) {
            Kind::Public => Ok(()),
            _ if self
                .rules
                .iter()
                .filter(on_port)
                .any(|rule| rule.host == Host::Address(ip)) =>
            {
                Ok(())
            }
            Kind::Loopback
                if host.is_localhost()
                    && self
                        .rules
                        .iter()
                        .filter(on_port)
                        .any(|rule| rule.host != Host::Any && rule.host.covers(host)) =>
            {
                Ok(())
            }
            other => Err(Refusal::Address(other)),
        }
    }

    /// Every entry of `other` is covered by one of these (a tool may only narrow the
    /// server's list).
    pub fn covers(&self, other: &Self) -> bool {
        other.rules.iter().all(|wanted| {
            self.rules
                .iter()
                .any(|have| have.port == wanted.port && have.host.covers(&wanted.host))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowance(entries: &[(&str, u16)]) -> Allowance {
        Allowance {
            rules: entries
                .iter()
                .map(|(host, port)| Rule {
                    host: Host::parse(host).expect("a host"),
                    port: *port,
                })
                .collect(),
        }
    }

    fn target(text: &str) -> Host {
        Host::target(text).expect("a target")
    }

    #[test]
    fn names_suffixes_ports_and_addresses_are_matched_as_listed() {
        let list = allowance(&[
            ("api.github.com", 443),
            ("*.githubusercontent.com", 443),
            ("127.0.0.2", 8080),
        ]);
        assert_eq!(list.admits(&target("API.GitHub.com."), 443), Ok(()));
        assert_eq!(
            list.admits(&target("raw.githubusercontent.com"), 443),
            Ok(())
        );
        assert_eq!(
            list.admits(&target("a.b.githubusercontent.com"), 443),
            Ok(())
        );
        for unlisted in [
            "githubusercontent.com",
            "evilgithubusercontent.com",
            "api.github.com.evil.test",
            "github.com",
            "127.0.0.1",
        ] {
            assert_eq!(
                list.admits(&target(unlisted), 443),
                Err(Refusal::NotListed),
                "{unlisted}"
            );
        }
        assert_eq!(
            list.admits(&target("api.github.com"), 80),
            Err(Refusal::Port)
        );
        assert_eq!(list.admits(&target("127.0.0.2"), 8080), Ok(()));
        assert_eq!(list.admits(&target("::ffff:127.0.0.2"), 8080), Ok(()));
        assert_eq!(Host::target("*"), None);
        assert_eq!(Host::target("*.example.com"), None);
        assert_eq!(Host::parse("a*.example.com"), None);
        assert_eq!(Host::parse("1.2.3"), None);
        assert_eq!(Host::parse("exa mple.com"), None);
    }

    #[test]
    fn only_public_addresses_unless_the_very_address_is_listed() {
        let list = allowance(&[("one.test", 8080), ("127.0.0.2", 8080), ("*", 443)]);
        let at = |text: &str| text.parse::<SocketAddr>().expect("address");
        let one = target("one.test");
        assert_eq!(list.admits_address(&one, at("93.184.215.14:8080")), Ok(()));
        assert_eq!(list.admits_address(&one, at("127.0.0.2:8080")), Ok(()));
        assert_eq!(
            list.admits_address(&one, at("[::ffff:127.0.0.2]:8080")),
            Ok(())
        );
        assert_eq!(
            list.admits_address(&one, at("127.0.0.1:8080")),
            Err(Refusal::Address(Kind::Loopback))
        );
        assert_eq!(
            list.admits_address(&one, at("127.0.0.2:443")),
            Err(Refusal::Address(Kind::Loopback))
        );
        assert_eq!(
            list.admits_address(&one, at("169.254.169.254:443")),
            Err(Refusal::Address(Kind::Metadata))
        );
        assert_eq!(
            list.admits_address(&one, at("[fe80::1]:443")),
            Err(Refusal::Address(Kind::LinkLocal))
        );
    }

    #[test]
    fn localhost_names_loopback_when_a_list_names_it_and_never_through_a_star() {
        let at = |text: &str| text.parse::<SocketAddr>().expect("address");
        let list = allowance(&[("localhost", 8080), ("*.localhost", 9000), ("*", 443)]);
        for (host, address) in [
            ("localhost", "127.0.0.1:8080"),
            ("LOCALHOST.", "[::1]:8080"),
            ("app.localhost", "127.0.0.1:9000"),
        ] {
            let host = target(host);
            assert!(host.is_localhost());
            assert_eq!(list.admits_address(&host, at(address)), Ok(()), "{address}");
        }
        // Only loopback, only on the port named, never through `*`, never another name.
        let localhost = target("localhost");
        assert_eq!(
            list.admits_address(&localhost, at("10.0.0.1:8080")),
            Err(Refusal::Address(Kind::Private))
        );
        assert_eq!(
            list.admits_address(&localhost, at("127.0.0.1:443")),
            Err(Refusal::Address(Kind::Loopback))
        );
        assert_eq!(
            list.admits_address(&target("app.localhost"), at("127.0.0.1:8080")),
            Err(Refusal::Address(Kind::Loopback))
        );
        let named = allowance(&[("loop.test", 8080)]);
        assert_eq!(
            named.admits_address(&target("loop.test"), at("127.0.0.1:8080")),
            Err(Refusal::Address(Kind::Loopback)),
            "the control: a name that resolves to loopback is still refused"
        );
        assert!(!target("localhost.evil.test").is_localhost());
        assert!(!target("evillocalhost").is_localhost());
    }

    #[test]
    fn a_list_covers_only_what_it_would_admit() {
        let server = allowance(&[("*.example.com", 443), ("api.test", 443)]);
        assert!(server.covers(&allowance(&[("a.example.com", 443)])));
        assert!(server.covers(&allowance(&[("*.b.example.com", 443)])));
        assert!(server.covers(&allowance(&[("*.example.com", 443), ("api.test", 443)])));
        assert!(!server.covers(&allowance(&[("example.com", 443)])));
        assert!(!server.covers(&allowance(&[("api.test", 80)])));
        assert!(!server.covers(&allowance(&[("*", 443)])));
        assert!(allowance(&[("*", 443)]).covers(&server));
    }
}
