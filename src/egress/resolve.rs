//! Name resolution for the proxy: the system's resolver (`getaddrinfo`, so `/etc/hosts`
//! too), or addresses pinned by [`RESOLVE_VARIABLE`], as curl's `--resolve` does.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};

use super::allow::Host;

/// `name=address[,name=address…]`: the proxy resolves `name` to these addresses only (a
/// name given twice gets both). For tests, and for pinning a name to known addresses.
pub const RESOLVE_VARIABLE: &str = "MCP_SERVE_RESOLVE";

/// Names pinned by [`RESOLVE_VARIABLE`].
#[derive(Debug, Default)]
pub(super) struct Overrides(HashMap<String, Vec<IpAddr>>);

impl Overrides {
    pub(super) fn from_environment() -> Self {
        std::env::var(RESOLVE_VARIABLE)
            .map(|text| Self::parse(&text))
            .unwrap_or_default()
    }

    fn parse(text: &str) -> Self {
        let mut pinned: HashMap<String, Vec<IpAddr>> = HashMap::new();
        for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let parsed = entry.split_once('=').and_then(|(name, address)| {
                let address = address.trim().trim_matches(['[', ']']).parse().ok()?;
                Some((name.trim().to_ascii_lowercase(), address))
            });
            if let Some((name, address)) = parsed {
                pinned.entry(name).or_default().push(address);
            } else {
                tracing::warn!("${RESOLVE_VARIABLE}: `{entry}` is not name=address");
            }
        }
        Self(pinned)
    }

    /// The addresses of `host:port`: an address is itself, a pinned name its pins, any
    /// other name what the system's resolver says, resolved once.
    pub(super) async fn resolve(&self, host: &Host, port: u16) -> std::io::Result<Vec<SocketAddr>> {
        let name = match host {
            Host::Address(address) => return Ok(vec![SocketAddr::new(*address, port)]),
            Host::Name(name) => name,
            Host::Any | Host::Suffix(_) => return Ok(Vec::new()),
        };
        if host.is_localhost() {
            // RFC 6761: loopback, whatever a resolver or a pin would say.
            return Ok(vec![
                SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, port)),
                SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, port)),
            ]);
        }
        if let Some(pinned) = self.0.get(name) {
            return Ok(pinned
                .iter()
                .map(|address| SocketAddr::new(*address, port))
                .collect());
        }
        Ok(tokio::net::lookup_host((name.as_str(), port))
            .await?
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn localhost_is_loopback_whatever_a_pin_says() {
        let pinned = Overrides::parse("localhost=10.0.0.1,app.localhost=10.0.0.2");
        for name in ["localhost", "app.localhost"] {
            let addresses = pinned
                .resolve(&Host::Name(name.into()), 80)
                .await
                .expect("loopback");
            assert_eq!(
                addresses,
                [
                    "127.0.0.1:80".parse::<SocketAddr>().expect("v4"),
                    "[::1]:80".parse().expect("v6")
                ],
                "{name}"
            );
        }
    }

    #[tokio::test]
    async fn pinned_names_resolve_to_their_pins_only() {
        let pinned = Overrides::parse("One.test=127.0.0.1, one.test=[::1],two.test=127.0.0.2,bad");
        let one = pinned
            .resolve(&Host::Name("one.test".into()), 80)
            .await
            .expect("pinned");
        assert_eq!(
            one,
            [
                "127.0.0.1:80".parse::<SocketAddr>().expect("v4"),
                "[::1]:80".parse().expect("v6")
            ]
        );
        let address = pinned
            .resolve(&Host::Address("10.0.0.1".parse().expect("v4")), 8080)
            .await
            .expect("an address");
        assert_eq!(
            address,
            ["10.0.0.1:8080".parse::<SocketAddr>().expect("v4")]
        );
    }
}
