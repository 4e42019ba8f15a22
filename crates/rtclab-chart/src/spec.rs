//! The chart description a caller hands over: a figure of panels, each a list of items.
//!
//! Arrays (x, y, bar lengths) are not inlined: an item names them by index into the list of
//! little-endian `f64` buffers passed next to the spec, so a 3,000-bin series crosses from
//! Python as one `bytes` object instead of a JSON list.

use serde::Deserialize;

/// A whole image: `rows` × `cols` panels filled row by row, with an optional title on top.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Figure {
    /// Pixels.
    pub width: u32,
    pub height: u32,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default = "one")]
    pub rows: u32,
    #[serde(default = "one")]
    pub cols: u32,
    pub panels: Vec<Panel>,
}

fn one() -> u32 {
    1
}

/// One set of axes.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Panel {
    #[serde(default)]
    pub title: Option<String>,
    /// Title at the left edge instead of centred.
    #[serde(default)]
    pub title_left: bool,
    #[serde(default)]
    pub xlabel: String,
    #[serde(default)]
    pub ylabel: String,
    /// Axis limits; a missing end is taken from the data (with a 5 % margin).
    #[serde(default)]
    pub xlim: [Option<f64>; 2],
    #[serde(default)]
    pub ylim: [Option<f64>; 2],
    #[serde(default)]
    pub xscale: Scale,
    /// Labelled items get a legend to the right of the axes (it never hides data).
    #[serde(default = "yes")]
    pub legend: bool,
    /// A categorical y axis (horizontal bars): the first category on top.
    #[serde(default)]
    pub categories: Option<Vec<String>>,
    #[serde(default)]
    pub items: Vec<Item>,
}

fn yes() -> bool {
    true
}

/// How x values map to the axis.
#[derive(Debug, Default, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    #[default]
    Linear,
    /// Linear within ±1, logarithmic beyond (matplotlib's `symlog` with `linthresh = 1`).
    Symlog,
}

/// Drawing style shared by every item.
#[derive(Debug, Clone, Deserialize)]
pub struct Style {
    /// `#rrggbb`.
    pub color: String,
    #[serde(default = "full")]
    pub alpha: f64,
    /// Line width: about one pixel per point (lines are drawn in whole pixels).
    #[serde(default = "full")]
    pub width: f64,
    #[serde(default)]
    pub dash: bool,
    /// Shown in the legend when given.
    #[serde(default)]
    pub label: Option<String>,
}

fn full() -> f64 {
    1.0
}

/// What a panel draws.
#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Item {
    /// A polyline through (x, y), broken where a value is not finite; `step` holds each y over
    /// the interval that ends at its x (matplotlib's `where="pre"`).
    Line {
        x: usize,
        y: usize,
        #[serde(default)]
        step: bool,
        #[serde(flatten)]
        style: Style,
    },
    /// The area between `y0` (a buffer, or zero) and `y`.
    Fill {
        x: usize,
        y: usize,
        #[serde(default)]
        y0: Option<usize>,
        #[serde(default)]
        step: bool,
        #[serde(flatten)]
        style: Style,
    },
    /// A vertical band from x0 to x1 between fractions `ymin` and `ymax` of the axes' height.
    Span {
        x0: f64,
        x1: f64,
        #[serde(default)]
        ymin: f64,
        #[serde(default = "full")]
        ymax: f64,
        #[serde(flatten)]
        style: Style,
    },
    /// A horizontal line across the axes.
    Hline {
        y: f64,
        #[serde(flatten)]
        style: Style,
    },
    /// One horizontal bar per category, from `left[i]` to `left[i] + length[i]`.
    Hbar {
        left: usize,
        length: usize,
        #[serde(flatten)]
        style: Style,
    },
}

impl Item {
    pub fn style(&self) -> &Style {
        match self {
            Item::Line { style, .. }
            | Item::Fill { style, .. }
            | Item::Span { style, .. }
            | Item::Hline { style, .. }
            | Item::Hbar { style, .. } => style,
        }
    }
}
