//! TCP MSS clamping for packets entering the tunnel: a SYN's Maximum Segment Size option
//! (RFC 9293 section 3.7.1) is lowered to what fits the tunnel's MTU, as Linux's `TCPMSS
//! --clamp-mss-to-pmtu` target does for routers (net/netfilter/xt_TCPMSS.c).
//!
//! A host whose own link has a larger MTU than the tunnel (a LAN behind the client, the Internet
//! behind the server) announces an MSS for its link; its peer then sends segments the tunnel
//! cannot carry whole, and unless ICMP "packet too big" reaches the sender (often filtered) the
//! connection stalls. The daemon rewrites the MSS option of every TCP SYN it reads from its TUN
//! device to at most the MTU minus the IP and TCP headers (40 bytes for IPv4, 60 for IPv6); both
//! ends do, so both directions of a connection through the tunnel are covered. SYNs of the
//! host's own connections already announce that (their route is the TUN device) and pass
//! unchanged.
//!
//! The TCP checksum is updated incrementally (RFC 1624, equation 3), so a segment that arrived
//! corrupt stays corrupt. Only the fixed IPv4 header with options and the fixed IPv6 header with
//! TCP as its next header are read; fragments other than the first, other protocols, IPv6
//! extension headers and malformed packets pass unchanged. Every read is bounds-checked.

/// IP protocol number of TCP (RFC 9293).
const TCP: u8 = 6;
/// TCP option kinds (RFC 9293 section 3.1): end of list, no-operation, maximum segment size.
const OPT_END: u8 = 0;
const OPT_NOP: u8 = 1;
const OPT_MSS: u8 = 2;
/// Fixed TCP header; the SYN flag.
const TCP_HEADER_LEN: usize = 20;
const SYN: u8 = 0x02;

/// The largest MSS a tunnel of inner MTU `mtu` carries whole, for IPv4 and for IPv6.
pub fn max_mss(mtu: u16) -> (u16, u16) {
    (mtu.saturating_sub(40), mtu.saturating_sub(60))
}

/// Lowers the MSS option of a TCP SYN in `packet` (an IPv4 or IPv6 packet) to at most the
/// version's value of `max` (IPv4, IPv6). Returns the MSS it replaced, if it changed one.
pub fn clamp(packet: &mut [u8], max: (u16, u16)) -> Option<u16> {
    let (tcp_at, limit) = match *packet.first()? >> 4 {
        4 => {
            let ihl = usize::from(packet.first()? & 0x0f) * 4;
            let fragment_offset = u16::from_be_bytes([*packet.get(6)?, *packet.get(7)?]) & 0x1fff;
            if ihl < 20 || *packet.get(9)? != TCP || fragment_offset != 0 {
                return None;
            }
            (ihl, max.0)
        }
        6 => {
            if *packet.get(6)? != TCP {
                return None;
            }
            (40, max.1)
        }
        _ => return None,
    };
    let tcp = packet.get_mut(tcp_at..)?;
    let data_offset = usize::from(*tcp.get(12)? >> 4) * 4;
    if data_offset < TCP_HEADER_LEN || tcp.len() < data_offset || tcp[13] & SYN == 0 {
        return None;
    }
    let at = find_mss(&tcp[TCP_HEADER_LEN..data_offset])? + TCP_HEADER_LEN;
    let old = u16::from_be_bytes([tcp[at], tcp[at + 1]]);
    if old <= limit {
        return None;
    }
    let checksum = u16::from_be_bytes([tcp[16], tcp[17]]);
    let new = limit.to_be_bytes();
    let updated = replace_bytes_checksum(checksum, tcp, at, new);
    tcp[at..at + 2].copy_from_slice(&new);
    tcp[16..18].copy_from_slice(&updated.to_be_bytes());
    Some(old)
}

/// Offset of the MSS value (2 bytes) within the options, if a well-formed MSS option precedes
/// the end of the list or any malformed option.
fn find_mss(options: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i < options.len() {
        match options[i] {
            OPT_END => return None,
            OPT_NOP => i += 1,
            kind => {
                let len = usize::from(*options.get(i + 1)?);
                if len < 2 || i + len > options.len() {
                    return None;
                }
                if kind == OPT_MSS {
                    return (len == 4).then_some(i + 2);
                }
                i += len;
            }
        }
    }
    None
}

/// The one's-complement checksum `sum` of a segment after its bytes `at..at + 2` become `new`
/// (RFC 1624 equation 3, HC' = ~(~HC + ~m + m'), word by word over the 16-bit words those
/// bytes fall in: two words when `at` is odd).
fn replace_bytes_checksum(sum: u16, segment: &[u8], at: usize, new: [u8; 2]) -> u16 {
    let word_at = |bytes: &[u8], w: usize| -> u16 {
        u16::from_be_bytes([
            bytes.get(w).copied().unwrap_or(0),
            bytes.get(w + 1).copied().unwrap_or(0),
        ])
    };
    let mut after = [0u8; 4];
    let first = at & !1;
    let last = (at + 1) & !1;
    for (k, b) in after.iter_mut().enumerate() {
        *b = segment.get(first + k).copied().unwrap_or(0);
    }
    after[at - first] = new[0];
    after[at + 1 - first] = new[1];
    let mut acc = u32::from(!sum);
    for w in (first..=last).step_by(2) {
        let old = word_at(segment, w);
        let updated = word_at(&after, w - first);
        acc += u32::from(!old) + u32::from(updated);
    }
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The TCP checksum over the pseudo-header and the segment (RFC 9293 section 3.1; RFC 8200
    /// section 8.1 for IPv6), computed from scratch: 0 when the stored checksum is right.
    fn verify(packet: &[u8]) -> u16 {
        let mut sum = 0u32;
        let mut add = |bytes: &[u8]| {
            for pair in bytes.chunks(2) {
                sum += u32::from(u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)]));
            }
        };
        let (tcp_at, len) = if packet[0] >> 4 == 4 {
            let ihl = usize::from(packet[0] & 0x0f) * 4;
            add(&packet[12..20]);
            (ihl, packet.len() - ihl)
        } else {
            add(&packet[8..40]);
            (40, packet.len() - 40)
        };
        add(&[0, TCP]);
        add(&(len as u16).to_be_bytes());
        add(&packet[tcp_at..]);
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        !(sum as u16)
    }

    /// A SYN from 10.0.0.2:40000 to 10.9.0.1:80 with `options` (a multiple of 4 bytes), its
    /// checksum right.
    fn syn_v4(options: &[u8]) -> Vec<u8> {
        let tcp_len = 20 + options.len();
        let mut p = vec![0u8; 20 + tcp_len];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&((20 + tcp_len) as u16).to_be_bytes());
        p[8] = 64;
        p[9] = TCP;
        p[12..16].copy_from_slice(&[10, 0, 0, 2]);
        p[16..20].copy_from_slice(&[10, 9, 0, 1]);
        let t = &mut p[20..];
        t[0..2].copy_from_slice(&40000u16.to_be_bytes());
        t[2..4].copy_from_slice(&80u16.to_be_bytes());
        t[4..8].copy_from_slice(&0x1234_5678u32.to_be_bytes());
        t[12] = ((tcp_len / 4) as u8) << 4;
        t[13] = SYN;
        t[14..16].copy_from_slice(&64240u16.to_be_bytes());
        t[20..].copy_from_slice(options);
        let c = verify(&p);
        p[36..38].copy_from_slice(&c.to_be_bytes());
        assert_eq!(verify(&p), 0);
        p
    }

    fn syn_v6(options: &[u8]) -> Vec<u8> {
        let v4 = syn_v4(options);
        let mut p = vec![0u8; 40];
        p[0] = 0x60;
        p[4..6].copy_from_slice(&((v4.len() - 20) as u16).to_be_bytes());
        p[6] = TCP;
        p[7] = 64;
        p[8..24].copy_from_slice(&"fd00:b::2".parse::<std::net::Ipv6Addr>().unwrap().octets());
        p[24..40].copy_from_slice(&"fd00:b::1".parse::<std::net::Ipv6Addr>().unwrap().octets());
        p.extend_from_slice(&v4[20..]);
        p[56..58].copy_from_slice(&[0, 0]);
        let c = verify(&p);
        p[56..58].copy_from_slice(&c.to_be_bytes());
        assert_eq!(verify(&p), 0);
        p
    }

    const MSS_1460: [u8; 4] = [OPT_MSS, 4, 0x05, 0xb4];

    #[test]
    fn a_syn_announcing_more_than_the_tunnel_carries_is_lowered_with_a_right_checksum() {
        let max = max_mss(1400);
        assert_eq!(max, (1360, 1340));
        let mut p = syn_v4(&MSS_1460);
        assert_eq!(clamp(&mut p, max), Some(1460));
        assert_eq!(&p[42..44], &1360u16.to_be_bytes());
        assert_eq!(verify(&p), 0, "checksum still right");
        // Already within: unchanged.
        assert_eq!(clamp(&mut p, max), None);
        let mut p = syn_v6(&MSS_1460);
        assert_eq!(clamp(&mut p, max), Some(1460));
        assert_eq!(&p[62..64], &1340u16.to_be_bytes());
        assert_eq!(verify(&p), 0);
    }

    /// Linux SYNs carry MSS first; others put a NOP before it, so the value sits at an odd
    /// offset and straddles two checksum words.
    #[test]
    fn an_mss_at_an_odd_offset_keeps_the_checksum_right() {
        let options = [OPT_NOP, OPT_MSS, 4, 0x23, 0x28, OPT_NOP, OPT_NOP, OPT_END];
        let mut p = syn_v4(&options);
        assert_eq!(clamp(&mut p, (1360, 1340)), Some(9000));
        assert_eq!(&p[43..45], &1360u16.to_be_bytes());
        assert_eq!(verify(&p), 0);
    }

    #[test]
    fn what_is_not_a_syn_with_an_mss_passes_unchanged() {
        let max = (1360, 1340);
        let mut ack = syn_v4(&MSS_1460);
        ack[33] = 0x10;
        let before = ack.clone();
        assert_eq!(clamp(&mut ack, max), None);
        assert_eq!(ack, before);
        let no_mss = [OPT_NOP, OPT_NOP, 8, 10, 1, 2, 3, 4, 5, 6, 7, 8];
        let mut p = syn_v4(&no_mss);
        assert_eq!(clamp(&mut p, max), None);
        let after_end = [OPT_END, 0, 0, 0, OPT_MSS, 4, 0x05, 0xb4];
        assert_eq!(clamp(&mut syn_v4(&after_end), max), None, "past the end of the list");
        let bad_len = [OPT_MSS, 3, 0x05, 0xb4];
        assert_eq!(clamp(&mut syn_v4(&bad_len), max), None);
        let mut udp = syn_v4(&MSS_1460);
        udp[9] = 17;
        assert_eq!(clamp(&mut udp, max), None);
        let mut fragment = syn_v4(&MSS_1460);
        fragment[7] = 1;
        assert_eq!(clamp(&mut fragment, max), None);
        let mut short = syn_v4(&MSS_1460);
        short.truncate(42);
        assert_eq!(clamp(&mut short, max), None, "options cut off");
        assert_eq!(clamp(&mut [], max), None);
    }

    proptest! {
        /// Any bytes: no panic; and whatever a well-formed SYN becomes, its checksum stays right.
        #[test]
        fn arbitrary_bytes_never_panic(mut bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            let _ = clamp(&mut bytes, (1360, 1340));
        }

        #[test]
        fn the_checksum_stays_right_wherever_the_option_sits(
            nops in 0usize..8,
            mss in 1000u16..=u16::MAX,
            max in 500u16..1500,
        ) {
            let mut options = vec![OPT_NOP; nops];
            options.extend_from_slice(&[OPT_MSS, 4]);
            options.extend_from_slice(&mss.to_be_bytes());
            while options.len() % 4 != 0 {
                options.push(OPT_END);
            }
            for mut p in [syn_v4(&options), syn_v6(&options)] {
                let changed = clamp(&mut p, (max, max));
                prop_assert_eq!(changed.is_some(), mss > max);
                prop_assert_eq!(verify(&p), 0);
            }
        }
    }
}
