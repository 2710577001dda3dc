//! How scenarios spell the link models of a path direction: the queue discipline
//! (`aqm`), random loss (`loss`) and a capacity trace (`trace`).
//!
//! ```toml
//! [[paths]]
//! aqm = "codel"                  # or "droptail"
//! codel_target_ms = 5.0
//! codel_interval_ms = 100.0
//! loss = 0.01                    # shorthand for { model = "bernoulli", p = 0.01 }; 0 is none
//! loss = { model = "gilbert_elliott", p = 0.01, r = 0.3, h = 0.0, k = 1.0 }
//! trace = "../traces/wifi-var.mahi"
//! ```

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use braid_core::linkmodel::{BernoulliConfig, GilbertElliottConfig, LossConfig, MahimahiTrace};
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::ScenarioError;

braid_core::named_enum! {
    /// The queue discipline of a path direction (`paths.N.aqm`, `paths.N.uplink_aqm`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum AqmChoice {
        what = "queue discipline";
        /// A FIFO that drops arrivals when full.
        DropTail => "droptail",
        /// The same FIFO under CoDel (RFC 8289), with the path's `codel_target_ms` and
        /// `codel_interval_ms`.
        CoDel => "codel",
    }
}

/// Random loss of a path direction (`paths.N.loss`, `paths.N.uplink_loss`): a table naming
/// the `model`, or a bare probability as shorthand for Bernoulli loss (0 meaning none).
///
/// Gilbert-Elliott uses the notation of Hasslinger and Hohlfeld (2008), see
/// [`braid_core::linkmodel::loss`]: `p` = P(Good -> Bad), `r` = P(Bad -> Good), packets are lost
/// with probability `1 - k` in Good and `1 - h` in Bad. `h` defaults to 0 and `k` to 1, the
/// Gilbert model, whose loss bursts last `1 / r` packets on average.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum LossChoice {
    #[default]
    None,
    Bernoulli {
        p: f64,
    },
    GilbertElliott {
        p: f64,
        r: f64,
        h: f64,
        k: f64,
    },
}

impl LossChoice {
    /// The shorthand `loss = p`: Bernoulli loss, or none for `p = 0`.
    pub fn from_probability(p: f64) -> Self {
        if p == 0.0 {
            LossChoice::None
        } else {
            LossChoice::Bernoulli { p }
        }
    }

    /// The core's loss configuration.
    pub fn to_config(self) -> LossConfig {
        match self {
            LossChoice::None => LossConfig::None,
            LossChoice::Bernoulli { p } => LossConfig::Bernoulli(BernoulliConfig { p }),
            LossChoice::GilbertElliott { p, r, h, k } => {
                LossConfig::GilbertElliott(GilbertElliottConfig { p, r, h, k })
            }
        }
    }
}

fn one() -> f64 {
    1.0
}

/// The table form of [`LossChoice`], strict about its fields.
#[derive(Deserialize)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
enum LossTable {
    None {},
    Bernoulli {
        p: f64,
    },
    GilbertElliott {
        p: f64,
        r: f64,
        #[serde(default)]
        h: f64,
        #[serde(default = "one")]
        k: f64,
    },
}

impl<'de> Deserialize<'de> for LossChoice {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct LossVisitor;
        impl<'de> Visitor<'de> for LossVisitor {
            type Value = LossChoice;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a loss probability, or a table with model = \"none\", \"bernoulli\" \
                     (p) or \"gilbert_elliott\" (p, r, h, k)",
                )
            }
            fn visit_f64<E: de::Error>(self, p: f64) -> Result<LossChoice, E> {
                Ok(LossChoice::from_probability(p))
            }
            fn visit_i64<E: de::Error>(self, p: i64) -> Result<LossChoice, E> {
                Ok(LossChoice::from_probability(p as f64))
            }
            fn visit_u64<E: de::Error>(self, p: u64) -> Result<LossChoice, E> {
                Ok(LossChoice::from_probability(p as f64))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<LossChoice, A::Error> {
                Ok(match LossTable::deserialize(MapAccessDeserializer::new(map))? {
                    LossTable::None {} => LossChoice::None,
                    LossTable::Bernoulli { p } => LossChoice::Bernoulli { p },
                    LossTable::GilbertElliott { p, r, h, k } => {
                        LossChoice::GilbertElliott { p, r, h, k }
                    }
                })
            }
        }
        deserializer.deserialize_any(LossVisitor)
    }
}

/// A Mahimahi trace file named by a scenario (`paths.N.trace`, `paths.N.uplink_trace`).
///
/// [`super::Scenario::load`] joins a relative path to the scenario file's directory (made
/// absolute), so a resolved scenario written out and loaded elsewhere still finds the file;
/// scenarios parsed from text keep the path as written (relative to the working directory).
/// [`super::Scenario::resolved`] reads and parses the file once; clones share the parsed trace.
/// Two trace files are equal when their paths are.
#[derive(Clone)]
pub struct TraceFile {
    path: PathBuf,
    trace: Option<Arc<MahimahiTrace>>,
}

impl TraceFile {
    /// A trace file to be read when the scenario is resolved.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        TraceFile { path: path.into(), trace: None }
    }

    /// A trace already in memory; `path` only names it.
    pub fn with_trace(path: impl Into<PathBuf>, trace: Arc<MahimahiTrace>) -> Self {
        TraceFile { path: path.into(), trace: Some(trace) }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The parsed trace, once loaded.
    pub fn trace(&self) -> Option<&Arc<MahimahiTrace>> {
        self.trace.as_ref()
    }

    /// The parsed trace, read now if it was not loaded; `field` names the scenario field in
    /// errors.
    pub fn get(&self, field: &str) -> Result<Arc<MahimahiTrace>, ScenarioError> {
        match &self.trace {
            Some(trace) => Ok(Arc::clone(trace)),
            None => self.read(field).map(Arc::new),
        }
    }

    pub(crate) fn load(&mut self, field: &str) -> Result<(), ScenarioError> {
        if self.trace.is_none() {
            self.trace = Some(Arc::new(self.read(field)?));
        }
        Ok(())
    }

    fn read(&self, field: &str) -> Result<MahimahiTrace, ScenarioError> {
        let error = |message: String| ScenarioError::Trace {
            field: field.to_string(),
            path: self.path.clone(),
            message,
        };
        let text = std::fs::read_to_string(&self.path).map_err(|e| error(e.to_string()))?;
        MahimahiTrace::parse(&text).map_err(|e| error(e.to_string()))
    }

    /// Joins a relative path to `dir`, made absolute.
    pub(crate) fn rebase(&mut self, dir: &Path) {
        if self.path.is_absolute() {
            return;
        }
        let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        self.path = dir.join(&self.path);
    }
}

impl PartialEq for TraceFile {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path
    }
}

impl fmt::Debug for TraceFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TraceFile").field("path", &self.path).field("trace", &self.trace).finish()
    }
}

impl Serialize for TraceFile {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.path.to_str() {
            Some(path) => serializer.serialize_str(path),
            None => Err(serde::ser::Error::custom(format!(
                "trace path {} is not valid UTF-8",
                self.path.display()
            ))),
        }
    }
}

impl<'de> Deserialize<'de> for TraceFile {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let path = String::deserialize(deserializer)?;
        if path.trim().is_empty() {
            return Err(de::Error::custom("a trace file path must not be empty"));
        }
        Ok(TraceFile::new(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize, Serialize, PartialEq)]
    struct Holder {
        loss: LossChoice,
    }

    fn loss(text: &str) -> Result<LossChoice, String> {
        toml::from_str::<Holder>(text).map(|h| h.loss).map_err(|e| e.message().to_string())
    }

    #[test]
    fn loss_shorthand_and_tables() {
        assert_eq!(loss("loss = 0.0"), Ok(LossChoice::None));
        assert_eq!(loss("loss = 0"), Ok(LossChoice::None));
        assert_eq!(loss("loss = 0.25"), Ok(LossChoice::Bernoulli { p: 0.25 }));
        assert_eq!(loss("loss = { model = \"none\" }"), Ok(LossChoice::None));
        assert_eq!(
            loss("loss = { model = \"bernoulli\", p = 0.5 }"),
            Ok(LossChoice::Bernoulli { p: 0.5 })
        );
        // h and k default to the Gilbert model.
        assert_eq!(
            loss("[loss]\nmodel = \"gilbert_elliott\"\np = 0.01\nr = 0.3\n"),
            Ok(LossChoice::GilbertElliott { p: 0.01, r: 0.3, h: 0.0, k: 1.0 })
        );
    }

    #[test]
    fn loss_tables_reject_unknown_models_fields_and_missing_parameters() {
        let err = loss("loss = { model = \"uniform\" }").unwrap_err();
        assert!(err.contains("unknown variant `uniform`"), "{err}");
        assert!(err.contains("none") && err.contains("gilbert_elliott"), "{err}");
        let err = loss("loss = { model = \"bernoulli\", p = 0.1, q = 2 }").unwrap_err();
        assert!(err.contains("unknown field `q`"), "{err}");
        let err = loss("loss = { model = \"none\", p = 0.1 }").unwrap_err();
        assert!(err.contains("unknown field `p`"), "{err}");
        let err = loss("loss = { model = \"gilbert_elliott\", p = 0.1 }").unwrap_err();
        assert!(err.contains("missing field `r`"), "{err}");
        let err = loss("loss = { p = 0.1 }").unwrap_err();
        assert!(err.contains("model"), "{err}");
        let err = loss("loss = \"high\"").unwrap_err();
        assert!(err.contains("a loss probability, or a table"), "{err}");
    }

    #[test]
    fn loss_round_trips_through_toml() {
        for l in [
            LossChoice::None,
            LossChoice::Bernoulli { p: 0.125 },
            LossChoice::GilbertElliott { p: 0.01, r: 0.25, h: 0.5, k: 0.75 },
        ] {
            let text = toml::to_string(&Holder { loss: l }).unwrap();
            assert_eq!(loss(&text), Ok(l), "{text}");
        }
    }

    #[test]
    fn aqm_names() {
        for name in AqmChoice::NAMES {
            assert_eq!(name.parse::<AqmChoice>().unwrap().as_str(), *name);
        }
        let err = "red".parse::<AqmChoice>().unwrap_err().to_string();
        assert!(err.contains("\"red\"") && err.ends_with("droptail, codel"), "{err}");
    }

    #[test]
    fn trace_files_rebase_relative_paths_only() {
        let mut t = TraceFile::new("traces/a.mahi");
        t.rebase(Path::new("/srv/scenarios"));
        assert_eq!(t.path(), Path::new("/srv/scenarios/traces/a.mahi"));
        let mut abs = TraceFile::new("/data/b.mahi");
        abs.rebase(Path::new("/srv/scenarios"));
        assert_eq!(abs.path(), Path::new("/data/b.mahi"));
        let mut here = TraceFile::new("c.mahi");
        here.rebase(Path::new(""));
        assert!(here.path().is_absolute() && here.path().ends_with("c.mahi"), "{here:?}");
    }

    #[test]
    fn unreadable_and_malformed_traces_name_the_field_and_file() {
        let missing = TraceFile::new("/nonexistent/braid/x.mahi");
        let err = missing.get("paths.1.trace").unwrap_err().to_string();
        assert!(err.starts_with("paths.1.trace: trace file /nonexistent/braid/x.mahi: "), "{err}");
        let dir = std::env::temp_dir().join(format!("braid-trace-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("bad.mahi");
        std::fs::write(&file, "1\n3\n2\n").unwrap();
        let mut bad = TraceFile::new(&file);
        let err = bad.load("paths.0.trace").unwrap_err().to_string();
        assert!(err.contains("line 3: timestamp 2 ms is earlier than 3 ms"), "{err}");
        std::fs::write(&file, "1\n3\n").unwrap();
        bad.load("paths.0.trace").unwrap();
        assert_eq!(bad.trace().unwrap().period_ms(), 3);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
