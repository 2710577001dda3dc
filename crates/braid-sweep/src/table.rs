//! The finished runs as typed columns, ready for Parquet.
//!
//! Columns, in order: `run_id`; one per axis, named by its dotted key (a table axis: one named
//! by the axis holding the entry's label, then one per override key); `rep`, `seed`; every
//! field of the run's report flattened with dotted names (arrays by index) except `wall_s`;
//! `status`, `error`, `braid_version`, `git_commit`, `scenario_hash`. A column whose name an
//! axis column already has (an axis over `seed` or `e2e.cc`) is renamed `result.<name>`.
//!
//! Types: an axis of integers is INT64, of numbers with a float among them DOUBLE, of
//! booleans BOOLEAN, anything else UTF8 (non-strings written as TOML). A report field takes
//! the type its values have; a field with no value in any row is DOUBLE. Every data column
//! is nullable: the report columns of a failed run are null.

use std::collections::{HashMap, HashSet};

use crate::flatten::{flatten_json, Flat, Scalar};
use crate::journal::Finished;
use crate::plan::run_key;
use crate::spec::{Axis, AxisValue, Spec};

/// A column's Parquet type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Int64,
    Double,
    Boolean,
    Utf8,
}

impl Kind {
    fn of(v: &Scalar) -> Option<Kind> {
        match v {
            Scalar::Null => None,
            Scalar::Bool(_) => Some(Kind::Boolean),
            Scalar::Int(_) => Some(Kind::Int64),
            Scalar::Float(_) => Some(Kind::Double),
            Scalar::Str(_) => Some(Kind::Utf8),
        }
    }

    /// The kind of a column holding values of both kinds; integers widen to floats.
    fn join(a: Kind, b: Kind) -> Option<Kind> {
        match (a, b) {
            _ if a == b => Some(a),
            (Kind::Int64, Kind::Double) | (Kind::Double, Kind::Int64) => Some(Kind::Double),
            _ => None,
        }
    }
}

/// One column: a name, a type and a value per row (`Scalar::Null` for none).
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub kind: Kind,
    pub values: Vec<Scalar>,
}

/// Why the journal could not be made into a table.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TableError {
    #[error("journal record of run {id} cannot be read: {message}")]
    Record { id: u64, message: String },
    #[error("report field {column} has values of two types ({first:?} and {second:?})")]
    TypeConflict { column: String, first: Kind, second: Kind },
}

/// The report field the table leaves out: wall-clock time differs from run to run.
const WALL_TIME_FIELD: &str = "wall_s";

/// The columns of the finished runs, rows sorted by run id.
pub fn build(spec: &Spec, finished: &Finished) -> Result<Vec<Column>, TableError> {
    let mut rows = Vec::with_capacity(finished.len());
    for (&id, line) in finished {
        let flat =
            flatten_json(line).map_err(|e| TableError::Record { id, message: e.to_string() })?;
        rows.push((id, split(flat)));
    }
    let axis_columns: Vec<(String, Vec<Option<&AxisValue>>)> =
        spec.axes.iter().map(Axis::columns).collect::<Vec<_>>().into_iter().flatten().collect();
    let owner: Vec<usize> = spec
        .axes
        .iter()
        .enumerate()
        .flat_map(|(a, axis)| std::iter::repeat_n(a, axis.columns().len()))
        .collect();
    let axis_names: HashSet<&str> = axis_columns.iter().map(|(n, _)| n.as_str()).collect();
    let name = |n: &str| {
        if axis_names.contains(n) {
            format!("result.{n}")
        } else {
            n.to_string()
        }
    };
    let meta = |key: &str, kind: Kind| Column {
        name: name(key),
        kind,
        values: rows
            .iter()
            .map(|(_, (m, _))| m.get(key).cloned().unwrap_or(Scalar::Null))
            .collect(),
    };

    let mut columns = vec![Column {
        name: name("run_id"),
        kind: Kind::Int64,
        values: rows.iter().map(|(id, _)| Scalar::Int(*id as i64)).collect(),
    }];
    let keys: Vec<_> = rows.iter().map(|(id, _)| run_key(spec, *id)).collect();
    for ((name, per_value), &a) in axis_columns.iter().zip(&owner) {
        let present: Vec<AxisValue> = per_value.iter().flatten().map(|v| (*v).clone()).collect();
        let kind = axis_kind(&present);
        let values = keys
            .iter()
            .map(|k| per_value[k.value_index[a]].map_or(Scalar::Null, |v| axis_scalar(v, kind)))
            .collect();
        columns.push(Column { name: name.clone(), kind, values });
    }
    columns.push(meta("rep", Kind::Int64));
    columns.push(meta("seed", Kind::Int64));
    for (field, kind) in report_columns(&rows)? {
        let values = rows
            .iter()
            .map(|(_, (_, report))| match report.get(&field) {
                Some(Scalar::Int(i)) if kind == Kind::Double => Scalar::Float(*i as f64),
                Some(v) => v.clone(),
                None => Scalar::Null,
            })
            .collect();
        columns.push(Column { name: name(&field), kind, values });
    }
    for key in ["status", "error", "braid_version", "git_commit", "scenario_hash"] {
        columns.push(meta(key, Kind::Utf8));
    }
    Ok(columns)
}

/// A record's top-level fields, and its report's fields (without the `report.` prefix and
/// without the wall time), in text order.
type Split = (HashMap<String, Scalar>, OrderedFields);

fn split(flat: Flat) -> Split {
    let mut meta = HashMap::new();
    let mut report = OrderedFields::default();
    for (k, v) in flat {
        match k.strip_prefix("report.") {
            Some(field) if field != WALL_TIME_FIELD => report.push(field.to_string(), v),
            Some(_) => {}
            None => {
                meta.insert(k, v);
            }
        }
    }
    (meta, report)
}

/// Fields in order, with lookup by name.
#[derive(Default)]
struct OrderedFields {
    order: Vec<String>,
    values: HashMap<String, Scalar>,
}

impl OrderedFields {
    fn push(&mut self, k: String, v: Scalar) {
        self.order.push(k.clone());
        self.values.insert(k, v);
    }
    fn get(&self, k: &str) -> Option<&Scalar> {
        self.values.get(k)
    }
}

/// The report columns: every field any row has, in the report's order, with its type. The
/// default report (with both baseline fields set) comes first, so the scalar fields are
/// there, typed, even when every run failed; per-path arrays enter after the field they
/// follow in the rows.
fn report_columns(rows: &[(u64, Split)]) -> Result<Vec<(String, Kind)>, TableError> {
    let prototype = braid_sim::Report {
        baseline_dlct_s: Some(0.0),
        relative_dlct: Some(0.0),
        ..braid_sim::Report::default()
    };
    let text = serde_json::to_string(&prototype).expect("a report serializes");
    let mut proto = OrderedFields::default();
    for (k, v) in flatten_json(&text).expect("serde_json reads what it wrote") {
        if k != WALL_TIME_FIELD {
            proto.push(k, v);
        }
    }
    let mut order: Vec<String> = Vec::new();
    let mut kinds: HashMap<String, Option<Kind>> = HashMap::new();
    let sources = std::iter::once(&proto).chain(rows.iter().map(|(_, (_, r))| r));
    for fields in sources {
        let mut after: Option<usize> = None;
        for k in &fields.order {
            let at = match order.iter().position(|o| o == k) {
                Some(at) => at,
                None => {
                    let at = after.map_or(order.len(), |a| a + 1);
                    order.insert(at, k.clone());
                    at
                }
            };
            after = Some(at);
            let kind = kinds.entry(k.clone()).or_insert(None);
            if let Some(new) = fields.get(k).and_then(Kind::of) {
                *kind = match *kind {
                    None => Some(new),
                    Some(old) => Some(Kind::join(old, new).ok_or_else(|| {
                        TableError::TypeConflict { column: k.clone(), first: old, second: new }
                    })?),
                };
            }
        }
    }
    Ok(order.into_iter().map(|k| (k.clone(), kinds[&k].unwrap_or(Kind::Double))).collect())
}

/// An axis's column type: see the module documentation.
pub fn axis_kind(values: &[AxisValue]) -> Kind {
    let all = |f: fn(&AxisValue) -> bool| values.iter().all(f);
    if all(|v| matches!(v, AxisValue::Int(_))) {
        Kind::Int64
    } else if all(|v| matches!(v, AxisValue::Int(_) | AxisValue::Float(_))) {
        Kind::Double
    } else if all(|v| matches!(v, AxisValue::Bool(_))) {
        Kind::Boolean
    } else {
        Kind::Utf8
    }
}

fn axis_scalar(v: &AxisValue, kind: Kind) -> Scalar {
    match (v, kind) {
        (AxisValue::Int(i), Kind::Int64) => Scalar::Int(*i),
        (AxisValue::Int(i), Kind::Double) => Scalar::Float(*i as f64),
        (AxisValue::Float(f), Kind::Double) => Scalar::Float(*f),
        (AxisValue::Bool(b), Kind::Boolean) => Scalar::Bool(*b),
        (AxisValue::Str(s), _) => Scalar::Str(s.clone()),
        (other, _) => Scalar::Str(other.to_toml()),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn spec(text: &str) -> Spec {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        Spec::parse(&format!("base = \"Cargo.toml\"\n{text}"), Path::new("s.toml"), dir).unwrap()
    }

    #[test]
    fn axis_kinds() {
        use AxisValue::*;
        assert_eq!(axis_kind(&[Int(1), Int(2)]), Kind::Int64);
        assert_eq!(axis_kind(&[Int(1), Float(2.5)]), Kind::Double);
        assert_eq!(axis_kind(&[Bool(true)]), Kind::Boolean);
        assert_eq!(axis_kind(&[Str("a".into()), Int(1)]), Kind::Utf8);
        assert_eq!(axis_scalar(&Int(1), Kind::Utf8), Scalar::Str("1".into()));
        assert_eq!(axis_scalar(&Int(3), Kind::Double), Scalar::Float(3.0));
    }

    fn record(id: u64, report: Option<&braid_sim::Report>) -> String {
        let raw = report.map(|r| {
            serde_json::value::RawValue::from_string(serde_json::to_string(r).unwrap()).unwrap()
        });
        let report = raw.as_deref();
        let rec = crate::journal::Record {
            run: id,
            rep: 0,
            seed: Some(1),
            status: if report.is_some() { "ok" } else { "error" },
            error: report.is_none().then_some("boom"),
            braid_version: "v",
            git_commit: "c",
            scenario_hash: None,
            report,
        };
        serde_json::to_string(&rec).unwrap()
    }

    #[test]
    fn columns_rows_and_collisions() {
        let s = spec("[axes]\nseed = [1, 2]\n\"e2e.cc\" = [\"cubic\", \"bbr\"]");
        let mut report = braid_sim::Report { dlct_s: 2.5, wall_s: 9.0, ..Default::default() };
        report.e2e.cc = "bbr".into();
        let mut finished = Finished::new();
        finished.insert(3, record(3, Some(&report)));
        finished.insert(0, record(0, None));
        let cols = build(&s, &finished).unwrap();
        let names: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(&names[..5], ["run_id", "seed", "e2e.cc", "rep", "result.seed"]);
        assert_eq!(names[5], "dlct_s");
        assert!(names.contains(&"result.e2e.cc"), "{names:?}");
        assert!(names.contains(&"relative_dlct"), "{names:?}");
        assert!(!names.contains(&"wall_s"), "{names:?}");
        assert_eq!(
            &names[names.len() - 5..],
            ["status", "error", "braid_version", "git_commit", "scenario_hash"]
        );
        let col = |n: &str| cols.iter().find(|c| c.name == n).unwrap();
        assert_eq!(col("run_id").values, [Scalar::Int(0), Scalar::Int(3)]);
        assert_eq!(col("seed").values, [Scalar::Int(1), Scalar::Int(2)]);
        assert_eq!(col("e2e.cc").values, [Scalar::Str("cubic".into()), Scalar::Str("bbr".into())]);
        assert_eq!(col("dlct_s").values, [Scalar::Null, Scalar::Float(2.5)]);
        assert_eq!(col("dlct_s").kind, Kind::Double);
        assert_eq!(col("events").kind, Kind::Int64);
        assert_eq!(col("relative_dlct").kind, Kind::Double);
        assert_eq!(col("error").values, [Scalar::Str("boom".into()), Scalar::Null]);
    }

    #[test]
    fn table_axis_columns_hold_labels_and_overrides() {
        let s = spec(
            "reps = 2\n[axes]\ncombination = [{ label = \"a\", \"e2e.cc\" = \"bbr\", \"tunnel.cc\" = \"ccid5\" }, \
             { label = \"b\", \"e2e.cc\" = \"cubic\", \"e2e.bytes\" = 5 }]\n\"tunnel.scheduler\" = [\"cpf\", \"srtt\"]",
        );
        let mut report = braid_sim::Report::default();
        report.e2e.cc = "bbr".into();
        let mut finished = Finished::new();
        for id in [0, 3, 5] {
            finished.insert(id, record(id, Some(&report)));
        }
        let cols = build(&s, &finished).unwrap();
        let names: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            &names[..7],
            [
                "run_id",
                "combination",
                "e2e.cc",
                "tunnel.cc",
                "e2e.bytes",
                "tunnel.scheduler",
                "rep"
            ]
        );
        assert!(names.contains(&"result.e2e.cc"), "{names:?}");
        let col = |n: &str| cols.iter().find(|c| c.name == n).unwrap();
        let s_ = |v: &str| Scalar::Str(v.into());
        assert_eq!(col("combination").values, [s_("a"), s_("a"), s_("b")]);
        assert_eq!(col("e2e.cc").values, [s_("bbr"), s_("bbr"), s_("cubic")]);
        assert_eq!(col("tunnel.cc").values, [s_("ccid5"), s_("ccid5"), Scalar::Null]);
        assert_eq!(col("e2e.bytes").kind, Kind::Int64);
        assert_eq!(col("e2e.bytes").values, [Scalar::Null, Scalar::Null, Scalar::Int(5)]);
        assert_eq!(col("tunnel.scheduler").values, [s_("cpf"), s_("srtt"), s_("cpf")]);
    }

    #[test]
    fn per_path_fields_follow_the_field_before_them() {
        let s = spec("");
        let path = braid_sim::metrics::PathReport {
            name: "wifi".into(),
            bytes: 1,
            share: 1.0,
            mean_mbps: 1.0,
            srtt_ms_mean: 1.0,
            srtt_ms_max: 1.0,
            drops: 0,
            queue_delay_ms_mean: 0.0,
            queue_delay_ms_max: 0.0,
            packets_sent: 1,
            packets_lost_detected: 0,
            cwnd_bytes_mean: 0.0,
            send_queue_bytes_mean: None,
            owd: None,
        };
        let report = braid_sim::Report { paths: vec![path], ..Default::default() };
        let mut finished = Finished::new();
        finished.insert(0, record(0, Some(&report)));
        let cols = build(&s, &finished).unwrap();
        let names: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
        let at = |n: &str| names.iter().position(|x| *x == n).unwrap();
        assert_eq!(at("paths.0.name"), at("goodput_mbps") + 1);
        assert_eq!(at("paths.0.bytes"), at("paths.0.name") + 1);
        assert_eq!(cols[at("paths.0.name")].kind, Kind::Utf8);
    }
}
