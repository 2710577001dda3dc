//! `braid linkem`: the user-space link emulator's command line ([`braid_lab::linkem`]).
//!
//! A plain option (`--rate`) sets both directions; its `-ab` / `-ba` forms override one
//! direction (ab = frames read on A, sent on B). Runs in the current network namespace in the
//! foreground, prints `linkem: ready` on stdout once both sockets are bound, and exits 0 on
//! SIGINT or SIGTERM after writing the per-direction counters to `--stats-json`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use braid_core::linkmodel::{CoDelConfig, LossConfig, MahimahiTrace};
use braid_lab::linkem::config::{
    check_buffer_pkts, check_delay, check_rate, parse_loss, AqmName, DEFAULT_BUFFER_PKTS,
};
use braid_lab::linkem::units::{parse_duration, parse_rate_bits_per_s};
use braid_lab::linkem::{AqmConfig, DirectionConfig, Linkem, LinkemConfig, Rate};
use braid_net::signal::TerminationSignals;

use crate::output::{outln, write_atomic};

/// How often the main thread looks whether a forwarding thread died while it waits for a
/// signal.
const SIGNAL_POLL: Duration = Duration::from_millis(200);

/// A rate on the command line: a `tc` bit rate or `unlimited`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateArg {
    Unlimited,
    BitsPerS(u64),
}

impl From<RateArg> for Rate {
    fn from(rate: RateArg) -> Rate {
        match rate {
            RateArg::Unlimited => Rate::Unlimited,
            RateArg::BitsPerS(bits) => Rate::BitsPerS(bits),
        }
    }
}

fn rate_arg(text: &str) -> Result<RateArg, String> {
    if text == "unlimited" {
        return Ok(RateArg::Unlimited);
    }
    let bits = parse_rate_bits_per_s(text).map_err(|e| format!("{e}, or unlimited"))?;
    check_rate(bits).map_err(|e| e.to_string())?;
    Ok(RateArg::BitsPerS(bits))
}

fn delay_arg(text: &str) -> Result<Duration, String> {
    let delay = parse_duration(text).map_err(|e| e.to_string())?;
    check_delay(delay).map_err(|e| e.to_string())?;
    Ok(delay)
}

fn codel_time_arg(text: &str) -> Result<Duration, String> {
    parse_duration(text).map_err(|e| e.to_string())
}

fn buffer_arg(text: &str) -> Result<usize, String> {
    let pkts: usize =
        text.parse().map_err(|_| format!("{text:?}: expected a whole number of packets"))?;
    check_buffer_pkts(pkts).map_err(|e| e.to_string())?;
    Ok(pkts)
}

fn loss_arg(text: &str) -> Result<LossConfig, String> {
    parse_loss(text).map_err(|e| e.to_string())
}

fn aqm_arg(text: &str) -> Result<AqmName, String> {
    text.parse().map_err(|e: braid_lab::linkem::config::AqmNameError| e.to_string())
}

/// Options of `braid linkem`.
#[derive(clap::Args, Debug)]
pub struct LinkemArgs {
    /// Interface A: frames read here cross the ab link and leave on B.
    #[arg(long = "a", value_name = "IF_A")]
    pub if_a: String,
    /// Interface B: frames read here cross the ba link and leave on A.
    #[arg(long = "b", value_name = "IF_B")]
    pub if_b: String,
    /// Rate of both directions in bit/s, tc units (50mbit, 1gbit), whole Ethernet frames
    /// counted as htb does; absent or `unlimited`: no limit.
    #[arg(long, value_parser = rate_arg)]
    pub rate: Option<RateArg>,
    /// --rate for A to B only.
    #[arg(long, value_parser = rate_arg, hide_short_help = true)]
    pub rate_ab: Option<RateArg>,
    /// --rate for B to A only.
    #[arg(long, value_parser = rate_arg, hide_short_help = true)]
    pub rate_ba: Option<RateArg>,
    /// Mahimahi trace file for both directions' capacity, instead of a rate (time zero is
    /// when linkem starts).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// --trace for A to B only.
    #[arg(long, value_name = "FILE", hide_short_help = true)]
    pub trace_ab: Option<PathBuf>,
    /// --trace for B to A only.
    #[arg(long, value_name = "FILE", hide_short_help = true)]
    pub trace_ba: Option<PathBuf>,
    /// One-way propagation delay of each direction (10ms, 250us); default 0.
    #[arg(long, value_parser = delay_arg)]
    pub delay: Option<Duration>,
    /// --delay for A to B only.
    #[arg(long, value_parser = delay_arg, hide_short_help = true)]
    pub delay_ab: Option<Duration>,
    /// --delay for B to A only.
    #[arg(long, value_parser = delay_arg, hide_short_help = true)]
    pub delay_ba: Option<Duration>,
    /// FIFO limit in packets, the frame being serialised not counted; default 1000.
    #[arg(long, value_parser = buffer_arg)]
    pub buffer_pkts: Option<usize>,
    /// --buffer-pkts for A to B only.
    #[arg(long, value_parser = buffer_arg, hide_short_help = true)]
    pub buffer_pkts_ab: Option<usize>,
    /// --buffer-pkts for B to A only.
    #[arg(long, value_parser = buffer_arg, hide_short_help = true)]
    pub buffer_pkts_ba: Option<usize>,
    /// Random loss: a probability (0.01, Bernoulli) or `ge:p=P,r=R[,h=H][,k=K]`
    /// (Gilbert-Elliott); default none.
    #[arg(long, value_parser = loss_arg)]
    pub loss: Option<LossConfig>,
    /// --loss for A to B only.
    #[arg(long, value_parser = loss_arg, hide_short_help = true)]
    pub loss_ab: Option<LossConfig>,
    /// --loss for B to A only.
    #[arg(long, value_parser = loss_arg, hide_short_help = true)]
    pub loss_ba: Option<LossConfig>,
    /// Queue discipline: droptail (default) or codel (RFC 8289).
    #[arg(long, value_parser = aqm_arg)]
    pub aqm: Option<AqmName>,
    /// --aqm for A to B only.
    #[arg(long, value_parser = aqm_arg, hide_short_help = true)]
    pub aqm_ab: Option<AqmName>,
    /// --aqm for B to A only.
    #[arg(long, value_parser = aqm_arg, hide_short_help = true)]
    pub aqm_ba: Option<AqmName>,
    /// CoDel TARGET (default 5ms), both directions.
    #[arg(long, value_parser = codel_time_arg)]
    pub codel_target: Option<Duration>,
    /// CoDel INTERVAL (default 100ms), both directions.
    #[arg(long, value_parser = codel_time_arg)]
    pub codel_interval: Option<Duration>,
    /// Seed of the random loss (the two directions draw from separate streams).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write per-direction counters (frames, bytes, drops by buffer, loss and CoDel, send
    /// lateness) as JSON to this file on exit.
    #[arg(long, value_name = "FILE")]
    pub stats_json: Option<PathBuf>,
}

/// One direction's options: the specific one if given, else the plain one.
struct DirectionArgs<'a> {
    name: &'static str,
    rate: (Option<RateArg>, Option<RateArg>),
    trace: (Option<&'a Path>, Option<&'a Path>),
    delay: Option<Duration>,
    buffer_pkts: Option<usize>,
    loss: Option<LossConfig>,
    aqm: Option<AqmName>,
}

impl LinkemArgs {
    /// The emulator's configuration, validated.
    pub fn to_config(&self) -> Result<LinkemConfig> {
        let ab = DirectionArgs {
            name: "ab",
            rate: (self.rate_ab, self.rate),
            trace: (self.trace_ab.as_deref(), self.trace.as_deref()),
            delay: self.delay_ab.or(self.delay),
            buffer_pkts: self.buffer_pkts_ab.or(self.buffer_pkts),
            loss: self.loss_ab.or(self.loss),
            aqm: self.aqm_ab.or(self.aqm),
        };
        let ba = DirectionArgs {
            name: "ba",
            rate: (self.rate_ba, self.rate),
            trace: (self.trace_ba.as_deref(), self.trace.as_deref()),
            delay: self.delay_ba.or(self.delay),
            buffer_pkts: self.buffer_pkts_ba.or(self.buffer_pkts),
            loss: self.loss_ba.or(self.loss),
            aqm: self.aqm_ba.or(self.aqm),
        };
        let config = LinkemConfig {
            if_a: self.if_a.clone(),
            if_b: self.if_b.clone(),
            ab: self.direction(&ab)?,
            ba: self.direction(&ba)?,
            seed: self.seed,
        };
        config.validate()?;
        Ok(config)
    }

    fn direction(&self, d: &DirectionArgs) -> Result<DirectionConfig> {
        // The direction's own options first, then the plain ones; at each level a trace and a
        // rate exclude each other.
        let conflict =
            || anyhow::anyhow!("a rate and a trace both set the {} capacity: give one", d.name);
        let rate = match (d.trace, d.rate) {
            ((Some(_), _), (Some(_), _)) => return Err(conflict()),
            ((Some(path), _), _) => load_trace(path)?,
            (_, (Some(rate), _)) => rate.into(),
            ((None, Some(_)), (None, Some(_))) => return Err(conflict()),
            ((None, Some(path)), _) => load_trace(path)?,
            (_, (None, Some(rate))) => rate.into(),
            ((None, None), (None, None)) => Rate::Unlimited,
        };
        let aqm = match d.aqm.unwrap_or(AqmName::DropTail) {
            AqmName::DropTail => AqmConfig::DropTail,
            AqmName::CoDel => {
                let defaults = CoDelConfig::default();
                AqmConfig::CoDel(CoDelConfig {
                    target: self.codel_target.unwrap_or(defaults.target),
                    interval: self.codel_interval.unwrap_or(defaults.interval),
                    ..defaults
                })
            }
        };
        Ok(DirectionConfig {
            rate,
            delay: d.delay.unwrap_or(Duration::ZERO),
            buffer_pkts: d.buffer_pkts.unwrap_or(DEFAULT_BUFFER_PKTS),
            loss: d.loss.unwrap_or(LossConfig::None),
            aqm,
        })
    }
}

fn load_trace(path: &Path) -> Result<Rate> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading trace {}", path.display()))?;
    let trace = MahimahiTrace::parse(&text).with_context(|| format!("trace {}", path.display()))?;
    Ok(Rate::Trace(Arc::new(trace)))
}

/// Runs the emulator until SIGINT or SIGTERM.
pub fn run(args: LinkemArgs) -> Result<()> {
    crate::logging::init(false)?;
    let config = args.to_config()?;
    // Blocked before the forwarding threads start, so they inherit the mask: a signal waits
    // for the loop below instead of killing the process mid-write.
    let signals = TerminationSignals::block()?;
    let linkem = Linkem::start(&config)?;
    outln!("linkem: ready")?;
    let mut died = false;
    while signals.wait(Some(SIGNAL_POLL)).is_none() {
        if linkem.is_finished() {
            died = true;
            break;
        }
    }
    let stats = linkem.stop();
    if let Some(path) = &args.stats_json {
        write_atomic(path, &serde_json::to_string_pretty(&stats)?)?;
    }
    if died {
        bail!("a forwarding thread stopped unexpectedly");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: LinkemArgs,
    }

    fn parse(extra: &[&str]) -> Result<LinkemConfig> {
        let argv = ["braid-linkem", "--a", "ea", "--b", "eb"].iter().chain(extra);
        let cli = Cli::try_parse_from(argv).map_err(|e| anyhow::anyhow!("{e}"))?;
        cli.args.to_config()
    }

    #[test]
    fn plain_options_set_both_directions_and_suffixed_ones_override() {
        let c = parse(&["--rate", "50mbit", "--delay", "10ms", "--delay-ba", "20ms"]).unwrap();
        assert_eq!(c.ab.rate, Rate::BitsPerS(50_000_000));
        assert_eq!(c.ba.rate, Rate::BitsPerS(50_000_000));
        assert_eq!(
            (c.ab.delay, c.ba.delay),
            (Duration::from_millis(10), Duration::from_millis(20))
        );
        let c = parse(&["--rate-ab", "1gbit", "--loss-ba", "0.01", "--buffer-pkts", "50"]).unwrap();
        assert_eq!((c.ab.rate, c.ba.rate), (Rate::BitsPerS(1_000_000_000), Rate::Unlimited));
        assert_eq!((c.ab.loss, c.ab.buffer_pkts, c.ba.buffer_pkts), (LossConfig::None, 50, 50));
        let c = parse(&["--rate", "10mbit", "--rate-ba", "unlimited"]).unwrap();
        assert_eq!(c.ba.rate, Rate::Unlimited);
    }

    #[test]
    fn defaults_are_a_transparent_link() {
        let c = parse(&[]).unwrap();
        assert_eq!(c.ab, DirectionConfig::default());
        assert_eq!(c.ba, DirectionConfig::default());
        assert_eq!(c.seed, 1);
    }

    #[test]
    fn codel_takes_the_shared_target_and_interval() {
        let c = parse(&["--aqm-ab", "codel", "--codel-target", "2ms"]).unwrap();
        let AqmConfig::CoDel(codel) = c.ab.aqm else { panic!("{:?}", c.ab.aqm) };
        assert_eq!(
            (codel.target, codel.interval),
            (Duration::from_millis(2), Duration::from_millis(100))
        );
        assert_eq!(c.ba.aqm, AqmConfig::DropTail);
        let err = parse(&["--aqm", "codel", "--codel-target", "200ms"]).unwrap_err();
        assert!(err.to_string().starts_with("ab: codel: target = 200ms"), "{err}");
    }

    #[test]
    fn bad_values_name_the_option_and_the_range() {
        let err = parse(&["--delay-ab", "11s"]).unwrap_err().to_string();
        assert!(err.contains("--delay-ab") && err.contains("must be in [0, 10s]"), "{err}");
        let err = parse(&["--rate", "50mbps"]).unwrap_err().to_string();
        assert!(err.contains("--rate") && err.contains("mbit"), "{err}");
        let err = parse(&["--buffer-pkts-ba", "0"]).unwrap_err().to_string();
        assert!(err.contains("--buffer-pkts-ba") && err.contains("[1, 1000000]"), "{err}");
        let err = parse(&["--loss", "1.5"]).unwrap_err().to_string();
        assert!(err.contains("--loss") && err.contains("[0, 1]"), "{err}");
        let err = parse(&["--aqm", "fq_codel"]).unwrap_err().to_string();
        assert!(err.contains("--aqm") && err.contains("droptail or codel"), "{err}");
    }

    #[test]
    fn a_rate_and_a_trace_for_one_direction_conflict() {
        let err = parse(&["--rate-ab", "5mbit", "--trace-ab", "x.mahi"]).unwrap_err();
        assert!(err.to_string().contains("both set the ab capacity"), "{err}");
        assert!(parse(&["--rate", "5mbit", "--trace", "x.mahi"]).is_err());
        // A trace for one direction overrides a plain rate.
        let dir = std::env::temp_dir().join(format!("linkem-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("one.mahi");
        std::fs::write(&file, "1\n").unwrap();
        let c = parse(&["--rate", "5mbit", "--trace-ba", file.to_str().unwrap()]).unwrap();
        assert!(matches!(c.ba.rate, Rate::Trace(_)), "{:?}", c.ba.rate);
        assert_eq!(c.ab.rate, Rate::BitsPerS(5_000_000));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
