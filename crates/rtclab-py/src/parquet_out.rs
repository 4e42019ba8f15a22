//! Writing a result table (`flows.parquet`, `link.parquet`, ...) from the column bytes the
//! engines produce, with the `parquet` crate (Apache Arrow's Rust implementation, without
//! arrow itself): one row group, snappy pages. A whole `rtclab run --no-plots` then needs
//! neither pyarrow nor pandas, whose imports cost more wall time and memory than the
//! simulation (issue 16 point 9). The schema is what pandas wrote before: doubles, int64 ids
//! and counts, UTF-8 names.

use std::fs::File;
use std::sync::Arc;

use parquet::basic::{Compression, ConvertedType, Repetition, Type as Physical};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

/// One column's values.
pub enum Column {
    F64(Vec<f64>),
    I64(Vec<i64>),
    Str(Vec<String>),
}

impl Column {
    fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }
}

/// Writes `columns` (name, values; all equally long) as a Parquet file at `path`.
pub fn write(path: &str, columns: &[(String, Column)]) -> Result<(), String> {
    let rows = columns.first().map_or(0, |c| c.1.len());
    if let Some((name, _)) = columns.iter().find(|c| c.1.len() != rows) {
        return Err(format!("column {name} has a different length than the others"));
    }
    let mut fields = Vec::new();
    for (name, col) in columns {
        let (physical, converted) = match col {
            Column::F64(_) => (Physical::DOUBLE, ConvertedType::NONE),
            Column::I64(_) => (Physical::INT64, ConvertedType::INT_64),
            Column::Str(_) => (Physical::BYTE_ARRAY, ConvertedType::UTF8),
        };
        let t = Type::primitive_type_builder(name, physical)
            .with_repetition(Repetition::REQUIRED)
            .with_converted_type(converted)
            .build()
            .map_err(|e| e.to_string())?;
        fields.push(Arc::new(t));
    }
    let schema = Type::group_type_builder("schema")
        .with_fields(fields)
        .build()
        .map_err(|e| e.to_string())?;
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_created_by(format!("rtclab {}", env!("CARGO_PKG_VERSION")))
        .build();
    let file = File::create(path).map_err(|e| format!("{path}: {e}"))?;
    let mut w = SerializedFileWriter::new(file, Arc::new(schema), Arc::new(props))
        .map_err(|e| e.to_string())?;
    let mut rg = w.next_row_group().map_err(|e| e.to_string())?;
    for (_, col) in columns {
        let mut c =
            rg.next_column().map_err(|e| e.to_string())?.ok_or("schema has fewer columns")?;
        match col {
            Column::F64(v) => c.typed::<DoubleType>().write_batch(v, None, None),
            Column::I64(v) => c.typed::<Int64Type>().write_batch(v, None, None),
            Column::Str(v) => {
                let v: Vec<ByteArray> = v.iter().map(|s| ByteArray::from(s.as_str())).collect();
                c.typed::<ByteArrayType>().write_batch(&v, None, None)
            }
        }
        .map_err(|e| e.to_string())?;
        c.close().map_err(|e| e.to_string())?;
    }
    rg.close().map_err(|e| e.to_string())?;
    w.close().map_err(|e| format!("{path}: {e}"))?;
    Ok(())
}
