//! JSON text to a flat list of (dotted name, scalar), in the order the text writes them.
//!
//! The journal stores each run as one JSON object (the report as `braid sim --json` prints
//! it, nested); the table wants one column per leaf. Objects join their keys with `.`, arrays
//! their indices (`paths.0.share`). Walking the text with serde keeps the writer's field order
//! (a `serde_json::Value` would sort the keys), so the columns come out in the report's own
//! order.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// A leaf value.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

/// The leaves of one JSON document, in text order.
pub type Flat = Vec<(String, Scalar)>;

/// Flattens a JSON document.
pub fn flatten_json(text: &str) -> Result<Flat, serde_json::Error> {
    let mut out = Vec::new();
    let mut de = serde_json::Deserializer::from_str(text);
    Flatten { prefix: String::new(), out: &mut out }.deserialize(&mut de)?;
    de.end()?;
    Ok(out)
}

struct Flatten<'a> {
    prefix: String,
    out: &'a mut Flat,
}

impl Flatten<'_> {
    fn push(self, v: Scalar) {
        self.out.push((self.prefix, v));
    }

    fn child(prefix: &str, key: &str) -> String {
        if prefix.is_empty() {
            key.to_string()
        } else {
            format!("{prefix}.{key}")
        }
    }
}

impl<'de> DeserializeSeed<'de> for Flatten<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Flatten<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<(), E> {
        self.push(Scalar::Bool(v));
        Ok(())
    }
    fn visit_i64<E>(self, v: i64) -> Result<(), E> {
        self.push(Scalar::Int(v));
        Ok(())
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<(), E> {
        let v = i64::try_from(v).map_err(|_| {
            E::custom(format!("{}: {v} does not fit a signed 64-bit column", self.prefix))
        })?;
        self.push(Scalar::Int(v));
        Ok(())
    }
    fn visit_f64<E>(self, v: f64) -> Result<(), E> {
        self.push(Scalar::Float(v));
        Ok(())
    }
    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        self.push(Scalar::Str(v.to_string()));
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        self.push(Scalar::Null);
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        self.push(Scalar::Null);
        Ok(())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        loop {
            let prefix = Self::child(&self.prefix, &i.to_string());
            if seq.next_element_seed(Flatten { prefix, out: &mut *self.out })?.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            let prefix = Self::child(&self.prefix, &key);
            map.next_value_seed(Flatten { prefix, out: &mut *self.out })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_objects_and_arrays_flatten_in_text_order() {
        let flat =
            flatten_json(r#"{"z": 1, "a": {"y": 2.5, "b": [true, null, "s"]}, "e": [], "m": -3}"#)
                .unwrap();
        let want = vec![
            ("z".to_string(), Scalar::Int(1)),
            ("a.y".into(), Scalar::Float(2.5)),
            ("a.b.0".into(), Scalar::Bool(true)),
            ("a.b.1".into(), Scalar::Null),
            ("a.b.2".into(), Scalar::Str("s".into())),
            ("m".into(), Scalar::Int(-3)),
        ];
        assert_eq!(flat, want);
    }

    #[test]
    fn floats_keep_their_bits_and_stay_floats() {
        for v in [0.1 + 0.2, 1.0, 1e-300, 123456.789e10, f64::MIN_POSITIVE, 2.0f64.sqrt()] {
            let text = serde_json::to_string(&serde_json::json!({ "v": v })).unwrap();
            assert_eq!(flatten_json(&text).unwrap(), [("v".to_string(), Scalar::Float(v))]);
        }
    }

    #[test]
    fn report_fields_come_in_struct_order() {
        let text = serde_json::to_string(&braid_sim::Report::default()).unwrap();
        let names: Vec<String> = flatten_json(&text).unwrap().into_iter().map(|(k, _)| k).collect();
        assert_eq!(names[0], "dlct_s");
        assert_eq!(names[1], "goodput_mbps");
        assert!(names.contains(&"e2e.retransmissions".to_string()), "{names:?}");
    }

    #[test]
    fn bad_json_is_an_error() {
        assert!(flatten_json("{\"a\": 1").is_err());
        assert!(flatten_json("{\"a\": 1} x").is_err());
        assert!(flatten_json("{\"a\": 18446744073709551615}").is_err());
    }
}
