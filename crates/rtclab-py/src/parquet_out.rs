//! Writing a result table (`flows.parquet`, `link.parquet`, ...) from the column bytes the
//! engines produce, with the `parquet` crate (Apache Arrow's Rust implementation, without
//! arrow itself): one row group, snappy pages. A whole `rtclab run --no-plots` then needs
//! neither pyarrow nor pandas, whose imports cost more wall time and memory than the
//! simulation (issue 16 point 9). The schema is what pandas wrote before: doubles, int64 ids
//! and counts, UTF-8 names.
//!
//! Columns are encoded on every core (each into its own buffer, with the same writer properties
//! a sequential write uses) and spliced into the row group in schema order: the dictionary and
//! statistics work of a 1,000-flow `flows.parquet` (34 columns x 300,000 rows) was the largest
//! piece of a run's work after the simulation.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use parquet::basic::{Compression, ConvertedType, Repetition, Type as Physical};
use parquet::column::writer::{get_column_writer, ColumnCloseResult, ColumnWriter};
use parquet::data_type::ByteArray;
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::file::properties::{WriterProperties, WriterPropertiesPtr};
use parquet::file::writer::{SerializedFileWriter, SerializedPageWriter, TrackedWrite};
use parquet::schema::types::{ColumnDescPtr, SchemaDescriptor, Type};

/// One column's values. Numbers come as the engines' little-endian float64 bytes, borrowed and
/// decoded one column at a time while writing (a 1,000-flow `flows` table is 80 MB: decoding
/// every column first would hold it a second time).
pub enum Column<'a> {
    F64(&'a [u8]),
    /// Float64 bytes rounded to integers.
    I64(&'a [u8]),
    Str(Vec<String>),
    /// Strings given as float64 indices into a list of names (a flow's name per row).
    StrByIndex(Vec<String>, &'a [u8]),
}

impl Column<'_> {
    fn len(&self) -> usize {
        match self {
            Column::F64(b) | Column::I64(b) | Column::StrByIndex(_, b) => b.len() / 8,
            Column::Str(v) => v.len(),
        }
    }
}

/// One column chunk, encoded: its bytes and what the row group needs to splice them in.
type Encoded = (Bytes, ColumnCloseResult);

/// Encodes one column into its own buffer (pages as a sequential write would make them).
fn encode_column(
    descr: ColumnDescPtr,
    props: WriterPropertiesPtr,
    col: &Column<'_>,
) -> Result<Encoded, String> {
    let mut sink = TrackedWrite::new(Vec::new());
    let piece = props.write_batch_size() * PIECE_BATCHES;
    let close = {
        let pages = Box::new(SerializedPageWriter::new(&mut sink));
        let mut w = get_column_writer(descr, props, pages);
        // Values are decoded a piece at a time into one small buffer (not the whole column:
        // 2.4 MB of fresh memory per column of a 1,000-flow table). The pieces are whole
        // multiples of the writer's mini-batch, so the pages are those of one call.
        let written = match (&mut w, col) {
            (ColumnWriter::DoubleColumnWriter(t), Column::F64(b)) => {
                in_pieces(b, piece, |x| x, |v| t.write_batch(v, None, None).map(drop))
            }
            (ColumnWriter::Int64ColumnWriter(t), Column::I64(b)) => in_pieces(
                b,
                piece,
                |x| x.round() as i64,
                |v| t.write_batch(v, None, None).map(drop),
            ),
            (ColumnWriter::ByteArrayColumnWriter(t), Column::Str(v)) => {
                let v: Vec<ByteArray> = v.iter().map(|s| ByteArray::from(s.as_str())).collect();
                t.write_batch(&v, None, None).map(drop)
            }
            (ColumnWriter::ByteArrayColumnWriter(t), Column::StrByIndex(names, idx)) => {
                let names: Vec<ByteArray> =
                    names.iter().map(|s| ByteArray::from(s.as_str())).collect();
                let name = |i: f64| names[i as usize].clone();
                in_pieces(idx, piece, name, |v| t.write_batch(v, None, None).map(drop))
            }
            _ => return Err("a column's values do not match its schema type".into()),
        };
        written.map_err(|e| e.to_string())?;
        w.close().map_err(|e| e.to_string())?
    };
    let buf = sink.into_inner().map_err(|e| e.to_string())?;
    Ok((Bytes::from(buf), close))
}

/// Whether two columns are the same values of the same kind, by identity: the same bytes
/// borrowed (comparing contents would cost what encoding saves).
fn same_values(a: &Column<'_>, b: &Column<'_>) -> bool {
    let same = |x: &[u8], y: &[u8]| std::ptr::eq(x, y);
    match (a, b) {
        (Column::F64(x), Column::F64(y)) | (Column::I64(x), Column::I64(y)) => same(x, y),
        _ => false,
    }
}

/// An encoded column chunk's result, described as column `descr` (of the same physical type):
/// the fields `SerializedRowGroupWriter::append_column` carries over, nothing else.
fn retarget(close: &ColumnCloseResult, descr: ColumnDescPtr) -> Result<ColumnCloseResult, String> {
    let m = &close.metadata;
    let mut b = ColumnChunkMetaData::builder(descr)
        .set_compression_codec(m.compression_codec())
        .set_encodings_mask(*m.encodings_mask())
        .set_total_compressed_size(m.compressed_size())
        .set_total_uncompressed_size(m.uncompressed_size())
        .set_num_values(m.num_values())
        .set_data_page_offset(m.data_page_offset())
        .set_dictionary_page_offset(m.dictionary_page_offset())
        .set_unencoded_byte_array_data_bytes(m.unencoded_byte_array_data_bytes())
        .set_repetition_level_histogram(m.repetition_level_histogram().cloned())
        .set_definition_level_histogram(m.definition_level_histogram().cloned());
    if let Some(s) = m.statistics() {
        b = b.set_statistics(s.clone());
    }
    if let Some(s) = m.page_encoding_stats() {
        b = b.set_page_encoding_stats(s.clone());
    }
    let metadata = b.build().map_err(|e| e.to_string())?;
    Ok(ColumnCloseResult { metadata, ..close.clone() })
}

/// Mini-batches of the column writer per piece that `encode_column` decodes at a time.
const PIECE_BATCHES: usize = 64;

/// Hands `write` the float64 bytes `b`, mapped by `f`, `piece` values at a time (the last piece
/// shorter), reusing one buffer.
fn in_pieces<T, E>(
    b: &[u8],
    piece: usize,
    f: impl Fn(f64) -> T,
    mut write: impl FnMut(&[T]) -> Result<(), E>,
) -> Result<(), E> {
    if b.is_empty() {
        return write(&[]);
    }
    let mut buf = Vec::with_capacity(piece.min(b.len() / 8));
    for chunk in b.chunks(piece.max(1) * 8) {
        buf.clear();
        buf.extend(floats(chunk).map(&f));
        write(&buf)?;
    }
    Ok(())
}

fn floats(b: &[u8]) -> impl Iterator<Item = f64> + '_ {
    b.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
}

/// Writes `columns` (name, values; all equally long) as a Parquet file at `path`. The file is
/// encoded first and created only then: a table that cannot be encoded leaves no file behind.
pub fn write(path: &str, columns: &[(String, Column<'_>)]) -> Result<(), String> {
    let bytes = encode_as(path, columns, cores())?;
    std::fs::write(path, bytes).map_err(|e| format!("{path}: {e}"))
}

/// The Parquet file `write` would write, in memory (a table encoded before its folder exists),
/// encoded on at most `threads` threads (the same bytes whatever their number).
pub fn encode(columns: &[(String, Column<'_>)], threads: usize) -> Result<Vec<u8>, String> {
    encode_as("(in memory)", columns, threads)
}

/// This machine's cores, as the standard library counts them.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |c| c.get())
}

/// `columns` encoded as a Parquet file on at most `threads` threads (`path` names the file in
/// errors).
fn encode_as(
    path: &str,
    columns: &[(String, Column<'_>)],
    threads: usize,
) -> Result<Vec<u8>, String> {
    let rows = columns.first().map_or(0, |c| c.1.len());
    if let Some((name, _)) = columns.iter().find(|c| c.1.len() != rows) {
        return Err(format!("column {name} has a different length than the others"));
    }
    let mut fields = Vec::new();
    for (name, col) in columns {
        let (physical, converted) = match col {
            Column::F64(_) => (Physical::DOUBLE, ConvertedType::NONE),
            Column::I64(_) => (Physical::INT64, ConvertedType::INT_64),
            Column::Str(_) | Column::StrByIndex(..) => (Physical::BYTE_ARRAY, ConvertedType::UTF8),
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
    let props = Arc::new(props);
    let schema = Arc::new(schema);
    let descr = SchemaDescriptor::new(schema.clone());
    let n = columns.len();
    let cells = rows * n;
    // A column given the very same values as an earlier one of its kind (the engine's tables
    // share one object among their all-NaN columns) reuses that column's encoded pages:
    // pages hold values, not names.
    let same_as: Vec<Option<usize>> =
        (0..n).map(|k| (0..k).find(|&j| same_values(&columns[j].1, &columns[k].1))).collect();
    let todo: Vec<usize> = (0..n).filter(|&k| same_as[k].is_none()).collect();
    // Encode the columns, on as many threads as allowed (one for a small table).
    let workers = if cells < 200_000 { 1 } else { threads.max(1).min(todo.len()) };
    let next = AtomicUsize::new(0);
    let encoded: Mutex<Vec<Option<Result<Encoded, String>>>> =
        Mutex::new((0..n).map(|_| None).collect());
    let work = || {
        while let Some(&k) = todo.get(next.fetch_add(1, Ordering::Relaxed)) {
            let r = encode_column(descr.column(k), props.clone(), &columns[k].1);
            if let Ok(mut e) = encoded.lock() {
                e[k] = Some(r);
            }
        }
    };
    if workers <= 1 {
        work();
    } else {
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(work);
            }
        });
    }
    let mut encoded = encoded.into_inner().map_err(|_| "a column encoder panicked".to_string())?;
    for k in 0..n {
        if let Some(j) = same_as[k] {
            let copy = match &encoded[j] {
                Some(Ok((chunk, close))) => Ok((chunk.clone(), retarget(close, descr.column(k))?)),
                _ => Err(format!("column {} was not encoded", columns[j].0)),
            };
            encoded[k] = Some(copy);
        }
    }
    let mut w = SerializedFileWriter::new(Vec::new(), schema, props).map_err(|e| e.to_string())?;
    let mut rg = w.next_row_group().map_err(|e| e.to_string())?;
    for e in encoded {
        let (chunk, close) = e.ok_or("a column was not encoded")??;
        rg.append_column(&chunk, close).map_err(|e| format!("{path}: {e}"))?;
    }
    rg.close().map_err(|e| e.to_string())?;
    w.into_inner().map_err(|e| format!("{path}: {e}"))
}
