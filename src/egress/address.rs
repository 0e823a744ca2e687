//! What kind of address a name resolved to: the proxy reaches public addresses for a listed
//! name, and any other kind only when the list names that very address.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// An address's kind; everything but [`Kind::Public`] is refused unless listed literally.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Public,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918, shared (CGNAT) `100.64.0.0/10`, IPv6 unique local `fc00::/7` and the
    /// deprecated site-local `fec0::/10`.
    Private,
    /// `169.254.0.0/16`, `fe80::/10`.
    LinkLocal,
    /// Cloud instance metadata: `169.254.169.254`, `fd00:ec2::254`, `100.100.100.200`.
    Metadata,
    /// `0.0.0.0/8`, `::`.
    Unspecified,
    Multicast,
    /// Broadcast, `240.0.0.0/4`, the IETF's `192.0.0.0/24`, benchmarking `198.18.0.0/15`,
    /// documentation ranges.
    Reserved,
}

impl Kind {
    /// The metric label and log word.
    pub fn label(self) -> &'static str {
        match self {
            Self::Public => "public",
            Self::Loopback => "loopback",
            Self::Private => "private",
            Self::LinkLocal => "link-local",
            Self::Metadata => "metadata",
            Self::Unspecified => "unspecified",
            Self::Multicast => "multicast",
            Self::Reserved => "reserved",
        }
    }
}

/// The address as the kernel would route it: an IPv4-mapped (`::ffff:a.b.c.d`),
/// IPv4-compatible or NAT64 (`64:ff9b::a.b.c.d`) IPv6 address is its IPv4 address.
pub fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => embedded_v4(v6).map_or(address, IpAddr::V4),
        IpAddr::V4(_) => address,
    }
}

fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = v6.to_ipv4_mapped() {
        return Some(v4);
    }
    let segments = v6.segments();
    let octets = v6.octets();
    let tail = Ipv4Addr::new(octets[12], octets[13], octets[14], octets[15]);
    // NAT64's well-known prefix, and the deprecated IPv4-compatible form (not `::`, `::1`).
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(tail);
    }
    if segments[..6] == [0; 6] && u32::from(tail) > 1 {
        return Some(tail);
    }
    None
}

/// The kind of `address` (IPv4 inside IPv6 judged as IPv4).
pub fn kind(address: IpAddr) -> Kind {
    match canonical(address) {
        IpAddr::V4(v4) => kind_v4(v4),
        IpAddr::V6(v6) => kind_v6(v6),
    }
}

fn kind_v4(v4: Ipv4Addr) -> Kind {
    let [a, b, c, _] = v4.octets();
    if v4 == Ipv4Addr::new(169, 254, 169, 254) || v4 == Ipv4Addr::new(100, 100, 100, 200) {
        Kind::Metadata
    } else if a == 0 {
        Kind::Unspecified
    } else if v4.is_loopback() {
        Kind::Loopback
    } else if v4.is_private() || (a == 100 && (64..128).contains(&b)) {
        Kind::Private
    } else if v4.is_link_local() {
        Kind::LinkLocal
    } else if v4.is_multicast() {
        Kind::Multicast
    } else if a >= 240
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (18..20).contains(&b))
        || v4.is_documentation()
    {
        Kind::Reserved
    } else {
        Kind::Public
    }
}

fn kind_v6(v6: Ipv6Addr) -> Kind {
    let first = v6.segments()[0];
    if v6 == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        Kind::Metadata
    } else if v6.is_unspecified() {
        Kind::Unspecified
    } else if v6.is_loopback() {
        Kind::Loopback
    } else if first & 0xfe00 == 0xfc00 || first & 0xffc0 == 0xfec0 {
        Kind::Private
    } else if first & 0xffc0 == 0xfe80 {
        Kind::LinkLocal
    } else if v6.is_multicast() {
        Kind::Multicast
    } else if first == 0x2001 && v6.segments()[1] == 0x0db8 {
        Kind::Reserved
    } else if first & 0xe000 == 0x2000 {
        Kind::Public
    } else {
        // Outside global unicast `2000::/3`: nothing a tool needs.
        Kind::Reserved
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(text: &str) -> Kind {
        kind(text.parse().expect("an address"))
    }

    #[test]
    fn every_kind_of_address_is_told_apart_in_both_families() {
        for (address, expected) in [
            ("93.184.215.14", Kind::Public),
            ("2606:2800:21f:cb07:6820:80da:af6b:8b2c", Kind::Public),
            ("127.0.0.2", Kind::Loopback),
            ("::1", Kind::Loopback),
            ("::ffff:127.0.0.1", Kind::Loopback),
            ("10.1.2.3", Kind::Private),
            ("172.16.0.1", Kind::Private),
            ("192.168.1.1", Kind::Private),
            ("100.64.0.1", Kind::Private),
            ("fd12::1", Kind::Private),
            ("fec0::1", Kind::Private),
            ("::ffff:10.0.0.1", Kind::Private),
            ("169.254.1.1", Kind::LinkLocal),
            ("fe80::1", Kind::LinkLocal),
            ("169.254.169.254", Kind::Metadata),
            ("::ffff:169.254.169.254", Kind::Metadata),
            ("64:ff9b::a9fe:a9fe", Kind::Metadata),
            ("::169.254.169.254", Kind::Metadata),
            ("fd00:ec2::254", Kind::Metadata),
            ("100.100.100.200", Kind::Metadata),
            ("0.0.0.0", Kind::Unspecified),
            ("::", Kind::Unspecified),
            ("224.0.0.1", Kind::Multicast),
            ("ff02::1", Kind::Multicast),
            ("255.255.255.255", Kind::Reserved),
            ("192.0.0.170", Kind::Reserved),
            ("198.18.0.1", Kind::Reserved),
            ("2001:db8::1", Kind::Reserved),
            ("::ffff:0.0.0.0", Kind::Unspecified),
        ] {
            assert_eq!(of(address), expected, "{address}");
        }
        assert_eq!(
            canonical("::ffff:93.184.215.14".parse().expect("address")),
            "93.184.215.14".parse::<IpAddr>().expect("address")
        );
    }
}
