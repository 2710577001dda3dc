//! Deserialization with errors that name the full dotted field.
//!
//! serde's derived errors name a field at best by its last segment (`unknown field "rtt"`) and
//! toml's point at a line of a text that overrides may since have changed. So a configuration
//! table is checked section by section before it is deserialized: every key must be a field of
//! its struct (the field list is read from serde's derive, see [`field_names`]), and every value
//! must deserialize on its own. Every struct is `#[serde(default)]`, so a one-key table
//! deserializes exactly that field and its error belongs to that key. Sections are flat except
//! for the algorithms' tables ([`crate::tuning`]), which are checked as sections of their own
//! first, so their errors name the full key too. The simulator's scenario loader and the
//! daemon's configuration use the same helpers.

use std::fmt;
use std::str::FromStr;

use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde::{Deserialize, Serializer};
use toml::{Table, Value};

use crate::{AcpfTable, Bbr2Table, FieldError, TcpTable, TunnelConfig};
use braid_core::cc::coupled::{CoupledCubicConfig, WvegasConfig};
use braid_core::sched::{BlestConfig, EcfConfig};

/// `deserialize_with` for a named enum: a string parsed with the type's `FromStr`, whose error
/// lists the allowed names.
pub fn named<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr,
    T::Err: fmt::Display,
{
    let name = String::deserialize(deserializer)?;
    name.parse().map_err(de::Error::custom)
}

/// `serialize_with` for a named enum: its name (`Display`, from `braid_core::named_enum!`).
pub fn ser_named<S: Serializer, T: fmt::Display>(
    value: &T,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}

/// The word that switches an optional limit off (`tunnel.max_rtt_spread_ms = "off"`).
pub const OFF: &str = "off";

/// `deserialize_with` for an optional limit: a number, or `"off"` for none. The word exists so
/// that a config laid over a base whose limit is set (the daemon's, see
/// [`TunnelConfig::bonding`]) can switch it off, and so that writing a config out keeps it off.
pub fn limit_or_off<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<f64>, D::Error> {
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
pub fn ser_limit_or_off<S: Serializer>(
    value: &Option<f64>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => serializer.serialize_f64(*v),
        None => serializer.serialize_str(OFF),
    }
}

/// The field names of a struct with derived `Deserialize`: the derive passes them to
/// `deserialize_struct`, which this probe answers with an "error" carrying them.
pub fn field_names<T: DeserializeOwned>() -> &'static [&'static str] {
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

/// Lays `over` onto `base`: tables merge key by key, anything else (arrays included, so a
/// file's `paths` replaces the default list) replaces the base value.
pub fn merge(base: &mut Table, over: Table) {
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

/// A `[tunnel]` table laid over `base`: the keys the table gives replace the base's (its
/// algorithm tables key by key), the rest keep the base's values; errors name the dotted key.
pub(crate) fn tunnel_over(base: &TunnelConfig, table: Table) -> Result<TunnelConfig, FieldError> {
    let mut wrapped = Table::new();
    wrapped.insert("tunnel".to_string(), Value::Table(table));
    tunnel_tables(&wrapped)?;
    section::<TunnelConfig>("tunnel", wrapped.get("tunnel"))?;
    let mut merged = Table::try_from(base).map_err(FieldError::serialize)?;
    if let Some(Value::Table(table)) = wrapped.remove("tunnel") {
        merge(&mut merged, table);
    }
    TunnelConfig::deserialize(merged).map_err(|e| FieldError::BadField {
        field: "tunnel".to_string(),
        reason: e.message().to_string(),
    })
}

/// Checks the algorithms' tables inside `[tunnel]` (`table` holds the `tunnel` key) as sections.
pub fn tunnel_tables(table: &Table) -> Result<(), FieldError> {
    let inner = |name: &str| table.get("tunnel")?.as_table()?.get(name);
    section::<AcpfTable>("tunnel.acpf", inner("acpf"))?;
    section::<BlestConfig>("tunnel.blest", inner("blest"))?;
    section::<EcfConfig>("tunnel.ecf", inner("ecf"))?;
    section::<Bbr2Table>("tunnel.bbr2", inner("bbr2"))?;
    section::<WvegasConfig>("tunnel.wvegas", inner("wvegas"))?;
    section::<CoupledCubicConfig>("tunnel.coupled_cubic", inner("coupled_cubic"))?;
    section::<TcpTable>("tunnel.tcp", inner("tcp"))
}

/// Checks that `value` (the field `name` of the scenario) is a table whose every key is a field
/// of `T` and deserializes on its own.
pub fn section<T: DeserializeOwned>(name: &str, value: Option<&Value>) -> Result<(), FieldError> {
    match value {
        None => Ok(()),
        Some(Value::Table(table)) => {
            let prefix = format!("{name}.");
            check_known_fields::<T>(&prefix, table)?;
            check_each_value::<T>(&prefix, table)
        }
        Some(other) => Err(FieldError::BadField {
            field: name.to_string(),
            reason: format!("expected a table, found {}", other.type_str()),
        }),
    }
}

pub fn check_known_fields<T: DeserializeOwned>(
    prefix: &str,
    table: &Table,
) -> Result<(), FieldError> {
    let fields = field_names::<T>();
    match table.keys().find(|key| !fields.contains(&key.as_str())) {
        None => Ok(()),
        Some(key) => Err(FieldError::UnknownField {
            field: format!("{prefix}{key}"),
            allowed: fields.join(", "),
        }),
    }
}

pub fn check_each_value<T: DeserializeOwned>(
    prefix: &str,
    table: &Table,
) -> Result<(), FieldError> {
    for (key, value) in table {
        let mut single = Table::new();
        single.insert(key.clone(), value.clone());
        if let Err(e) = T::deserialize(single) {
            return Err(FieldError::BadField {
                field: format!("{prefix}{key}"),
                reason: e.message().to_string(),
            });
        }
    }
    Ok(())
}
