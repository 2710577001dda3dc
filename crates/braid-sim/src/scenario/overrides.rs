//! `--set dotted.key=value` overrides, applied to the scenario's TOML table before it is
//! deserialized.
//!
//! - The key is split on `.`; a segment that walks into an array is an index
//!   (`paths.1.rtt_ms=60`). Indexing past the end is an error naming the index and the array's
//!   length; an override cannot append a path (write the whole array: `paths=[{...}, {...}]`).
//! - A missing table on the way is created; whether the final key exists in the scenario is
//!   checked when the table is deserialized, which names the full dotted key.
//! - The value is parsed as a TOML value when it parses (numbers, booleans, quoted strings,
//!   arrays, inline tables, `nan`/`inf`, which validation then rejects), and otherwise taken as
//!   a bare string, so `tunnel.cc=bbr` and `keys=SHORT+NEAR` work unquoted.

use toml::{Table, Value};

use super::ScenarioError;

/// One parsed `--set` argument.
#[derive(Clone, Debug, PartialEq)]
pub struct Override {
    /// The dotted key split into segments, none empty.
    pub path: Vec<String>,
    pub value: Value,
}

impl Override {
    /// Parses `dotted.key=value`.
    pub fn parse(spec: &str) -> Result<Override, ScenarioError> {
        let bad = |reason: &str| ScenarioError::OverrideSyntax {
            given: spec.to_string(),
            reason: reason.to_string(),
        };
        let (key, raw) = spec.split_once('=').ok_or_else(|| bad("expected dotted.key=value"))?;
        let key = key.trim();
        if key.is_empty() {
            return Err(bad("expected dotted.key=value, the key is empty"));
        }
        let path: Vec<String> = key.split('.').map(|s| s.trim().to_string()).collect();
        if path.iter().any(String::is_empty) {
            return Err(bad(
                "the key has an empty segment (two dots in a row, or a leading or trailing dot)",
            ));
        }
        let raw = raw.trim();
        let value = raw.parse::<Value>().unwrap_or_else(|_| Value::String(raw.to_string()));
        Ok(Override { path, value })
    }
}

/// Applies one `--set` argument to `table`.
pub fn apply(table: &mut Table, spec: &str) -> Result<(), ScenarioError> {
    let Override { path, value } = Override::parse(spec)?;
    let Some((last, parents)) = path.split_last() else {
        return Err(ScenarioError::OverrideSyntax {
            given: spec.to_string(),
            reason: "the key is empty".into(),
        });
    };
    let mut here = Slot::Table(table);
    let mut walked = String::new();
    for segment in parents {
        here = here.child(segment, spec, &walked)?;
        if !walked.is_empty() {
            walked.push('.');
        }
        walked.push_str(segment);
    }
    here.set(last, value, spec, &walked)
}

/// Where the walk down the dotted key currently is.
enum Slot<'a> {
    Table(&'a mut Table),
    Array(&'a mut Vec<Value>),
}

impl<'a> Slot<'a> {
    /// Steps into `segment`, creating a missing table. `walked` is the dotted key so far.
    fn child(self, segment: &str, spec: &str, walked: &str) -> Result<Slot<'a>, ScenarioError> {
        let value = match self {
            Slot::Table(table) => {
                table.entry(segment.to_string()).or_insert_with(|| Value::Table(Table::new()))
            }
            Slot::Array(array) => {
                let index = index(array.len(), segment, spec, walked)?;
                &mut array[index]
            }
        };
        let name = join(walked, segment);
        match value {
            Value::Table(table) => Ok(Slot::Table(table)),
            Value::Array(array) => Ok(Slot::Array(array)),
            other => Err(ScenarioError::OverrideSyntax {
                given: spec.to_string(),
                reason: format!("{name} is a {}, not a table or an array", other.type_str()),
            }),
        }
    }

    fn set(
        self,
        segment: &str,
        value: Value,
        spec: &str,
        walked: &str,
    ) -> Result<(), ScenarioError> {
        match self {
            Slot::Table(table) => {
                table.insert(segment.to_string(), value);
            }
            Slot::Array(array) => {
                let index = index(array.len(), segment, spec, walked)?;
                array[index] = value;
            }
        }
        Ok(())
    }
}

/// Parses an array index and checks it against the array's length.
fn index(len: usize, segment: &str, spec: &str, array: &str) -> Result<usize, ScenarioError> {
    let index: usize = segment.parse().map_err(|_| ScenarioError::OverrideSyntax {
        given: spec.to_string(),
        reason: format!("{array} is an array; expected an index in 0..{len}, found {segment:?}"),
    })?;
    if index >= len {
        return Err(ScenarioError::OverrideIndex {
            given: spec.to_string(),
            array: array.to_string(),
            index,
            len,
        });
    }
    Ok(index)
}

fn join(walked: &str, segment: &str) -> String {
    if walked.is_empty() {
        segment.to_string()
    } else {
        format!("{walked}.{segment}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        r#"
            seed = 1
            [tunnel]
            cc = "bbr"
            [[paths]]
            name = "a"
            [[paths]]
            name = "b"
        "#
        .parse()
        .unwrap()
    }

    #[test]
    fn values_parse_as_toml_or_fall_back_to_bare_strings() {
        let v = |s: &str| Override::parse(s).unwrap().value;
        assert_eq!(v("a=60"), Value::Integer(60));
        assert_eq!(v("a=0.5"), Value::Float(0.5));
        assert_eq!(v("a=true"), Value::Boolean(true));
        assert_eq!(v("a=\"x y\""), Value::String("x y".into()));
        assert_eq!(v("a=bbr"), Value::String("bbr".into()));
        assert_eq!(v("a=SHORT+NEAR"), Value::String("SHORT+NEAR".into()));
        assert_eq!(v("a=[\"SHORT\", \"NEAR\"]"), Value::Array(vec!["SHORT".into(), "NEAR".into()]));
        assert_eq!(v("a="), Value::String(String::new()));
        // A value that would smuggle in a second key stays one string.
        assert_eq!(v("a=1\nb=2"), Value::String("1\nb=2".into()));
    }

    #[test]
    fn nested_keys_and_array_indices() {
        let mut t = table();
        apply(&mut t, "tunnel.cc=ccid2").unwrap();
        apply(&mut t, "paths.1.rtt_ms=60").unwrap();
        apply(&mut t, "e2e.bytes=1000").unwrap();
        assert_eq!(t["tunnel"]["cc"], Value::String("ccid2".into()));
        assert_eq!(t["paths"][1]["rtt_ms"], Value::Integer(60));
        assert_eq!(t["e2e"]["bytes"], Value::Integer(1000));
    }

    #[test]
    fn index_past_the_end_names_the_index_and_length() {
        let err = apply(&mut table(), "paths.2.rtt_ms=60").unwrap_err();
        assert_eq!(
            err,
            ScenarioError::OverrideIndex {
                given: "paths.2.rtt_ms=60".into(),
                array: "paths".into(),
                index: 2,
                len: 2
            }
        );
        assert!(err.to_string().contains("index 2 is out of range: paths has 2 entries"), "{err}");
    }

    #[test]
    fn malformed_overrides_are_errors() {
        for spec in [
            "tunnel.cc",
            "=1",
            ".a=1",
            "a..b=1",
            "a.=1",
            "paths.x.rtt_ms=1",
            "seed.x=1",
            "paths.-1=1",
        ] {
            let err = apply(&mut table(), spec).unwrap_err();
            assert!(matches!(err, ScenarioError::OverrideSyntax { .. }), "{spec}: {err:?}");
        }
        let err = apply(&mut table(), "seed.x=1").unwrap_err();
        assert!(err.to_string().contains("seed is a integer"), "{err}");
    }
}
