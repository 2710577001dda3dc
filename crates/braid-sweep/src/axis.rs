//! One axis of a sweep: the values a cell takes along it, and the overrides each value means.
//!
//! A **scalar axis** is named by a dotted scenario key and lists values of that key:
//! `"e2e.cc" = ["cubic", "bbr"]`. A **table axis** is named by a plain name that is no
//! scenario field and lists inline tables, each a `label` and overrides applied together:
//!
//! ```toml
//! combination = [
//!   { label = "cubic/ccid5", "e2e.cc" = "cubic", "tunnel.cc" = "ccid5" },
//!   { label = "bbr/bbr", "e2e.cc" = "bbr", "tunnel.cc" = "bbr" },
//! ]
//! ```
//!
//! Table axes sweep values that only make sense together, such as the congestion-control
//! combinations of Table 3 of Pieska et al. 2024 (a TCP-like tunnel is reliable, a DCCP one
//! is not) or the points of their contour figures (two RTTs that split one end-to-end RTT),
//! which a cross product of scalar axes cannot express. The table has a column named by the
//! axis holding the label, and one per override key (docs/sweeps.md).

use toml::{Table, Value};

/// The key of a table axis entry that names it; every other key is an override.
pub const LABEL: &str = "label";

/// Why an axis was refused; each names the axis and, for an entry, its index.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AxisError {
    #[error("axes.{key} has no values; give at least one")]
    EmptyAxis { key: String },
    #[error(
        "axes.{key}[{index}] is a {found}; axis values must be strings, integers, floats or booleans"
    )]
    NonScalarAxisValue { key: String, index: usize, found: String },
    #[error("axes.{key} cannot be a table axis: {reason}")]
    TableAxisName { key: String, reason: String },
    #[error(
        "axes.{key}[{index}] is a {found}; the entries of a table axis (its first is a table) \
         must all be inline tables"
    )]
    NotATableEntry { key: String, index: usize, found: String },
    #[error("axes.{key}[{index}] has no `label`; give each entry of a table axis a unique label")]
    MissingLabel { key: String, index: usize },
    #[error(
        "axes.{key}[{index}] has the label {label} of axes.{key}[{first}]; labels must be unique"
    )]
    DuplicateLabel { key: String, index: usize, first: usize, label: String },
    #[error("axes.{key}[{index}].{field} {problem}")]
    Entry { key: String, index: usize, field: String, problem: String },
}

/// One value of an axis: a TOML scalar.
#[derive(Debug, Clone, PartialEq)]
pub enum AxisValue {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
}

impl AxisValue {
    /// The value as TOML text, which the `--set` parser reads back to this very value (a
    /// string is quoted, so `"60"` stays a string and `""` is the empty string).
    pub fn to_toml(&self) -> String {
        self.to_value().to_string()
    }

    pub(crate) fn to_value(&self) -> Value {
        match self {
            AxisValue::Int(v) => Value::Integer(*v),
            AxisValue::Float(v) => Value::Float(*v),
            AxisValue::Bool(v) => Value::Boolean(*v),
            AxisValue::Str(v) => Value::String(v.clone()),
        }
    }

    /// The scalar a TOML value is, or the name of its type when it is not one.
    fn from_value(v: Value) -> Result<AxisValue, String> {
        match v {
            Value::Integer(i) => Ok(AxisValue::Int(i)),
            Value::Float(f) => Ok(AxisValue::Float(f)),
            Value::Boolean(b) => Ok(AxisValue::Bool(b)),
            Value::String(s) => Ok(AxisValue::Str(s)),
            other => Err(other.type_str().to_string()),
        }
    }
}

/// One axis: the values along it, in the order written.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// The dotted scenario key of a scalar axis; the name of a table axis (its label column).
    pub key: String,
    /// A scalar axis's values, or a table axis's labels.
    pub values: Vec<AxisValue>,
    /// A table axis's overrides, one list per entry in the order written; `None` for a scalar
    /// axis.
    pub tables: Option<Vec<Vec<(String, AxisValue)>>>,
}

impl Axis {
    /// The `--set` overrides of value `i`: `key=value` for a scalar axis, the entry's overrides
    /// for a table axis.
    pub fn overrides(&self, i: usize) -> Vec<String> {
        match &self.tables {
            None => vec![format!("{}={}", self.key, self.values[i].to_toml())],
            Some(tables) => tables[i].iter().map(|(k, v)| format!("{k}={}", v.to_toml())).collect(),
        }
    }

    /// The table columns this axis makes: its own (the value or label), then for a table axis
    /// one per override key, in the order the keys first appear. Each column has one entry
    /// per axis value; `None` where an entry does not set that key.
    pub fn columns(&self) -> Vec<(String, Vec<Option<&AxisValue>>)> {
        let mut out = vec![(self.key.clone(), self.values.iter().map(Some).collect())];
        if let Some(tables) = &self.tables {
            for name in self.override_keys() {
                let values = tables
                    .iter()
                    .map(|entry| entry.iter().find(|(k, _)| *k == name).map(|(_, v)| v))
                    .collect();
                out.push((name, values));
            }
        }
        out
    }

    /// A table axis's override keys in the order they first appear; empty for a scalar axis.
    pub fn override_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = Vec::new();
        for entry in self.tables.iter().flatten() {
            for (k, _) in entry {
                if !keys.contains(k) {
                    keys.push(k.clone());
                }
            }
        }
        keys
    }

    /// Reads axis `key` from its TOML array. `entry_order(i)` gives the written position of
    /// each (dotted) key of entry `i`, since TOML tables forget it.
    pub fn parse(
        key: String,
        items: Vec<Value>,
        entry_order: impl Fn(usize) -> Vec<(String, usize)>,
    ) -> Result<Axis, AxisError> {
        if items.is_empty() {
            return Err(AxisError::EmptyAxis { key });
        }
        if matches!(items[0], Value::Table(_)) {
            return table_axis(key, items, entry_order);
        }
        let values = items
            .into_iter()
            .enumerate()
            .map(|(index, v)| {
                AxisValue::from_value(v).map_err(|found| AxisError::NonScalarAxisValue {
                    key: key.clone(),
                    index,
                    found,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Axis { key, values, tables: None })
    }
}

/// The top-level fields of a scenario, which a table axis may not be named after.
fn scenario_fields() -> Vec<String> {
    let text = braid_sim::Scenario::default().to_toml_string().unwrap_or_default();
    let table: Table = text.parse().unwrap_or_default();
    table.keys().cloned().collect()
}

fn table_axis(
    key: String,
    items: Vec<Value>,
    entry_order: impl Fn(usize) -> Vec<(String, usize)>,
) -> Result<Axis, AxisError> {
    let name_error =
        |reason: &str| AxisError::TableAxisName { key: key.clone(), reason: reason.into() };
    if key.contains('.') {
        return Err(name_error("it is a dotted key; name a table axis with a plain name"));
    }
    if scenario_fields().contains(&key) {
        return Err(name_error("it is a scenario field; name a table axis with another name"));
    }
    let mut labels: Vec<AxisValue> = Vec::with_capacity(items.len());
    let mut tables = Vec::with_capacity(items.len());
    for (index, item) in items.into_iter().enumerate() {
        let entry_error = |field: &str, problem: String| AxisError::Entry {
            key: key.clone(),
            index,
            field: field.to_string(),
            problem,
        };
        let Value::Table(t) = item else {
            return Err(AxisError::NotATableEntry {
                key: key.clone(),
                index,
                found: item.type_str().to_string(),
            });
        };
        let mut leaves = Vec::new();
        flatten_entry(&t, "", &mut leaves);
        let order = entry_order(index);
        let position = |k: &str| order.iter().find(|(n, _)| n == k).map_or(usize::MAX, |p| p.1);
        leaves.sort_by_key(|(k, _)| position(k));

        let mut label = None;
        let mut overrides = Vec::new();
        for (field, value) in leaves {
            let scalar = AxisValue::from_value(value).map_err(|found| {
                entry_error(
                    &field,
                    format!("is a {found}; values must be strings, integers, floats or booleans"),
                )
            })?;
            if field == LABEL {
                if matches!(scalar, AxisValue::Float(_) | AxisValue::Bool(_)) {
                    return Err(entry_error(LABEL, "must be a string or an integer".into()));
                }
                label = Some(scalar);
                continue;
            }
            braid_sim::scenario::overrides::Override::parse(&format!(
                "{field}={}",
                scalar.to_toml()
            ))
            .map_err(|e| entry_error(&field, format!("is not an override key: {e}")))?;
            overrides.push((field, scalar));
        }
        let label = label.ok_or_else(|| AxisError::MissingLabel { key: key.clone(), index })?;
        if let Some(first) = labels.iter().position(|l| *l == label) {
            return Err(AxisError::DuplicateLabel {
                key: key.clone(),
                index,
                first,
                label: label.to_toml(),
            });
        }
        labels.push(label);
        tables.push(overrides);
    }
    Ok(Axis { key, values: labels, tables: Some(tables) })
}

/// An entry's fields as dotted keys: an unquoted `e2e.cc = "bbr"` in an inline table is a
/// nested table in TOML, and means the same as the quoted `"e2e.cc" = "bbr"`.
fn flatten_entry(t: &Table, prefix: &str, out: &mut Vec<(String, Value)>) {
    for (k, v) in t {
        let name = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        match v {
            Value::Table(inner) => flatten_entry(inner, &name, out),
            other => out.push((name, other.clone())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(key: &str, text: &str) -> Result<Axis, AxisError> {
        let table: Table = format!("a = {text}").parse().unwrap();
        let Some(Value::Array(items)) = table.get("a").cloned() else { panic!("{text}") };
        Axis::parse(key.to_string(), items, |_| Vec::new())
    }

    #[test]
    fn scalar_axis_overrides_and_column() {
        let a = axis("e2e.cc", r#"["cubic", "bbr"]"#).unwrap();
        assert_eq!(a.tables, None);
        assert_eq!(a.overrides(1), ["e2e.cc=\"bbr\""]);
        let cols = a.columns();
        assert_eq!(cols.len(), 1);
        assert_eq!(cols[0].0, "e2e.cc");
    }

    #[test]
    fn table_axis_labels_overrides_and_columns() {
        let a = axis(
            "combination",
            r#"[{ label = "x", "e2e.cc" = "bbr", tunnel.cc = "ccid5" },
                { label = "y", "e2e.cc" = "cubic", "paths.0.rtt_ms" = 5.5 }]"#,
        )
        .unwrap();
        assert_eq!(a.values, [AxisValue::Str("x".into()), AxisValue::Str("y".into())]);
        let mut first = a.overrides(0);
        first.sort();
        assert_eq!(first, ["e2e.cc=\"bbr\"", "tunnel.cc=\"ccid5\""]);
        let names: Vec<String> = a.columns().into_iter().map(|c| c.0).collect();
        assert_eq!(names[0], "combination");
        assert_eq!(names.len(), 4, "{names:?}");
        let cols = a.columns();
        let rtt = cols.iter().find(|c| c.0 == "paths.0.rtt_ms").unwrap();
        assert_eq!(rtt.1, [None, Some(&AxisValue::Float(5.5))]);
    }

    #[test]
    fn integer_labels_are_allowed() {
        let a = axis("point", r#"[{ label = 0, seed = 3 }, { label = 1, seed = 4 }]"#).unwrap();
        assert_eq!(a.values, [AxisValue::Int(0), AxisValue::Int(1)]);
        assert_eq!(a.overrides(1), ["seed=4"]);
    }

    #[test]
    fn table_axis_errors_name_the_axis_and_entry() {
        let cases = [
            ("c", r#"[{ "e2e.cc" = "bbr" }]"#, "axes.c[0] has no `label`"),
            (
                "c",
                r#"[{ label = "a" }, { label = "a" }]"#,
                "axes.c[1] has the label \"a\" of axes.c[0]",
            ),
            ("c", r#"[{ label = "a", "e2e.cc" = ["bbr"] }]"#, "axes.c[0].e2e.cc is a array"),
            ("c", r#"[{ label = 1.5 }]"#, "axes.c[0].label must be a string or an integer"),
            (
                "c",
                r#"[{ label = "a" }, "b"]"#,
                "axes.c[1] is a string; the entries of a table axis",
            ),
            (
                "c",
                r#"[{ label = "a", "paths..rtt_ms" = 1 }]"#,
                "axes.c[0].paths..rtt_ms is not an override key",
            ),
            (
                "e2e.cc",
                r#"[{ label = "a" }]"#,
                "axes.e2e.cc cannot be a table axis: it is a dotted key",
            ),
            (
                "tunnel",
                r#"[{ label = "a" }]"#,
                "axes.tunnel cannot be a table axis: it is a scenario field",
            ),
        ];
        for (key, text, want) in cases {
            let err = axis(key, text).unwrap_err().to_string();
            assert!(err.contains(want), "{text}: {err}");
        }
    }
}
