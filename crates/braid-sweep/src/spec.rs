//! The sweep spec: a TOML file naming a base scenario, overrides for every run (`[set]`), the
//! axes whose cross product makes the cells (`[axes]`), the repetitions and whether each run
//! is compared with its single-path baseline.
//!
//! ```toml
//! base = "../scenarios/default.toml"   # relative to this file's folder, else to the cwd
//! reps = 3                             # 1..=1000, default 1
//! baseline = true                      # default false
//! noise = true                         # default true: the simulator's noise model
//! [set]
//! "e2e.bytes" = 20000000
//! [axes]
//! "e2e.cc" = ["cubic", "bbr"]
//! "tunnel.scheduler" = ["cpf", "srtt"]
//! ```
//!
//! Keys of `[set]` and `[axes]` are the dotted keys of `braid sim --set`. An unquoted dotted
//! key (`e2e.cc = [...]`) is a nested table in TOML; it is read as the same dotted key, so
//! both spellings mean one thing. Axes keep the order they are written in (the last varies
//! fastest), which plain TOML tables do not record: the order comes from the keys' positions
//! in the text.
//!
//! `noise` (default `true`) turns on the simulator's noise model
//! ([`braid_sim::scenario::NoiseConfig::host`], docs/design.md section 10) in every run, so
//! that repetitions with their different seeds are different runs, as the lab's repetitions
//! are. It is applied as `sim.noise.*` overrides before `[set]` and the axes, so a spec that
//! sets a `sim.noise` field itself (in `[set]` or on an axis) keeps its own value for it.
//! `noise = false` leaves the base scenario's noise fields alone (off unless it sets them).

use std::path::{Path, PathBuf};

use toml::de::{DeTable, DeValue};
use toml::{Table, Value};

pub use crate::axis::{Axis, AxisError, AxisValue};
use crate::hash::Fnv1a;

/// Most repetitions a spec may ask for.
pub const MAX_REPS: u32 = 1000;

/// The keys a spec may have at its top level.
const TOP_LEVEL_KEYS: &str = "base, reps, baseline, noise, set, axes";

/// Why a spec was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpecError {
    #[error("cannot read sweep spec {}: {message}", path.display())]
    Io { path: PathBuf, message: String },
    #[error("TOML syntax error in sweep spec {}: {message}", path.display())]
    Syntax { path: PathBuf, message: String },
    #[error("unknown key {key:?} in the sweep spec; expected one of: {TOP_LEVEL_KEYS}")]
    UnknownKey { key: String },
    #[error("the sweep spec has no `base`; give the scenario file the runs start from")]
    MissingBase,
    #[error("{key} must be {expected}, found {found}")]
    WrongType { key: String, expected: &'static str, found: String },
    #[error("reps = {value} is out of range; must be in 1..={MAX_REPS}")]
    Reps { value: i64 },
    #[error(
        "base scenario {base:?} not found: tried {} (next to the spec) and {} (current directory)",
        beside_spec.display(), in_cwd.display()
    )]
    BaseNotFound { base: String, beside_spec: PathBuf, in_cwd: PathBuf },
    #[error(
        "set.{key} is a datetime; values must be strings, numbers, booleans, arrays or tables"
    )]
    DatetimeValue { key: String },
    #[error(
        "{section}.{key} is given twice (once as a quoted dotted key, once as a nested table)"
    )]
    DuplicateKey { section: &'static str, key: String },
    #[error(
        "axes.{key}[{index}] sets {field}, which is also the column of axis {other}; each \
         scenario key may be swept by one axis only"
    )]
    ColumnClash { key: String, index: usize, field: String, other: String },
    #[error("--set {arg}: {message}")]
    CliSet { arg: String, message: String },
    #[error("axes.{key} has {count} values and the cross product of the axes is too large")]
    TooManyRuns { key: String, count: usize },
    #[error(transparent)]
    Axis(#[from] AxisError),
}

/// A validated sweep spec.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// `base` as written in the spec.
    pub base_as_written: String,
    /// The base scenario file, resolved against the spec's folder or the current directory.
    pub base: PathBuf,
    /// The base scenario file's text when the spec was loaded (part of the spec's hash).
    pub base_text: String,
    pub reps: u32,
    pub baseline: bool,
    /// Turn the simulator's noise model on in every run (see the module documentation).
    pub noise: bool,
    /// `[set]` as `dotted.key=value` overrides, applied to every run before the axes'.
    pub set: Vec<String>,
    pub axes: Vec<Axis>,
    /// The spec file's text, as read.
    pub text: String,
}

impl Spec {
    /// Reads and validates a spec file; `base` is looked up next to it, then in the current
    /// directory.
    pub fn load(path: &Path) -> Result<Spec, SpecError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| SpecError::Io { path: path.to_path_buf(), message: e.to_string() })?;
        let dir = path.parent().unwrap_or(Path::new(""));
        Spec::parse(&text, path, dir)
    }

    /// Parses spec text; `path` names it in errors and `dir` is where `base` is looked up
    /// first.
    pub fn parse(text: &str, path: &Path, dir: &Path) -> Result<Spec, SpecError> {
        let syntax = |message: String| SpecError::Syntax { path: path.to_path_buf(), message };
        let table: Table = text
            .parse()
            .map_err(|e: toml::de::Error| syntax(e.to_string().trim_end().to_string()))?;
        // The same text again, keeping each key's position: the order of the axes.
        let spanned = DeTable::parse(text).map_err(|e| syntax(e.to_string()))?;

        for key in table.keys() {
            if !matches!(key.as_str(), "base" | "reps" | "baseline" | "noise" | "set" | "axes") {
                return Err(SpecError::UnknownKey { key: key.clone() });
            }
        }
        let base_as_written = match table.get("base") {
            None => return Err(SpecError::MissingBase),
            Some(Value::String(s)) => s.clone(),
            Some(other) => return Err(wrong_type("base", "a string (a file path)", other)),
        };
        let reps = match table.get("reps") {
            None => 1,
            Some(Value::Integer(n)) if (1..=i64::from(MAX_REPS)).contains(n) => *n as u32,
            Some(Value::Integer(n)) => return Err(SpecError::Reps { value: *n }),
            Some(other) => return Err(wrong_type("reps", "an integer", other)),
        };
        let baseline = match table.get("baseline") {
            None => false,
            Some(Value::Boolean(b)) => *b,
            Some(other) => return Err(wrong_type("baseline", "true or false", other)),
        };
        let noise = match table.get("noise") {
            None => true,
            Some(Value::Boolean(b)) => *b,
            Some(other) => return Err(wrong_type("noise", "true or false", other)),
        };
        let set = match table.get("set") {
            None => Vec::new(),
            Some(Value::Table(t)) => set_overrides(t, section_order(&spanned, "set"))?,
            Some(other) => return Err(wrong_type("set", "a table of dotted keys", other)),
        };
        let axes = match table.get("axes") {
            None => Vec::new(),
            Some(Value::Table(t)) => axes(t, section_order(&spanned, "axes"), &spanned)?,
            Some(other) => return Err(wrong_type("axes", "a table of dotted keys", other)),
        };
        let base = resolve_base(&base_as_written, dir)?;
        let base_text = std::fs::read_to_string(&base)
            .map_err(|e| SpecError::Io { path: base.clone(), message: e.to_string() })?;
        let spec = Spec {
            base_as_written,
            base,
            base_text,
            reps,
            baseline,
            noise,
            set,
            axes,
            text: text.to_string(),
        };
        spec.check_size()?;
        Ok(spec)
    }

    /// Number of cells: the product of the axes' lengths (1 without axes).
    pub fn cells(&self) -> u64 {
        self.axes.iter().map(|a| a.values.len() as u64).product()
    }

    /// Number of runs: cells times reps.
    pub fn runs(&self) -> u64 {
        self.cells() * u64::from(self.reps)
    }

    /// The overrides `noise = true` puts before `[set]`: [`NoiseConfig::host`] as
    /// `sim.noise.*` keys. None with `noise = false`.
    ///
    /// [`NoiseConfig::host`]: braid_sim::scenario::NoiseConfig::host
    pub fn noise_overrides(&self) -> Vec<String> {
        if self.noise {
            braid_sim::scenario::NoiseConfig::host().overrides()
        } else {
            Vec::new()
        }
    }

    fn check_size(&self) -> Result<(), SpecError> {
        let mut runs = u64::from(self.reps);
        for axis in &self.axes {
            runs =
                runs.checked_mul(axis.values.len() as u64).filter(|r| *r <= 1 << 40).ok_or_else(
                    || SpecError::TooManyRuns { key: axis.key.clone(), count: axis.values.len() },
                )?;
        }
        Ok(())
    }

    /// A hash of everything that decides the runs and their results: the parsed spec (not its
    /// comments or layout) and the base scenario's text. A run folder records it, so a resume
    /// or a merge with a different spec is refused.
    pub fn hash(&self) -> String {
        let mut h = Fnv1a::new();
        h.field("base", &self.base_as_written);
        h.field("base_text", &self.base_text);
        h.field("reps", &self.reps.to_string());
        h.field("baseline", &self.baseline.to_string());
        // A resumed folder must not mix runs with and without noise; the model's values are
        // part of the meaning of `noise = true`.
        h.field("noise", &self.noise.to_string());
        if self.noise {
            for o in self.noise_overrides() {
                h.field("noise_set", &o);
            }
        }
        for s in &self.set {
            h.field("set", s);
        }
        for axis in &self.axes {
            h.field("axis", &axis.key);
            for v in &axis.values {
                h.field("value", &v.to_toml());
            }
            // A table axis's overrides; a scalar axis hashes as it did before table axes.
            for entry in axis.tables.iter().flatten() {
                h.field("entry", &entry.len().to_string());
                for (k, v) in entry {
                    h.field("override", &format!("{k}={}", v.to_toml()));
                }
            }
        }
        h.hex()
    }
}

fn wrong_type(key: &str, expected: &'static str, found: &Value) -> SpecError {
    SpecError::WrongType { key: key.to_string(), expected, found: found.type_str().to_string() }
}

/// The base path next to the spec if it exists there, else as given (the current directory).
fn resolve_base(base: &str, dir: &Path) -> Result<PathBuf, SpecError> {
    let given = Path::new(base);
    if given.is_absolute() {
        return Ok(given.to_path_buf());
    }
    let beside_spec = dir.join(given);
    if beside_spec.is_file() {
        return Ok(beside_spec);
    }
    if given.is_file() {
        return Ok(given.to_path_buf());
    }
    let in_cwd = std::env::current_dir().map(|d| d.join(given)).unwrap_or(given.to_path_buf());
    Err(SpecError::BaseNotFound { base: base.to_string(), beside_spec, in_cwd })
}

/// The position in the text of every leaf key of a section, by its dotted name.
fn section_order(spanned: &toml::Spanned<DeTable<'_>>, section: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let table = spanned.get_ref().iter().find(|(k, _)| k.get_ref() == section);
    if let Some((_, v)) = table {
        if let DeValue::Table(t) = v.get_ref() {
            leaf_positions(t, "", &mut out);
        }
    }
    out
}

fn leaf_positions(t: &DeTable<'_>, prefix: &str, out: &mut Vec<(String, usize)>) {
    for (k, v) in t {
        let name = join(prefix, k.get_ref());
        match v.get_ref() {
            DeValue::Table(inner) => leaf_positions(inner, &name, out),
            _ => out.push((name, k.span().start)),
        }
    }
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

/// Flattens a section into (dotted key, value) in the order the keys are written.
fn flatten(
    section: &'static str,
    t: &Table,
    order: &[(String, usize)],
) -> Result<Vec<(String, Value)>, SpecError> {
    let mut leaves = Vec::new();
    flatten_into(t, "", &mut leaves);
    let mut seen = std::collections::HashSet::new();
    for (k, _) in &leaves {
        if !seen.insert(k.clone()) {
            return Err(SpecError::DuplicateKey { section, key: k.clone() });
        }
    }
    let position = |k: &str| order.iter().find(|(name, _)| name == k).map_or(usize::MAX, |p| p.1);
    leaves.sort_by_key(|(k, _)| position(k));
    Ok(leaves)
}

/// The leaves of `t` as (dotted key, value), a nested table and a quoted dotted key alike.
pub(crate) fn flatten_into(t: &Table, prefix: &str, out: &mut Vec<(String, Value)>) {
    for (k, v) in t {
        let name = join(prefix, k);
        match v {
            Value::Table(inner) => flatten_into(inner, &name, out),
            other => out.push((name, other.clone())),
        }
    }
}

fn set_overrides(t: &Table, order: Vec<(String, usize)>) -> Result<Vec<String>, SpecError> {
    flatten("set", t, &order)?
        .into_iter()
        .map(|(key, value)| {
            if let Value::Datetime(_) = value {
                return Err(SpecError::DatetimeValue { key });
            }
            Ok(format!("{key}={value}"))
        })
        .collect()
}

fn axes(
    t: &Table,
    order: Vec<(String, usize)>,
    spanned: &toml::Spanned<DeTable<'_>>,
) -> Result<Vec<Axis>, SpecError> {
    let axes = flatten("axes", t, &order)?
        .into_iter()
        .map(|(key, value)| {
            let Value::Array(items) = value else {
                return Err(wrong_type(&format!("axes.{key}"), "an array of values", &value));
            };
            let entry_order = |i: usize| entry_positions(spanned, &key, i);
            Axis::parse(key.clone(), items, entry_order).map_err(SpecError::from)
        })
        .collect::<Result<Vec<_>, _>>()?;
    check_columns(&axes)?;
    Ok(axes)
}

/// Every axis column (an axis's own, a table axis's override keys) has one axis: two axes
/// setting one key would leave the table with two columns of one name.
fn check_columns(axes: &[Axis]) -> Result<(), SpecError> {
    for (a, axis) in axes.iter().enumerate() {
        let Some(tables) = &axis.tables else { continue };
        for (index, entry) in tables.iter().enumerate() {
            for (field, _) in entry {
                let other = axes.iter().enumerate().find(|(b, other)| {
                    other.key == *field || (*b != a && other.override_keys().contains(field))
                });
                if let Some((_, other)) = other {
                    return Err(SpecError::ColumnClash {
                        key: axis.key.clone(),
                        index,
                        field: field.clone(),
                        other: other.key.clone(),
                    });
                }
            }
        }
    }
    Ok(())
}

/// The written position of each (dotted) key of entry `index` of table axis `axis`.
fn entry_positions(
    spanned: &toml::Spanned<DeTable<'_>>,
    axis: &str,
    index: usize,
) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let section = spanned.get_ref().iter().find(|(k, _)| k.get_ref() == "axes");
    let Some((_, section)) = section else { return out };
    let DeValue::Table(section) = section.get_ref() else { return out };
    let Some((_, items)) = section.iter().find(|(k, _)| k.get_ref() == axis) else { return out };
    if let DeValue::Array(items) = items.get_ref() {
        if let Some(DeValue::Table(entry)) = items.get(index).map(|v| v.get_ref()) {
            leaf_positions(entry, "", &mut out);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses `text` with a base file that exists (this crate's Cargo.toml stands in for it:
    /// the spec only reads the base's text, the scenario loader parses it).
    fn parse(text: &str) -> Result<Spec, SpecError> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        Spec::parse(&format!("base = \"Cargo.toml\"\n{text}"), Path::new("spec.toml"), dir)
    }

    #[test]
    fn full_spec_parses_in_written_order() {
        let s = parse(
            r#"
            reps = 3
            baseline = true
            [set]
            "e2e.bytes" = 20000000
            "sim.max_time_s" = 60.5
            [axes]
            "tunnel.scheduler" = ["cpf", "srtt"]
            "e2e.cc" = ["cubic", "bbr"]
            "keys" = ["", "SHORT+NEAR"]
            "#,
        )
        .unwrap();
        assert_eq!(s.reps, 3);
        assert!(s.baseline);
        assert_eq!(s.set, ["e2e.bytes=20000000", "sim.max_time_s=60.5"]);
        let keys: Vec<&str> = s.axes.iter().map(|a| a.key.as_str()).collect();
        assert_eq!(keys, ["tunnel.scheduler", "e2e.cc", "keys"]);
        assert_eq!(
            s.axes[2].values,
            [AxisValue::Str(String::new()), AxisValue::Str("SHORT+NEAR".into())]
        );
        assert_eq!(s.cells(), 8);
        assert_eq!(s.runs(), 24);
    }

    #[test]
    fn unquoted_dotted_keys_mean_the_same_and_keep_their_order() {
        let s = parse(
            r#"
            [set]
            e2e.bytes = 2000000
            [axes]
            tunnel.scheduler = ["cpf"]
            e2e.cc = ["cubic"]
            tunnel.cc = ["bbr"]
            "#,
        )
        .unwrap();
        assert_eq!(s.set, ["e2e.bytes=2000000"]);
        let keys: Vec<&str> = s.axes.iter().map(|a| a.key.as_str()).collect();
        assert_eq!(keys, ["tunnel.scheduler", "e2e.cc", "tunnel.cc"]);
    }

    #[test]
    fn axis_values_become_faithful_override_text() {
        let s = parse(r#"axes.x = [1, 0.5, 1e300, true, "60", "", "a \"b\""]"#).unwrap();
        let text: Vec<String> = s.axes[0].values.iter().map(AxisValue::to_toml).collect();
        for (t, v) in text.iter().zip(&s.axes[0].values) {
            let back = braid_sim::scenario::overrides::Override::parse(&format!("x={t}")).unwrap();
            assert_eq!(back.value, v.to_value(), "{t}");
        }
        assert_eq!(text[4], "\"60\"");
    }

    #[test]
    fn defaults_without_reps_baseline_and_axes() {
        let s = parse("").unwrap();
        assert_eq!((s.reps, s.baseline, s.noise, s.cells(), s.runs()), (1, false, true, 1, 1));
    }

    #[test]
    fn noise_is_on_unless_the_spec_says_false() {
        let on = parse("").unwrap();
        assert!(on.noise_overrides().contains(&"sim.noise.cc_phase=true".to_string()));
        let off = parse("noise = false").unwrap();
        assert!(off.noise_overrides().is_empty());
        assert_ne!(on.hash(), off.hash());
        assert_eq!(on.hash(), parse("noise = true").unwrap().hash());
        let err = parse("noise = \"yes\"").unwrap_err().to_string();
        assert!(err.contains("noise must be true or false"), "{err}");
    }

    #[test]
    fn errors_name_the_key() {
        let cases = [
            ("rep = 3", "unknown key \"rep\""),
            ("reps = 0", "reps = 0 is out of range; must be in 1..=1000"),
            ("reps = 1001", "1..=1000"),
            ("reps = \"3\"", "reps must be an integer, found string"),
            ("baseline = 1", "baseline must be true or false"),
            ("axes.\"e2e.cc\" = []", "axes.e2e.cc has no values"),
            ("axes.\"e2e.cc\" = \"bbr\"", "axes.e2e.cc must be an array of values, found string"),
            ("axes.x = [[1]]", "axes.x[0] is a array"),
            ("axes.x = [1, {a = 1}]", "axes.x[1] is a table"),
            ("set = 3", "set must be a table"),
            ("[set]\n\"e2e.bytes\" = 1\ne2e.bytes = 2", "set.e2e.bytes is given twice"),
            ("reps = ", "TOML syntax error"),
            ("axes.c = [{ \"e2e.cc\" = \"bbr\" }]", "axes.c[0] has no `label`"),
            (
                "axes.c = [{ label = \"a\", \"e2e.cc\" = \"bbr\" }]\naxes.\"e2e.cc\" = [\"cubic\"]",
                "axes.c[0] sets e2e.cc, which is also the column of axis e2e.cc",
            ),
            (
                "axes.c = [{ label = 1, seed = 2 }]\naxes.d = [{ label = 1, seed = 3 }]",
                "axes.c[0] sets seed, which is also the column of axis d",
            ),
        ];
        for (text, want) in cases {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }

    #[test]
    fn missing_base_and_base_not_found() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let err = Spec::parse("reps = 1", Path::new("s.toml"), dir).unwrap_err();
        assert_eq!(err, SpecError::MissingBase);
        let err = Spec::parse("base = \"nope.toml\"", Path::new("s.toml"), dir).unwrap_err();
        assert!(matches!(err, SpecError::BaseNotFound { .. }), "{err}");
        assert!(err.to_string().contains("next to the spec"), "{err}");
    }

    #[test]
    fn table_axis_entries_keep_their_written_key_order() {
        let s = parse("[axes]\nc = [{ label = \"a\", z.y = 1, \"a.b\" = 2, m = 3 }]").unwrap();
        assert_eq!(s.axes[0].overrides(0), ["z.y=1", "a.b=2", "m=3"]);
        assert_eq!(s.axes[0].values, [AxisValue::Str("a".into())]);
    }

    #[test]
    fn hash_sees_table_axis_overrides() {
        let a = parse("[axes]\nc = [{ label = \"a\", seed = 1 }]").unwrap();
        let b = parse("[axes]\nc = [{ label = \"a\", seed = 2 }]").unwrap();
        assert_ne!(a.hash(), b.hash());
    }

    #[test]
    fn hash_ignores_layout_and_sees_values() {
        let a = parse("reps = 2\n[axes]\nx = [1, 2]").unwrap();
        let b = parse("# comment\nreps   = 2\n[axes]\n\"x\" = [1,2]").unwrap();
        let c = parse("reps = 2\n[axes]\nx = [1, 3]").unwrap();
        assert_eq!(a.hash(), b.hash());
        assert_ne!(a.hash(), c.hash());
    }
}
