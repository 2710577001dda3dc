//! What `braid sweep` may change in a spec from its command line: `--reps`, `--baseline` and
//! `--set KEY=VALUE`. The changes are written into the spec's text before it is parsed, so the
//! folder's copy of the spec (`spec.toml`) says what its runs were made with, the spec's hash
//! covers them (a folder never mixes runs of different settings) and the renderers that read a
//! folder's spec see the repetitions it really has. One matrix file can so serve the lab (3
//! repetitions, baselines measured apart) and the simulator (10 seeds, each against its own
//! baseline, with or without a model variant).

use std::path::Path;

use toml::{Table, Value};

use crate::spec::{flatten_into, Spec, SpecError};

/// A line the command line wrote into the spec carries this comment.
const MARK: &str = "# set on the command line";

impl Spec {
    /// [`Spec::load`] with the command line's changes written into the spec's text first.
    pub fn load_with(path: &Path, overrides: &SpecOverrides) -> Result<Spec, SpecError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| SpecError::Io { path: path.to_path_buf(), message: e.to_string() })?;
        let dir = path.parent().unwrap_or(Path::new(""));
        let spec = Spec::parse(&overrides.apply(&text)?, path, dir)?;
        overrides.check_axes(&spec)?;
        Ok(spec)
    }
}

/// The command line's changes to a spec.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpecOverrides {
    /// In place of the spec's `reps`.
    pub reps: Option<u32>,
    /// In place of the spec's `baseline`.
    pub baseline: Option<bool>,
    /// `KEY=VALUE` entries added to the spec's `[set]`, as `braid sim --set` takes them: a
    /// VALUE that reads as a TOML value is one (`60`, `true`, `[1, 2]`), anything else a string.
    pub set: Vec<String>,
}

impl SpecOverrides {
    /// `text` with the changes written in. A `--set` key the spec's `[set]` already gives is
    /// refused rather than silently replaced: the spec is the record of what was meant.
    pub fn apply(&self, text: &str) -> Result<String, SpecError> {
        let mut out = text.to_string();
        if let Some(n) = self.reps {
            out = set_top_level(&out, "reps", &n.to_string());
        }
        if let Some(b) = self.baseline {
            out = set_top_level(&out, "baseline", &b.to_string());
        }
        let given = spec_set_keys(text);
        let mut lines = Vec::new();
        for arg in &self.set {
            let (key, value) = split(arg)?;
            if given.iter().any(|k| k == key) {
                return Err(cli_set(
                    arg,
                    "the spec's [set] gives this key already; change it there",
                ));
            }
            lines.push(format!("{} = {}  {MARK}", Value::String(key.into()), toml_value(value)));
        }
        if lines.is_empty() {
            return Ok(out);
        }
        let mut body: Vec<String> = out.lines().map(str::to_string).collect();
        match body.iter().position(|l| l.trim() == "[set]") {
            Some(at) => {
                body.splice(at + 1..at + 1, lines);
            }
            None => {
                body.push(String::new());
                body.push("[set]".into());
                body.extend(lines);
            }
        }
        Ok(body.join("\n") + "\n")
    }

    /// Refuses a `--set` key that an axis sets in every run (the axis's value comes later and
    /// wins, so the command line's would never apply).
    pub fn check_axes(&self, spec: &Spec) -> Result<(), SpecError> {
        for arg in &self.set {
            let (key, _) = split(arg)?;
            for axis in &spec.axes {
                let swept = match &axis.tables {
                    None => axis.key == key,
                    Some(_) => axis.override_keys().iter().any(|k| k == key),
                };
                if swept {
                    return Err(cli_set(
                        arg,
                        &format!(
                            "axis {} sets this key in every run, so it would never apply",
                            axis.key
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

fn cli_set(arg: &str, message: &str) -> SpecError {
    SpecError::CliSet { arg: arg.to_string(), message: message.to_string() }
}

fn split(arg: &str) -> Result<(&str, &str), SpecError> {
    match arg.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim(), v.trim())),
        _ => Err(cli_set(arg, "expected KEY=VALUE, e.g. e2e.dsack=true")),
    }
}

/// VALUE as TOML: itself when it reads as a TOML value, else a quoted string.
fn toml_value(value: &str) -> String {
    match format!("v = {value}").parse::<Table>() {
        Ok(_) => value.to_string(),
        Err(_) => Value::String(value.into()).to_string(),
    }
}

/// The dotted keys the spec's `[set]` gives (quoted dotted keys and nested tables alike); none
/// when the text does not parse (the parse after [`SpecOverrides::apply`] reports that).
fn spec_set_keys(text: &str) -> Vec<String> {
    let mut leaves = Vec::new();
    if let Ok(t) = text.parse::<Table>() {
        if let Some(Value::Table(set)) = t.get("set") {
            flatten_into(set, "", &mut leaves);
        }
    }
    leaves.into_iter().map(|(k, _)| k).collect()
}

/// `text` with its top-level `key = ...` line replaced by `key = value`, or the line added at
/// the top when the key is absent. Top-level keys are the lines before the first table header;
/// a spec's top-level values are single-line scalars.
fn set_top_level(text: &str, key: &str, value: &str) -> String {
    let line = format!("{key} = {value}  {MARK}");
    let quoted = format!("\"{key}\"");
    let mut out = Vec::new();
    let (mut in_top, mut done) = (true, false);
    for l in text.lines() {
        let t = l.trim_start();
        in_top &= !t.starts_with('[');
        let is_key = [key, quoted.as_str()]
            .iter()
            .any(|k| t.strip_prefix(k).is_some_and(|rest| rest.trim_start().starts_with('=')));
        if in_top && is_key && !done {
            out.push(line.clone());
            done = true;
        } else {
            out.push(l.to_string());
        }
    }
    if !done {
        out.insert(0, line);
    }
    out.join("\n") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = "base = \"Cargo.toml\"\nreps = 3\nbaseline = false\n\n[set]\n\
                        \"e2e.bytes\" = 1000000\n\n[axes]\n\"e2e.cc\" = [\"cubic\", \"bbr\"]\n";

    fn parse(text: &str) -> Result<Spec, SpecError> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        Spec::parse(text, Path::new("spec.toml"), dir)
    }

    fn overrides(reps: Option<u32>, baseline: Option<bool>, set: &[&str]) -> SpecOverrides {
        SpecOverrides { reps, baseline, set: set.iter().map(|s| s.to_string()).collect() }
    }

    #[test]
    fn reps_baseline_and_set_land_in_the_text_and_the_hash() {
        let plain = parse(SPEC).unwrap();
        let o = overrides(Some(10), Some(true), &["e2e.dsack=true", "e2e.cubic_undo=linux"]);
        let text = o.apply(SPEC).unwrap();
        let s = parse(&text).unwrap();
        assert_eq!((s.reps, s.baseline), (10, true));
        assert_eq!(
            s.set,
            ["e2e.dsack=true", "e2e.cubic_undo=\"linux\"", "e2e.bytes=1000000"].map(String::from)
        );
        assert_ne!(s.hash(), plain.hash());
        assert!(text.contains(MARK));
        // Nothing asked, nothing changed.
        assert_eq!(SpecOverrides::default().apply(SPEC).unwrap(), SPEC);
    }

    #[test]
    fn keys_the_spec_lacks_are_added() {
        let bare = "base = \"Cargo.toml\"\n";
        let s =
            parse(&overrides(Some(2), Some(true), &["e2e.bytes=5"]).apply(bare).unwrap()).unwrap();
        assert_eq!((s.reps, s.baseline, s.set.clone()), (2, true, vec!["e2e.bytes=5".into()]));
    }

    #[test]
    fn bad_or_clashing_sets_are_refused_naming_the_argument() {
        let err = |set: &str| {
            let o = overrides(None, None, &[set]);
            let e = o.apply(SPEC).and_then(|t| o.check_axes(&parse(&t)?));
            e.unwrap_err().to_string()
        };
        assert_eq!(err("e2e.dsack"), "--set e2e.dsack: expected KEY=VALUE, e.g. e2e.dsack=true");
        assert!(err("e2e.bytes=5").contains("the spec's [set] gives this key already"));
        assert!(err("e2e.cc=reno").contains("axis e2e.cc sets this key in every run"));
        let table_axis = "base = \"Cargo.toml\"\n[axes]\nrow = [{ label = \"a\", \"e2e.cc\" = \
                          \"bbr\" }]\n";
        let o = overrides(None, None, &["e2e.cc=cubic"]);
        let e = o.check_axes(&parse(&o.apply(table_axis).unwrap()).unwrap()).unwrap_err();
        assert!(e.to_string().contains("axis row sets this key"), "{e}");
    }

    #[test]
    fn an_out_of_range_reps_is_refused_as_in_the_spec() {
        let text = overrides(Some(0), None, &[]).apply(SPEC).unwrap();
        assert_eq!(
            parse(&text).unwrap_err().to_string(),
            "reps = 0 is out of range; must be in 1..=1000"
        );
    }
}
