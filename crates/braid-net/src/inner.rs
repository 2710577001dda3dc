//! The addresses of an inner IP packet, for cryptokey routing (WireGuard paper section 2,
//! "Cryptokey Routing"): a packet read from the TUN device goes to the peer whose allowed
//! addresses hold its destination, and a packet from a peer is delivered only if its source is
//! one of that peer's. Only the fixed IPv4 and IPv6 headers are read (RFC 791 section 3.1,
//! RFC 8200 section 3); anything shorter or of another version has no addresses.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// `(source, destination)` of an IPv4 or IPv6 packet.
pub fn addresses(packet: &[u8]) -> Option<(IpAddr, IpAddr)> {
    match packet.first()? >> 4 {
        4 if packet.len() >= 20 => {
            let at = |o: usize| -> [u8; 4] { packet[o..o + 4].try_into().expect("4 bytes") };
            Some((Ipv4Addr::from(at(12)).into(), Ipv4Addr::from(at(16)).into()))
        }
        6 if packet.len() >= 40 => {
            let at = |o: usize| -> [u8; 16] { packet[o..o + 16].try_into().expect("16 bytes") };
            Some((Ipv6Addr::from(at(8)).into(), Ipv6Addr::from(at(24)).into()))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_versions_and_refuses_what_is_short_or_other() {
        let mut v4 = [0u8; 20];
        v4[0] = 0x45;
        v4[12..16].copy_from_slice(&[10, 200, 0, 2]);
        v4[16..20].copy_from_slice(&[10, 90, 0, 1]);
        assert_eq!(
            addresses(&v4),
            Some(("10.200.0.2".parse().unwrap(), "10.90.0.1".parse().unwrap()))
        );
        let mut v6 = [0u8; 40];
        v6[0] = 0x60;
        v6[8..24].copy_from_slice(&"fd00:b::2".parse::<Ipv6Addr>().unwrap().octets());
        v6[24..40].copy_from_slice(&"fd00:b::1".parse::<Ipv6Addr>().unwrap().octets());
        assert_eq!(
            addresses(&v6),
            Some(("fd00:b::2".parse().unwrap(), "fd00:b::1".parse().unwrap()))
        );
        assert_eq!(addresses(&v4[..19]), None);
        assert_eq!(addresses(&v6[..39]), None);
        assert_eq!(addresses(&[]), None);
        assert_eq!(addresses(&[0x50; 60]), None);
    }
}
