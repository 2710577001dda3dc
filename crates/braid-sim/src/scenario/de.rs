//! Deserialization with errors that name the full dotted field.
//!
//! serde's derived errors name a field at best by its last segment (`unknown field "rtt"`) and
//! toml's point at a line of a text the overrides have since changed. So the scenario table is
//! checked section by section before it is deserialized: every key must be a field of its
//! struct (the field list is read from serde's derive, see [`field_names`]), and every value
//! must deserialize on its own. Every struct is `#[serde(default)]`, so a one-key table
//! deserializes exactly that field and its error belongs to that key. The sections are flat
//! except for the algorithms' tables in `[tunnel]` and `[e2e]` ([`super::tuning`]), which are
//! checked as sections of their own first, so their errors name the full key too.

use std::fmt;
use std::str::FromStr;

use braid_core::cc::cubic::CubicUndo;
use braid_core::cc::{CcAlgorithm, TunnelCc};
use braid_core::sched::SchedulerKind;
use braid_core::tunnel::Reliability;
use serde::de::{self, DeserializeOwned, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serializer};
use toml::{Table, Value};

use super::{
    AcpfTable, AqmChoice, Bbr2Table, BlestTable, CountingChoice, CoupledCubicTable, E2eConfig,
    E2eKind, EcfTable, LinkConfig, PathConfig, ReorderChoice, Scenario, ScenarioError, SimConfig,
    TunnelConfig, WvegasTable,
};

/// Enums that configs spell by name.
pub(crate) trait Named {
    fn name(&self) -> &'static str;
}

macro_rules! named {
    ($($t:ty),*) => {$(
        impl Named for $t {
            fn name(&self) -> &'static str {
                self.as_str()
            }
        }
    )*};
}
named!(
    TunnelCc,
    CcAlgorithm,
    SchedulerKind,
    ReorderChoice,
    E2eKind,
    Reliability,
    AqmChoice,
    CountingChoice,
    CubicUndo
);

/// `deserialize_with` for a named enum: a string parsed with the type's `FromStr`, whose error
/// lists the allowed names.
pub(crate) fn named<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr,
    T::Err: fmt::Display,
{
    let name = String::deserialize(deserializer)?;
    name.parse().map_err(de::Error::custom)
}

/// `serialize_with` for a named enum.
pub(crate) fn ser_named<S: Serializer, T: Named>(
    value: &T,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(value.name())
}

/// The word that switches an optional limit off (`tunnel.max_rtt_spread_ms = "off"`).
pub(crate) const OFF: &str = "off";

/// `deserialize_with` for an optional limit: a number, or `"off"` for none. The word exists so
/// that a config laid over a base whose limit is set (the daemon's, see
/// [`TunnelConfig::bonding`]) can switch it off, and so that writing a config out keeps it off.
pub(crate) fn limit_or_off<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<f64>, D::Error> {
    struct LimitVisitor;
    impl<'de> Visitor<'de> for LimitVisitor {
        type Value = Option<f64>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "a number, or \"{OFF}\"")
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Option<f64>, E> {
            Ok(Some(v))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Option<f64>, E> {
            Ok(Some(v as f64))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Option<f64>, E> {
            Ok(Some(v as f64))
        }
        fn visit_str<E: de::Error>(self, word: &str) -> Result<Option<f64>, E> {
            if word == OFF {
                Ok(None)
            } else {
                Err(E::invalid_value(de::Unexpected::Str(word), &self))
            }
        }
    }
    deserializer.deserialize_any(LimitVisitor)
}

/// `serialize_with` for an optional limit: the number, or `"off"`.
pub(crate) fn ser_limit_or_off<S: Serializer>(
    value: &Option<f64>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => serializer.serialize_f64(*v),
        None => serializer.serialize_str(OFF),
    }
}

/// `deserialize_with` for `keys`: a list of names, or one string joining them with `+`.
pub(crate) fn keys<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    struct KeysVisitor;
    impl<'de> Visitor<'de> for KeysVisitor {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a list of scenario keys or a string such as \"SHORT+NEAR\"")
        }
        fn visit_str<E: de::Error>(self, joined: &str) -> Result<Vec<String>, E> {
            if joined.trim().is_empty() {
                return Ok(Vec::new());
            }
            Ok(joined.split('+').map(|k| k.trim().to_string()).collect())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
            let mut keys = Vec::new();
            while let Some(key) = seq.next_element::<String>()? {
                keys.push(key.trim().to_string());
            }
            Ok(keys)
        }
    }
    deserializer.deserialize_any(KeysVisitor)
}

/// The field names of a struct with derived `Deserialize`: the derive passes them to
/// `deserialize_struct`, which this probe answers with an "error" carrying them.
pub(crate) fn field_names<T: DeserializeOwned>() -> &'static [&'static str] {
    #[derive(Debug)]
    struct Fields(&'static [&'static str]);
    impl fmt::Display for Fields {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "fields {:?}", self.0)
        }
    }
    impl std::error::Error for Fields {}
    impl de::Error for Fields {
        fn custom<M: fmt::Display>(_: M) -> Self {
            Fields(&[])
        }
    }
    struct Probe;
    impl<'de> Deserializer<'de> for Probe {
        type Error = Fields;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Fields> {
            Err(Fields(&[]))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Fields> {
            Err(Fields(fields))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
            ignored_any
        }
    }
    match T::deserialize(Probe) {
        Err(Fields(fields)) => fields,
        Ok(_) => &[],
    }
}

/// [`Scenario::default()`] as a TOML table, the base a scenario file is laid over.
pub(crate) fn defaults_table() -> Result<Table, ScenarioError> {
    Table::try_from(Scenario::default())
        .map_err(|e| ScenarioError::Serialize { message: e.to_string() })
}

/// Lays `over` onto `base`: tables merge key by key, anything else (arrays included, so a
/// file's `paths` replaces the default list) replaces the base value.
pub(crate) fn merge(base: &mut Table, over: Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(Value::Table(base_table)), Value::Table(over_table)) => {
                merge(base_table, over_table)
            }
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// Deserializes a scenario table, naming the full dotted key of the first bad field.
pub(crate) fn scenario_from_table(table: Table) -> Result<Scenario, ScenarioError> {
    check_known_fields::<Scenario>("", &table)?;
    tuning_sections(&table)?;
    section::<LinkConfig>("server_link", table.get("server_link"))?;
    section::<TunnelConfig>("tunnel", table.get("tunnel"))?;
    section::<E2eConfig>("e2e", table.get("e2e"))?;
    section::<SimConfig>("sim", table.get("sim"))?;
    match table.get("paths") {
        None => {}
        Some(Value::Array(paths)) => {
            for (i, path) in paths.iter().enumerate() {
                section::<PathConfig>(&format!("paths.{i}"), Some(path))?;
            }
        }
        Some(other) => {
            return Err(ScenarioError::BadField {
                field: "paths".to_string(),
                reason: format!(
                    "expected an array of tables ([[paths]]), found {}",
                    other.type_str()
                ),
            })
        }
    }
    check_each_value::<Scenario>("", &table)?;
    Scenario::deserialize(table).map_err(|e| ScenarioError::BadField {
        field: "scenario".to_string(),
        reason: e.message().to_string(),
    })
}

/// A `[tunnel]` table laid over `base`: the keys the table gives replace the base's (its
/// algorithm tables key by key), the rest keep the base's values; errors name the dotted key.
pub(crate) fn tunnel_over(
    base: &TunnelConfig,
    table: Table,
) -> Result<TunnelConfig, ScenarioError> {
    let mut wrapped = Table::new();
    wrapped.insert("tunnel".to_string(), Value::Table(table));
    tuning_sections(&wrapped)?;
    section::<TunnelConfig>("tunnel", wrapped.get("tunnel"))?;
    let mut merged =
        Table::try_from(base).map_err(|e| ScenarioError::Serialize { message: e.to_string() })?;
    if let Some(Value::Table(table)) = wrapped.remove("tunnel") {
        merge(&mut merged, table);
    }
    TunnelConfig::deserialize(merged).map_err(|e| ScenarioError::BadField {
        field: "tunnel".to_string(),
        reason: e.message().to_string(),
    })
}

/// Checks the algorithms' tables inside `[tunnel]` and `[e2e]` as sections.
fn tuning_sections(table: &Table) -> Result<(), ScenarioError> {
    let inner = |parent: &str, name: &str| table.get(parent)?.as_table()?.get(name);
    section::<AcpfTable>("tunnel.acpf", inner("tunnel", "acpf"))?;
    section::<BlestTable>("tunnel.blest", inner("tunnel", "blest"))?;
    section::<EcfTable>("tunnel.ecf", inner("tunnel", "ecf"))?;
    section::<Bbr2Table>("tunnel.bbr2", inner("tunnel", "bbr2"))?;
    section::<WvegasTable>("tunnel.wvegas", inner("tunnel", "wvegas"))?;
    section::<CoupledCubicTable>("tunnel.coupled_cubic", inner("tunnel", "coupled_cubic"))?;
    section::<Bbr2Table>("e2e.bbr2", inner("e2e", "bbr2"))
}

/// Checks that `value` (the field `name` of the scenario) is a table whose every key is a field
/// of `T` and deserializes on its own.
fn section<T: DeserializeOwned>(name: &str, value: Option<&Value>) -> Result<(), ScenarioError> {
    match value {
        None => Ok(()),
        Some(Value::Table(table)) => {
            let prefix = format!("{name}.");
            check_known_fields::<T>(&prefix, table)?;
            check_each_value::<T>(&prefix, table)
        }
        Some(other) => Err(ScenarioError::BadField {
            field: name.to_string(),
            reason: format!("expected a table, found {}", other.type_str()),
        }),
    }
}

fn check_known_fields<T: DeserializeOwned>(
    prefix: &str,
    table: &Table,
) -> Result<(), ScenarioError> {
    let fields = field_names::<T>();
    match table.keys().find(|key| !fields.contains(&key.as_str())) {
        None => Ok(()),
        Some(key) => Err(ScenarioError::UnknownField {
            field: format!("{prefix}{key}"),
            allowed: fields.join(", "),
        }),
    }
}

fn check_each_value<T: DeserializeOwned>(prefix: &str, table: &Table) -> Result<(), ScenarioError> {
    for (key, value) in table {
        let mut single = Table::new();
        single.insert(key.clone(), value.clone());
        if let Err(e) = T::deserialize(single) {
            return Err(ScenarioError::BadField {
                field: format!("{prefix}{key}"),
                reason: e.message().to_string(),
            });
        }
    }
    Ok(())
}
