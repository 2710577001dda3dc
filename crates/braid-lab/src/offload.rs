//! Segmentation and receive-coalescing offloads off on an interface, through the `SIOCETHTOOL`
//! ioctl, as `ethtool -K IF tso off gso off gro off tx-udp-segmentation off ...` does (no ethtool
//! binary needed). Both the test bed ([`crate::netns::Netns::disable_offloads`]) and the link
//! emulator ([`crate::linkem::Linkem::start`]) use it.
//!
//! # Why
//! A veth hands its peer whatever skb it is given. With a segmentation feature on, a sender's
//! 64 KB TCP super-frame, or a UDP GSO train (one `sendmsg` with `UDP_SEGMENT`, as `braid
//! tunnel` sends each path's datagrams), crosses the veth whole: a `pfifo limit 500` then holds
//! 500 super-frames instead of 500 packets, and `braid linkem` reads one oversize frame and drops
//! it, losing every datagram of the train (docs/design.md section 7). With receive coalescing on, a
//! device merges frames before packet taps see them. Off, every queue counts real frames.
//!
//! # Source
//! `include/uapi/linux/ethtool.h` and `net/ethtool/ioctl.c` (`dev_ethtool`):
//! - TSO, GSO and GRO with the legacy per-feature commands `ETHTOOL_{G,S}{TSO,GSO,GRO}` (a
//!   `struct ethtool_value`); `ethtool_set_one_feature` maps them onto `NETIF_F_ALL_TSO`,
//!   `NETIF_F_GSO` and `NETIF_F_GRO`. A device without the feature answers `EOPNOTSUPP`: off.
//! - Every other feature by name: `ETHTOOL_GSSET_INFO` gives the size of string set
//!   `ETH_SS_FEATURES`, `ETHTOOL_GSTRINGS` its names (`netdev_features_strings`,
//!   `net/ethtool/common.c`; a name's index is its feature bit), `ETHTOOL_GFEATURES` the
//!   `available` (hw_features) and `active` words, and `ETHTOOL_SFEATURES` clears bits: `valid`
//!   says which bits to change, `requested` their new value (`ethtool_set_features`).
//!
//! # Which features
//! `net_gso_ok` (`include/linux/netdevice.h`) lets an skb through a device unsegmented only if the
//! device has the feature of *every* bit of its `gso_type`. Every GSO skb carries one base type,
//! TCP (cleared by TSO off), UDP L4 (`tx-udp-segmentation`), SCTP (`tx-sctp-segmentation`) or
//! fraglist (`tx-gso-list`), so clearing those four segments everything, including tunnel types
//! (`tx-udp_tnl-segmentation`, `tx-gre-segmentation`), which always ride on a base type and are
//! left alone. On receive: GRO, `rx-gro-list`, `rx-udp-gro-forwarding`, `rx-gro-hw`, `rx-lro`.
//! A name the running kernel does not know is a feature it does not have, so it is skipped.
//!
//! The ioctl acts on the interface of that name in the calling thread's network namespace, so
//! callers run it inside [`crate::netns::Netns::run_in`] or on a thread that entered it.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `include/uapi/linux/sockios.h`.
const SIOCETHTOOL: libc::c_ulong = 0x8946;
const ETHTOOL_GSTRINGS: u32 = 0x1b;
const ETHTOOL_GTSO: u32 = 0x1e;
const ETHTOOL_STSO: u32 = 0x1f;
const ETHTOOL_GGSO: u32 = 0x23;
const ETHTOOL_SGSO: u32 = 0x24;
const ETHTOOL_GGRO: u32 = 0x2b;
const ETHTOOL_SGRO: u32 = 0x2c;
const ETHTOOL_GSSET_INFO: u32 = 0x37;
const ETHTOOL_GFEATURES: u32 = 0x3a;
const ETHTOOL_SFEATURES: u32 = 0x3b;
/// `enum ethtool_stringset`: the names of the netdev feature bits.
const ETH_SS_FEATURES: u32 = 4;
/// Bytes of one name in a string set, NUL-padded.
const ETH_GSTRING_LEN: usize = 32;
/// `IFNAMSIZ` (if.h), including the terminating NUL.
const IFNAMSIZ: usize = libc::IFNAMSIZ;
/// u32 words of `struct ethtool_gstrings` before its names: cmd, string_set, len.
const GSTRINGS_HEADER_WORDS: usize = 3;
/// u32 words of `struct ethtool_{g,s}features` before its blocks: cmd, size.
const FEATURES_HEADER_WORDS: usize = 2;
/// u32 words of `struct ethtool_get_features_block`: available, requested, active, never_changed.
const GET_BLOCK_WORDS: usize = 4;
/// u32 words of `struct ethtool_set_features_block`: valid, requested.
const SET_BLOCK_WORDS: usize = 2;

/// Features turned off by name, beyond TSO, GSO and GRO; see the module documentation for why
/// these and no others.
pub const NAMED_FEATURES: [&str; 7] = [
    "tx-udp-segmentation",
    "tx-sctp-segmentation",
    "tx-gso-list",
    "rx-gro-list",
    "rx-udp-gro-forwarding",
    "rx-gro-hw",
    "rx-lro",
];

/// An offload with its own legacy ioctl pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Legacy {
    /// TCP segmentation offload (all of `NETIF_F_ALL_TSO`).
    Tso,
    /// Generic segmentation offload.
    Gso,
    /// Generic receive offload.
    Gro,
}

impl Legacy {
    pub const ALL: [Legacy; 3] = [Legacy::Tso, Legacy::Gso, Legacy::Gro];

    /// The name `ethtool -K` uses.
    pub fn name(self) -> &'static str {
        match self {
            Legacy::Tso => "tso",
            Legacy::Gso => "gso",
            Legacy::Gro => "gro",
        }
    }

    /// (get, set) commands.
    fn commands(self) -> (u32, u32) {
        match self {
            Legacy::Tso => (ETHTOOL_GTSO, ETHTOOL_STSO),
            Legacy::Gso => (ETHTOOL_GGSO, ETHTOOL_SGSO),
            Legacy::Gro => (ETHTOOL_GGRO, ETHTOOL_SGRO),
        }
    }
}

/// Why an offload could not be read or changed. Every variant names the interface.
#[derive(Debug, thiserror::Error)]
pub enum OffloadError {
    #[error("interface name {ifname:?} must have 1 to {} bytes", IFNAMSIZ - 1)]
    BadName { ifname: String },
    #[error("opening a socket for ethtool ioctls: {0}")]
    Socket(io::Error),
    #[error("interface {ifname:?}: cannot {action}: {error}")]
    Ioctl { ifname: String, action: String, error: io::Error },
    #[error("interface {ifname:?}: the kernel has no feature named {feature:?}")]
    UnknownFeature { ifname: String, feature: String },
    #[error("interface {ifname:?}: {feature} is on and the device does not let it be changed")]
    Fixed { ifname: String, feature: String },
    #[error("interface {ifname:?}: {feature} is still on after turning it off; queues would count super-frames as packets")]
    StillOn { ifname: String, feature: String },
}

/// `struct ethtool_value`: a command and one 32-bit value.
#[repr(C)]
struct EthtoolValue {
    cmd: u32,
    data: u32,
}

/// `struct ethtool_sset_info` asking for one string set: one `data` word comes back.
#[repr(C)]
struct SsetInfo {
    cmd: u32,
    reserved: u32,
    sset_mask: u64,
    data: [u32; 1],
}

/// A socket to address ioctls to devices of the calling thread's network namespace, and the
/// interface they go to.
struct Ethtool<'a> {
    fd: OwnedFd,
    ifname: &'a str,
}

impl<'a> Ethtool<'a> {
    fn open(ifname: &'a str) -> Result<Ethtool<'a>, OffloadError> {
        if ifname.is_empty() || ifname.len() >= IFNAMSIZ || ifname.contains('\0') {
            return Err(OffloadError::BadName { ifname: ifname.into() });
        }
        // SAFETY: plain socket(2); the descriptor is owned on success.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return Err(OffloadError::Socket(io::Error::last_os_error()));
        }
        // SAFETY: `fd` is a fresh descriptor nobody else owns.
        Ok(Ethtool { fd: unsafe { OwnedFd::from_raw_fd(fd) }, ifname })
    }

    /// `SIOCETHTOOL` with `data` (a struct or word buffer starting with its command word, sized
    /// for everything the command writes back) as `ifr_data`.
    /// Returns the ioctl's non-negative result (`ETHTOOL_SFEATURES` returns flags).
    fn ioctl<T: ?Sized>(
        &self,
        data: &mut T,
        action: impl FnOnce() -> String,
    ) -> Result<i32, OffloadError> {
        // SAFETY: ifreq is plain old data; all zeroes is a valid value.
        let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
        for (dst, &src) in req.ifr_name.iter_mut().zip(self.ifname.as_bytes()) {
            *dst = src as libc::c_char;
        }
        req.ifr_ifru.ifru_data = (data as *mut T).cast();
        // SAFETY: SIOCETHTOOL reads the NUL-terminated name and the buffer `req` points at; the
        // callers size that buffer for what the command writes back. Both outlive the call.
        let rc = unsafe { libc::ioctl(self.fd.as_raw_fd(), SIOCETHTOOL as _, &mut req) };
        if rc < 0 {
            let error = io::Error::last_os_error();
            return Err(OffloadError::Ioctl {
                ifname: self.ifname.into(),
                action: action(),
                error,
            });
        }
        Ok(rc)
    }

    /// Whether `offload` is on; a device without it (`EOPNOTSUPP`) has it off.
    fn legacy_is_on(&self, offload: Legacy) -> Result<bool, OffloadError> {
        let mut value = EthtoolValue { cmd: offload.commands().0, data: 0 };
        match self.ioctl(&mut value, || format!("read {}", offload.name())) {
            Ok(_) => Ok(value.data != 0),
            Err(OffloadError::Ioctl { error, .. })
                if error.raw_os_error() == Some(libc::EOPNOTSUPP) =>
            {
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    fn legacy_turn_off(&self, offload: Legacy) -> Result<(), OffloadError> {
        let mut value = EthtoolValue { cmd: offload.commands().1, data: 0 };
        self.ioctl(&mut value, || format!("turn off {}", offload.name())).map(drop)
    }

    /// Number of strings in `ETH_SS_FEATURES`, which is the number of feature bits.
    fn feature_count(&self) -> Result<usize, OffloadError> {
        let mut info = SsetInfo {
            cmd: ETHTOOL_GSSET_INFO,
            reserved: 0,
            sset_mask: 1 << ETH_SS_FEATURES,
            data: [0],
        };
        self.ioctl(&mut info, || "read the size of the feature string set".into())?;
        if info.sset_mask & (1 << ETH_SS_FEATURES) == 0 {
            let error = io::Error::from_raw_os_error(libc::EOPNOTSUPP);
            let action = "read the size of the feature string set".into();
            return Err(OffloadError::Ioctl { ifname: self.ifname.into(), action, error });
        }
        Ok(info.data[0] as usize)
    }

    /// The feature names, index = feature bit.
    fn feature_names(&self) -> Result<Vec<String>, OffloadError> {
        let count = self.feature_count()?;
        let mut buf = vec![0u32; GSTRINGS_HEADER_WORDS + count * ETH_GSTRING_LEN / 4];
        buf[0] = ETHTOOL_GSTRINGS;
        buf[1] = ETH_SS_FEATURES;
        buf[2] = count as u32;
        // The kernel writes as many names as it counted in `feature_count`, which `buf` holds.
        self.ioctl(&mut buf[..], || "read the feature names".into())?;
        let returned = (buf[2] as usize).min(count);
        let bytes: Vec<u8> =
            buf[GSTRINGS_HEADER_WORDS..].iter().flat_map(|w| w.to_ne_bytes()).collect();
        Ok(parse_names(&bytes, returned))
    }

    /// The `ethtool_get_features_block`s of the device.
    fn feature_blocks(&self) -> Result<Vec<FeatureBlock>, OffloadError> {
        // Ask with room for no block first: the kernel answers with its word count in `size`.
        let mut head = [ETHTOOL_GFEATURES, 0];
        self.ioctl(&mut head[..], || "read the feature words".into())?;
        let words = head[1] as usize;
        let mut buf = vec![0u32; FEATURES_HEADER_WORDS + words * GET_BLOCK_WORDS];
        buf[0] = ETHTOOL_GFEATURES;
        buf[1] = words as u32;
        self.ioctl(&mut buf[..], || "read the features".into())?;
        Ok(buf[FEATURES_HEADER_WORDS..]
            .chunks_exact(GET_BLOCK_WORDS)
            .map(|b| FeatureBlock { available: b[0], active: b[2] })
            .collect())
    }

    fn features(&self) -> Result<Features, OffloadError> {
        Ok(Features { names: self.feature_names()?, blocks: self.feature_blocks()? })
    }

    /// Sets feature bits `bits` to `on`, leaving all others as they are.
    fn set_bits(&self, blocks: usize, bits: &[usize], on: bool) -> Result<(), OffloadError> {
        let mut buf = vec![0u32; FEATURES_HEADER_WORDS + blocks * SET_BLOCK_WORDS];
        buf[0] = ETHTOOL_SFEATURES;
        buf[1] = blocks as u32;
        for &bit in bits {
            let (word, mask) = bit_position(bit);
            let block = FEATURES_HEADER_WORDS + word * SET_BLOCK_WORDS;
            buf[block] |= mask;
            if on {
                buf[block + 1] |= mask;
            }
        }
        // A positive result (ETHTOOL_F_WISH, ETHTOOL_F_UNSUPPORTED) means some bit did not take;
        // the callers read the features back and name the one that did not.
        self.ioctl(&mut buf[..], || "change features (ETHTOOL_SFEATURES)".into()).map(drop)
    }
}

/// One 32-bit word of feature bits: what the device lets change (`hw_features`) and what is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FeatureBlock {
    available: u32,
    active: u32,
}

/// The feature names and bits of one device.
struct Features {
    names: Vec<String>,
    blocks: Vec<FeatureBlock>,
}

impl Features {
    /// The bit of feature `name`, if the kernel has it and its words hold it.
    fn bit(&self, name: &str) -> Option<usize> {
        self.names
            .iter()
            .position(|n| n == name)
            .filter(|&bit| bit_position(bit).0 < self.blocks.len())
    }

    fn test(&self, bit: usize, field: impl Fn(&FeatureBlock) -> u32) -> bool {
        let (word, mask) = bit_position(bit);
        self.blocks.get(word).is_some_and(|b| field(b) & mask != 0)
    }

    fn is_active(&self, bit: usize) -> bool {
        self.test(bit, |b| b.active)
    }

    fn is_available(&self, bit: usize) -> bool {
        self.test(bit, |b| b.available)
    }

    /// The [`NAMED_FEATURES`] this kernel has, with their bits.
    fn named(&self) -> impl Iterator<Item = (&'static str, usize)> + '_ {
        NAMED_FEATURES.into_iter().filter_map(|name| Some((name, self.bit(name)?)))
    }
}

/// Word index and mask of feature `bit` in the u32 blocks (bit 0 is the low bit of word 0).
fn bit_position(bit: usize) -> (usize, u32) {
    (bit / 32, 1 << (bit % 32))
}

/// The first `count` NUL-padded names of `ETH_GSTRING_LEN` bytes each.
fn parse_names(bytes: &[u8], count: usize) -> Vec<String> {
    bytes
        .chunks_exact(ETH_GSTRING_LEN)
        .take(count)
        .map(|raw| {
            let len = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
            String::from_utf8_lossy(&raw[..len]).into_owned()
        })
        .collect()
}

/// Turns TSO, GSO, GRO and the [`NAMED_FEATURES`] off on `ifname` (in the calling thread's
/// network namespace) and reads them back: one still on is an error naming it.
pub fn disable_offloads(ifname: &str) -> Result<(), OffloadError> {
    let dev = Ethtool::open(ifname)?;
    for offload in Legacy::ALL {
        if !dev.legacy_is_on(offload)? {
            continue;
        }
        dev.legacy_turn_off(offload)?;
        if dev.legacy_is_on(offload)? {
            return Err(OffloadError::StillOn {
                ifname: ifname.into(),
                feature: offload.name().into(),
            });
        }
    }
    let features = dev.features()?;
    let mut to_clear = Vec::new();
    for (name, bit) in features.named() {
        if !features.is_active(bit) {
            continue;
        }
        if !features.is_available(bit) {
            return Err(OffloadError::Fixed { ifname: ifname.into(), feature: name.into() });
        }
        to_clear.push(bit);
    }
    if to_clear.is_empty() {
        return Ok(());
    }
    dev.set_bits(features.blocks.len(), &to_clear, false)?;
    let after = Features { names: features.names, blocks: dev.feature_blocks()? };
    if let Some((name, _)) = after.named().find(|&(_, bit)| after.is_active(bit)) {
        return Err(OffloadError::StillOn { ifname: ifname.into(), feature: name.into() });
    }
    Ok(())
}

/// The offloads [`disable_offloads`] turns off that are on now on `ifname`: `tso`, `gso`, `gro`
/// and kernel feature names. Empty after [`disable_offloads`].
pub fn active_offloads(ifname: &str) -> Result<Vec<&'static str>, OffloadError> {
    let dev = Ethtool::open(ifname)?;
    let mut on = Vec::new();
    for offload in Legacy::ALL {
        if dev.legacy_is_on(offload)? {
            on.push(offload.name());
        }
    }
    let features = dev.features()?;
    on.extend(features.named().filter(|&(_, bit)| features.is_active(bit)).map(|(name, _)| name));
    Ok(on)
}

/// Turns the feature the kernel calls `name` (`ETH_SS_FEATURES`, e.g. `tx-udp-segmentation`) on
/// or off on `ifname` and checks that it took.
pub fn set_feature(ifname: &str, name: &str, on: bool) -> Result<(), OffloadError> {
    let dev = Ethtool::open(ifname)?;
    let features = dev.features()?;
    let Some(bit) = features.bit(name) else {
        return Err(OffloadError::UnknownFeature { ifname: ifname.into(), feature: name.into() });
    };
    if features.is_active(bit) == on {
        return Ok(());
    }
    if !features.is_available(bit) {
        return Err(OffloadError::Fixed { ifname: ifname.into(), feature: name.into() });
    }
    dev.set_bits(features.blocks.len(), &[bit], on)?;
    let after = Features { names: features.names, blocks: dev.feature_blocks()? };
    if after.is_active(bit) != on {
        let action = format!("turn {name} {}", if on { "on" } else { "off" });
        let error = io::Error::other("the device kept its old value");
        return Err(OffloadError::Ioctl { ifname: ifname.into(), action, error });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structs_have_the_kernel_layout() {
        // struct ethtool_value: two __u32.
        assert_eq!(std::mem::size_of::<EthtoolValue>(), 8);
        // struct ethtool_sset_info: cmd, reserved, __u64 sset_mask at offset 8, data at 16.
        assert_eq!(std::mem::offset_of!(SsetInfo, sset_mask), 8);
        assert_eq!(std::mem::offset_of!(SsetInfo, data), 16);
        // struct ifreq: IFNAMSIZ (16) + a 24-byte union on 64-bit Linux.
        assert_eq!(std::mem::size_of::<libc::ifreq>(), 40);
    }

    #[test]
    fn names_are_nul_padded_fixed_width_and_count_bounded() {
        let mut bytes = vec![0u8; 3 * ETH_GSTRING_LEN];
        bytes[..6].copy_from_slice(b"rx-gro");
        bytes[32..51].copy_from_slice(b"tx-udp-segmentation");
        // A full-width name has no NUL: all 32 bytes are the name.
        bytes[64..96].copy_from_slice(&[b'x'; 32]);
        assert_eq!(parse_names(&bytes, 2), ["rx-gro", "tx-udp-segmentation"]);
        assert_eq!(parse_names(&bytes, 9)[2], "x".repeat(32));
    }

    #[test]
    fn feature_bit_maps_to_word_and_mask() {
        // Bit 37 (e.g. NETIF_F_GSO_UDP_L4 on some kernels) is bit 5 of word 1.
        assert_eq!(bit_position(37), (1, 1 << 5));
        assert_eq!(bit_position(0), (0, 1));
        assert_eq!(bit_position(31), (0, 1 << 31));
    }

    #[test]
    fn feature_state_reads_the_right_word() {
        let features = Features {
            names: vec!["a".into(), "b".into()],
            blocks: vec![
                FeatureBlock { available: 0, active: 0 },
                FeatureBlock { available: 1 << 5, active: 1 << 5 },
            ],
        };
        assert!(features.is_active(37) && features.is_available(37));
        assert!(!features.is_active(5) && !features.is_active(36));
        // Past the last word: the device has no such bit, so it is off.
        assert!(!features.is_active(64));
        assert_eq!(features.bit("b"), Some(1));
        assert_eq!(features.bit("c"), None);
        // A name past the device's words has no bit to set: skipped, not an index panic.
        let short = Features { names: vec!["x".into(); 40], blocks: vec![features.blocks[0]] };
        assert_eq!(short.bit("x"), Some(0));
        let mut names = vec![String::new(); 33];
        names[32] = "late".into();
        assert_eq!(Features { names, blocks: short.blocks }.bit("late"), None);
    }

    #[test]
    fn bad_interface_names_are_refused_before_any_ioctl() {
        for name in ["", "sixteen-chars-xx", "a\0b"] {
            assert!(matches!(Ethtool::open(name), Err(OffloadError::BadName { .. })), "{name:?}");
        }
    }

    #[test]
    fn unknown_interface_is_an_ioctl_error_naming_it() {
        let err = active_offloads("braid-nonexist").unwrap_err();
        let OffloadError::Ioctl { ifname, error, .. } = &err else { panic!("{err:?}") };
        assert_eq!(ifname, "braid-nonexist");
        assert_eq!(error.raw_os_error(), Some(libc::ENODEV));
    }

    #[test]
    fn loopback_feature_table_has_the_kernel_names() {
        // Reading needs no privilege and changes nothing. Names from netdev_features_strings
        // (net/ethtool/common.c): every kernel since 5.0 has these.
        let dev = Ethtool::open("lo").unwrap();
        let features = dev.features().unwrap();
        for name in ["tx-udp-segmentation", "rx-gro", "tx-tcp-segmentation"] {
            assert!(features.bit(name).is_some(), "{name} missing from {:?}", features.names);
        }
        // The kernel's words hold every named bit.
        assert!(features.blocks.len() * 32 >= features.names.len());
    }
}
