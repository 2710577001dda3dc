//! Deserialization of a whole scenario, with errors that name the full dotted field: the
//! sections are checked one by one with braid-config's helpers ([`braid_config::de`]) before the
//! scenario is deserialized. The `[tunnel]` section and its algorithm tables are braid-config's;
//! this module adds the scenario's own sections and the `keys` list.

use std::fmt;

use braid_config::de::{check_each_value, check_known_fields, section};
use braid_config::{Bbr2Table, FieldError};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use toml::{Table, Value};

use super::{
    E2eConfig, LinkConfig, NoiseConfig, PathConfig, Scenario, ScenarioError, SimConfig,
    TunnelConfig,
};

pub(crate) use braid_config::de::{merge, named, ser_named};

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

/// [`Scenario::default()`] as a TOML table, the base a scenario file is laid over.
pub(crate) fn defaults_table() -> Result<Table, ScenarioError> {
    Table::try_from(Scenario::default())
        .map_err(|e| ScenarioError::Serialize { message: e.to_string() })
}

/// Deserializes a scenario table, naming the full dotted key of the first bad field.
pub(crate) fn scenario_from_table(table: Table) -> Result<Scenario, ScenarioError> {
    check_known_fields::<Scenario>("", &table)?;
    braid_config::de::tunnel_tables(&table)?;
    section::<Bbr2Table>(
        "e2e.bbr2",
        table.get("e2e").and_then(Value::as_table).and_then(|e| e.get("bbr2")),
    )?;
    section::<LinkConfig>("server_link", table.get("server_link"))?;
    section::<TunnelConfig>("tunnel", table.get("tunnel"))?;
    section::<E2eConfig>("e2e", table.get("e2e"))?;
    section::<NoiseConfig>(
        "sim.noise",
        table.get("sim").and_then(Value::as_table).and_then(|e| e.get("noise")),
    )?;
    section::<SimConfig>("sim", table.get("sim"))?;
    match table.get("paths") {
        None => {}
        Some(Value::Array(paths)) => {
            for (i, path) in paths.iter().enumerate() {
                section::<PathConfig>(&format!("paths.{i}"), Some(path))?;
            }
        }
        Some(other) => {
            return Err(FieldError::BadField {
                field: "paths".to_string(),
                reason: format!(
                    "expected an array of tables ([[paths]]), found {}",
                    other.type_str()
                ),
            }
            .into())
        }
    }
    check_each_value::<Scenario>("", &table)?;
    Scenario::deserialize(table).map_err(|e| {
        FieldError::BadField { field: "scenario".to_string(), reason: e.message().to_string() }
            .into()
    })
}
