//! `braid tunnel`: run a tunnel endpoint in the foreground, or print a running one's status.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use braid_net::config::{default_control_socket, DaemonConfig};
use braid_net::control;
use braid_net::daemon::Daemon;
use braid_net::metrics::fetch_status;
use clap::{Args, Subcommand};

use crate::output::{out, outln};

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct TunnelArgs {
    #[command(subcommand)]
    action: Option<TunnelAction>,
    /// Configuration file (TOML): `[interface]`, `[peer]`, `[tunnel]`, `[[path]]`.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Log as JSON lines instead of text (RUST_LOG filters, default info).
    #[arg(long)]
    log_json: bool,
}

#[derive(Subcommand)]
enum TunnelAction {
    /// Validate a configuration without starting anything: its sections, ranges and key files
    /// (exit 0), or the first problem, naming the field (non-zero).
    Check {
        /// The configuration file to check.
        #[arg(long, value_name = "FILE")]
        config: PathBuf,
    },
    /// Print a running endpoint's paths, windows and counters as a table. By default it asks
    /// the endpoint's control socket (root only), found from --config or --interface.
    Status {
        /// The endpoint's configuration file (its interface.control_socket is asked).
        #[arg(long, value_name = "FILE", conflicts_with_all = ["interface", "metrics"])]
        config: Option<PathBuf>,
        /// The endpoint's interface name: its control socket at /run/braid/NAME.sock.
        #[arg(long, value_name = "NAME", conflicts_with = "metrics")]
        interface: Option<String>,
        /// Ask the endpoint's metrics address instead (interface.metrics_listen), e.g.
        /// 127.0.0.1:9477.
        #[arg(long, value_name = "ADDR")]
        metrics: Option<SocketAddr>,
        /// Print the status document as JSON.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(args: TunnelArgs) -> Result<()> {
    match args.action {
        Some(TunnelAction::Status { config, interface, metrics, json }) => {
            status(config, interface, metrics, json)
        }
        Some(TunnelAction::Check { config }) => check(&config),
        None => {
            let Some(path) = args.config else { bail!("--config FILE is required") };
            crate::logging::init(args.log_json)?;
            let cfg = DaemonConfig::load(&path).with_context(|| format!("{}", path.display()))?;
            let mut daemon = Daemon::new(cfg)?;
            daemon.run()?;
            Ok(())
        }
    }
}

/// Loads `path` as the daemon would (every section and range) and reads its keys, but opens
/// no socket and creates no device.
fn check(path: &std::path::Path) -> Result<()> {
    let shown = path.display();
    let cfg = DaemonConfig::load(path).with_context(|| format!("{shown}"))?;
    cfg.keys().with_context(|| format!("{shown}"))?;
    let paths: Vec<String> = cfg
        .paths
        .iter()
        .map(|p| {
            let device = p.device.as_deref().map(|d| format!(", device {d}")).unwrap_or_default();
            let remote = p.remote.map(|r| format!(", remote {r}")).unwrap_or_default();
            format!("{} (bind {}{device}{remote}, cost {})", p.name, p.bind, p.cost)
        })
        .collect();
    let peers: Vec<&str> = cfg.peers.iter().map(|p| p.name.as_str()).collect();
    let routes = match &cfg.routing {
        Some(r) => {
            let nets: Vec<String> =
                r.routes.iter().map(|n| format!("{}/{}", n.addr, n.prefix_len)).collect();
            format!("; routes {} (table {}, fwmark {:#x})", nets.join(", "), r.table, r.fwmark)
        }
        None => String::new(),
    };
    outln!(
        "{shown}: ok: {} {:?}, {} over {}, {} path(s): {}; {} peer(s): {}{routes}",
        cfg.role,
        cfg.name,
        cfg.cipher,
        cfg.transport,
        cfg.paths.len(),
        paths.join(", "),
        peers.len(),
        peers.join(", ")
    )?;
    Ok(())
}

fn status(
    config: Option<PathBuf>,
    interface: Option<String>,
    metrics: Option<SocketAddr>,
    json: bool,
) -> Result<()> {
    let snap = match (config, interface, metrics) {
        (_, _, Some(addr)) => fetch_status(addr)?,
        (Some(path), _, None) => {
            let cfg = DaemonConfig::load(&path).with_context(|| format!("{}", path.display()))?;
            control::fetch_status(&cfg.control_socket)?
        }
        (None, Some(name), None) => control::fetch_status(&default_control_socket(&name))?,
        (None, None, None) => bail!("give --config FILE, --interface NAME or --metrics ADDR"),
    };
    if json {
        outln!("{}", serde_json::to_string_pretty(&snap)?)?;
    } else {
        out!("{}", snap.to_table())?;
    }
    Ok(())
}
