//! The tunnel daemon's configuration file: wg-quick-like sections read from TOML and checked
//! into a [`DaemonConfig`] whose every field is in range.
//!
//! ```toml
//! [interface]
//! name = "braid0"                 # TUN device, at most 15 bytes (IFNAMSIZ - 1)
//! role = "client"                 # client (UE) or server (proxy)
//! address = ["10.200.0.2/24", "fd00:b::2/64"]
//! mtu = 1400                      # inner MTU, 576..=9000 (1280.. with an IPv6 address)
//! private_key = "<base64>"        # or private_key_file = "/etc/braid/key" (mode 0600)
//! metrics_listen = "127.0.0.1:9477"   # optional: Prometheus /metrics and /status
//! control_socket = "/run/braid/braid0.sock"   # the default: /run/braid/NAME.sock (mode 0600)
//! cipher = "aes-256-gcm"          # or "chacha20-poly1305"; both peers must agree
//! transport = "udp"               # udp (datagrams) or tcp (one kernel TCP connection per path)
//! compact = true                  # udp: data in compact messages, 48 bytes of overhead per IPv4
//!                                 # packet instead of 92 (crypto/compact.rs); mtu can then be
//!                                 # the paths' MTU minus 48 (1452 on Ethernet)
//! routes = ["0.0.0.0/0"]          # optional: prefixes routed through the tunnel (wg-quick style)
//! table = 51900                   # with routes: their routing table; fwmark = the path sockets'
//!                                 # SO_MARK (default: the table), which skips that table
//!
//! [peer]
//! public_key = "<base64>"
//! preshared_key = "<base64>"      # optional
//! allowed_ips = ["10.200.0.2/32"] # optional: the inner source addresses the peer may use
//!
//! # A server may list several clients instead, each its own [[peer]] with a name (metric
//! # labels), its key, an optional PSK and the inner addresses it may use (required with more
//! # than one peer, and no two peers' sets may overlap): packets to an address go to the peer
//! # whose set holds it, and packets from a peer with a source outside its set are dropped
//! # (WireGuard's cryptokey routing). A client has exactly one [peer].
//! # [[peer]]
//! # name = "ue1"
//! # public_key = "<base64>"
//! # allowed_ips = ["10.200.0.2/32"]
//!
//! [tunnel]                        # a scenario's [tunnel] section: scheduler, cc, reorder, ...
//! scheduler = "srtt"              # only what differs from the daemon's default (below)
//!
//! [liveness]                      # optional
//! probe_interval_ms = 100
//! dead_after_ms = 1000
//!
//! [[path]]
//! name = "wifi"                   # 1..=15 bytes of [A-Za-z0-9._-]: the peer's path of this name is its other end
//! bind = "192.168.1.2:0"          # local address; a server listens on its port
//! device = "wlan0"                # optional: SO_BINDTODEVICE
//! remote = "203.0.113.7:51820"    # client: required; server: learned from the peer
//! cost = 1                        # CPF cost: lower is preferred
//! ```
//!
//! The `[tunnel]` section is the simulator's ([`braid_config::TunnelConfig`], the schema both
//! drivers share), parsed by the same code and checked by the same validation, so a name misspelled in either place gets the
//! same error and the same list of allowed names, and a value out of range the same range. Its
//! algorithm tables (`[tunnel.acpf]`, `[tunnel.bbr2]`, ...; docs/scenarios.md) work here too,
//! except that `transport = "tcp"` refuses the settings it never reads (the tunnel's congestion
//! control tables, `counting`, ...; [`check_tunnel`]).
//!
//! Its defaults are not the simulator's, which reproduce Table 1 of Pieska et al. 2024, but those
//! for bonding real links ([`TunnelSection::bonding`]): ACPF over reliable BBRv2 paths, and a path
//! whose minimum RTT is more than 100 ms above the fastest one's left out
//! (`max_rtt_spread_ms = "off"` uses every path). Over `transport = "tcp"` the kernel runs the
//! paths' congestion control and has no BBRv2, and path exclusion exists only in the UDP sender,
//! so the default there is ACPF over reliable BBR paths without exclusion. The section is laid
//! over that default: keys it gives replace the default's, the rest keep it.

use std::fmt;
use std::fs;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use braid_config::{FieldError, TunnelConfig as TunnelSection};
use braid_core::cc::TunnelCc;
use braid_core::wire::DATA_HEADER_LEN;
use serde::Deserialize;
use zeroize::Zeroizing;

use crate::crypto::path_table::{self, MAX_NAME_BYTES, MAX_PATHS};
use crate::crypto::{Cipher, KeyError, PathTable, PresharedKey, PrivateKey, PublicKey};
use crate::framing::LENGTH_PREFIX_BYTES;
use crate::linux::KernelCc;

/// Outer IPv4 + UDP headers.
const IPV4_UDP_BYTES: u32 = 28;
/// Outer IPv6 + UDP headers.
const IPV6_UDP_BYTES: u32 = 48;
/// How late a pacing slot may be caught up (see `TunnelConfig::pacing_catch_up`): about ten
/// wake-up latencies of this VM, and Linux fq's default quantum at 1 Gbit/s is of this order.
const PACING_CATCH_UP: Duration = Duration::from_millis(1);
/// A Unix socket path's room in `sockaddr_un.sun_path`, less the terminating NUL.
const MAX_SOCKET_PATH_BYTES: usize = 107;
/// Where control sockets live unless `interface.control_socket` says otherwise.
pub const CONTROL_SOCKET_DIR: &str = "/run/braid";

/// `/run/braid/NAME.sock`: the control socket of the interface `name` by default.
pub fn default_control_socket(name: &str) -> PathBuf {
    Path::new(CONTROL_SOCKET_DIR).join(format!("{name}.sock"))
}

/// Linux's IFNAMSIZ less the terminating NUL.
const MAX_IFNAME_BYTES: usize = 15;
/// Inner MTU bounds: IPv4's minimum datagram and a jumbo frame.
const MTU_RANGE: std::ops::RangeInclusive<u16> = 576..=9000;
/// IPv6 needs links of at least 1280 bytes (RFC 8200 section 5).
const IPV6_MIN_MTU: u16 = 1280;

/// Which end of the tunnel this daemon is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user device: knows each path's remote endpoint and starts the handshake.
    Client,
    /// The proxy: listens on each path and learns the client's addresses.
    Server,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Client => "client",
            Role::Server => "server",
        })
    }
}

/// What carries each path's frames (`interface.transport`): braid-config's, which scenarios
/// name as `tunnel.transport`.
pub use braid_config::Transport;

/// An address with its prefix length, as `ip addr add` takes it: `10.0.0.1/24`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IfAddr {
    pub addr: IpAddr,
    pub prefix_len: u8,
}

impl FromStr for IfAddr {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (addr, prefix) =
            s.split_once('/').ok_or("expected ADDRESS/PREFIX, e.g. 10.0.0.1/24")?;
        let addr: IpAddr = addr.parse().map_err(|_| format!("{addr:?} is not an IP address"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix_len = prefix
            .parse::<u8>()
            .ok()
            .filter(|&p| p <= max)
            .ok_or_else(|| format!("prefix length {prefix:?} must be in 0..={max}"))?;
        Ok(IfAddr { addr, prefix_len })
    }
}

impl IfAddr {
    /// The network address: this address with its host bits cleared.
    pub fn network(&self) -> IpAddr {
        let bits = u32::from(self.prefix_len);
        match self.addr {
            IpAddr::V4(a) => {
                IpAddr::V4((u32::from(a) & u32::MAX.checked_shl(32 - bits).unwrap_or(0)).into())
            }
            IpAddr::V6(a) => {
                IpAddr::V6((u128::from(a) & u128::MAX.checked_shl(128 - bits).unwrap_or(0)).into())
            }
        }
    }

    /// Whether `ip` is inside this address's network (the prefix's bits equal).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let bits = u32::from(self.prefix_len);
        match (self.addr, ip) {
            (IpAddr::V4(net), IpAddr::V4(a)) => {
                let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
                u32::from(net) & mask == u32::from(a) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(a)) => {
                let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
                u128::from(net) & mask == u128::from(a) & mask
            }
            _ => false,
        }
    }

    /// Whether the two networks share an address (one contains the other's network address
    /// at the shorter prefix).
    pub fn overlaps(&self, other: &IfAddr) -> bool {
        let shorter = if self.prefix_len <= other.prefix_len { self } else { other };
        let longer = if std::ptr::eq(shorter, self) { other } else { self };
        shorter.contains(longer.addr)
    }
}

impl fmt::Display for IfAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix_len)
    }
}

/// A secret's text from the configuration (a key in base64): wiped on drop, never printed by
/// `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretText(Zeroizing<String>);

impl SecretText {
    pub fn new(text: String) -> Self {
        SecretText(Zeroizing::new(text))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SecretText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<secret>")
    }
}

/// Where the private key comes from.
#[derive(Clone, PartialEq, Eq)]
pub enum KeySource {
    Inline(SecretText),
    File(PathBuf),
}

impl fmt::Debug for KeySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeySource::Inline(_) => f.write_str("Inline(<secret>)"),
            KeySource::File(p) => write!(f, "File({})", p.display()),
        }
    }
}

/// One access path: a UDP socket leaving by its own interface.
#[derive(Clone, Debug, PartialEq)]
pub struct PathConfig {
    pub name: String,
    pub bind: SocketAddr,
    pub device: Option<String>,
    pub remote: Option<SocketAddr>,
    pub cost: u32,
    /// SO_MARK of the path's socket when the tunnel installs routes ([`RoutingConfig`]): its
    /// datagrams skip the tunnel's routing table and leave by the path's own routes.
    pub fwmark: Option<u32>,
}

/// Routes through the tunnel, as wg-quick installs them (wg-quick(8), "Table" and "FwMark"):
/// every prefix goes into routing table `table` via the TUN device; a policy rule sends what
/// does not carry `fwmark` to that table, and the path sockets carry it, so the tunnel's own
/// datagrams keep the host's routes. With a default route (`0.0.0.0/0` or `::/0`), a rule
/// before it makes the main table win for everything but its default route (`ip rule ...
/// suppress_prefixlength 0`), so the local networks stay reachable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoutingConfig {
    /// Network prefixes (host bits zero).
    pub routes: Vec<IfAddr>,
    pub table: u32,
    pub fwmark: u32,
}

/// The routing table and firewall mark used unless `interface.table`/`interface.fwmark` say
/// otherwise: one number for both, as wg-quick does (it starts at 51820; this is Braid's).
pub const DEFAULT_ROUTE_TABLE: u32 = 51_900;

/// Liveness timers: when a quiet path is probed, and when silence means it is gone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LivenessConfig {
    pub probe_interval: Duration,
    pub dead_after: Duration,
}

/// One peer: who it is and which inner addresses it may use.
#[derive(Clone, Debug)]
pub struct PeerConfig {
    /// Its name in logs and metric labels (`peer` label); `peer0`, `peer1`, ... by default.
    pub name: String,
    pub public_key: String,
    pub preshared_key: Option<SecretText>,
    /// Inner source addresses it may use, and so the destinations routed to it; empty: any
    /// (a client's one peer, a server's only peer without the key).
    pub allowed_ips: Vec<IfAddr>,
}

impl PeerConfig {
    /// Whether an inner packet may come from, or go to, `addr` through this peer.
    pub fn allows(&self, addr: IpAddr) -> bool {
        self.allowed_ips.is_empty() || self.allowed_ips.iter().any(|net| net.contains(addr))
    }
}

/// A checked daemon configuration.
#[derive(Clone, Debug)]
pub struct DaemonConfig {
    pub name: String,
    pub role: Role,
    pub addresses: Vec<IfAddr>,
    pub mtu: u16,
    pub private_key: KeySource,
    /// The other ends: exactly one for a client, one or more for a server.
    pub peers: Vec<PeerConfig>,
    pub metrics_listen: Option<SocketAddr>,
    /// The control socket `braid tunnel status` reads (crate::control).
    pub control_socket: PathBuf,
    /// The AEAD of handshake and transport (`interface.cipher`, default AES-256-GCM).
    pub cipher: Cipher,
    pub transport: Transport,
    /// Data packets travel as compact messages (`interface.compact`; UDP only, the default
    /// there).
    pub compact: bool,
    pub tunnel: TunnelSection,
    pub liveness: LivenessConfig,
    pub paths: Vec<PathConfig>,
    /// Routes the daemon installs through the tunnel (`interface.routes`), if any.
    pub routing: Option<RoutingConfig>,
}

/// What is wrong with a configuration file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{0}")]
    Toml(#[from] toml::de::Error),
    #[error("{field}: {detail}")]
    Invalid { field: String, detail: String },
}

fn invalid(field: impl Into<String>, detail: impl Into<String>) -> ConfigError {
    ConfigError::Invalid { field: field.into(), detail: detail.into() }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    interface: InterfaceSection,
    #[serde(deserialize_with = "one_or_many_peers")]
    peer: Vec<PeerSection>,
    #[serde(default)]
    tunnel: toml::Table,
    #[serde(default)]
    liveness: LivenessSection,
    #[serde(default, rename = "path")]
    paths: Vec<PathSection>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InterfaceSection {
    name: String,
    role: Role,
    #[serde(default)]
    address: Vec<String>,
    #[serde(default = "default_mtu")]
    mtu: u16,
    private_key: Option<String>,
    private_key_file: Option<PathBuf>,
    metrics_listen: Option<String>,
    control_socket: Option<PathBuf>,
    cipher: Option<String>,
    #[serde(default, deserialize_with = "braid_config::de::named")]
    transport: Transport,
    compact: Option<bool>,
    #[serde(default)]
    routes: Vec<String>,
    table: Option<u32>,
    fwmark: Option<u32>,
}

/// The TUN's MTU when `interface.mtu` is not given.
pub const DEFAULT_MTU: u16 = 1400;

fn default_mtu() -> u16 {
    DEFAULT_MTU
}

/// How often the sender asks for a time-sync frame on each path with compact messages, for the
/// receiver a reorder stage describes: braid-core's rule (`wire/overhead.rs`), which the
/// simulator's model of this wire reads too. A daemon reads its own `[tunnel]` section for the
/// peer's receiver: both ends of a tunnel are expected to run the same one.
pub use braid_core::wire::overhead::owd_sample_interval;

/// `[peer]` (one table) or `[[peer]]` (an array of them), each parsed on its own so that an
/// unknown or misspelled key is named with its peer (an untagged enum would only say that
/// neither shape matched).
fn one_or_many_peers<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<PeerSection>, D::Error> {
    use serde::de::Error;
    match toml::Value::deserialize(d)? {
        toml::Value::Array(peers) => peers
            .into_iter()
            .enumerate()
            .map(|(n, p)| {
                PeerSection::deserialize(p).map_err(|e| D::Error::custom(format!("peer.{n}: {e}")))
            })
            .collect(),
        one => {
            Ok(vec![PeerSection::deserialize(one)
                .map_err(|e| D::Error::custom(format!("peer: {e}")))?])
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PeerSection {
    name: Option<String>,
    public_key: String,
    preshared_key: Option<String>,
    #[serde(default)]
    allowed_ips: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, default)]
struct LivenessSection {
    probe_interval_ms: u64,
    dead_after_ms: u64,
}

impl Default for LivenessSection {
    fn default() -> Self {
        LivenessSection { probe_interval_ms: 100, dead_after_ms: 1000 }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PathSection {
    name: String,
    bind: String,
    device: Option<String>,
    remote: Option<String>,
    cost: Option<u32>,
}

impl DaemonConfig {
    /// Reads and checks a configuration file. A relative `private_key_file` is taken relative
    /// to the file's directory.
    pub fn load(path: impl AsRef<Path>) -> Result<DaemonConfig, ConfigError> {
        use std::io::Read;
        use std::os::unix::fs::PermissionsExt;
        let path = path.as_ref();
        let read_err = |source| ConfigError::Read { path: path.to_path_buf(), source };
        // The file may hold the private key and the PSK inline: wiped once parsed, and its mode
        // read from the opened file, as read_secret_file does for a key file.
        let mut file = fs::File::open(path).map_err(read_err)?;
        let mode = file.metadata().map_err(read_err)?.permissions().mode() & 0o777;
        let mut text = Zeroizing::new(String::new());
        file.read_to_string(&mut text).map_err(read_err)?;
        let mut config = DaemonConfig::from_toml_str(&text)?;
        let inline_secret = if matches!(config.private_key, KeySource::Inline(_)) {
            Some("interface.private_key".to_string())
        } else {
            config
                .peers
                .iter()
                .position(|p| p.preshared_key.is_some())
                .map(|n| config.peer_field(n, "preshared_key"))
        };
        if let Some(field) = inline_secret.filter(|_| mode & 0o077 != 0) {
            let shown = path.display();
            return Err(invalid(
                field,
                format!(
                    "is written in {shown}, which has mode {mode:04o}, open to group or others;                      a file holding a key must be 0600 or stricter: run `chmod 600 {shown}` (or                      move the key to interface.private_key_file)"
                ),
            ));
        }
        if let (KeySource::File(key), Some(dir)) = (&config.private_key, path.parent()) {
            config.private_key = KeySource::File(dir.join(key));
        }
        Ok(config)
    }

    /// Parses and checks configuration text.
    pub fn from_toml_str(text: &str) -> Result<DaemonConfig, ConfigError> {
        let file: FileConfig = toml::from_str(text)?;
        let i = file.interface;
        if i.name.is_empty() || i.name.len() > MAX_IFNAME_BYTES {
            return Err(invalid("interface.name", "must be 1..=15 bytes (Linux IFNAMSIZ)"));
        }
        if i.name.contains(['/', ' ', '\0']) {
            return Err(invalid("interface.name", "must not contain '/', spaces or NUL"));
        }
        let addresses = i
            .address
            .iter()
            .enumerate()
            .map(|(n, a)| a.parse().map_err(|e| invalid(format!("interface.address.{n}"), e)))
            .collect::<Result<Vec<IfAddr>, _>>()?;
        if addresses.iter().filter(|a| a.addr.is_ipv4()).count() > 1 {
            return Err(invalid(
                "interface.address",
                "at most one IPv4 address (any number of IPv6)",
            ));
        }
        if !MTU_RANGE.contains(&i.mtu) {
            return Err(invalid("interface.mtu", "must be in 576..=9000"));
        }
        if addresses.iter().any(|a| a.addr.is_ipv6()) && i.mtu < IPV6_MIN_MTU {
            return Err(invalid("interface.mtu", "must be at least 1280 with an IPv6 address"));
        }
        let private_key = match (i.private_key, i.private_key_file) {
            (Some(k), None) => KeySource::Inline(SecretText::new(k)),
            (None, Some(p)) => KeySource::File(p),
            _ => {
                return Err(invalid(
                    "interface.private_key",
                    "give exactly one of private_key and private_key_file",
                ))
            }
        };
        let metrics_listen = i
            .metrics_listen
            .map(|s| {
                s.parse::<SocketAddr>()
                    .map_err(|_| invalid("interface.metrics_listen", "expected ADDRESS:PORT"))
            })
            .transpose()?;
        let control_socket = match i.control_socket {
            Some(p) => p,
            None => default_control_socket(&i.name),
        };
        if !control_socket.is_absolute() || control_socket.as_os_str().len() > MAX_SOCKET_PATH_BYTES
        {
            return Err(invalid(
                "interface.control_socket",
                format!(
                    "must be an absolute path of at most {MAX_SOCKET_PATH_BYTES} bytes (sun_path)"
                ),
            ));
        }
        let cipher = match i.cipher {
            Some(name) => {
                name.parse::<Cipher>().map_err(|e| invalid("interface.cipher", e.to_string()))?
            }
            None => Cipher::default(),
        };
        let liveness = check_liveness(&file.liveness)?;
        let routing = check_routing(&i.routes, i.table, i.fwmark)?;
        let mut paths = check_paths(i.role, file.paths)?;
        for p in &mut paths {
            p.fwmark = routing.as_ref().map(|r| r.fwmark);
        }
        let tunnel = tunnel_section(file.tunnel, i.transport)?;
        if tunnel.transport != i.transport {
            return Err(invalid(
                "tunnel.transport",
                format!(
                    "the daemon's transport is interface.transport (\"{}\"): remove it",
                    i.transport
                ),
            ));
        }
        tunnel.validate().map_err(tunnel_error)?;
        if tunnel.header_bytes != TunnelSection::default().header_bytes {
            return Err(invalid(
                "tunnel.header_bytes",
                "the data plane derives it from the real headers (outer IP, UDP, crypto, braid): remove it",
            ));
        }
        if tunnel.mtu_bytes.is_some() {
            return Err(invalid(
                "tunnel.mtu_bytes",
                "the TUN's MTU is interface.mtu: set it there and remove this",
            ));
        }
        check_tcp_table(&tunnel.tcp)?;
        if i.transport == Transport::Tcp {
            check_tunnel(&tunnel)?;
            if i.compact == Some(true) {
                return Err(invalid(
                    "interface.compact",
                    "compact messages are UDP datagrams: a TCP path frames whole data headers \
                     into its stream; remove it or use transport = \"udp\"",
                ));
            }
        }
        let peers = check_peers(i.role, i.transport, file.peer)?;
        let config = DaemonConfig {
            name: i.name,
            role: i.role,
            addresses,
            mtu: i.mtu,
            private_key,
            peers,
            metrics_listen,
            control_socket,
            cipher,
            transport: i.transport,
            compact: i.compact.unwrap_or(i.transport == Transport::Udp),
            tunnel,
            liveness,
            paths,
            routing,
        };
        config
            .core_config()
            .validate()
            .map_err(|e| invalid(format!("tunnel.{}", e.field), e.detail))?;
        Ok(config)
    }

    /// The core's configuration as the daemon runs it: one core path per `[[path]]`, the
    /// header bytes of the real wire (outer IP and UDP of the paths' IP version, the crypto
    /// envelope and tag, the braid data header), the tunnel MSS as the MTU plus those, and
    /// pacing catch-up for a real event loop. Kernel TCP paths change a few of these
    /// ([`adapt_core_config`]).
    pub fn core_config(&self) -> braid_core::tunnel::TunnelConfig {
        let costs: Vec<u32> = self.paths.iter().map(|p| p.cost).collect();
        let mut core = self.tunnel.to_core(&costs, u32::from(self.mtu));
        let outer = if self.paths[0].bind.is_ipv4() { IPV4_UDP_BYTES } else { IPV6_UDP_BYTES };
        core.header_bytes = if self.compact {
            // Almost every data packet travels compact; the few that do not (see
            // crypto/compact.rs) are charged as if they did.
            core.use_compact_messages();
            outer + crate::crypto::COMPACT_OVERHEAD as u32
        } else {
            outer + (crate::crypto::OVERHEAD + DATA_HEADER_LEN) as u32
        };
        core.mss_bytes = u64::from(u32::from(self.mtu) + core.header_bytes);
        core.pacing_catch_up = PACING_CATCH_UP;
        if self.transport == Transport::Tcp {
            adapt_core_config(&mut core, self.mtu);
        }
        core
    }
}

impl DaemonConfig {
    /// The paths' names for the handshake, which matches them with the peer's by name.
    pub fn path_table(&self) -> PathTable {
        let names: Vec<&str> = self.paths.iter().map(|p| p.name.as_str()).collect();
        PathTable::new(&names).expect("check_paths admits only what a path table holds")
    }
}

/// The keys a configuration names, read and decoded.
pub struct Keys {
    pub local: PrivateKey,
    /// Each peer's public key and PSK, in the order of [`DaemonConfig::peers`].
    pub peers: Vec<(PublicKey, Option<PresharedKey>)>,
}

impl DaemonConfig {
    /// Reads and decodes the private key (from `private_key_file` if given), the peer's public
    /// key and the optional PSK.
    pub fn keys(&self) -> Result<Keys, ConfigError> {
        let key_err = |field: &str, e: KeyError| invalid(field, e.to_string());
        let local = match &self.private_key {
            KeySource::Inline(k) => PrivateKey::from_base64(k.expose()),
            KeySource::File(path) => {
                let text = read_secret_file("interface.private_key_file", path)?;
                PrivateKey::from_base64(&text)
            }
        }
        .map_err(|e| key_err("interface.private_key", e))?;
        let own = local.public_key();
        let mut peers: Vec<(PublicKey, Option<PresharedKey>)> = Vec::new();
        for (n, p) in self.peers.iter().enumerate() {
            let field = |f: &str| self.peer_field(n, f);
            let key = PublicKey::from_base64(&p.public_key)
                .map_err(|e| key_err(&field("public_key"), e))?;
            if key == own {
                return Err(invalid(
                    field("public_key"),
                    "is this host's own public key: give the other end's (`braid pubkey` of its \
                     private key)",
                ));
            }
            if let Some(m) = peers.iter().position(|(k, _)| *k == key) {
                return Err(invalid(
                    field("public_key"),
                    format!(
                        "is also {}: each peer needs its own key",
                        self.peer_field(m, "public_key")
                    ),
                ));
            }
            let psk = p
                .preshared_key
                .as_ref()
                .map(|k| PresharedKey::from_base64(k.expose()))
                .transpose()
                .map_err(|e| key_err(&field("preshared_key"), e))?;
            peers.push((key, psk));
        }
        Ok(Keys { local, peers })
    }

    /// The dotted name of peer `n`'s `field`: `peer.FIELD` with one `[peer]`, `peer.N.FIELD`
    /// with several.
    pub fn peer_field(&self, n: usize, field: &str) -> String {
        if self.peers.len() == 1 {
            format!("peer.{field}")
        } else {
            format!("peer.{n}.{field}")
        }
    }
}

/// Reads a file holding a secret, refusing one that group or others may read or write (as ssh
/// refuses such a private key): anyone who can read it can impersonate this host, and anyone who
/// can write it can swap in their own key. The mode is checked on the opened file, so a rename in
/// between cannot slip another file past the check.
fn read_secret_file(field: &str, path: &Path) -> Result<Zeroizing<String>, ConfigError> {
    use std::io::Read;
    use std::os::unix::fs::PermissionsExt;
    let shown = path.display();
    let mut file = fs::File::open(path).map_err(|e| invalid(field, format!("{shown}: {e}")))?;
    let meta = file.metadata().map_err(|e| invalid(field, format!("{shown}: {e}")))?;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(invalid(
            field,
            format!(
                "{shown} has mode {mode:04o}, open to group or others; a key file must be 0600 \
                 or stricter: run `chmod 600 {shown}`"
            ),
        ));
    }
    // Sized up front so that reading does not reallocate and leave copies of the key behind.
    let mut text = Zeroizing::new(String::with_capacity(meta.len() as usize + 1));
    file.read_to_string(&mut text).map_err(|e| invalid(field, format!("{shown}: {e}")))?;
    Ok(text)
}

/// The daemon's tunnel defaults for `transport` (module documentation).
pub fn default_tunnel(transport: Transport) -> TunnelSection {
    match transport {
        Transport::Udp => TunnelSection::bonding(),
        // Kernel-TCP paths keep the adaptive wait they were measured with (the UDP default's
        // fast loss detection was chosen from UDP paths only), and the kernel's own
        // acknowledgements and controllers: the UDP-only keys keep Table 1's values.
        Transport::Tcp => {
            let table_1 = TunnelSection::default();
            TunnelSection {
                transport: Transport::Tcp,
                cc: TunnelCc::Bbr,
                max_rtt_spread_ms: None,
                reorder: braid_core::reorder::ReorderKind::Adaptive,
                static_wait_ms: table_1.static_wait_ms,
                fast_loss_detection: false,
                feedback_every_pkts: table_1.feedback_every_pkts,
                bbr2: table_1.bbr2,
                ..TunnelSection::bonding()
            }
        }
    }
}

/// The `[tunnel]` table laid over [`default_tunnel`].
fn tunnel_section(table: toml::Table, transport: Transport) -> Result<TunnelSection, ConfigError> {
    TunnelSection::from_table_over(&default_tunnel(transport), table).map_err(tunnel_error)
}

/// A `[tunnel]` value the scenario's validation refused, under its dotted key.
fn tunnel_error(e: FieldError) -> ConfigError {
    match e {
        FieldError::InvalidValue { field, value, allowed } => {
            invalid(field, format!("{allowed}, found {value}"))
        }
        FieldError::BadField { field, reason } => invalid(field, reason),
        FieldError::UnknownField { field, allowed } => {
            invalid(field, format!("unknown key; expected one of: {allowed}"))
        }
        other @ FieldError::Serialize { .. } => invalid("tunnel", other.to_string()),
    }
}

/// `[tunnel.tcp]` describes what the simulator models; the daemon is one such writer, with its
/// own framing and the kernel's buffers, so it takes the defaults only.
fn check_tcp_table(t: &braid_config::TcpTable) -> Result<(), ConfigError> {
    let d = braid_config::TcpTable::default();
    let refuse = |field: &str, why: &str| Err(invalid(field, format!("{why}: remove it")));
    if t.writer != d.writer {
        return refuse("tunnel.tcp.writer", "the daemon writes while the window has room (cwnd)");
    }
    if t.frame_bytes != d.frame_bytes {
        return refuse("tunnel.tcp.frame_bytes", "the daemon frames with its real headers");
    }
    if t.wmem_max_bytes != d.wmem_max_bytes {
        return refuse("tunnel.tcp.wmem_max_bytes", "the kernel's net.ipv4.tcp_wmem sets it");
    }
    Ok(())
}

/// The kernel controller a `[tunnel]` section for TCP paths runs. The section's own validation
/// ([`TunnelSection::validate`], braid-config's `transport` module) has already refused what
/// TCP paths cannot do: a controller the kernel lacks, unreliable paths, UDP-only keys.
pub fn check_tunnel(t: &TunnelSection) -> Result<KernelCc, ConfigError> {
    t.validate().map_err(tunnel_error)?;
    KernelCc::for_tunnel_cc(t.cc).ok_or_else(|| {
        invalid("tunnel.cc", format!("{:?} is not a kernel TCP congestion control", t.cc.as_str()))
    })
}

/// The core configuration for TCP paths ([`braid_config::transport::adapt_core_for_tcp`]):
/// each packet costs its length prefix, encryption envelope and data header on the stream.
pub fn adapt_core_config(core: &mut braid_core::tunnel::TunnelConfig, mtu: u16) {
    let frame_bytes = (LENGTH_PREFIX_BYTES + crate::crypto::OVERHEAD + DATA_HEADER_LEN) as u32;
    braid_config::transport::adapt_core_for_tcp(core, frame_bytes, u32::from(mtu));
}

fn check_liveness(l: &LivenessSection) -> Result<LivenessConfig, ConfigError> {
    if !(10..=10_000).contains(&l.probe_interval_ms) {
        return Err(invalid("liveness.probe_interval_ms", "must be in 10..=10000"));
    }
    if l.dead_after_ms < 2 * l.probe_interval_ms || l.dead_after_ms > 60_000 {
        return Err(invalid(
            "liveness.dead_after_ms",
            "must be at least twice probe_interval_ms and at most 60000",
        ));
    }
    Ok(LivenessConfig {
        probe_interval: Duration::from_millis(l.probe_interval_ms),
        dead_after: Duration::from_millis(l.dead_after_ms),
    })
}

/// Most peers one server takes: key indices, metric series and the linear peer lookups of the
/// daemon are sized for tens of clients, not thousands.
pub const MAX_PEERS: usize = 64;

fn check_peers(
    role: Role,
    transport: Transport,
    sections: Vec<PeerSection>,
) -> Result<Vec<PeerConfig>, ConfigError> {
    let several = sections.len() > 1;
    let field = |n: usize, f: &str| {
        if several {
            format!("peer.{n}.{f}")
        } else {
            format!("peer.{f}")
        }
    };
    if sections.is_empty() {
        return Err(invalid("peer", "need a [peer] section"));
    }
    if role == Role::Client && several {
        return Err(invalid("peer", "a client has exactly one [peer] (the server)"));
    }
    if sections.len() > MAX_PEERS {
        return Err(invalid("peer", format!("at most {MAX_PEERS} [[peer]] sections")));
    }
    if several && transport == Transport::Tcp {
        return Err(invalid(
            "peer",
            "several peers need interface.transport = \"udp\" (a TCP path holds one connection)",
        ));
    }
    let mut peers: Vec<PeerConfig> = Vec::with_capacity(sections.len());
    for (n, p) in sections.into_iter().enumerate() {
        let name = p.name.unwrap_or_else(|| format!("peer{n}"));
        let name_ok = !name.is_empty()
            && name.len() <= 32
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !name_ok || peers.iter().any(|q| q.name == name) {
            return Err(invalid(
                field(n, "name"),
                "must be 1..=32 characters of [A-Za-z0-9_-], unique among the peers",
            ));
        }
        let allowed_ips = p
            .allowed_ips
            .iter()
            .enumerate()
            .map(|(k, a)| {
                a.parse::<IfAddr>()
                    .map_err(|e| invalid(format!("{}.{k}", field(n, "allowed_ips")), e))
            })
            .collect::<Result<Vec<IfAddr>, _>>()?;
        if several && allowed_ips.is_empty() {
            return Err(invalid(
                field(n, "allowed_ips"),
                "with several peers each needs the inner addresses it may use, e.g. [\"10.200.0.2/32\"]",
            ));
        }
        for (k, a) in allowed_ips.iter().enumerate() {
            for (m, q) in peers.iter().enumerate() {
                if let Some((j, b)) = q.allowed_ips.iter().enumerate().find(|(_, b)| a.overlaps(b))
                {
                    return Err(invalid(
                        format!("{}.{k}", field(n, "allowed_ips")),
                        format!("{a} overlaps {b} of {}.{j}", field(m, "allowed_ips")),
                    ));
                }
            }
        }
        peers.push(PeerConfig {
            name,
            public_key: p.public_key,
            preshared_key: p.preshared_key.map(SecretText::new),
            allowed_ips,
        });
    }
    Ok(peers)
}

/// `interface.routes`, `table` and `fwmark`: `None` without routes (then the other two must not
/// be given either: they would mean nothing).
fn check_routing(
    routes: &[String],
    table: Option<u32>,
    fwmark: Option<u32>,
) -> Result<Option<RoutingConfig>, ConfigError> {
    if routes.is_empty() {
        if table.is_some() || fwmark.is_some() {
            let field = if table.is_some() { "interface.table" } else { "interface.fwmark" };
            return Err(invalid(field, "means something only with interface.routes: remove it"));
        }
        return Ok(None);
    }
    let mut out: Vec<IfAddr> = Vec::with_capacity(routes.len());
    for (n, r) in routes.iter().enumerate() {
        let field = format!("interface.routes.{n}");
        let net: IfAddr = r.parse().map_err(|e| invalid(&field, e))?;
        if net.network() != net.addr {
            return Err(invalid(
                &field,
                format!(
                    "{r} has host bits set: give the network, {}/{}",
                    net.network(),
                    net.prefix_len
                ),
            ));
        }
        if out.contains(&net) {
            return Err(invalid(&field, format!("{r} is listed twice")));
        }
        out.push(net);
    }
    // 0 is unspecified; 253-255 are the kernel's default, main and local tables.
    let table = table.unwrap_or(DEFAULT_ROUTE_TABLE);
    if table == 0 || (253..=255).contains(&table) {
        return Err(invalid(
            "interface.table",
            "must be in 1..=4294967295 but not 253, 254 or 255 (the kernel's default, main and local tables)",
        ));
    }
    let fwmark = fwmark.unwrap_or(table);
    if fwmark == 0 {
        return Err(invalid("interface.fwmark", "must be in 1..=4294967295 (0 marks nothing)"));
    }
    Ok(Some(RoutingConfig { routes: out, table, fwmark }))
}

fn check_paths(role: Role, sections: Vec<PathSection>) -> Result<Vec<PathConfig>, ConfigError> {
    if sections.is_empty() || sections.len() > MAX_PATHS {
        return Err(invalid("path", format!("need 1..={MAX_PATHS} [[path]] sections")));
    }
    let mut paths: Vec<PathConfig> = Vec::with_capacity(sections.len());
    for (n, p) in sections.into_iter().enumerate() {
        let field = |f: &str| format!("path.{n}.{f}");
        if !path_table::valid_name(&p.name) || paths.iter().any(|q| q.name == p.name) {
            return Err(invalid(
                field("name"),
                format!(
                    "must be 1..={MAX_NAME_BYTES} bytes of [A-Za-z0-9._-], unique among the paths                      (the peer matches paths by name)"
                ),
            ));
        }
        let bind: SocketAddr = p
            .bind
            .parse()
            .map_err(|_| invalid(field("bind"), "expected ADDRESS:PORT, e.g. 192.168.1.2:0"))?;
        if role == Role::Server && bind.port() == 0 {
            return Err(invalid(field("bind"), "a server listens: give a port in 1..=65535"));
        }
        let remote = p
            .remote
            .map(|r| {
                r.parse::<SocketAddr>()
                    .map_err(|_| invalid(field("remote"), "expected ADDRESS:PORT"))
            })
            .transpose()?;
        match (role, remote) {
            (Role::Client, None) => {
                return Err(invalid(field("remote"), "a client needs the server's ADDRESS:PORT"))
            }
            (_, Some(r)) if r.is_ipv4() != bind.is_ipv4() => {
                return Err(invalid(field("remote"), "must be the same IP version as bind"))
            }
            _ => {}
        }
        if let Some(d) = &p.device {
            if d.is_empty() || d.len() > MAX_IFNAME_BYTES {
                return Err(invalid(field("device"), "must be 1..=15 bytes (Linux IFNAMSIZ)"));
            }
        }
        // Two sockets on one ADDRESS:PORT collide at bind time, unless both are bound to
        // (different) devices first, as the kernel's bind-conflict check allows; port 0 is any.
        let separate_devices =
            |q: &PathConfig| matches!((&p.device, &q.device), (Some(a), Some(b)) if a != b);
        let clash = |q: &PathConfig| bind.port() != 0 && q.bind == bind && !separate_devices(q);
        if let Some(m) = paths.iter().position(clash) {
            return Err(invalid(
                field("bind"),
                format!(
                    "{bind} is also path.{m}.bind: give each path its own ADDRESS:PORT (port 0 \
                     picks any, and may repeat), or bind both paths to different devices"
                ),
            ));
        }
        let cost = p.cost.unwrap_or(n as u32 + 1);
        paths.push(PathConfig { name: p.name, bind, device: p.device, remote, cost, fwmark: None });
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;
    use braid_core::tunnel::{Reliability, TunnelConfig};

    const CLIENT: &str = r#"
[interface]
name = "braid0"
role = "client"
address = ["10.200.0.2/24", "fd00:b::2/64"]
private_key = "k"
metrics_listen = "127.0.0.1:9477"
[peer]
public_key = "p"
[tunnel]
scheduler = "srtt"
cc = "cubic"
[[path]]
name = "wifi"
bind = "10.1.1.2:0"
device = "veth1"
remote = "10.1.1.1:5001"
[[path]]
name = "cell"
bind = "10.1.2.2:0"
remote = "10.1.2.1:5002"
cost = 7
"#;

    fn err_field(text: &str) -> String {
        match DaemonConfig::from_toml_str(text) {
            Err(ConfigError::Invalid { field, .. }) => field,
            other => panic!("expected an invalid field, got {other:?}"),
        }
    }

    #[test]
    fn a_full_client_config_parses_into_checked_values() {
        let c = DaemonConfig::from_toml_str(CLIENT).unwrap();
        assert_eq!(c.role, Role::Client);
        assert_eq!(c.addresses[0].to_string(), "10.200.0.2/24");
        assert_eq!(c.addresses[1].prefix_len, 64);
        assert_eq!(c.mtu, 1400);
        assert_eq!(c.paths.len(), 2);
        assert_eq!(c.paths[0].cost, 1, "cost defaults to the path's position");
        assert_eq!(c.paths[1].cost, 7);
        assert_eq!(c.paths[0].device.as_deref(), Some("veth1"));
        let core = c.core_config();
        assert_eq!(core.path_costs, vec![1, 7]);
        assert_eq!(core.scheduler, braid_core::sched::SchedulerKind::Srtt);
        // IPv4 paths, compact messages by default: outer IPv4 + UDP 28, compact header 4, tag 16.
        assert!(c.compact);
        assert_eq!(core.header_bytes, 28 + 4 + 16);
        assert_eq!(core.mss_bytes, 1400 + 48, "MTU plus the tunnel header");
        assert_eq!(core.compact_seq_reach, Some(1 << 13));
        // Full messages: envelope header 16, tag 16, data header 32.
        let full = DaemonConfig::from_toml_str(
            &CLIENT.replace("role = \"client\"", "role = \"client\"\ncompact = false"),
        )
        .unwrap();
        assert!(!full.compact);
        assert_eq!(full.core_config().header_bytes, 28 + 16 + 16 + 32);
        assert_eq!(full.core_config().compact_seq_reach, None);
        // What braid-core tells models of this wire (the simulator's sim.wire = "daemon").
        use braid_core::wire::overhead as wire;
        assert_eq!(core.header_bytes, wire::COMPACT_DATA_OVERHEAD);
        assert_eq!(full.core_config().header_bytes, wire::FULL_DATA_OVERHEAD);
        assert_eq!(crate::crypto::OVERHEAD as u32, wire::FULL_MESSAGE_BYTES);
        assert_eq!(crate::crypto::COMPACT_OVERHEAD as u32, wire::COMPACT_MESSAGE_BYTES);
        assert_eq!(core.compact_seq_reach, Some(wire::COMPACT_SEQ_REACH));
        assert_eq!(core.pacing_catch_up, Duration::from_millis(1));
        assert_eq!(c.liveness.dead_after, Duration::from_secs(1));
        assert_eq!(c.cipher, Cipher::Aes256Gcm, "AES-256-GCM unless configured");
        assert!(!format!("{c:?}").contains("\"k\""), "Debug never prints the key");
    }

    #[test]
    fn the_cipher_is_chosen_by_name_and_a_misspelling_lists_the_allowed_names() {
        let with = |name: &str| {
            CLIENT.replace("role = \"client\"", &format!("role = \"client\"\ncipher = \"{name}\""))
        };
        let c = DaemonConfig::from_toml_str(&with("chacha20-poly1305")).unwrap();
        assert_eq!(c.cipher, Cipher::ChaCha20Poly1305);
        let c = DaemonConfig::from_toml_str(&with("aes-256-gcm")).unwrap();
        assert_eq!(c.cipher, Cipher::Aes256Gcm);
        match DaemonConfig::from_toml_str(&with("chacha20poly1305")) {
            Err(ConfigError::Invalid { field, detail }) => {
                assert_eq!(field, "interface.cipher");
                assert!(detail.contains("aes-256-gcm"), "{detail}");
                assert!(detail.contains("chacha20-poly1305"), "{detail}");
            }
            other => panic!("expected interface.cipher to be refused, got {other:?}"),
        }
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            (CLIENT.replace("braid0", "a-name-longer-than-15"), "interface.name"),
            (CLIENT.replace("10.200.0.2/24", "10.200.0.2/33"), "interface.address.0"),
            (CLIENT.replace("role = \"client\"", "role = \"client\"\nmtu = 100"), "interface.mtu"),
            (CLIENT.replace("role = \"client\"", "role = \"client\"\nmtu = 1000"), "interface.mtu"),
            (CLIENT.replace("remote = \"10.1.1.1:5001\"", ""), "path.0.remote"),
            (CLIENT.replace("10.1.2.1:5002", "[fd00::1]:5002"), "path.1.remote"),
            (CLIENT.replace("name = \"cell\"", "name = \"wifi\""), "path.1.name"),
            (CLIENT.replace("name = \"cell\"", "name = \"cell 2\""), "path.1.name"),
            (CLIENT.replace("name = \"cell\"", "name = \"cellular-modem-1\""), "path.1.name"),
            (CLIENT.replace("bind = \"10.1.1.2:0\"", "bind = \"nowhere\""), "path.0.bind"),
            (CLIENT.replace("private_key = \"k\"", ""), "interface.private_key"),
            (CLIENT.replace("127.0.0.1:9477", "9477"), "interface.metrics_listen"),
            (format!("{CLIENT}[liveness]\nprobe_interval_ms = 5\n"), "liveness.probe_interval_ms"),
            (format!("{CLIENT}[liveness]\ndead_after_ms = 150\n"), "liveness.dead_after_ms"),
            (CLIENT.replace("cc = \"cubic\"", "cc = \"cubic\"\nsched_queue_pkts = 0"), "tunnel."),
            (
                CLIENT.replace("cc = \"cubic\"", "cc = \"cubic\"\nheader_bytes = 40"),
                "tunnel.header_bytes",
            ),
            (
                CLIENT.replace("cc = \"cubic\"", "cc = \"cubic\"\nmtu_bytes = 1400"),
                "tunnel.mtu_bytes",
            ),
        ];
        for (text, field) in cases {
            let got = err_field(&text);
            assert!(got.starts_with(field), "expected {field}, got {got}");
        }
    }

    #[test]
    fn routes_take_networks_and_mark_the_path_sockets() {
        let with = |extra: &str| {
            CLIENT.replace("role = \"client\"", &format!("role = \"client\"\n{extra}"))
        };
        let c = DaemonConfig::from_toml_str(&with("routes = [\"0.0.0.0/0\", \"fd00:9::/32\"]"))
            .unwrap();
        let r = c.routing.clone().unwrap();
        assert_eq!((r.table, r.fwmark), (DEFAULT_ROUTE_TABLE, DEFAULT_ROUTE_TABLE));
        assert_eq!(r.routes[1], "fd00:9::/32".parse().unwrap());
        assert!(c.paths.iter().all(|p| p.fwmark == Some(DEFAULT_ROUTE_TABLE)));
        let c =
            DaemonConfig::from_toml_str(&with("routes = [\"10.9.0.0/16\"]\ntable = 7\nfwmark = 9"))
                .unwrap();
        assert_eq!(c.routing.map(|r| (r.table, r.fwmark)), Some((7, 9)));
        let none = DaemonConfig::from_toml_str(CLIENT).unwrap();
        assert!(none.routing.is_none() && none.paths.iter().all(|p| p.fwmark.is_none()));
        let cases = [
            ("routes = [\"10.9.0.1/16\"]", "interface.routes.0", "10.9.0.0/16"),
            ("routes = [\"0.0.0.0/0\", \"10.9.0.0/33\"]", "interface.routes.1", "0..=32"),
            ("routes = [\"0.0.0.0/0\", \"0.0.0.0/0\"]", "interface.routes.1", "twice"),
            ("routes = [\"0.0.0.0/0\"]\ntable = 254", "interface.table", "main"),
            ("routes = [\"0.0.0.0/0\"]\nfwmark = 0", "interface.fwmark", "1..="),
            ("table = 7", "interface.table", "only with interface.routes"),
        ];
        for (extra, field, hint) in cases {
            match DaemonConfig::from_toml_str(&with(extra)) {
                Err(ConfigError::Invalid { field: f, detail }) => {
                    assert_eq!(f, field, "{extra}");
                    assert!(detail.contains(hint), "{extra}: {detail}");
                }
                other => panic!("{extra}: accepted: {other:?}"),
            }
        }
    }

    /// Paths travel in the handshake's path table: at most 8, as MPTCP's subflow limit.
    #[test]
    fn at_most_eight_paths_and_the_error_says_so() {
        let extra: String = (2..9)
            .map(|k| format!("[[path]]\nname = \"p{k}\"\nbind = \"10.1.{k}.2:0\"\nremote = \"10.1.{k}.1:5001\"\n"))
            .collect();
        assert!(DaemonConfig::from_toml_str(&format!(
            "{CLIENT}{}",
            &extra[..extra.rfind("[[path]]").unwrap()]
        ))
        .is_ok());
        match DaemonConfig::from_toml_str(&format!("{CLIENT}{extra}")) {
            Err(ConfigError::Invalid { field, detail }) => {
                assert_eq!(field, "path");
                assert!(detail.contains("1..=8"), "{detail}");
            }
            other => panic!("nine paths accepted: {other:?}"),
        }
    }

    #[test]
    fn a_server_listens_on_a_port_and_may_omit_remotes() {
        let server = CLIENT
            .replace("role = \"client\"", "role = \"server\"")
            .replace("10.1.1.2:0", "10.1.1.1:5001")
            .replace("10.1.2.2:0", "10.1.2.1:5002")
            .replace("remote = \"10.1.1.1:5001\"\n", "");
        let c = DaemonConfig::from_toml_str(&server).unwrap();
        assert_eq!(c.paths[0].remote, None);
        let no_port = server.replace("10.1.1.1:5001", "10.1.1.1:0");
        assert_eq!(err_field(&no_port), "path.0.bind");
    }

    /// A server's text with `peers` as its peer sections (each `(name, key, allowed_ips)`).
    fn server_with_peers(peers: &[(&str, &str, &str)]) -> String {
        let server = CLIENT
            .replace("role = \"client\"", "role = \"server\"")
            .replace("10.1.1.2:0", "10.1.1.1:5001")
            .replace("10.1.2.2:0", "10.1.2.1:5002")
            .replace("remote = \"10.1.1.1:5001\"\n", "")
            .replace("remote = \"10.1.2.1:5002\"\n", "")
            .replace("[peer]\npublic_key = \"p\"\n", "");
        let mut sections = String::new();
        for (name, key, allowed) in peers {
            sections.push_str(&format!(
                "[[peer]]\nname = \"{name}\"\npublic_key = \"{key}\"\nallowed_ips = [{allowed}]\n"
            ));
        }
        server.replace("[tunnel]", &format!("{sections}[tunnel]"))
    }

    #[test]
    fn a_server_takes_several_peers_each_with_its_own_addresses() {
        let two = server_with_peers(&[
            ("ue1", "a", "\"10.200.0.2/32\", \"fd00:b::2/128\""),
            ("ue2", "b", "\"10.200.0.3/32\""),
        ]);
        let c = DaemonConfig::from_toml_str(&two).unwrap();
        assert_eq!(c.peers.len(), 2);
        assert_eq!(c.peers[1].name, "ue2");
        assert!(c.peers[0].allows("10.200.0.2".parse().unwrap()));
        assert!(c.peers[0].allows("fd00:b::2".parse().unwrap()));
        assert!(!c.peers[0].allows("10.200.0.3".parse().unwrap()));
        assert!(c.peers[1].allows("10.200.0.3".parse().unwrap()));
        assert_eq!(c.peer_field(1, "public_key"), "peer.1.public_key");
        // One [peer] without allowed_ips allows everything; its fields are `peer.X`.
        let one = DaemonConfig::from_toml_str(CLIENT).unwrap();
        assert!(one.peers[0].allows("192.0.2.1".parse().unwrap()));
        assert_eq!(one.peer_field(0, "public_key"), "peer.public_key");
    }

    #[test]
    fn several_peers_are_refused_without_addresses_overlapping_on_a_client_or_over_tcp() {
        let no_ips = server_with_peers(&[("ue1", "a", "\"10.200.0.2/32\""), ("ue2", "b", "")]);
        assert_eq!(err_field(&no_ips), "peer.1.allowed_ips");
        let overlap = server_with_peers(&[
            ("ue1", "a", "\"10.200.0.0/24\""),
            ("ue2", "b", "\"10.200.1.1/32\", \"10.200.0.9/32\""),
        ]);
        let e = DaemonConfig::from_toml_str(&overlap).unwrap_err().to_string();
        assert!(
            e.starts_with("peer.1.allowed_ips.1:") && e.contains("peer.0.allowed_ips.0"),
            "{e}"
        );
        let same_name = server_with_peers(&[
            ("ue", "a", "\"10.200.0.2/32\""),
            ("ue", "b", "\"10.200.0.3/32\""),
        ]);
        assert_eq!(err_field(&same_name), "peer.1.name");
        let bad_net = server_with_peers(&[
            ("ue1", "a", "\"10.200.0.2/33\""),
            ("ue2", "b", "\"10.200.0.3/32\""),
        ]);
        assert_eq!(err_field(&bad_net), "peer.0.allowed_ips.0");
        let two = server_with_peers(&[
            ("ue1", "a", "\"10.200.0.2/32\""),
            ("ue2", "b", "\"10.200.0.3/32\""),
        ]);
        let tcp = two.replace("role = \"server\"", "role = \"server\"\ntransport = \"tcp\"");
        assert_eq!(err_field(&tcp), "peer");
        let client_two = CLIENT.replace(
            "[peer]\npublic_key = \"p\"\n",
            "[[peer]]\npublic_key = \"p\"\n[[peer]]\npublic_key = \"q\"\n",
        );
        assert_eq!(err_field(&client_two), "peer");
        let unknown = two.replace("name = \"ue2\"", "name = \"ue2\"\nendpoint = 1");
        let e = DaemonConfig::from_toml_str(&unknown).unwrap_err().to_string();
        assert!(e.contains("peer.1") && e.contains("endpoint"), "{e}");
    }

    #[test]
    fn two_peers_with_one_key_are_refused_naming_both() {
        let (private, _) = crate::crypto::generate_keypair().unwrap();
        let (_, peer) = crate::crypto::generate_keypair().unwrap();
        let key = peer.to_base64();
        let text = server_with_peers(&[
            ("ue1", &key, "\"10.200.0.2/32\""),
            ("ue2", &key, "\"10.200.0.3/32\""),
        ])
        .replace(
            "private_key = \"k\"",
            &format!("private_key = \"{}\"", private.to_base64().as_str()),
        );
        match DaemonConfig::from_toml_str(&text).unwrap().keys() {
            Err(ConfigError::Invalid { field, detail }) => {
                assert_eq!(field, "peer.1.public_key");
                assert!(detail.contains("peer.0.public_key"), "{detail}");
            }
            other => panic!("expected the second key refused, got {:?}", other.map(|_| "keys")),
        }
    }

    #[test]
    fn networks_contain_and_overlap_by_their_prefix() {
        let net = |s: &str| s.parse::<IfAddr>().unwrap();
        assert!(net("10.200.0.0/24").contains("10.200.0.255".parse().unwrap()));
        assert!(!net("10.200.0.0/24").contains("10.200.1.0".parse().unwrap()));
        assert!(net("0.0.0.0/0").contains("192.0.2.1".parse().unwrap()));
        assert!(!net("0.0.0.0/0").contains("::1".parse().unwrap()));
        assert!(net("fd00:b::/64").contains("fd00:b::ffff".parse().unwrap()));
        assert!(!net("fd00:b::/64").contains("fd00:c::1".parse().unwrap()));
        assert!(net("10.0.0.0/8").overlaps(&net("10.1.2.3/32")));
        assert!(net("10.1.2.3/32").overlaps(&net("10.0.0.0/8")));
        assert!(!net("10.1.2.3/32").overlaps(&net("10.1.2.4/32")));
    }

    #[test]
    fn tcp_paths_need_a_kernel_congestion_control_and_reliable_paths() {
        let tcp = CLIENT
            .replace("role = \"client\"", "role = \"client\"\ntransport = \"tcp\"")
            .replace("cc = \"cubic\"", "cc = \"cubic\"\nreliability = \"reliable\"");
        let c = DaemonConfig::from_toml_str(&tcp).unwrap();
        assert_eq!(c.transport, Transport::Tcp);
        // The stream carries length prefix 2 + envelope 32 + data header 32 per packet.
        assert_eq!(c.core_config().header_bytes, 66);
        assert!(!c.compact, "compact messages are datagrams");
        let compact = tcp.replace("transport = \"tcp\"", "transport = \"tcp\"\ncompact = true");
        assert_eq!(err_field(&compact), "interface.compact");
        assert_eq!(err_field(&tcp.replace("\"cubic\"", "\"bbr2\"")), "tunnel.cc");
        let e = DaemonConfig::from_toml_str(&tcp.replace("\"cubic\"", "\"ccid2\"")).unwrap_err();
        assert!(e.to_string().contains("newreno, cubic, bbr"), "names the allowed values: {e}");
        let unreliable = tcp.replace("\"reliable\"", "\"unreliable\"");
        assert_eq!(err_field(&unreliable), "tunnel.reliability");
        // The same tunnel section is fine over UDP, which is the default.
        let udp = unreliable.replace("transport = \"tcp\"\n", "");
        assert_eq!(DaemonConfig::from_toml_str(&udp).unwrap().transport, Transport::Udp);
        let e = DaemonConfig::from_toml_str(&tcp.replace("\"tcp\"", "\"quic\"")).unwrap_err();
        assert!(e.to_string().contains("udp") && e.to_string().contains("tcp"), "{e}");
    }

    /// Over TCP the kernel runs the congestion control: the tunnel controllers' tables,
    /// `counting`, path exclusion and the feedback settings reach no code, so a changed value
    /// is refused naming its key; the scheduler runs in user space and keeps its tables.
    #[test]
    fn tcp_paths_refuse_the_keys_only_udp_paths_read() {
        let tcp = CLIENT
            .replace("role = \"client\"", "role = \"client\"\ntransport = \"tcp\"")
            .replace("cc = \"cubic\"", "cc = \"cubic\"\nreliability = \"reliable\"");
        let udp = tcp.replace("transport = \"tcp\"\n", "");
        let in_tunnel = |text: &str, line: &str| {
            text.replace(
                "reliability = \"reliable\"",
                &format!("reliability = \"reliable\"\n{line}"),
            )
        };
        let cases = [
            (format!("{tcp}[tunnel.bbr2]\nbeta_percent = 50\n"), "tunnel.bbr2.beta_percent"),
            (format!("{tcp}[tunnel.coupled_cubic]\nbeta = 0.5\n"), "tunnel.coupled_cubic.beta"),
            (
                format!("{tcp}[tunnel.wvegas]\ngamma_pkts = 1\nqueue_drain = false\n"),
                "tunnel.wvegas.queue_drain",
            ),
            (in_tunnel(&tcp, "counting = \"packets\""), "tunnel.counting"),
            (in_tunnel(&tcp, "max_rtt_spread_ms = 50.0"), "tunnel.max_rtt_spread_ms"),
            (in_tunnel(&tcp, "feedback_every_pkts = 4"), "tunnel.feedback_every_pkts"),
            (in_tunnel(&tcp, "feedback_max_delay_ms = 5.0"), "tunnel.feedback_max_delay_ms"),
        ];
        for (text, key) in cases {
            match DaemonConfig::from_toml_str(&text) {
                Err(ConfigError::Invalid { field, detail }) => {
                    assert_eq!(field, key);
                    assert!(detail.contains("UDP transport only"), "{detail}");
                }
                other => panic!("expected {key} to be refused over tcp, got {other:?}"),
            }
            // The same section over UDP, which reads it, is accepted.
            let over_udp = text.replace("transport = \"tcp\"\n", "");
            let c = DaemonConfig::from_toml_str(&over_udp).unwrap_or_else(|e| panic!("{key}: {e}"));
            assert_eq!(c.transport, Transport::Udp);
        }
        assert_eq!(
            DaemonConfig::from_toml_str(&format!("{tcp}[tunnel.bbr2]\nbeta_percent = 50\n"))
                .unwrap_err()
                .to_string(),
            "tunnel.bbr2.beta_percent: applies to the UDP transport only; over TCP the kernel runs each path's congestion control (tunnel.cc) with its own \
             parameters and window counting: remove it"
        );
        // Defaults written out (as `braid lab` writes the whole section) are not a change.
        let defaults =
            format!("{tcp}[tunnel.bbr2]\nbeta_percent = 70\nprobe_rtt_interval_ms = 5000.0\n");
        let defaults = in_tunnel(&defaults, "counting = \"auto\"\nfeedback_every_pkts = 2");
        DaemonConfig::from_toml_str(&defaults).unwrap();
        // The scheduler runs in user space over TCP too: its tables apply.
        let acpf =
            format!("{tcp}[tunnel.acpf]\nmin_fraction = 0.6\n").replace("\"srtt\"", "\"acpf\"");
        let core = DaemonConfig::from_toml_str(&acpf).unwrap().core_config();
        assert_eq!(core.sched.acpf.min_fraction, 0.6);
        assert!(DaemonConfig::from_toml_str(&udp).is_ok());
    }

    #[test]
    fn algorithm_tables_reach_the_core_config() {
        let text = format!("{CLIENT}[tunnel.acpf]\nmin_fraction = 0.6\n");
        let text = text.replace("\"srtt\"", "\"acpf\"");
        let core = DaemonConfig::from_toml_str(&text).unwrap().core_config();
        assert_eq!(core.scheduler, braid_core::sched::SchedulerKind::Acpf);
        assert_eq!((core.sched.acpf.min_fraction, core.sched.acpf.initial_fraction), (0.6, 0.6));
        let text = format!("{CLIENT}[tunnel.bbr2]\nloss_thresh_percent = 5\n");
        let core = DaemonConfig::from_toml_str(&text).unwrap().core_config();
        assert_eq!(core.cc_tuning.bbr2.loss_thresh_percent, 5);
    }

    #[test]
    fn a_bad_algorithm_parameter_is_refused_naming_its_key() {
        let text = format!("{CLIENT}[tunnel.acpf]\nmin_fraction = 0.0\n");
        match DaemonConfig::from_toml_str(&text) {
            Err(ConfigError::Invalid { field, detail }) => {
                assert_eq!(field, "tunnel.acpf.min_fraction");
                assert_eq!(detail, "must be in (0, 1], found 0");
            }
            other => panic!("expected tunnel.acpf.min_fraction to be refused, got {other:?}"),
        }
        let text = format!("{CLIENT}[tunnel.wvegas]\ntotal_alpha = 5\n");
        let e = DaemonConfig::from_toml_str(&text).unwrap_err().to_string();
        assert!(e.contains("total_alpha") && e.contains("total_alpha_pkts"), "{e}");
    }

    #[test]
    fn the_tunnel_defaults_are_for_bonding_and_a_section_changes_only_what_it_gives() {
        use braid_core::reorder::ReorderKind;
        use braid_core::sched::SchedulerKind;
        use braid_core::tunnel::Reliability;
        let no_section = CLIENT.replace("[tunnel]\nscheduler = \"srtt\"\ncc = \"cubic\"\n", "");
        let c = DaemonConfig::from_toml_str(&no_section).unwrap();
        assert_eq!(c.tunnel, TunnelSection::bonding());
        assert_eq!((c.tunnel.scheduler, c.tunnel.cc), (SchedulerKind::Acpf, TunnelCc::Bbr2));
        assert_eq!(
            (c.tunnel.reliability, c.tunnel.max_rtt_spread_ms),
            (Reliability::Reliable, Some(100.0))
        );
        assert_eq!(c.core_config().max_rtt_spread, Some(Duration::from_millis(100)));
        // The receiver over UDP paths: fast loss detection, at most 200 ms of static wait.
        let reorder = c.core_config().reorder;
        assert_eq!(
            (reorder.kind, reorder.static_wait, reorder.fast_loss_detection),
            (ReorderKind::Static, Duration::from_millis(200), true)
        );
        // CLIENT's section sets the scheduler and cc; the rest stays the bonding default.
        let c = DaemonConfig::from_toml_str(CLIENT).unwrap();
        assert_eq!((c.tunnel.scheduler, c.tunnel.cc), (SchedulerKind::Srtt, TunnelCc::Cubic));
        assert_eq!(
            (c.tunnel.reliability, c.tunnel.max_rtt_spread_ms),
            (Reliability::Reliable, Some(100.0))
        );
        assert_eq!(c.core_config().reorder.repair_wait, None, "off by default");
        // The repair wait, given, reaches the core; it needs reliable paths, and UDP ones.
        let with =
            |extra: &str| CLIENT.replace("cc = \"cubic\"", &format!("cc = \"cubic\"\n{extra}"));
        let c = DaemonConfig::from_toml_str(&with("repair_wait_ms = 200")).unwrap();
        assert_eq!(c.core_config().reorder.repair_wait, Some(Duration::from_millis(200)));
        let given = with("reliability = \"unreliable\"\nrepair_wait_ms = 200");
        let e = DaemonConfig::from_toml_str(&given).unwrap_err().to_string();
        assert!(e.contains("tunnel.repair_wait_ms") && e.contains("reliable"), "{e}");
        let off = CLIENT.replace("cc = \"cubic\"", "cc = \"cubic\"\nmax_rtt_spread_ms = \"off\"");
        let c = DaemonConfig::from_toml_str(&off).unwrap();
        assert_eq!((c.tunnel.max_rtt_spread_ms, c.core_config().max_rtt_spread), (None, None));
        // Kernel TCP paths have no BBRv2: their default is BBR, and the section still needs none.
        let tcp = no_section.replace("role = \"client\"", "role = \"client\"\ntransport = \"tcp\"");
        let c = DaemonConfig::from_toml_str(&tcp).unwrap();
        assert_eq!((c.tunnel.scheduler, c.tunnel.cc), (SchedulerKind::Acpf, TunnelCc::Bbr));
        assert_eq!(
            (c.tunnel.reliability, c.tunnel.max_rtt_spread_ms),
            (Reliability::Reliable, None)
        );
        // ... and keep the adaptive wait they were measured with.
        let reorder = c.core_config().reorder;
        assert_eq!((reorder.kind, reorder.fast_loss_detection), (ReorderKind::Adaptive, false));
        let given = format!("{tcp}[tunnel]\nrepair_wait_ms = 200\n");
        let e = DaemonConfig::from_toml_str(&given).unwrap_err().to_string();
        assert!(e.contains("tunnel.repair_wait_ms") && e.contains("UDP transport only"), "{e}");
    }

    #[test]
    fn time_sync_frames_come_every_millisecond_only_for_a_receiver_that_follows_the_delays() {
        let no_section = CLIENT.replace("[tunnel]\nscheduler = \"srtt\"\ncc = \"cubic\"\n", "");
        let interval = |text: &str| {
            DaemonConfig::from_toml_str(text).unwrap().core_config().owd_sample_interval
        };
        // The default receiver (static wait, fast loss detection): every 10 ms.
        assert_eq!(interval(&no_section), Some(Duration::from_millis(10)));
        // The adaptive wait and delay equalisation follow each path's latest delay: every 1 ms.
        for extra in ["reorder = \"adaptive\"", "equalize_delay = true"] {
            let text = format!("{no_section}[tunnel]\n{extra}\n");
            assert_eq!(interval(&text), Some(Duration::from_millis(1)), "{extra}");
        }
        // Full messages carry a timestamp in every header: no time-sync frames.
        let full = no_section.replace("role = \"client\"", "role = \"client\"\ncompact = false");
        assert_eq!(interval(&full), None);
    }

    #[test]
    fn misspelled_names_and_unknown_keys_are_refused_with_what_is_allowed() {
        let e = DaemonConfig::from_toml_str(&CLIENT.replace("\"srtt\"", "\"srt\"")).unwrap_err();
        assert!(e.to_string().contains("cpf"), "lists the schedulers: {e}");
        let e = DaemonConfig::from_toml_str(&CLIENT.replace("[peer]", "[peer]\nendpoint = 1"));
        assert!(e.unwrap_err().to_string().contains("endpoint"));
    }

    #[test]
    fn the_model_only_tcp_table_keeps_its_defaults_in_a_daemon() {
        for (line, key) in [
            ("writer = \"sndbuf\"", "tunnel.tcp.writer"),
            ("frame_bytes = 6", "tunnel.tcp.frame_bytes"),
            ("wmem_max_bytes = 8388608", "tunnel.tcp.wmem_max_bytes"),
        ] {
            assert_eq!(err_field(&format!("{CLIENT}[tunnel.tcp]\n{line}\n")), key);
        }
        DaemonConfig::from_toml_str(&format!("{CLIENT}[tunnel.tcp]\nwriter = \"cwnd\"\n")).unwrap();
    }

    #[test]
    fn a_tunnel_transport_other_than_the_interfaces_is_refused() {
        // The daemon's transport is interface.transport; a [tunnel] section that says
        // otherwise (a scenario's, pasted) is an error, not a silent choice.
        let tcp_tunnel = CLIENT.replace(
            "cc = \"cubic\"",
            "cc = \"cubic\"\ntransport = \"tcp\"\nreliability = \"reliable\"",
        );
        assert_eq!(err_field(&tcp_tunnel), "tunnel.transport");
        let both =
            tcp_tunnel.replace("role = \"client\"", "role = \"client\"\ntransport = \"tcp\"");
        assert_eq!(DaemonConfig::from_toml_str(&both).unwrap().transport, Transport::Tcp);
    }

    #[test]
    fn only_kernel_controllers_and_reliable_paths_pass() {
        let ok = TunnelSection {
            transport: Transport::Tcp,
            cc: TunnelCc::Cubic,
            reliability: Reliability::Reliable,
            ..TunnelSection::default()
        };
        assert_eq!(check_tunnel(&ok).unwrap(), KernelCc::Cubic);
        let field = |t: &TunnelSection| match check_tunnel(t) {
            Err(ConfigError::Invalid { field, detail }) => (field, detail),
            other => panic!("expected an invalid field, got {other:?}"),
        };
        let (f, detail) = field(&TunnelSection { cc: TunnelCc::Bbr2, ..ok.clone() });
        assert_eq!(f, "tunnel.cc");
        assert!(detail.contains("newreno, cubic, bbr") && detail.contains("TCP"), "{detail}");
        let (f, detail) = field(&TunnelSection { reliability: Reliability::Partial, ..ok.clone() });
        assert_eq!(f, "tunnel.reliability");
        assert!(detail.contains("reliable"), "{detail}");
    }

    #[test]
    fn the_core_charges_stream_bytes_and_skips_reassembly() {
        let mut core =
            TunnelConfig { reliability: Reliability::Reliable, ..TunnelConfig::default() };
        adapt_core_config(&mut core, 1400);
        // Length prefix 2 + envelope header 16 + tag 16 + data header 32 = 66 bytes.
        assert_eq!(core.header_bytes, 66);
        assert_eq!(core.mss_bytes, 1466);
        assert_eq!(core.reliability, Reliability::Unreliable);
        core.validate().unwrap();
    }

    /// A fresh directory under the system's temporary directory, removed by the caller.
    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("braid-config-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_key_file_open_to_group_or_others_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = temp_dir("key-mode");
        let key = dir.join("key");
        let (private, public) = crate::crypto::generate_keypair().unwrap();
        fs::write(&key, format!("{}\n", private.to_base64().as_str())).unwrap();
        let (_, peer) = crate::crypto::generate_keypair().unwrap();
        let text = CLIENT
            .replace("private_key = \"k\"", &format!("private_key_file = {:?}", key.display()))
            .replace("public_key = \"p\"", &format!("public_key = \"{}\"", peer.to_base64()));
        let config = DaemonConfig::from_toml_str(&text).unwrap();
        for mode in [0o644, 0o640, 0o604, 0o620] {
            fs::set_permissions(&key, fs::Permissions::from_mode(mode)).unwrap();
            match config.keys() {
                Err(ConfigError::Invalid { field, detail }) => {
                    assert_eq!(field, "interface.private_key_file");
                    assert!(detail.contains(&format!("chmod 600 {}", key.display())), "{detail}");
                }
                Err(e) => panic!("mode {mode:o}: expected the file refused, got {e}"),
                Ok(_) => panic!("mode {mode:o}: expected the file refused, got its keys"),
            }
        }
        for mode in [0o600, 0o400] {
            fs::set_permissions(&key, fs::Permissions::from_mode(mode)).unwrap();
            let keys = config.keys().unwrap_or_else(|e| panic!("mode {mode:o}: {e}"));
            assert_eq!(keys.local.public_key(), public);
            assert_eq!(keys.peers[0].0, peer);
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_config_file_with_an_inline_secret_open_to_group_or_others_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = temp_dir("inline-mode");
        let (private, _) = crate::crypto::generate_keypair().unwrap();
        let (_, peer) = crate::crypto::generate_keypair().unwrap();
        let inline = CLIENT
            .replace(
                "private_key = \"k\"",
                &format!("private_key = \"{}\"", private.to_base64().as_str()),
            )
            .replace("public_key = \"p\"", &format!("public_key = \"{}\"", peer.to_base64()));
        let key = dir.join("key");
        fs::write(&key, format!("{}\n", private.to_base64().as_str())).unwrap();
        fs::set_permissions(&key, fs::Permissions::from_mode(0o600)).unwrap();
        let psk = crate::crypto::keys::generate_preshared_key().unwrap();
        let psk_only = inline
            .replace(
                &format!("private_key = \"{}\"", private.to_base64().as_str()),
                &format!("private_key_file = {:?}", key.display()),
            )
            .replace(
                "[peer]\n",
                &format!("[peer]\npreshared_key = \"{}\"\n", psk.to_base64().as_str()),
            );
        let no_secret =
            psk_only.replace(&format!("preshared_key = \"{}\"\n", psk.to_base64().as_str()), "");
        for (name, text, field) in [
            ("inline.toml", &inline, Some("interface.private_key")),
            ("psk.toml", &psk_only, Some("peer.preshared_key")),
            ("files.toml", &no_secret, None),
        ] {
            let path = dir.join(name);
            fs::write(&path, text).unwrap();
            fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
            match (DaemonConfig::load(&path), field) {
                (Err(ConfigError::Invalid { field: f, detail }), Some(expected)) => {
                    assert_eq!(f, expected);
                    assert!(detail.contains("0644") && detail.contains("chmod 600"), "{detail}");
                }
                (Ok(_), None) => {}
                (other, _) => panic!("{name}: {:?}", other.map(|_| "loaded")),
            }
            fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
            DaemonConfig::load(&path).unwrap_or_else(|e| panic!("{name} at 0600: {e}"));
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn this_hosts_own_public_key_is_refused_as_the_peers() {
        let (private, public) = crate::crypto::generate_keypair().unwrap();
        let (_, other) = crate::crypto::generate_keypair().unwrap();
        let with_peer = |peer: &PublicKey| {
            let text = CLIENT
                .replace(
                    "private_key = \"k\"",
                    &format!("private_key = \"{}\"", private.to_base64().as_str()),
                )
                .replace("public_key = \"p\"", &format!("public_key = \"{}\"", peer.to_base64()));
            DaemonConfig::from_toml_str(&text).unwrap().keys()
        };
        match with_peer(&public) {
            Err(ConfigError::Invalid { field, detail }) => {
                assert_eq!(field, "peer.public_key");
                assert!(detail.contains("is this host's own public key"), "{detail}");
            }
            Err(e) => panic!("expected peer.public_key refused, got {e}"),
            Ok(_) => panic!("expected peer.public_key refused, got keys"),
        }
        assert_eq!(with_peer(&other).map(|k| k.peers[0].0).ok(), Some(other));
    }

    #[test]
    fn two_paths_on_one_address_and_port_are_refused_naming_both() {
        let both = |bind: &str| CLIENT.replace("10.1.1.2:0", bind).replace("10.1.2.2:0", bind);
        // Port 0 is any port: each socket gets its own.
        DaemonConfig::from_toml_str(&both("10.1.1.2:0")).unwrap();
        match DaemonConfig::from_toml_str(&both("10.1.1.2:4000")) {
            Err(ConfigError::Invalid { field, detail }) => {
                assert_eq!(field, "path.1.bind");
                assert!(detail.contains("path.0.bind"), "{detail}");
            }
            other => panic!("expected path.1.bind refused, got {other:?}"),
        }
        // The same port on another address, or on another device, does not collide.
        DaemonConfig::from_toml_str(
            &CLIENT.replace("10.1.1.2:0", "10.1.1.2:4000").replace("10.1.2.2:0", "10.1.2.2:4000"),
        )
        .unwrap();
        let devices =
            both("10.1.1.2:4000").replace("name = \"cell\"", "name = \"cell\"\ndevice = \"veth2\"");
        DaemonConfig::from_toml_str(&devices).unwrap();
        assert_eq!(err_field(&devices.replace("veth2", "veth1")), "path.1.bind");
    }

    #[test]
    fn debug_prints_neither_the_private_key_nor_the_psk() {
        let psk = crate::crypto::keys::generate_preshared_key().unwrap();
        let psk = psk.to_base64();
        let text = CLIENT.replace(
            "public_key = \"p\"",
            &format!("public_key = \"p\"\npreshared_key = \"{}\"", psk.as_str()),
        );
        let c = DaemonConfig::from_toml_str(&text).unwrap();
        assert_eq!(c.peers[0].preshared_key.as_ref().map(SecretText::expose), Some(psk.as_str()));
        let printed = format!("{c:?}");
        assert!(!printed.contains(psk.as_str()), "Debug printed the PSK: {printed}");
        assert!(!printed.contains("\"k\""), "Debug printed the private key: {printed}");
    }
}
