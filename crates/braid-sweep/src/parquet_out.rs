//! Columns to a Parquet file with the parquet crate's low-level writer: one row group, every
//! column OPTIONAL, no compression. The file is written under a temporary name and renamed,
//! so a half-written table never exists under the real name. The bytes depend only on the
//! columns (no timestamps), so the same runs give the same file.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::{LogicalType, Repetition, Type as Physical};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

use crate::flatten::Scalar;
use crate::table::{Column, Kind};

/// Why the table could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ParquetOutError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("writing {}: {source}", path.display())]
    Parquet { path: PathBuf, source: ParquetError },
    #[error("column {column}: a {found:?} value in a {kind:?} column")]
    Value { column: String, kind: Kind, found: Scalar },
}

/// Writes `columns` (all of one length) to `path`, atomically.
pub fn write(path: &Path, columns: &[Column]) -> Result<(), ParquetOutError> {
    let tmp = path.with_extension("parquet.partial");
    let pq = |source| ParquetOutError::Parquet { path: tmp.clone(), source };
    let io = |source| ParquetOutError::Io { path: tmp.clone(), source };
    let file = File::create(&tmp).map_err(io)?;
    let props = Arc::new(WriterProperties::builder().build());
    let mut writer =
        SerializedFileWriter::new(file, schema(columns).map_err(pq)?, props).map_err(pq)?;
    let mut group = writer.next_row_group().map_err(pq)?;
    let mut i = 0;
    while let Some(mut col) = group.next_column().map_err(pq)? {
        let c = &columns[i];
        let def: Vec<i16> = c.values.iter().map(|v| i16::from(*v != Scalar::Null)).collect();
        let present = c.values.iter().filter(|v| **v != Scalar::Null);
        let bad = |found: &Scalar| ParquetOutError::Value {
            column: c.name.clone(),
            kind: c.kind,
            found: found.clone(),
        };
        match c.kind {
            Kind::Int64 => {
                let vals = present
                    .map(|v| if let Scalar::Int(i) = v { Ok(*i) } else { Err(bad(v)) })
                    .collect::<Result<Vec<_>, _>>()?;
                col.typed::<Int64Type>().write_batch(&vals, Some(&def), None).map_err(pq)?;
            }
            Kind::Double => {
                let vals = present
                    .map(|v| if let Scalar::Float(f) = v { Ok(*f) } else { Err(bad(v)) })
                    .collect::<Result<Vec<_>, _>>()?;
                col.typed::<DoubleType>().write_batch(&vals, Some(&def), None).map_err(pq)?;
            }
            Kind::Boolean => {
                let vals = present
                    .map(|v| if let Scalar::Bool(b) = v { Ok(*b) } else { Err(bad(v)) })
                    .collect::<Result<Vec<_>, _>>()?;
                col.typed::<BoolType>().write_batch(&vals, Some(&def), None).map_err(pq)?;
            }
            Kind::Utf8 => {
                let vals = present
                    .map(|v| match v {
                        Scalar::Str(s) => Ok(ByteArray::from(s.as_bytes().to_vec())),
                        _ => Err(bad(v)),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                col.typed::<ByteArrayType>().write_batch(&vals, Some(&def), None).map_err(pq)?;
            }
        }
        col.close().map_err(pq)?;
        i += 1;
    }
    group.close().map_err(pq)?;
    let mut file = writer.into_inner().map_err(pq)?;
    file.flush().map_err(io)?;
    file.sync_all().map_err(io)?;
    drop(file);
    std::fs::rename(&tmp, path)
        .map_err(|source| ParquetOutError::Io { path: path.to_path_buf(), source })
}

fn schema(columns: &[Column]) -> Result<Arc<Type>, ParquetError> {
    let fields = columns
        .iter()
        .map(|c| {
            let (physical, logical) = match c.kind {
                Kind::Int64 => (Physical::INT64, None),
                Kind::Double => (Physical::DOUBLE, None),
                Kind::Boolean => (Physical::BOOLEAN, None),
                Kind::Utf8 => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
            };
            Type::primitive_type_builder(&c.name, physical)
                .with_repetition(Repetition::OPTIONAL)
                .with_logical_type(logical)
                .build()
                .map(Arc::new)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Arc::new(Type::group_type_builder("braid_sweep").with_fields(fields).build()?))
}

#[cfg(test)]
mod tests {
    use parquet::file::reader::{FileReader, SerializedFileReader};

    use super::*;

    #[test]
    fn writes_a_readable_file_with_nulls() {
        let dir = std::env::temp_dir().join(format!("braid-sweep-pq-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.parquet");
        let cols = vec![
            Column {
                name: "i".into(),
                kind: Kind::Int64,
                values: vec![Scalar::Int(1), Scalar::Null],
            },
            Column {
                name: "f".into(),
                kind: Kind::Double,
                values: vec![Scalar::Null, Scalar::Float(0.5)],
            },
            Column {
                name: "b".into(),
                kind: Kind::Boolean,
                values: vec![Scalar::Bool(true), Scalar::Null],
            },
            Column {
                name: "s".into(),
                kind: Kind::Utf8,
                values: vec![Scalar::Str("x".into()), Scalar::Null],
            },
        ];
        write(&path, &cols).unwrap();
        let first = std::fs::read(&path).unwrap();
        write(&path, &cols).unwrap();
        assert_eq!(first, std::fs::read(&path).unwrap(), "same columns, same bytes");
        let reader = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
        assert_eq!(reader.metadata().file_metadata().num_rows(), 2);
        let rows: Vec<String> =
            reader.get_row_iter(None).unwrap().map(|r| r.unwrap().to_string()).collect();
        assert_eq!(rows[0], "{i: 1, f: null, b: true, s: \"x\"}");
        assert_eq!(rows[1], "{i: null, f: 0.5, b: null, s: null}");
    }

    #[test]
    fn a_value_of_the_wrong_type_is_an_error() {
        let dir = std::env::temp_dir().join(format!("braid-sweep-pq-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cols =
            vec![Column { name: "i".into(), kind: Kind::Int64, values: vec![Scalar::Float(1.0)] }];
        let err = write(&dir.join("t.parquet"), &cols).unwrap_err();
        assert!(err.to_string().contains("column i"), "{err}");
    }
}
