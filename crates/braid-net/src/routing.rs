//! Routes through the tunnel, installed at start and removed at exit, as wg-quick(8) does for
//! WireGuard: the prefixes of `interface.routes` go into their own routing table via the TUN
//! device, and two policy rules (ip-rule(8)) decide who uses it:
//!
//! ```text
//!   pref 31000: lookup main suppress_prefixlength 0   (only with a default route: the main
//!               table decides, except by its default route, so local networks stay direct)
//!   pref 31001: not fwmark MARK lookup TABLE          (everything but the tunnel's own sockets)
//! ```
//!
//! The path sockets carry MARK (SO_MARK, set in `socket.rs`), so the tunnel's datagrams leave
//! by the host's routes even when the default route is the tunnel's. The routes belong to the
//! TUN device, so the kernel deletes them with it whatever ends the daemon; the rules are
//! removed when [`Routes`] drops (normal exit, a signal, an error), and a rule of the same
//! preference, mark and table left by a daemon that was killed is removed before ours are
//! added. With a default route, `net.ipv4.conf.all.src_valid_mark` is set to 1, as wg-quick
//! does, so that reverse-path filtering takes the mark into account.
//!
//! The work is done by iproute2's `ip`, as wg-quick does: it is on every host that runs a
//! tunnel, and its errors are what an operator knows.

use std::net::IpAddr;
use std::process::Command;

use tracing::{info, warn};

use crate::config::{IfAddr, RoutingConfig};

/// Preference of the rule that lets the main table win but for its default route.
pub const SUPPRESS_PREF: u32 = 31_000;
/// Preference of the rule that sends unmarked traffic to the tunnel's table.
pub const TABLE_PREF: u32 = 31_001;

/// Why routes could not be installed.
#[derive(Debug, thiserror::Error)]
pub enum RoutingError {
    #[error("{field}: `ip {args}` failed: {message}")]
    Ip { field: String, args: String, message: String },
}

/// The rules this daemon added; removed on drop.
pub struct Routes {
    rules: Vec<Vec<String>>,
}

/// `-4` or `-6` for `ip`.
fn family(a: &IfAddr) -> &'static str {
    match a.addr {
        IpAddr::V4(_) => "-4",
        IpAddr::V6(_) => "-6",
    }
}

fn ip(args: &[String]) -> Result<(), String> {
    let out = Command::new("ip").args(args).output().map_err(|e| format!("running ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

impl Routes {
    /// Installs `cfg`'s routes via device `dev` and the rules that use them. On an error,
    /// what was added is removed again before the error returns.
    pub fn install(dev: &str, cfg: &RoutingConfig) -> Result<Routes, RoutingError> {
        let mut routes = Routes { rules: Vec::new() };
        let table = cfg.table.to_string();
        let mark = cfg.fwmark.to_string();
        for (n, r) in cfg.routes.iter().enumerate() {
            let prefix = format!("{}/{}", r.addr, r.prefix_len);
            let args = strings(&[family(r), "route", "add", &prefix, "dev", dev, "table", &table]);
            ip(&args).map_err(|message| RoutingError::Ip {
                field: format!("interface.routes.{n}"),
                args: args.join(" "),
                message,
            })?;
        }
        let families: Vec<&str> = ["-4", "-6"]
            .into_iter()
            .filter(|f| cfg.routes.iter().any(|r| family(r) == *f))
            .collect();
        for f in families {
            let default = cfg.routes.iter().any(|r| family(r) == f && r.prefix_len == 0);
            let mut rules = vec![strings(&[
                f,
                "rule",
                "add",
                "pref",
                &TABLE_PREF.to_string(),
                "not",
                "fwmark",
                &mark,
                "table",
                &table,
            ])];
            if default {
                rules.push(strings(&[
                    f,
                    "rule",
                    "add",
                    "pref",
                    &SUPPRESS_PREF.to_string(),
                    "table",
                    "main",
                    "suppress_prefixlength",
                    "0",
                ]));
            }
            for add in rules {
                let del: Vec<String> =
                    add.iter().map(|a| if a == "add" { "del".into() } else { a.clone() }).collect();
                // A rule left by a daemon that was killed: removed, as often as it is there.
                while ip(&del).is_ok() {
                    warn!(rule = %del[2..].join(" "), "removed a stale routing rule");
                }
                ip(&add).map_err(|message| RoutingError::Ip {
                    field: "interface.routes".into(),
                    args: add.join(" "),
                    message,
                })?;
                routes.rules.push(del);
            }
            if default && f == "-4" {
                if let Err(e) = std::fs::write("/proc/sys/net/ipv4/conf/all/src_valid_mark", "1\n")
                {
                    warn!(error = %e, "could not set net.ipv4.conf.all.src_valid_mark = 1");
                }
            }
        }
        info!(
            routes = %cfg.routes.iter().map(|r| format!("{}/{}", r.addr, r.prefix_len))
                .collect::<Vec<_>>().join(", "),
            table = cfg.table, fwmark = cfg.fwmark, "routes installed through the tunnel"
        );
        Ok(routes)
    }
}

impl Drop for Routes {
    /// Removes the rules (the routes go with the TUN device).
    fn drop(&mut self) {
        for del in self.rules.drain(..).rev() {
            if let Err(e) = ip(&del) {
                warn!(rule = %del[2..].join(" "), error = %e, "could not remove a routing rule");
            }
        }
    }
}
