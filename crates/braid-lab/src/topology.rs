//! Figure 1 of Pieska et al. 2024 in network namespaces, from a [`braid_sim::Scenario`]:
//!
//! ```text
//!  server ==(em0: server link)== proxy ==(em1: path 1)== ue
//!                                      ==(em2: path 2)==
//! ```
//!
//! Every link is `upstream --veth-- em<k> --veth-- downstream`, with the link's emulator inside
//! its own namespace `em<k>` ([`emulate`]): `em0` is the server link, `em<i>` path `i`
//! (1-based, as the paper numbers them). The emulator bridges at layer 2, so both ends of a link
//! share one /24: link `k` is `10.(90+k).0.0/24`, the upstream end `.1` and the downstream end
//! `.2` (server `10.90.0.1`, proxy `10.90.0.2`; path 1: proxy `10.91.0.1`, UE `10.91.0.2`).
//!
//! | namespace | interfaces |
//! |---|---|
//! | `{prefix}-srv` | `sl0` |
//! | `{prefix}-prx` | `sl0`, `p1`, `p2`, ... (IP forwarding on) |
//! | `{prefix}-ue`  | `p1`, `p2`, ... |
//! | `{prefix}-em<k>` | [`EM_IF_UP`], [`EM_IF_DOWN`] (+ `br0` with htb) |
//!
//! The server's default route points at the proxy. How the UE reaches the server is the run's
//! choice: [`Topology::route_single_path`] (the baseline of Pieska et al. 2024: no tunnel, one
//! path) or the tunnel, whose configuration the lead writes from [`Topology::paths`].
//!
//! Every veth has TSO, GSO and GRO off, so queues count real frames (docs/design.md section 7).
//! Reverse-path filtering is off on proxy and UE, where tunnel routes are asymmetric.
//!
//! Building stops at the first failing command; everything made until then is torn down by the
//! guards, as it is when the [`Topology`] drops.

pub mod emulate;

use std::net::Ipv4Addr;
use std::path::PathBuf;

use braid_sim::Scenario;

pub use emulate::{
    shape_htb, DirectionShape, Emulator, LinkCounters, LinkShape, QueueCounters, SendLateness,
    EM_IF_DOWN, EM_IF_UP,
};

use crate::netns::{unique_prefix, veth_pair, Child, NetError, Netns};

/// Tag of the test bed's names (`bl-{pid}-{n}-{role}`), for [`crate::netns::cleanup_stale`].
pub const TAG: &str = "bl";
/// Paths the addressing plan allows (`10.(90+k).0.0/24`).
pub const MAX_PATHS: usize = 16;
/// Second octet of link 0's subnet.
const SUBNET_BASE: u8 = 90;
const PREFIX_LEN: u8 = 24;
/// Interface name of the server link at the server and at the proxy.
const SERVER_LINK_IF: &str = "sl0";

/// One end of a link: where it lives and how it is addressed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub netns: String,
    pub ifname: String,
    pub addr: Ipv4Addr,
    pub prefix_len: u8,
}

impl Endpoint {
    /// `addr/prefix_len`, as `ip addr add` takes it.
    pub fn cidr(&self) -> String {
        format!("{}/{}", self.addr, self.prefix_len)
    }
}

/// One emulated link with its two ends: the hook for tunnel configuration and routes.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkEnds {
    /// 0 for the server link, `i` for path `i` (1-based).
    pub index: usize,
    /// Server (server link) or proxy (paths).
    pub upstream: Endpoint,
    /// Proxy (server link) or UE (paths).
    pub downstream: Endpoint,
    /// The namespace of the link's emulator.
    pub emulator_netns: String,
    pub shape: LinkShape,
}

/// Options of [`Topology::build`].
#[derive(Clone, Debug)]
pub struct TopologyOptions {
    /// Namespace name prefix; [`TopologyOptions::new`] makes a unique one.
    pub prefix: String,
    pub emulator: Emulator,
}

impl TopologyOptions {
    /// A unique prefix under [`TAG`], with the htb fallback emulator.
    pub fn new() -> Self {
        TopologyOptions { prefix: unique_prefix(TAG), emulator: Emulator::Htb }
    }
}

impl Default for TopologyOptions {
    fn default() -> Self {
        Self::new()
    }
}

/// The running topology. Dropping it stops the emulators, then deletes every namespace.
pub struct Topology {
    // Field order is drop order: processes first, then the namespaces they run in.
    emulators: Vec<Child>,
    /// Where each link's linkem writes its counters when it stops (`linkem-<k>.json`).
    stats_dir: StatsDir,
    links: Vec<LinkEnds>,
    emulator: Emulator,
    server: Netns,
    proxy: Netns,
    ue: Netns,
    emulator_ns: Vec<Netns>,
}

/// A directory of the emulators' counter files, removed with the topology.
struct StatsDir(PathBuf);

impl StatsDir {
    fn create(prefix: &str) -> Result<StatsDir, NetError> {
        let dir = std::env::temp_dir().join(format!("{prefix}-linkem-stats"));
        std::fs::create_dir_all(&dir).map_err(|e| NetError::File {
            what: "creating the emulators' counter directory",
            path: dir.display().to_string(),
            message: e.to_string(),
        })?;
        Ok(StatsDir(dir))
    }

    /// Link `k`'s counter file.
    fn link(&self, k: usize) -> PathBuf {
        self.0.join(format!("linkem-{k}.json"))
    }
}

impl Drop for StatsDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn subnet_addr(link: usize, host: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, SUBNET_BASE + link as u8, 0, host)
}

impl Topology {
    /// Builds Figure 1 for `scenario` (server link plus every path) and routes the server to
    /// the proxy. On error, whatever was created is removed before returning.
    pub fn build(scenario: &Scenario, opts: &TopologyOptions) -> Result<Topology, NetError> {
        crate::netns::require_net_admin()?;
        if scenario.paths.is_empty() || scenario.paths.len() > MAX_PATHS {
            return Err(NetError::BadName {
                what: "path count",
                name: scenario.paths.len().to_string(),
                allowed: format!("the test bed builds 1 to {MAX_PATHS} paths"),
            });
        }
        let p = &opts.prefix;
        // Created one by one: if a later one fails, the guards made so far drop and delete.
        let server = Netns::create(&format!("{p}-srv"))?;
        let proxy = Netns::create(&format!("{p}-prx"))?;
        let ue = Netns::create(&format!("{p}-ue"))?;
        let mut emulator_ns = Vec::new();
        for k in 0..=scenario.paths.len() {
            emulator_ns.push(Netns::create(&format!("{p}-em{k}"))?);
        }
        let stats_dir = StatsDir::create(p)?;
        let mut topo = Topology {
            emulators: Vec::new(),
            stats_dir,
            links: Vec::new(),
            emulator: opts.emulator.clone(),
            server,
            proxy,
            ue,
            emulator_ns,
        };
        topo.configure_sysctls()?;
        let shapes = std::iter::once(LinkShape::server_link(&scenario.server_link))
            .chain(scenario.paths.iter().map(LinkShape::path));
        for (k, shape) in shapes.enumerate() {
            topo.add_link(k, shape)?;
        }
        let gw = topo.links[0].downstream.addr.to_string();
        topo.server.ip(&["route", "add", "default", "via", &gw, "dev", SERVER_LINK_IF])?;
        Ok(topo)
    }

    fn configure_sysctls(&self) -> Result<(), NetError> {
        self.proxy.sysctl("net.ipv4.ip_forward", "1")?;
        for ns in [&self.proxy, &self.ue] {
            // The effective rp_filter is the maximum of `all` and the interface's value, which
            // new interfaces take from `default`: both must be 0 before the veths exist.
            ns.sysctl("net.ipv4.conf.all.rp_filter", "0")?;
            ns.sysctl("net.ipv4.conf.default.rp_filter", "0")?;
        }
        for em in &self.emulator_ns {
            // A bridge with IPv6 would send router solicitations and MLD reports of its own
            // through the emulated queues.
            em.sysctl("net.ipv6.conf.all.disable_ipv6", "1")?;
            em.sysctl("net.ipv6.conf.default.disable_ipv6", "1")?;
        }
        Ok(())
    }

    /// Creates link `k`: two veth pairs through `em<k>`, addresses, offloads off, emulator.
    fn add_link(&mut self, k: usize, shape: LinkShape) -> Result<(), NetError> {
        let (up_ns, down_ns, ifname) = if k == 0 {
            (&self.server, &self.proxy, SERVER_LINK_IF.to_string())
        } else {
            (&self.proxy, &self.ue, format!("p{k}"))
        };
        let em = &self.emulator_ns[k];
        veth_pair(up_ns, &ifname, em, EM_IF_UP)?;
        veth_pair(em, EM_IF_DOWN, down_ns, &ifname)?;
        let upstream = Endpoint {
            netns: up_ns.name().to_string(),
            ifname: ifname.clone(),
            addr: subnet_addr(k, 1),
            prefix_len: PREFIX_LEN,
        };
        let downstream = Endpoint {
            netns: down_ns.name().to_string(),
            ifname: ifname.clone(),
            addr: subnet_addr(k, 2),
            prefix_len: PREFIX_LEN,
        };
        for (ns, end) in [(up_ns, &upstream), (down_ns, &downstream)] {
            ns.disable_offloads(&end.ifname)?;
            ns.ip(&["addr", "add", &end.cidr(), "dev", &end.ifname])?;
            ns.ip(&["link", "set", "dev", &end.ifname, "up"])?;
        }
        for port in [EM_IF_UP, EM_IF_DOWN] {
            em.disable_offloads(port)?;
            em.ip(&["link", "set", "dev", port, "up"])?;
        }
        if let Some(child) = self.emulator.start(em, &shape, &self.stats_dir.link(k))? {
            self.emulators.push(child);
        }
        self.links.push(LinkEnds {
            index: k,
            upstream,
            downstream,
            emulator_netns: em.name().to_string(),
            shape,
        });
        Ok(())
    }

    pub fn server(&self) -> &Netns {
        &self.server
    }

    pub fn proxy(&self) -> &Netns {
        &self.proxy
    }

    pub fn ue(&self) -> &Netns {
        &self.ue
    }

    /// The server link's two ends (server upstream, proxy downstream).
    pub fn server_link(&self) -> &LinkEnds {
        &self.links[0]
    }

    /// Every path's two ends, path 1 first: proxy (upstream) and UE (downstream) namespace,
    /// interface and address. This is what a tunnel configuration needs: the UE binds path `i`
    /// to `paths()[i-1].downstream` and reaches the proxy at `paths()[i-1].upstream.addr`.
    pub fn paths(&self) -> &[LinkEnds] {
        &self.links[1..]
    }

    /// All namespaces of the topology, for checks and diagnostics.
    pub fn namespace_names(&self) -> Vec<String> {
        [&self.server, &self.proxy, &self.ue]
            .into_iter()
            .chain(&self.emulator_ns)
            .map(|n| n.name().to_string())
            .collect()
    }

    /// The server's address (its end of the server link).
    pub fn server_addr(&self) -> Ipv4Addr {
        self.links[0].upstream.addr
    }

    /// Routes the UE to the server over path `path` (1-based) alone, without a tunnel: the
    /// single-path baseline of Pieska et al. 2024. Replaces the UE's default route.
    pub fn route_single_path(&self, path: usize) -> Result<Ipv4Addr, NetError> {
        let ends = self.paths().get(path.wrapping_sub(1)).ok_or_else(|| NetError::BadName {
            what: "path",
            name: path.to_string(),
            allowed: format!("1 to {}", self.paths().len()),
        })?;
        let gw = ends.upstream.addr.to_string();
        self.ue.ip(&["route", "replace", "default", "via", &gw, "dev", &ends.downstream.ifname])?;
        Ok(ends.downstream.addr)
    }

    /// Counters of link `k`'s queues (0 = server link, `i` = path `i`): htb's at any time,
    /// linkem's once [`Topology::stop_emulators`] has run.
    pub fn counters(&self, k: usize) -> Result<Option<LinkCounters>, NetError> {
        match self.emulator_ns.get(k) {
            Some(em) => self.emulator.counters(em, &self.stats_dir.link(k)),
            None => Ok(None),
        }
    }

    /// Stops the emulator processes (linkem), which then write their counters; the links carry
    /// nothing more. Call once the transfer is over and before reading [`Topology::counters`].
    pub fn stop_emulators(&mut self) {
        for child in &mut self.emulators {
            child.stop();
        }
    }

    /// What of the scenario the emulator does not reproduce.
    pub fn not_emulated(&self) -> Vec<String> {
        self.links.iter().flat_map(|l| self.emulator.missing(&l.shape)).collect()
    }

    /// The emulator in use.
    pub fn emulator(&self) -> &Emulator {
        &self.emulator
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addressing_plan_gives_each_link_its_own_24() {
        assert_eq!(subnet_addr(0, 1), Ipv4Addr::new(10, 90, 0, 1));
        assert_eq!(subnet_addr(2, 2), Ipv4Addr::new(10, 92, 0, 2));
        assert_eq!(subnet_addr(MAX_PATHS, 2), Ipv4Addr::new(10, 106, 0, 2));
    }
}
