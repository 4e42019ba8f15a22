//! PNG charts from a declarative description.
//!
//! The run report's plots (`python/rtclab/plots.py`) describe each figure as data — panels with
//! lines, filled areas, vertical spans, horizontal lines and bars, axis limits, a legend — and
//! this crate draws it with [plotters](https://github.com/plotters-rs/plotters) onto an RGB
//! buffer, text in DejaVu Sans (embedded by the `dejavu` crate, so no system fonts are read),
//! and encodes it with the `png` crate. It exists so that `rtclab run` does not import
//! matplotlib, whose import alone is larger than the whole simulation in time and memory
//! (issue 16 point 9; docs/benchmarks.md). The description's shape is in [`spec`]; the
//! conventions follow matplotlib's where the report relied on them (step plots hold each value
//! over the interval that ends at its x, `symlog` axes with a linear threshold of 1, 5 %
//! autoscale margins, line widths in points at 100 pixels per inch).

pub mod axis;
pub mod geometry;
pub mod render;
pub mod spec;

use std::sync::Once;

pub use spec::{Figure, Item, Panel, Scale, Style};

/// What went wrong, in words that name the part of the description at fault.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartError(pub String);

impl std::fmt::Display for ChartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ChartError {}

/// The largest image drawn, in pixels per side (a guard against a malformed size).
pub const MAX_SIDE: u32 = 8000;

static FONTS: Once = Once::new();

fn register_fonts() {
    FONTS.call_once(|| {
        // DejaVu Sans parses; a failure here would be a broken dependency, seen at the first chart.
        let _ = plotters::style::register_font(
            render::FONT,
            plotters::style::FontStyle::Normal,
            dejavu::sans::regular(),
        );
    });
}

/// Little-endian f64 arrays from bytes.
pub fn decode_buffers(raw: &[&[u8]]) -> Result<Vec<Vec<f64>>, ChartError> {
    raw.iter()
        .enumerate()
        .map(|(k, b)| {
            if b.len() % 8 != 0 {
                return Err(ChartError(format!(
                    "buffer {k}: {} bytes is not a whole number of f64 values",
                    b.len()
                )));
            }
            Ok(b.chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().expect("chunks of 8")))
                .collect())
        })
        .collect()
}

/// Parses a figure description (JSON).
pub fn parse(spec: &str) -> Result<Figure, ChartError> {
    let fig: Figure =
        serde_json::from_str(spec).map_err(|e| ChartError(format!("chart description: {e}")))?;
    if fig.width == 0 || fig.height == 0 || fig.width > MAX_SIDE || fig.height > MAX_SIDE {
        return Err(ChartError(format!(
            "image size {} × {}: each side must be 1-{MAX_SIDE} pixels",
            fig.width, fig.height
        )));
    }
    if fig.rows == 0 || fig.cols == 0 {
        return Err(ChartError("rows and cols must be at least 1".into()));
    }
    Ok(fig)
}

/// The figure as PNG bytes.
pub fn render_png(fig: &Figure, buffers: &[Vec<f64>]) -> Result<Vec<u8>, ChartError> {
    register_fonts();
    let mut rgb = vec![255u8; fig.width as usize * fig.height as usize * 3];
    render::draw(fig, &render::Buffers(buffers), &mut rgb)?;
    let mut out = Vec::with_capacity(rgb.len() / 8);
    {
        let mut enc = png::Encoder::new(&mut out, fig.width, fig.height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        // Fast compression: a report's images are written once and read by a browser.
        enc.set_compression(png::Compression::Fast);
        let mut w = enc.write_header().map_err(|e| ChartError(format!("PNG: {e}")))?;
        w.write_image_data(&rgb).map_err(|e| ChartError(format!("PNG: {e}")))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(v: &[f64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn decode(png_bytes: &[u8]) -> (u32, u32, Vec<u8>) {
        let dec = png::Decoder::new(png_bytes);
        let mut reader = dec.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        buf.truncate(info.buffer_size());
        (info.width, info.height, buf)
    }

    fn pixel(img: &(u32, u32, Vec<u8>), x: u32, y: u32) -> [u8; 3] {
        let k = ((y * img.0 + x) * 3) as usize;
        [img.2[k], img.2[k + 1], img.2[k + 2]]
    }

    fn count(img: &(u32, u32, Vec<u8>), rgb: [u8; 3]) -> usize {
        img.2.chunks_exact(3).filter(|p| *p == rgb).count()
    }

    #[test]
    fn a_filled_area_and_a_line_land_where_the_data_says() {
        // A red area over the whole x range up to y = 1 on axes 0..2: the lower half of the
        // plotting area is red, the upper half is not; a blue line at y = 1.5 shows up.
        let spec = r##"{"width": 600, "height": 300, "panels": [{
            "xlim": [0, 10], "ylim": [0, 2], "legend": false, "items": [
              {"kind": "fill", "x": 0, "y": 1, "color": "#ff0000"},
              {"kind": "line", "x": 0, "y": 2, "color": "#0000ff", "width": 2}]}]}"##;
        let raw = [bytes(&[0.0, 10.0]), bytes(&[1.0, 1.0]), bytes(&[1.5, 1.5])];
        let refs: Vec<&[u8]> = raw.iter().map(|b| b.as_slice()).collect();
        let img =
            decode(&render_png(&parse(spec).unwrap(), &decode_buffers(&refs).unwrap()).unwrap());
        assert_eq!((img.0, img.1), (600, 300));
        let red = count(&img, [255, 0, 0]);
        assert!(red > 30_000, "red pixels {red}");
        assert!(count(&img, [0, 0, 255]) > 500);
        // Middle column: red near the bottom of the axes, white near the top.
        let x = 330;
        let column: Vec<[u8; 3]> = (0..300).map(|y| pixel(&img, x, y)).collect();
        let first_red = column.iter().position(|p| *p == [255, 0, 0]).unwrap();
        let last_red = column.iter().rposition(|p| *p == [255, 0, 0]).unwrap();
        let first_blue = column.iter().position(|p| *p == [0, 0, 255]).unwrap();
        assert!(first_blue < first_red && first_red < last_red);
    }

    #[test]
    fn missing_values_break_a_line_and_steps_hold_values() {
        let spec = r##"{"width": 400, "height": 200, "panels": [{"xlim": [0, 4], "ylim": [0, 1], "legend": false,
            "items": [{"kind": "line", "x": 0, "y": 1, "color": "#00ff00", "step": true}]}]}"##;
        let raw = [bytes(&[0.0, 1.0, 2.0, 3.0, 4.0]), bytes(&[0.5, 0.5, f64::NAN, 0.5, 0.5])];
        let refs: Vec<&[u8]> = raw.iter().map(|b| b.as_slice()).collect();
        let img =
            decode(&render_png(&parse(spec).unwrap(), &decode_buffers(&refs).unwrap()).unwrap());
        let row = (0..200).find(|y| (0..400).any(|x| pixel(&img, x, *y) == [0, 255, 0])).unwrap();
        let green: Vec<u32> = (0..400).filter(|x| pixel(&img, *x, row) == [0, 255, 0]).collect();
        // Two runs: [0, 1] and [3, 4] (a step holds the value at 3 only from 3 on), a gap between.
        let gaps = green.windows(2).filter(|w| w[1] - w[0] > 1).count();
        assert_eq!(gaps, 1, "{green:?}");
    }

    #[test]
    fn legends_categories_spans_and_symlog_draw() {
        let spec = r##"{"width": 900, "height": 400, "title": "t", "rows": 2, "cols": 1, "panels": [
            {"title": "bars", "categories": ["a", "b"], "xlim": [0, 1], "items": [
              {"kind": "hbar", "left": 0, "length": 1, "color": "#123456", "label": "media"}]},
            {"xscale": "symlog", "ylim": [0, 1], "items": [
              {"kind": "span", "x0": 0, "x1": 1, "color": "#d9d9d9", "alpha": 0.45, "label": "warm-up"},
              {"kind": "hline", "y": 0.5, "color": "#ff0000", "dash": true, "label": "limit"},
              {"kind": "line", "x": 2, "y": 3, "color": "#1f77b4", "label": "a label far too long to fit in the legend column at all, surely"}]}]}"##;
        let raw = [
            bytes(&[0.0, 0.2]),
            bytes(&[0.7, 0.5]),
            bytes(&[0.0, 1.0, 10.0, 1000.0]),
            bytes(&[0.0, 0.2, 0.6, 1.0]),
        ];
        let refs: Vec<&[u8]> = raw.iter().map(|b| b.as_slice()).collect();
        let img =
            decode(&render_png(&parse(spec).unwrap(), &decode_buffers(&refs).unwrap()).unwrap());
        assert!(count(&img, [0x12, 0x34, 0x56]) > 1000);
        assert!(count(&img, [255, 0, 0]) > 50);
    }

    #[test]
    fn bad_descriptions_are_named() {
        assert!(parse(r#"{"width": 0, "height": 10, "panels": []}"#)
            .unwrap_err()
            .0
            .contains("image size"));
        assert!(parse(r#"{"width": 10, "height": 10, "panels": [], "colour": 1}"#)
            .unwrap_err()
            .0
            .contains("colour"));
        let fig = parse(r##"{"width": 100, "height": 100, "panels": [{"items": [{"kind": "line", "x": 0, "y": 3, "color": "#000000"}]}]}"##).unwrap();
        let e = render_png(&fig, &[vec![0.0]]).unwrap_err();
        assert!(e.0.contains("panels[0]") && e.0.contains("buffer 3"), "{e}");
        let fig = parse(r#"{"width": 100, "height": 100, "panels": [{"items": [{"kind": "line", "x": 0, "y": 0, "color": "red"}]}]}"#).unwrap();
        assert!(render_png(&fig, &[vec![0.0]]).unwrap_err().0.contains("#rrggbb"));
        assert!(decode_buffers(&[&[0u8; 7]]).unwrap_err().0.contains("buffer 0"));
    }
}
