//! Who the client is behind a reverse proxy (`--trusted-proxy`): a connection from a listed
//! proxy names its client in `X-Forwarded-For`, read from the right, as nginx's
//! `real_ip_recursive` does: each address a trusted proxy appended is skipped, and the first
//! one that is not a trusted proxy is the client. A connection from anyone else is its own
//! client whatever it sends, so the header cannot be forged past the proxies one trusts.
//! The address found is what per-caller rate limits, task bounds, audit records and traces
//! name (`ClientAddress`); the connection budget counts the proxy's connections.

use std::net::IpAddr;

use axum::http::HeaderMap;

/// An address or a network (`10.0.0.0/8`, `fd00::/8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    address: IpAddr,
    prefix: u8,
}

/// Why a `--trusted-proxy` value is not an address or a network.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not an IP address or a network such as 10.0.0.0/8")]
pub struct NotANetwork(String);

impl std::str::FromStr for Network {
    type Err = NotANetwork;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let wrong = || NotANetwork(text.to_owned());
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let address: IpAddr = address.parse().map_err(|_| wrong())?;
        let most = if address.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(prefix) => prefix
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= most)
                .ok_or_else(wrong)?,
            None => most,
        };
        Ok(Self { address, prefix })
    }
}

impl Network {
    fn contains(self, address: IpAddr) -> bool {
        let address = canonical(address);
        match (canonical(self.address), address) {
            (IpAddr::V4(network), IpAddr::V4(address)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(network) & mask == u32::from(address) & mask
            }
            (IpAddr::V6(network), IpAddr::V6(address)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(network) & mask == u128::from(address) & mask
            }
            _ => false,
        }
    }
}

/// IPv4 inside IPv6 (`::ffff:10.0.0.1`) as the IPv4 address it is.
fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        IpAddr::V4(_) => address,
    }
}

/// The proxies whose `X-Forwarded-For` is believed.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Vec<Network>);

impl TrustedProxies {
    pub fn new(networks: Vec<Network>) -> Self {
        Self(networks)
    }

    fn trusts(&self, address: IpAddr) -> bool {
        self.0.iter().any(|network| network.contains(address))
    }

    /// The client of a connection from `peer` that sent `headers`.
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        if !self.trusts(peer) {
            return peer;
        }
        let mut client = peer;
        let hops = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .collect::<Vec<_>>();
        for hop in hops.iter().rev() {
            // A hop that is no address ends the chain: what is left of it cannot be believed.
            let Ok(address) = hop.trim().parse::<IpAddr>() else {
                break;
            };
            client = address;
            if !self.trusts(address) {
                break;
            }
        }
        client
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proxies(list: &[&str]) -> TrustedProxies {
        TrustedProxies::new(list.iter().map(|n| n.parse().expect("network")).collect())
    }

    fn forwarded(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append("x-forwarded-for", value.parse().expect("value"));
        }
        headers
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().expect("ip")
    }

    #[test]
    fn only_a_trusted_proxy_names_the_client() {
        let trusted = proxies(&["10.0.0.0/8", "::1"]);
        let headers = forwarded(&["198.51.100.7"]);
        assert_eq!(trusted.client(ip("10.1.2.3"), &headers), ip("198.51.100.7"));
        assert_eq!(trusted.client(ip("::1"), &headers), ip("198.51.100.7"));
        assert_eq!(
            trusted.client(ip("192.0.2.9"), &headers),
            ip("192.0.2.9"),
            "anyone else's header is ignored"
        );
        assert_eq!(
            trusted.client(ip("10.1.2.3"), &HeaderMap::new()),
            ip("10.1.2.3")
        );
    }

    #[test]
    fn the_chain_is_read_from_the_right_past_trusted_hops_only() {
        let trusted = proxies(&["10.0.0.0/8"]);
        // A client that sends its own X-Forwarded-For: the proxy appends the real address.
        let headers = forwarded(&["203.0.113.66, 198.51.100.7, 10.0.0.2"]);
        assert_eq!(trusted.client(ip("10.0.0.1"), &headers), ip("198.51.100.7"));
        let split = forwarded(&["203.0.113.66", "198.51.100.7"]);
        assert_eq!(trusted.client(ip("10.0.0.1"), &split), ip("198.51.100.7"));
        let garbage = forwarded(&["203.0.113.66, nonsense, 10.0.0.2"]);
        assert_eq!(trusted.client(ip("10.0.0.1"), &garbage), ip("10.0.0.2"));
        let mapped = forwarded(&["::ffff:10.0.0.3, ::ffff:10.9.9.9"]);
        assert_eq!(
            trusted.client(ip("10.0.0.1"), &mapped),
            ip("::ffff:10.0.0.3")
        );
    }

    #[test]
    fn networks_parse_and_contain() {
        let network: Network = "192.0.2.0/24".parse().expect("v4");
        assert!(network.contains(ip("192.0.2.200")) && !network.contains(ip("192.0.3.1")));
        assert!(network.contains(ip("::ffff:192.0.2.1")));
        let all: Network = "0.0.0.0/0".parse().expect("all");
        assert!(all.contains(ip("8.8.8.8")));
        for wrong in ["10.0.0.0/33", "fd00::/129", "host", "10.0.0.0/x", ""] {
            assert!(wrong.parse::<Network>().is_err(), "{wrong}");
        }
    }
}
