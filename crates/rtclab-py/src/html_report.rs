//! HTML reports rendered in the core: the templates (`crates/rtclab-py/templates/*.html.j2`,
//! Jinja syntax) are compiled into the library and rendered with MiniJinja
//! (<https://github.com/mitsuhiko/minijinja>, Jinja2's Rust sibling by the same author), so a
//! run's report costs neither the import of a Python template engine nor the compilation of its
//! template to Python code (docs/adr/0007-reports-rendered-by-the-core.md).
//!
//! The output is what Jinja2 wrote from the same templates: values are written as Python's
//! `str()` writes them (`None`, `True`, `0.1`, `1e-05`) and escaped as markupsafe escapes
//! (`&`, `<`, `>`, `"`, `'`), undefined names are errors (Jinja2's `StrictUndefined`), and
//! blocks are trimmed (`trim_blocks`, `lstrip_blocks`). The context comes from Python as plain
//! data: dicts with string keys, lists, tuples, strings, numbers, booleans and None.

use minijinja::value::Value;
use minijinja::{AutoEscape, Environment, Error, ErrorKind, UndefinedBehavior};
use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::OnceLock;

/// (name, source) of every template; a name ending in `.html` is HTML-escaped.
const TEMPLATES: [(&str, &str); 4] = [
    ("report.html", include_str!("../templates/report.html.j2")),
    ("repro.html", include_str!("../templates/repro.html.j2")),
    ("suite.html", include_str!("../templates/suite.html.j2")),
    ("sweep.html", include_str!("../templates/sweep.html.j2")),
];

/// Python's `repr(float)`: the shortest text that reads back as `x`, positional when the decimal
/// exponent is in [-4, 16), else `d.ddde±XX`; `inf`, `-inf`, `nan`.
pub fn python_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    // Rust's `{:e}` is the shortest round-trip digits: "1.2345e-5", "5e0", "-0e0".
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let n = digits.len() as i32;
    if (-4..16).contains(&exp) {
        if exp < 0 {
            format!("{sign}0.{}{digits}", "0".repeat((-exp - 1) as usize))
        } else if exp + 1 >= n {
            format!("{sign}{digits}{}.0", "0".repeat((exp + 1 - n) as usize))
        } else {
            let (int, frac) = digits.split_at((exp + 1) as usize);
            format!("{sign}{int}.{frac}")
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() { String::new() } else { format!(".{rest}") };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{first}{frac}e{esign}{:02}", exp.abs())
    }
}

/// A value as Python's `str()` writes it.
fn python_str(v: &Value) -> String {
    if v.is_none() {
        return "None".into();
    }
    if let Some(b) = v.as_bool_strict() {
        return if b { "True".into() } else { "False".into() };
    }
    if v.is_number() && !v.is_integer() {
        if let Ok(x) = f64::try_from(v.clone()) {
            return python_float(x);
        }
    }
    v.to_string()
}

trait StrictBool {
    fn as_bool_strict(&self) -> Option<bool>;
}

impl StrictBool for Value {
    fn as_bool_strict(&self) -> Option<bool> {
        (self.kind() == minijinja::value::ValueKind::Bool).then(|| self.is_true())
    }
}

/// markupsafe's escape: `&`, `<`, `>`, `"`, `'`.
fn escape_into(out: &mut String, s: &str) {
    if !s.bytes().any(|b| matches!(b, b'&' | b'<' | b'>' | b'"' | b'\'')) {
        out.push_str(s);
        return;
    }
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
}

/// `fmt(x, digits=3)`: a value for a table — missing reads "–" (never 0), a float with `digits`
/// decimals, anything else as Python writes it.
fn fmt(x: Value, digits: Option<usize>) -> String {
    if x.is_none() || x.is_undefined() {
        return "–".into();
    }
    if x.is_number() && !x.is_integer() {
        if let Ok(v) = f64::try_from(x.clone()) {
            return fixed(v, digits.unwrap_or(3));
        }
    }
    python_str(&x)
}

/// `pct(x)`: a share as a percentage with one decimal, "–" when missing.
fn pct(x: Value) -> Result<String, Error> {
    if x.is_none() || x.is_undefined() {
        return Ok("–".into());
    }
    let v = f64::try_from(x.clone()).map_err(|_| {
        Error::new(ErrorKind::InvalidOperation, format!("pct: {x} is not a number"))
    })?;
    Ok(fixed(100.0 * v, 1))
}

/// Python's `f"{v:.{d}f}"`.
fn fixed(v: f64, d: usize) -> String {
    if v.is_nan() {
        "nan".into()
    } else {
        format!("{v:.d$}")
    }
}

/// `png(path)`: the PNG file at `path` as a `data:` URI, read and encoded here so the page is
/// written without the images passing through Python as text.
fn png(path: String) -> Result<Value, Error> {
    use base64::Engine as _;
    let bytes = std::fs::read(&path)
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, format!("png: {path}: {e}")))?;
    let mut uri = String::with_capacity(22 + bytes.len().div_ceil(3) * 4);
    uri.push_str("data:image/png;base64,");
    base64::engine::general_purpose::STANDARD.encode_string(&bytes, &mut uri);
    Ok(Value::from_safe_string(uri))
}

/// Jinja2's `tojson` filter as it writes: `json.dumps(x, sort_keys=True)` (ASCII only, `", "`
/// and `": "` separators) with `<`, `>`, `&` and `'` as `\u` escapes, safe for HTML.
fn tojson(v: Value) -> Result<Value, Error> {
    let mut out = String::new();
    python_json(&mut out, &v)?;
    let safe = out
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\'', "\\u0027");
    Ok(Value::from_safe_string(safe))
}

fn python_json(out: &mut String, v: &Value) -> Result<(), Error> {
    use minijinja::value::ValueKind;
    match v.kind() {
        ValueKind::None | ValueKind::Undefined => out.push_str("null"),
        ValueKind::Bool => out.push_str(if v.is_true() { "true" } else { "false" }),
        ValueKind::Number if !v.is_integer() => {
            let x = f64::try_from(v.clone()).unwrap_or(f64::NAN);
            out.push_str(&match python_float(x).as_str() {
                "nan" => "NaN".to_string(),
                "inf" => "Infinity".to_string(),
                "-inf" => "-Infinity".to_string(),
                t => t.to_string(),
            });
        }
        ValueKind::Number => out.push_str(&v.to_string()),
        ValueKind::String => {
            out.push('"');
            for c in v.as_str().unwrap_or_default().chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    '\u{8}' => out.push_str("\\b"),
                    '\u{c}' => out.push_str("\\f"),
                    c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                        let mut units = [0u16; 2];
                        for u in c.encode_utf16(&mut units) {
                            let _ = write!(out, "\\u{u:04x}");
                        }
                    }
                    c => out.push(c),
                }
            }
            out.push('"');
        }
        ValueKind::Seq => {
            out.push('[');
            for (i, item) in v.try_iter()?.enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                python_json(out, &item)?;
            }
            out.push(']');
        }
        ValueKind::Map => {
            let mut keys: Vec<Value> = v.try_iter()?.collect();
            keys.sort_by_key(|k| k.to_string());
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                python_json(out, &Value::from(k.to_string()))?;
                out.push_str(": ");
                python_json(out, &v.get_item(k)?)?;
            }
            out.push('}');
        }
        _ => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("tojson: cannot write {v}"),
            ))
        }
    }
    Ok(())
}

/// The environment with every template compiled, or the first template's compile error (the
/// templates are compiled into the library; `every_template_compiles` checks them).
fn environment() -> Result<&'static Environment<'static>, String> {
    static ENV: OnceLock<Result<Environment<'static>, String>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_auto_escape_callback(|name| {
            if name.ends_with(".html") {
                AutoEscape::Html
            } else {
                AutoEscape::None
            }
        });
        env.set_formatter(|out, state, value| {
            let owned;
            let text = match value.as_str() {
                Some(s) => s,
                None => {
                    owned = python_str(value);
                    &owned
                }
            };
            if value.is_safe() || state.auto_escape() == AutoEscape::None {
                out.write_str(text).map_err(Error::from)
            } else {
                let mut escaped = String::with_capacity(text.len());
                escape_into(&mut escaped, text);
                out.write_str(&escaped).map_err(Error::from)
            }
        });
        env.add_function("fmt", fmt);
        env.add_function("pct", pct);
        env.add_function("png", png);
        env.add_filter("tojson", tojson);
        for (name, source) in TEMPLATES {
            env.add_template(name, source)
                .map_err(|e| format!("report template {name:?} does not compile: {e}"))?;
        }
        Ok(env)
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// Python data -> a template value; `at` names where in the context it is, for the error.
fn to_value(obj: &Bound<'_, PyAny>, at: &str) -> PyResult<Value> {
    if obj.is_none() {
        return Ok(Value::from(()));
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::from(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
        return Ok(Value::from(obj.extract::<u64>().map_err(|_| {
            PyValueError::new_err(format!("report context: {at} is an integer beyond 64 bits"))
        })?));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Value::from(f.value()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::from(s.to_cow()?.into_owned()));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = BTreeMap::new();
        for (k, v) in d.iter() {
            let key: String = k.extract().map_err(|_| {
                PyTypeError::new_err(format!(
                    "report context: {at} has a key that is not a string: {k}"
                ))
            })?;
            let inner = to_value(&v, &format!("{at}.{key}"))?;
            map.insert(key, inner);
        }
        return Ok(Value::from(map));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for (i, v) in obj.try_iter()?.enumerate() {
            items.push(to_value(&v?, &format!("{at}[{i}]"))?);
        }
        return Ok(Value::from(items));
    }
    // Other numbers (numpy's integers and floats, which rows built with pandas carry) as the
    // int or float they stand for, as Jinja2 wrote them through `str()`.
    if obj.hasattr("__index__")? {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
    }
    if obj.hasattr("__float__")? {
        if let Ok(f) = obj.extract::<f64>() {
            return Ok(Value::from(f));
        }
    }
    Err(PyTypeError::new_err(format!(
        "report context: {at} is a {}; expected a dict, list, tuple, str, int, float, bool or None",
        obj.get_type().name()?
    )))
}

/// Renders the report template `name` ("report.html", "repro.html", "suite.html",
/// "sweep.html") with `context` (keyword -> plain data): into the file `path` when given
/// (streamed, never held whole; returns None), else as text. ValueError names a missing value,
/// an unreadable image or a template error; TypeError a value the templates cannot take.
#[pyfunction]
#[pyo3(signature = (name, context, path=None))]
pub fn render_report(
    py: Python<'_>,
    name: &str,
    context: &Bound<'_, PyDict>,
    path: Option<std::path::PathBuf>,
) -> PyResult<Option<String>> {
    let env = environment().map_err(PyValueError::new_err)?;
    let template = env.get_template(name).map_err(|e| {
        let known: Vec<&str> = TEMPLATES.iter().map(|(n, _)| *n).collect();
        PyValueError::new_err(format!(
            "report template {name:?}: {e} (templates: {})",
            known.join(", ")
        ))
    })?;
    let mut ctx = BTreeMap::new();
    for (k, v) in context.iter() {
        let key: String = k.extract()?;
        let value = to_value(&v, &key)?;
        ctx.insert(key, value);
    }
    let ctx = Value::from(ctx);
    let explain = |e: Error| {
        let mut msg = format!("report template {name:?}: {e}");
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            let _ = write!(msg, ": {s}");
            source = s.source();
        }
        PyValueError::new_err(msg)
    };
    match path {
        None => template.render(ctx).map(Some).map_err(explain),
        Some(path) => py.detach(|| {
            let file = std::fs::File::create(&path)
                .map_err(|e| PyOSError::new_err(format!("{}: {e}", path.display())))?;
            let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
            let written = match template.render_captured_to(ctx, &mut out) {
                Ok(_) => std::io::Write::flush(&mut out)
                    .map_err(|e| PyOSError::new_err(format!("{}: {e}", path.display()))),
                Err(e) => Err(explain(e)),
            };
            if written.is_err() {
                // The file is this call's own: no half-written page is left behind.
                drop(out);
                let _ = std::fs::remove_file(&path);
            }
            written.map(|_| None)
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_read_as_python_writes_them() {
        for (x, py) in [
            (5.0, "5.0"),
            (0.1, "0.1"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (1e16, "1e+16"),
            (1234567890123456.0, "1234567890123456.0"),
            (-2.5e-7, "-2.5e-07"),
            (123.456, "123.456"),
            (-0.0, "-0.0"),
            (1.5e300, "1.5e+300"),
            (f64::NAN, "nan"),
            (f64::NEG_INFINITY, "-inf"),
        ] {
            assert_eq!(python_float(x), py, "{x:e}");
        }
    }

    #[test]
    fn values_escaped_as_markupsafe_does() {
        let mut s = String::new();
        escape_into(&mut s, r#"<a href="x">'&'</a>/"#);
        assert_eq!(s, "&lt;a href=&#34;x&#34;&gt;&#39;&amp;&#39;&lt;/a&gt;/");
        assert_eq!(fmt(Value::from(()), None), "–");
        assert_eq!(fmt(Value::from(2.0), Some(1)), "2.0");
        assert_eq!(fmt(Value::from(7), None), "7");
        assert_eq!(fmt(Value::from(true), None), "True");
        assert_eq!(pct(Value::from(0.1234)).unwrap(), "12.3");
    }

    #[test]
    fn every_template_compiles() {
        let env = environment().expect("templates compile");
        for (name, _) in TEMPLATES {
            assert!(env.get_template(name).is_ok(), "{name}");
        }
    }
}
