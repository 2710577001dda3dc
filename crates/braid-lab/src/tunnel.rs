//! A `braid tunnel` pair in two namespaces: keys generated, one config file per side written,
//! both daemons started, and readiness awaited through their status endpoints.
//!
//! The server (proxy) side listens on each path's upstream end; the client (UE) side binds
//! each path's downstream end and knows the server's addresses. Inside the tunnel the server
//! is `10.200.0.1/24` and the client `10.200.0.2/24` unless the spec says otherwise; with
//! [`TunnelSpec::ipv6`] set they also have IPv6 addresses (by default `fd00:b::1/64` and
//! `fd00:b::2/64`, [`InnerIpv6::default`]).

use std::fmt::Write as _;
use std::fs;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use braid_config::TunnelConfig as TunnelSection;
use braid_net::crypto::{generate_keypair, Cipher};
use braid_net::metrics::{fetch_status, Snapshot};

use crate::netns::{run_in, Child, NetError};
use crate::topology::Endpoint;

/// UDP (or TCP) port of path `i` (0-based) at the server.
pub const BASE_PORT: u16 = 5100;
/// Metrics port of each daemon, on its namespace's loopback.
pub const METRICS_PORT: u16 = 9477;

/// What to start.
#[derive(Clone, Debug)]
pub struct TunnelSpec {
    pub server_ns: String,
    pub client_ns: String,
    /// Per path: (server end, client end), in path order.
    pub paths: Vec<(Endpoint, Endpoint)>,
    /// CPF costs, one per path.
    pub costs: Vec<u32>,
    pub tunnel: TunnelSection,
    pub mtu: u16,
    pub server_addr: Ipv4Addr,
    pub client_addr: Ipv4Addr,
    pub prefix_len: u8,
    /// IPv6 addresses inside the tunnel as well, when set.
    pub ipv6: Option<InnerIpv6>,
    /// Liveness: silence after which a path is declared down.
    pub dead_after_ms: u64,
    /// The AEAD both daemons use (`interface.cipher`).
    pub cipher: Cipher,
    /// The server's name for each path (in path order) where it differs from the client's
    /// `pathN`: a path only one end has (the handshake matches paths by name).
    pub server_names: Vec<Option<String>>,
    /// The server's file lists its paths in reverse order (paths are matched by name, not
    /// by position).
    pub server_reversed: bool,
    /// Prefixes the client routes through the tunnel (`interface.routes`).
    pub client_routes: Vec<String>,
}

/// The tunnel's inner IPv6 addresses. The daemon requires an MTU of at least 1280 with them
/// (RFC 8200 section 5); the default 1400 qualifies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InnerIpv6 {
    pub server_addr: Ipv6Addr,
    pub client_addr: Ipv6Addr,
    pub prefix_len: u8,
}

impl Default for InnerIpv6 {
    /// `fd00:b::1` and `fd00:b::2` in a /64: a unique local prefix (RFC 4193), like the IPv4
    /// side's private `10.200.0.0/24`.
    fn default() -> Self {
        InnerIpv6 {
            server_addr: Ipv6Addr::new(0xfd00, 0xb, 0, 0, 0, 0, 0, 1),
            client_addr: Ipv6Addr::new(0xfd00, 0xb, 0, 0, 0, 0, 0, 2),
            prefix_len: 64,
        }
    }
}

impl TunnelSpec {
    /// A spec with the default inner addresses, MTU 1400, the default cipher (AES-256-GCM) and
    /// the scenario's tunnel section.
    pub fn new(server_ns: &str, client_ns: &str, paths: Vec<(Endpoint, Endpoint)>) -> Self {
        let costs = (1..=paths.len() as u32).collect();
        TunnelSpec {
            server_ns: server_ns.into(),
            client_ns: client_ns.into(),
            paths,
            costs,
            tunnel: TunnelSection::default(),
            mtu: braid_net::config::DEFAULT_MTU,
            server_addr: Ipv4Addr::new(10, 200, 0, 1),
            client_addr: Ipv4Addr::new(10, 200, 0, 2),
            prefix_len: 24,
            ipv6: None,
            dead_after_ms: 1000,
            cipher: Cipher::default(),
            server_names: Vec::new(),
            server_reversed: false,
            client_routes: Vec::new(),
        }
    }
}

/// Two running daemons. Dropping it stops both and removes their config directory.
pub struct TunnelPair {
    // Field order is drop order: the daemons stop before their configs go.
    pub server: Child,
    pub client: Child,
    spec: TunnelSpec,
    server_public: String,
    dir: ConfigDir,
}

struct ConfigDir(PathBuf);

impl Drop for ConfigDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// TUN device name of each side.
pub const SERVER_IF: &str = "braid-s";
pub const CLIENT_IF: &str = "braid-c";

fn config_text(
    spec: &TunnelSpec,
    server: bool,
    keys: &Keys,
    control_socket: &Path,
) -> Result<String, NetError> {
    let toml_err = |e: toml::ser::Error| NetError::Sys {
        netns: String::new(),
        what: "writing a tunnel config".into(),
        message: e.to_string(),
    };
    let (name, role, private, peer) = if server {
        (SERVER_IF, "server", &keys.server_private, &keys.client_public)
    } else {
        (CLIENT_IF, "client", &keys.client_private, &keys.server_public)
    };
    let addresses = inner_addresses(spec, server)
        .iter()
        .map(|(a, len)| format!("\"{a}/{len}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let mut t = String::new();
    let _ = writeln!(t, "[interface]\nname = \"{name}\"\nrole = \"{role}\"");
    let _ = writeln!(t, "address = [{addresses}]\nmtu = {}", spec.mtu);
    let _ = writeln!(t, "private_key = \"{private}\"");
    let _ = writeln!(t, "metrics_listen = \"127.0.0.1:{METRICS_PORT}\"");
    // Beside the config, not in /run/braid: two lab pairs never share a socket.
    let _ = writeln!(t, "control_socket = \"{}\"", control_socket.display());
    let _ = writeln!(t, "cipher = \"{}\"", spec.cipher);
    // The daemon reads its transport from [interface]; the [tunnel] section below says the same.
    let _ = writeln!(t, "transport = \"{}\"", spec.tunnel.transport);
    if !server && !spec.client_routes.is_empty() {
        let routes: Vec<String> = spec.client_routes.iter().map(|r| format!("\"{r}\"")).collect();
        let _ = writeln!(t, "routes = [{}]", routes.join(", "));
    }
    let _ = writeln!(t, "[peer]\npublic_key = \"{peer}\"");
    let _ = writeln!(t, "[liveness]\ndead_after_ms = {}", spec.dead_after_ms);
    // Serialized under its key, so its algorithm tables are written as [tunnel.acpf], ...
    // Only the keys whose values differ from the daemon's built-in default: the daemon fills in
    // the same values for the rest, and a daemon of an older build (`braid lab --daemon`) is
    // not handed keys it does not know.
    let section = toml::Table::try_from(&spec.tunnel).map_err(toml_err)?;
    let bonding = toml::Table::try_from(TunnelSection::bonding()).map_err(toml_err)?;
    let differs: toml::Table =
        section.into_iter().filter(|(k, v)| bonding.get(k) != Some(v)).collect();
    let mut tunnel = toml::Table::new();
    tunnel.insert("tunnel".into(), toml::Value::Table(differs));
    let _ = writeln!(t, "{}", toml::to_string(&tunnel).map_err(toml_err)?);
    let mut order: Vec<usize> = (0..spec.paths.len()).collect();
    if server && spec.server_reversed {
        order.reverse();
    }
    for i in order {
        let ((s, c), cost) = (&spec.paths[i], spec.costs[i]);
        let port = BASE_PORT + i as u16;
        let renamed = spec.server_names.get(i).cloned().flatten().filter(|_| server);
        let name = renamed.unwrap_or_else(|| format!("path{}", i + 1));
        let _ = writeln!(t, "[[path]]\nname = \"{name}\"\ncost = {cost}");
        if server {
            let _ = writeln!(t, "bind = \"{}:{port}\"\ndevice = \"{}\"", s.addr, s.ifname);
        } else {
            let _ = writeln!(t, "bind = \"{}:0\"\ndevice = \"{}\"", c.addr, c.ifname);
            let _ = writeln!(t, "remote = \"{}:{port}\"", s.addr);
        }
    }
    Ok(t)
}

/// One side's inner addresses with their prefix lengths: IPv4, then IPv6 if the spec has it.
fn inner_addresses(spec: &TunnelSpec, server: bool) -> Vec<(IpAddr, u8)> {
    let v4 = if server { spec.server_addr } else { spec.client_addr };
    let mut out = vec![(IpAddr::V4(v4), spec.prefix_len)];
    if let Some(v6) = spec.ipv6 {
        let addr = if server { v6.server_addr } else { v6.client_addr };
        out.push((IpAddr::V6(addr), v6.prefix_len));
    }
    out
}

struct Keys {
    server_private: String,
    server_public: String,
    client_private: String,
    client_public: String,
}

fn keys() -> Result<Keys, NetError> {
    let gen = || {
        generate_keypair().map_err(|e| NetError::Sys {
            netns: String::new(),
            what: "generating keys".into(),
            message: e.to_string(),
        })
    };
    let (sp, spub) = gen()?;
    let (cp, cpub) = gen()?;
    Ok(Keys {
        server_private: sp.to_base64().to_string(),
        server_public: spub.to_base64(),
        client_private: cp.to_base64().to_string(),
        client_public: cpub.to_base64(),
    })
}

impl TunnelPair {
    /// Writes the configs under a fresh directory in the system temp dir, starts the server,
    /// waits until it answers status requests (it opens its path sockets first, so a client
    /// started earlier could find a TCP path's listener missing and retry only after
    /// `dead_after`), starts the client with `braid_exe`, and waits (up to `timeout` in all)
    /// until both report an established session with every path both ends name up: a run
    /// must not begin with a path still missing.
    pub fn start(spec: &TunnelSpec, braid_exe: &Path, timeout: Duration) -> Result<Self, NetError> {
        let dir = std::env::temp_dir().join(format!("{}-tunnel", spec.client_ns));
        fs::create_dir_all(&dir).map_err(|e| io_err(&spec.client_ns, "creating config dir", e))?;
        let dir = ConfigDir(dir);
        let keys = keys()?;
        let mut files = Vec::new();
        for (server, tag) in [(true, "server"), (false, "client")] {
            let path = dir.0.join(format!("{tag}.toml"));
            let text = config_text(spec, server, &keys, &dir.0.join(format!("{tag}.sock")))?;
            write_private(&path, &text)
                .map_err(|e| io_err(&spec.client_ns, "writing config", e))?;
            files.push(path);
        }
        let exe = braid_exe.to_string_lossy();
        let start = |ns: &str, file: &Path| {
            Child::spawn(Some(ns), &exe, &["tunnel", "--config", &file.to_string_lossy()])
        };
        let deadline = Instant::now() + timeout;
        let mut server = start(&spec.server_ns, &files[0])?;
        while status(&spec.server_ns).is_err() {
            if Instant::now() >= deadline || !server.is_running() {
                return Err(NetError::NotReady {
                    what: "braid tunnel server".into(),
                    marker: "status".into(),
                    timeout_ms: timeout.as_millis() as u64,
                    status: "the server never answered a status request".into(),
                    output: server.output_tail(),
                });
            }
            thread::sleep(Duration::from_millis(20));
        }
        let client = start(&spec.client_ns, &files[1])?;
        let server_public = keys.server_public.clone();
        let pair = TunnelPair { server, client, spec: spec.clone(), server_public, dir };
        pair.wait_ready(deadline, timeout)?;
        Ok(pair)
    }

    /// Waits until both ends are established and every path named at both ends is up at both.
    fn wait_ready(&self, deadline: Instant, timeout: Duration) -> Result<(), NetError> {
        loop {
            let (server, client) = (self.server_status().ok(), self.client_status().ok());
            let (s, c) = (server.as_ref(), client.as_ref());
            let established = |x: Option<&Snapshot>| x.is_some_and(|x| x.established);
            let down = s.zip(c).map(|(s, c)| shared_paths_down(s, c)).unwrap_or_default();
            if established(s) && established(c) && down.is_empty() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(NetError::NotReady {
                    what: "braid tunnel pair".into(),
                    marker: "established, every shared path up".into(),
                    timeout_ms: timeout.as_millis() as u64,
                    status: format!(
                        "server established {}, client established {}, paths down {down:?}",
                        established(s),
                        established(c)
                    ),
                    output: format!(
                        "server: {}\nclient: {}",
                        self.server.output_tail(),
                        self.client.output_tail()
                    ),
                });
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops the client daemon and starts a new one from the same config (a restarted
    /// process: new sockets, a new instance); returns how long its session took to be
    /// established, or `None` if it was not within `timeout`.
    pub fn restart_client(
        &mut self,
        braid_exe: &Path,
        timeout: Duration,
    ) -> Result<Option<Duration>, NetError> {
        self.client.stop();
        let file = self.config_file(false);
        let start = Instant::now();
        self.client = Child::spawn(
            Some(&self.spec.client_ns),
            &braid_exe.to_string_lossy(),
            &["tunnel", "--config", &file.to_string_lossy()],
        )?;
        while start.elapsed() < timeout {
            if self.client_status().is_ok_and(|s| s.established) {
                return Ok(Some(start.elapsed()));
            }
            thread::sleep(Duration::from_millis(20));
        }
        Ok(None)
    }

    /// The server's static public key (what a client, or an attacker, knows of it).
    pub fn server_public_key(&self) -> braid_net::crypto::PublicKey {
        braid_net::crypto::PublicKey::from_base64(&self.server_public)
            .expect("a key this pair generated")
    }

    /// The server daemon's status document.
    /// Both daemons' status and last log lines, for the message of a run that failed.
    pub fn describe(&self) -> String {
        let status = |r: Result<Snapshot, NetError>| match r {
            Ok(s) => serde_json::to_string(&s).unwrap_or_else(|e| e.to_string()),
            Err(e) => format!("no status: {e}"),
        };
        format!(
            "server status: {}\nserver log:\n{}\nclient status: {}\nclient log:\n{}",
            status(self.server_status()),
            self.server.output_tail(),
            status(self.client_status()),
            self.client.output_tail()
        )
    }

    pub fn server_status(&self) -> Result<Snapshot, NetError> {
        status(&self.spec.server_ns)
    }

    /// The client daemon's status document.
    pub fn client_status(&self) -> Result<Snapshot, NetError> {
        status(&self.spec.client_ns)
    }

    pub fn spec(&self) -> &TunnelSpec {
        &self.spec
    }

    /// Where the configs are (they hold private keys; removed on drop).
    pub fn config_dir(&self) -> &Path {
        &self.dir.0
    }

    /// The configuration file of the server's (`server`) or the client's daemon.
    pub fn config_file(&self, server: bool) -> std::path::PathBuf {
        self.dir.0.join(if server { "server.toml" } else { "client.toml" })
    }
}

/// The status document of the tunnel daemon in namespace `ns` (its metrics endpoint).
pub fn status(ns: &str) -> Result<Snapshot, NetError> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, METRICS_PORT));
    run_in(ns, move || fetch_status(addr))?.map_err(|e| NetError::Sys {
        netns: ns.to_string(),
        what: "reading tunnel status".into(),
        message: e.to_string(),
    })
}

/// The names of the paths both ends have of which either end reports down.
fn shared_paths_down(server: &Snapshot, client: &Snapshot) -> Vec<String> {
    let up = |snap: &Snapshot, name: &str| snap.paths.iter().any(|p| p.name == name && p.up);
    let known = |snap: &Snapshot, name: &str| snap.paths.iter().any(|p| p.name == name);
    server
        .paths
        .iter()
        .filter(|p| known(client, &p.name))
        .filter(|p| !up(server, &p.name) || !up(client, &p.name))
        .map(|p| p.name.clone())
        .collect()
}

/// Writes a file readable by its owner only: it holds a private key.
pub(crate) fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f =
        fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(path)?;
    f.write_all(text.as_bytes())
}

pub(crate) fn io_err(ns: &str, what: &str, e: std::io::Error) -> NetError {
    NetError::Sys { netns: ns.to_string(), what: what.into(), message: e.to_string() }
}

#[cfg(test)]
mod tests {
    /// A control socket path for configs that are only parsed.
    const TEST_SOCKET: &str = "/run/braid-test/x.sock";
    use super::*;
    use braid_net::config::{DaemonConfig, Role, Transport};

    fn spec() -> TunnelSpec {
        let end = |ns: &str, last: u8| Endpoint {
            netns: ns.into(),
            ifname: "p1".into(),
            addr: Ipv4Addr::new(10, 91, 0, last),
            prefix_len: 24,
        };
        TunnelSpec::new("prx", "ue", vec![(end("prx", 1), end("ue", 2))])
    }

    fn keys() -> Keys {
        let k = |s: &str| s.to_string();
        Keys {
            server_private: k("sp"),
            server_public: k("spub"),
            client_private: k("cp"),
            client_public: k("cpub"),
        }
    }

    /// The addresses the daemon reads back from the config a side is given.
    fn addresses(spec: &TunnelSpec, server: bool) -> Vec<String> {
        let text = config_text(spec, server, &keys(), Path::new(TEST_SOCKET)).unwrap();
        let cfg = DaemonConfig::from_toml_str(&text).unwrap();
        cfg.addresses.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn without_ipv6_each_side_gets_its_ipv4_address_only() {
        assert_eq!(addresses(&spec(), true), ["10.200.0.1/24"]);
        assert_eq!(addresses(&spec(), false), ["10.200.0.2/24"]);
    }

    #[test]
    fn with_ipv6_each_side_also_gets_its_ipv6_address() {
        let spec = TunnelSpec { ipv6: Some(InnerIpv6::default()), ..spec() };
        assert_eq!(addresses(&spec, true), ["10.200.0.1/24", "fd00:b::1/64"]);
        assert_eq!(addresses(&spec, false), ["10.200.0.2/24", "fd00:b::2/64"]);
    }

    #[test]
    fn both_configs_parse_and_carry_the_transport() {
        let mut spec = spec();
        spec.tunnel.transport = Transport::Tcp;
        spec.tunnel.reliability = braid_core::tunnel::Reliability::Reliable;
        let keys = keys();
        for (server, role) in [(true, Role::Server), (false, Role::Client)] {
            let text = config_text(&spec, server, &keys, Path::new(TEST_SOCKET)).unwrap();
            let c = DaemonConfig::from_toml_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
            assert_eq!((c.role, c.transport), (role, Transport::Tcp));
        }
        spec.tunnel.transport = Transport::Udp;
        spec.tunnel.reliability = braid_core::tunnel::Reliability::Unreliable;
        let text = config_text(&spec, false, &keys, Path::new(TEST_SOCKET)).unwrap();
        assert_eq!(DaemonConfig::from_toml_str(&text).unwrap().transport, Transport::Udp);
    }

    #[test]
    fn the_tunnel_section_reaches_the_daemon_with_its_algorithm_tables() {
        let mut spec = spec();
        spec.tunnel.scheduler = braid_core::sched::SchedulerKind::Acpf;
        spec.tunnel.acpf.min_fraction = 0.6;
        let text = config_text(&spec, false, &keys(), Path::new(TEST_SOCKET)).unwrap();
        let c = DaemonConfig::from_toml_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(c.tunnel, spec.tunnel);
        assert_eq!(c.core_config().sched.acpf.min_fraction, 0.6);
    }
}
