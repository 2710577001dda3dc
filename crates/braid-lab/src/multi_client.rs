//! Several clients through one server, for real in namespaces: one proxy namespace running the
//! server daemon with a `[[peer]]` per client, and a namespace per client (UE) with its own
//! daemon, each joined to the proxy by two paths.
//!
//! ```text
//!   ue1  p1 ==htb== ┐ b1 (bridge, 10.61.0.1)   proxy: server daemon, TCP senders
//!        p2 ==htb== │ b2 (bridge, 10.62.0.1)
//!   ue2  p1 ==htb== ┘ ...                      UE j: 10.6k.0.(1+j) on path k
//! ```
//!
//! Every UE's path k shares the server's path-k socket (bound to bridge `bk`), as clients on
//! the Internet share a proxy's port. Inner addresses: the server 10.200.0.1, UE j
//! 10.200.0.(1+j), each UE's `allowed_ips` its own /32.

use std::fs;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use braid_net::crypto::generate_keypair;
use braid_net::metrics::Snapshot;

use crate::netns::{unique_prefix, veth_pair, Child, NetError, Netns};
use crate::topology::shape_htb;
use crate::tunnel::{io_err, status, write_private, BASE_PORT, CLIENT_IF, METRICS_PORT, SERVER_IF};

/// Paths per client.
const PATHS: u8 = 2;

/// The running bed: namespaces, daemons, configs. Dropping it stops the daemons, removes the
/// configs and the namespaces.
pub struct MultiClientBed {
    // Field order is drop order: daemons, then configs, then namespaces.
    server: Child,
    clients: Vec<Child>,
    dir: PathBuf,
    proxy: Netns,
    ues: Vec<Netns>,
}

impl Drop for MultiClientBed {
    fn drop(&mut self) {
        self.server.stop();
        for c in &mut self.clients {
            c.stop();
        }
        let _ = fs::remove_dir_all(&self.dir);
    }
}

fn key_err(e: impl std::fmt::Display) -> NetError {
    NetError::Sys { netns: String::new(), what: "generating keys".into(), message: e.to_string() }
}

impl MultiClientBed {
    /// Builds the namespaces for `clients` UEs, shapes each path to `rate_mbit` both ways,
    /// starts the server and every client with `braid_exe`, and waits (up to `timeout`) until
    /// the server has an established session with each.
    pub fn start(
        braid_exe: &Path,
        clients: usize,
        rate_mbit: u32,
        timeout: Duration,
    ) -> Result<MultiClientBed, NetError> {
        crate::netns::require_net_admin()?;
        let prefix = unique_prefix("bm");
        let proxy = Netns::create(&format!("{prefix}-prx"))?;
        let ues = (1..=clients)
            .map(|j| Netns::create(&format!("{prefix}-ue{j}")))
            .collect::<Result<Vec<_>, _>>()?;
        let shape = |ns: &Netns, dev: &str| shape_htb(ns, dev, f64::from(rate_mbit), 500);
        for k in 1..=PATHS {
            let b = format!("b{k}");
            proxy.ip(&["link", "add", "name", &b, "type", "bridge", "forward_delay", "0"])?;
            proxy.ip(&["addr", "add", &format!("10.6{k}.0.1/24"), "dev", &b])?;
            proxy.ip(&["link", "set", &b, "up"])?;
            for (j, ue) in ues.iter().enumerate() {
                let (u, port) = (format!("p{k}"), format!("u{}p{k}", j + 1));
                veth_pair(ue, &u, &proxy, &port)?;
                proxy.ip(&["link", "set", "dev", &port, "master", &b, "up"])?;
                ue.ip(&["addr", "add", &format!("10.6{k}.0.{}/24", j + 2), "dev", &u])?;
                ue.ip(&["link", "set", &u, "up"])?;
                shape(&proxy, &port)?;
                shape(ue, &u)?;
            }
        }
        for ns in ues.iter().chain([&proxy]) {
            ns.ip(&["link", "set", "lo", "up"])?;
        }
        let dir = std::env::temp_dir().join(format!("{prefix}-configs"));
        fs::create_dir_all(&dir).map_err(|e| io_err(proxy.name(), "creating the config dir", e))?;
        let (server_private, server_public) = generate_keypair().map_err(key_err)?;
        let mut server_text = format!(
            "[interface]\nname = \"{SERVER_IF}\"\nrole = \"server\"\naddress = [\"10.200.0.1/24\"]\n\
             private_key = \"{}\"\nmetrics_listen = \"127.0.0.1:{METRICS_PORT}\"\n\
             control_socket = \"{}\"\n",
            server_private.to_base64().as_str(),
            dir.join("server.sock").display()
        );
        let mut client_texts = Vec::new();
        for j in 1..=clients {
            let (private, public) = generate_keypair().map_err(key_err)?;
            server_text.push_str(&format!(
                "[[peer]]\nname = \"ue{j}\"\npublic_key = \"{}\"\nallowed_ips = [\"10.200.0.{}/32\"]\n",
                public.to_base64(),
                j + 1
            ));
            let mut t = format!(
                "[interface]\nname = \"{CLIENT_IF}\"\nrole = \"client\"\naddress = [\"10.200.0.{}/24\"]\n\
                 private_key = \"{}\"\nmetrics_listen = \"127.0.0.1:{METRICS_PORT}\"\n\
                 control_socket = \"{}\"\n[peer]\npublic_key = \"{}\"\n",
                j + 1,
                private.to_base64().as_str(),
                dir.join(format!("ue{j}.sock")).display(),
                server_public.to_base64()
            );
            for k in 1..=PATHS {
                t.push_str(&format!(
                    "[[path]]\nname = \"path{k}\"\nbind = \"10.6{k}.0.{}:0\"\ndevice = \"p{k}\"\n\
                     remote = \"10.6{k}.0.1:{}\"\n",
                    j + 1,
                    BASE_PORT + u16::from(k) - 1
                ));
            }
            client_texts.push(t);
        }
        for k in 1..=PATHS {
            server_text.push_str(&format!(
                "[[path]]\nname = \"path{k}\"\nbind = \"10.6{k}.0.1:{}\"\ndevice = \"b{k}\"\n",
                BASE_PORT + u16::from(k) - 1
            ));
        }
        let exe = braid_exe.to_string_lossy();
        let write = |name: &str, text: &str| -> Result<String, NetError> {
            let path = dir.join(name);
            write_private(&path, text).map_err(|e| io_err(proxy.name(), "writing a config", e))?;
            Ok(path.to_string_lossy().into_owned())
        };
        let server_file = write("server.toml", &server_text)?;
        let server = Child::spawn(Some(proxy.name()), &exe, &["tunnel", "--config", &server_file])?;
        let mut clients_run = Vec::new();
        for (j, text) in client_texts.iter().enumerate() {
            let file = write(&format!("ue{}.toml", j + 1), text)?;
            clients_run.push(Child::spawn(
                Some(ues[j].name()),
                &exe,
                &["tunnel", "--config", &file],
            )?);
        }
        let bed = MultiClientBed { server, clients: clients_run, dir, proxy, ues };
        let deadline = Instant::now() + timeout;
        loop {
            let ready = bed
                .server_status()
                .ok()
                .is_some_and(|s| s.peers.len() == clients && s.peers.iter().all(|p| p.established));
            if ready {
                return Ok(bed);
            }
            if Instant::now() >= deadline {
                return Err(NetError::NotReady {
                    what: "braid tunnel server with several clients".into(),
                    marker: "every peer established".into(),
                    timeout_ms: timeout.as_millis() as u64,
                    status: format!("{:?}", bed.server_status().map(|s| s.peers)),
                    output: bed.server.output_tail(),
                });
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn proxy(&self) -> &Netns {
        &self.proxy
    }

    /// UE `j` (from 0).
    pub fn ue(&self, j: usize) -> &Netns {
        &self.ues[j]
    }

    /// UE `j`'s inner address.
    pub fn client_addr(&self, j: usize) -> Ipv4Addr {
        Ipv4Addr::new(10, 200, 0, 2 + j as u8)
    }

    pub fn server_status(&self) -> Result<Snapshot, NetError> {
        status(self.proxy.name())
    }

    pub fn client_status(&self, j: usize) -> Result<Snapshot, NetError> {
        status(self.ues[j].name())
    }
}
