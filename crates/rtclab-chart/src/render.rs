//! Drawing a [`Figure`] onto an RGB buffer with plotters.

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::axis::{format_symlog, format_tick, nice_ticks, resolve_range, symlog_ticks, transform};
use crate::geometry::{clip_polyline, finite_runs, vertices};
use crate::spec::{Figure, Item, Panel, Scale, Style};
use crate::ChartError;

/// Font family registered at start (DejaVu Sans, embedded).
pub const FONT: &str = "sans-serif";
/// Width of the legend column to the right of a panel (2.4 inches at 100 pixels per inch).
pub const LEGEND_WIDTH: u32 = 240;
const TITLE_HEIGHT: u32 = 22;
const FIGURE_TITLE_HEIGHT: u32 = 28;

type Area<'a> = DrawingArea<BitMapBackend<'a>, plotters::coord::Shift>;
type Chart<'a, 'b> = ChartContext<'a, BitMapBackend<'b>, Cartesian2d<Ticked, Ticked>>;

/// A linear axis over [lo, hi] whose grid lines and labels sit at the ticks we chose (plotters'
/// own float axis picks its own and cannot be told).
#[derive(Clone)]
struct Ticked {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let frac = (v - self.lo) / (self.hi - self.lo);
        let px = limit.0 as f64 + frac * (limit.1 - limit.0) as f64;
        px.round().clamp(-1e6, 1e6) as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

fn draw_err<E: std::fmt::Debug>(e: E) -> ChartError {
    ChartError(format!("drawing failed: {e:?}"))
}

pub fn parse_color(s: &str) -> Result<RGBColor, ChartError> {
    let h = s.strip_prefix('#').unwrap_or(s);
    let bad = || ChartError(format!("color {s:?}: expected #rrggbb"));
    if h.len() != 6 || !h.is_ascii() {
        return Err(bad());
    }
    let c = |i: usize| u8::from_str_radix(&h[i..i + 2], 16).map_err(|_| bad());
    Ok(RGBColor(c(0)?, c(2)?, c(4)?))
}

fn stroke(style: &Style) -> Result<ShapeStyle, ChartError> {
    // Whole pixels without anti-aliasing: one pixel per point reads like matplotlib's
    // anti-aliased 1.4 px lines; heavier lines scale from there.
    let px = style.width.round().max(1.0) as u32;
    Ok(parse_color(&style.color)?.mix(style.alpha.clamp(0.0, 1.0)).stroke_width(px))
}

fn fill(style: &Style) -> Result<ShapeStyle, ChartError> {
    Ok(parse_color(&style.color)?.mix(style.alpha.clamp(0.0, 1.0)).filled())
}

/// The arrays of one figure, by buffer index.
pub struct Buffers<'a>(pub &'a [Vec<f64>]);

impl Buffers<'_> {
    fn get(&self, k: usize, what: &str) -> Result<&[f64], ChartError> {
        self.0.get(k).map(|v| v.as_slice()).ok_or_else(|| {
            ChartError(format!("{what}: buffer {k} does not exist ({} given)", self.0.len()))
        })
    }
}

/// An axis' data range (min, max), if any value is finite.
type Extent = Option<(f64, f64)>;

/// Everything an item contributes to the axes' extent, after the x transform.
fn extent(panel: &Panel, data: &Buffers) -> Result<(Extent, Extent), ChartError> {
    let mut xs: Option<(f64, f64)> = None;
    let mut ys: Option<(f64, f64)> = None;
    let add = |acc: &mut Option<(f64, f64)>, v: f64| {
        if v.is_finite() {
            *acc = Some(acc.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))));
        }
    };
    let tx = |v: f64| transform(panel.xscale, v);
    for item in &panel.items {
        match item {
            Item::Line { x, y, .. } | Item::Fill { x, y, .. } => {
                let (xv, yv) = (data.get(*x, "x")?, data.get(*y, "y")?);
                let y0 = match item {
                    Item::Fill { y0: Some(k), .. } => Some(data.get(*k, "y0")?),
                    _ => None,
                };
                for (i, (&a, &b)) in xv.iter().zip(yv).enumerate() {
                    if a.is_finite() && b.is_finite() {
                        add(&mut xs, tx(a));
                        add(&mut ys, b);
                        if let Item::Fill { .. } = item {
                            add(&mut ys, y0.map_or(0.0, |z| z.get(i).copied().unwrap_or(f64::NAN)));
                        }
                    }
                }
            }
            Item::Span { .. } => {}
            Item::Hline { y, .. } => add(&mut ys, *y),
            Item::Hbar { left, length, .. } => {
                for (a, b) in data.get(*left, "left")?.iter().zip(data.get(*length, "length")?) {
                    add(&mut xs, tx(*a));
                    add(&mut xs, tx(a + b));
                }
            }
        }
    }
    Ok((xs, ys))
}

struct Axis {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
    step: f64,
}

fn axis(lim: [Option<f64>; 2], data: Option<(f64, f64)>, scale: Scale, target: usize) -> Axis {
    let lim = [lim[0].map(|v| transform(scale, v)), lim[1].map(|v| transform(scale, v))];
    let (lo, hi) = resolve_range(lim, data);
    match scale {
        Scale::Linear => {
            let (ticks, step) = nice_ticks(lo, hi, target);
            Axis { lo, hi, ticks, step }
        }
        Scale::Symlog => Axis { lo, hi, ticks: symlog_ticks(lo, hi), step: 1.0 },
    }
}

/// Draws the whole figure into `buf` (RGB, width × height × 3).
pub fn draw(fig: &Figure, data: &Buffers, buf: &mut [u8]) -> Result<(), ChartError> {
    let root = BitMapBackend::with_buffer(buf, (fig.width, fig.height)).into_drawing_area();
    root.fill(&WHITE).map_err(draw_err)?;
    let mut area = root.clone();
    if let Some(title) = &fig.title {
        let (top, rest) = area.split_vertically(FIGURE_TITLE_HEIGHT);
        let style =
            TextStyle::from((FONT, 16).into_font()).pos(Pos::new(HPos::Center, VPos::Center));
        top.draw_text(title, &style, (fig.width as i32 / 2, FIGURE_TITLE_HEIGHT as i32 / 2))
            .map_err(draw_err)?;
        area = rest;
    }
    let cells = area.split_evenly((fig.rows as usize, fig.cols as usize));
    for (k, panel) in fig.panels.iter().enumerate() {
        let cell = cells.get(k).ok_or_else(|| {
            ChartError(format!(
                "{} panels do not fit a {} × {} grid",
                fig.panels.len(),
                fig.rows,
                fig.cols
            ))
        })?;
        draw_panel(panel, data, cell).map_err(|e| ChartError(format!("panels[{k}]: {}", e.0)))?;
    }
    root.present().map_err(draw_err)?;
    Ok(())
}

fn legend_entries(panel: &Panel) -> Vec<&Item> {
    panel.items.iter().filter(|i| i.style().label.is_some()).collect()
}

fn draw_panel(panel: &Panel, data: &Buffers, cell: &Area) -> Result<(), ChartError> {
    let entries = if panel.legend { legend_entries(panel) } else { Vec::new() };
    let (w, _) = cell.dim_in_pixel();
    let (plot_area, legend_area) = if !entries.is_empty() && w > 2 * LEGEND_WIDTH {
        let (a, b) = cell.split_horizontally(w - LEGEND_WIDTH);
        (a, Some(b))
    } else {
        (cell.clone(), None)
    };
    let plot_area = match &panel.title {
        Some(title) => {
            let (top, rest) = plot_area.split_vertically(TITLE_HEIGHT);
            let (tw, _) = top.dim_in_pixel();
            let (anchor, x) =
                if panel.title_left { (HPos::Left, 70) } else { (HPos::Center, tw as i32 / 2) };
            let style = TextStyle::from((FONT, 14).into_font()).pos(Pos::new(anchor, VPos::Bottom));
            top.draw_text(title, &style, (x, TITLE_HEIGHT as i32 - 3)).map_err(draw_err)?;
            rest
        }
        None => plot_area,
    };

    let (xs, ys) = extent(panel, data)?;
    let xa = axis(panel.xlim, xs, panel.xscale, 8);
    let (ya, categories) = match &panel.categories {
        Some(cats) => {
            let n = cats.len().max(1) as f64;
            let ticks = (0..cats.len()).map(|i| n - 1.0 - i as f64 + 0.5).collect();
            (Axis { lo: 0.0, hi: n, ticks, step: 1.0 }, Some(cats))
        }
        None => (axis(panel.ylim, ys, Scale::Linear, 5), None),
    };
    let y_label_width = match categories {
        Some(c) => 20 + 7 * c.iter().map(|s| s.chars().count()).max().unwrap_or(1) as u32,
        None => 70,
    };
    let mut chart: Chart = ChartBuilder::on(&plot_area)
        .margin_left(4)
        .margin_right(16)
        .margin_top(6)
        .margin_bottom(2)
        .x_label_area_size(if panel.xlabel.is_empty() { 24 } else { 42 })
        .y_label_area_size(y_label_width)
        .build_cartesian_2d(
            Ticked { lo: xa.lo, hi: xa.hi, ticks: xa.ticks.clone() },
            Ticked { lo: ya.lo, hi: ya.hi, ticks: ya.ticks.clone() },
        )
        .map_err(draw_err)?;

    let (xstep, xscale) = (xa.step, panel.xscale);
    let fx = move |v: &f64| match xscale {
        Scale::Linear => format_tick(*v, xstep),
        Scale::Symlog => format_symlog(*v),
    };
    let ystep = ya.step;
    let cats = categories.cloned();
    let n_cats = cats.as_ref().map_or(0, |c| c.len());
    let fy = move |v: &f64| match &cats {
        Some(c) => {
            let i = n_cats as i64 - 1 - v.floor() as i64;
            usize::try_from(i).ok().and_then(|i| c.get(i)).cloned().unwrap_or_default()
        }
        None => format_tick(*v, ystep),
    };
    chart
        .configure_mesh()
        .x_desc(panel.xlabel.as_str())
        .y_desc(panel.ylabel.as_str())
        .x_label_formatter(&fx)
        .y_label_formatter(&fy)
        .bold_line_style(BLACK.mix(0.12))
        .light_line_style(TRANSPARENT)
        .axis_style(BLACK.mix(0.8))
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 13))
        .draw()
        .map_err(draw_err)?;

    let rect = (xa.lo, xa.hi, ya.lo, ya.hi);
    let tx = |v: f64| transform(panel.xscale, v);
    for item in &panel.items {
        match item {
            Item::Line { x, y, step, style } => {
                let (xv, yv) = (data.get(*x, "x")?, data.get(*y, "y")?);
                check_len(xv, yv, "line")?;
                let xt: Vec<f64> = xv.iter().map(|v| tx(*v)).collect();
                let shape = stroke(style)?;
                for run in finite_runs(&[&xt, yv]) {
                    for piece in clip_polyline(&vertices(&xt, yv, run, *step), rect) {
                        if style.dash {
                            chart
                                .draw_series(DashedLineSeries::new(piece, 6u32, 4u32, shape))
                                .map_err(draw_err)?;
                        } else {
                            chart.draw_series(LineSeries::new(piece, shape)).map_err(draw_err)?;
                        }
                    }
                }
            }
            Item::Fill { x, y, y0, step, style } => {
                let (xv, yv) = (data.get(*x, "x")?, data.get(*y, "y")?);
                check_len(xv, yv, "fill")?;
                let zeros;
                let base = match y0 {
                    Some(k) => {
                        let b = data.get(*k, "y0")?;
                        check_len(xv, b, "fill y0")?;
                        b
                    }
                    None => {
                        zeros = vec![0.0; xv.len()];
                        &zeros
                    }
                };
                let xt: Vec<f64> = xv.iter().map(|v| tx(*v).clamp(rect.0, rect.1)).collect();
                let clamp_y =
                    |v: &[f64]| v.iter().map(|y| y.clamp(rect.2, rect.3)).collect::<Vec<f64>>();
                let (top, bottom) = (clamp_y(yv), clamp_y(base));
                let shape = fill(style)?;
                for run in finite_runs(&[&xt, &top, &bottom]) {
                    let mut poly = vertices(&xt, &top, run, *step);
                    let mut lower = vertices(&xt, &bottom, run, *step);
                    lower.reverse();
                    poly.extend(lower);
                    if poly.len() >= 3 {
                        chart
                            .draw_series(std::iter::once(Polygon::new(poly, shape)))
                            .map_err(draw_err)?;
                    }
                }
            }
            Item::Span { x0, x1, ymin, ymax, style } => {
                let (a, b) = (tx(*x0).clamp(rect.0, rect.1), tx(*x1).clamp(rect.0, rect.1));
                if b > a {
                    let h = rect.3 - rect.2;
                    let (lo, hi) =
                        (rect.2 + ymin.clamp(0.0, 1.0) * h, rect.2 + ymax.clamp(0.0, 1.0) * h);
                    chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(a, lo), (b, hi)],
                            fill(style)?,
                        )))
                        .map_err(draw_err)?;
                }
            }
            Item::Hline { y, style } => {
                if *y >= rect.2 && *y <= rect.3 {
                    let pts = vec![(rect.0, *y), (rect.1, *y)];
                    if style.dash {
                        chart
                            .draw_series(DashedLineSeries::new(pts, 6u32, 4u32, stroke(style)?))
                            .map_err(draw_err)?;
                    } else {
                        chart
                            .draw_series(LineSeries::new(pts, stroke(style)?))
                            .map_err(draw_err)?;
                    }
                }
            }
            Item::Hbar { left, length, style } => {
                let (l, len) = (data.get(*left, "left")?, data.get(*length, "length")?);
                check_len(l, len, "hbar")?;
                let n = n_cats.max(l.len()) as f64;
                let shape = fill(style)?;
                for (i, (a, b)) in l.iter().zip(len).enumerate() {
                    if a.is_finite() && b.is_finite() && *b > 0.0 {
                        let yc = n - 1.0 - i as f64;
                        let (x0, x1) =
                            (tx(*a).clamp(rect.0, rect.1), tx(a + b).clamp(rect.0, rect.1));
                        chart
                            .draw_series(std::iter::once(Rectangle::new(
                                [(x0, yc + 0.15), (x1, yc + 0.85)],
                                shape,
                            )))
                            .map_err(draw_err)?;
                    }
                }
            }
        }
    }
    if let Some(area) = legend_area {
        draw_legend(&area, &entries)?;
    }
    Ok(())
}

fn check_len(a: &[f64], b: &[f64], what: &str) -> Result<(), ChartError> {
    if a.len() != b.len() {
        return Err(ChartError(format!(
            "{what}: arrays of different lengths ({} and {})",
            a.len(),
            b.len()
        )));
    }
    Ok(())
}

/// One row per labelled item: its swatch (a line, or a filled box) and its label, cut to the
/// column's width; rows that do not fit are counted in a last row.
fn draw_legend(area: &Area, entries: &[&Item]) -> Result<(), ChartError> {
    const ROW: i32 = 17;
    let (w, h) = area.dim_in_pixel();
    let font = TextStyle::from((FONT, 12).into_font());
    let fits = ((h as i32 - 12) / ROW).max(1) as usize;
    let shown = if entries.len() > fits { fits - 1 } else { entries.len() };
    let max_text = w as i32 - 44;
    for (k, item) in entries.iter().take(shown).enumerate() {
        let style = item.style();
        let y = 14 + k as i32 * ROW;
        match item {
            Item::Line { .. } | Item::Hline { .. } => {
                let pts = vec![(8, y), (34, y)];
                if style.dash {
                    area.draw(&PathElement::new(vec![(8, y), (15, y)], stroke(style)?))
                        .map_err(draw_err)?;
                    area.draw(&PathElement::new(vec![(20, y), (27, y)], stroke(style)?))
                        .map_err(draw_err)?;
                } else {
                    area.draw(&PathElement::new(pts, stroke(style)?)).map_err(draw_err)?;
                }
            }
            _ => area
                .draw(&Rectangle::new([(8, y - 5), (34, y + 5)], fill(style)?))
                .map_err(draw_err)?,
        }
        let mut label = style.label.clone().unwrap_or_default();
        while label.chars().count() > 3
            && area.estimate_text_size(&label, &font).map_err(draw_err)?.0 as i32 > max_text
        {
            let keep = label.chars().count() - 2;
            label = label.chars().take(keep).collect::<String>() + "…";
        }
        area.draw_text(&label, &font.pos(Pos::new(HPos::Left, VPos::Center)), (40, y))
            .map_err(draw_err)?;
    }
    if shown < entries.len() {
        let y = 14 + shown as i32 * ROW;
        let text = format!("… {} more", entries.len() - shown);
        area.draw_text(&text, &font.pos(Pos::new(HPos::Left, VPos::Center)), (40, y))
            .map_err(draw_err)?;
    }
    Ok(())
}
