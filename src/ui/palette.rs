//! Every colour the app draws with, in one place: the series palette and the memory curves'
//! colours by meaning, the breakdown's parts, the blocks of a segment, flame-graph frames, the
//! chart's marks. `clippy.toml` disallows making a colour anywhere else, so the same thing has
//! the same colour in every view and a new view picks from here.
#![allow(clippy::disallowed_methods)]

use egui::Color32;
use egui::ecolor::Hsva;

/// Save chart as PNG's report page: its paper, grid lines, plot frame, caption and titles,
/// tick labels, and the caption's second line.
pub const REPORT_PAGE: Color32 = Color32::WHITE;
/// See [`REPORT_PAGE`].
pub const REPORT_GRID: Color32 = Color32::from_gray(228);
/// See [`REPORT_PAGE`].
pub const REPORT_FRAME: Color32 = Color32::from_gray(130);
/// See [`REPORT_PAGE`].
pub const REPORT_TEXT: Color32 = Color32::from_gray(25);
/// See [`REPORT_PAGE`].
pub const REPORT_TICK_TEXT: Color32 = Color32::from_gray(60);
/// See [`REPORT_PAGE`].
pub const REPORT_WEAK_TEXT: Color32 = Color32::from_gray(90);

/// Series colours, in legend order.
pub const PALETTE: [Color32; 10] = [
    Color32::from_rgb(31, 119, 180),
    Color32::from_rgb(255, 127, 14),
    Color32::from_rgb(44, 160, 44),
    Color32::from_rgb(214, 39, 40),
    Color32::from_rgb(148, 103, 189),
    Color32::from_rgb(140, 86, 75),
    Color32::from_rgb(227, 119, 194),
    Color32::from_rgb(127, 127, 127),
    Color32::from_rgb(188, 189, 34),
    Color32::from_rgb(23, 190, 207),
];

/// The colour of series `i` of a chart whose curves have no meaning-bound colour.
pub fn series_color(i: usize) -> Color32 {
    PALETTE[i % PALETTE.len()]
}

/// A colour mixed `amount` (0–1) of the way to white (positive) or black (negative).
fn shade(c: Color32, amount: f32) -> Color32 {
    let to = if amount >= 0.0 { 255.0 } else { 0.0 };
    let a = amount.abs().min(1.0);
    let mix = |v: u8| (f32::from(v) + (to - f32::from(v)) * a).round() as u8;
    Color32::from_rgb(mix(c.r()), mix(c.g()), mix(c.b()))
}

/// The colour of a memory curve by what it means, the same in every Group By and for every
/// profiler: Allocated blue, Activated orange, Reserved green, APP Reserved red, Workspace
/// purple (allocated) and brown (reserved), the whole Device cyan; GE's own curves a lighter shade of their quantity;
/// in Stream mode (`Allocated of <pointer>`) a hue family per stream (`nth` is the stream's
/// index): the stream's hue for Allocated, lighter for Activated, darker for Reserved.
pub fn curve_color(name: &str, nth: usize) -> Color32 {
    let [blue, orange, green, red, purple, brown] = [
        PALETTE[0], PALETTE[1], PALETTE[2], PALETTE[3], PALETTE[4], PALETTE[5],
    ];
    if name == "APP Reserved" {
        return red;
    }
    if name == crate::analysis::series::DEVICE_CURVE {
        // The whole card, every process: the cyan no other curve takes.
        return PALETTE[9];
    }
    if let Some(rest) = name
        .strip_prefix("Workspace ")
        .or(name.strip_prefix("WORKSPACE "))
    {
        return if rest.starts_with("Reserved") {
            brown
        } else {
            purple
        };
    }
    let base = if name.contains("Allocated") {
        blue
    } else if name.contains("Activated") {
        orange
    } else if name.contains("Reserved") {
        green
    } else {
        return series_color(nth);
    };
    if name.starts_with("GE ") {
        return shade(base, 0.45);
    }
    if name.contains(" of ") {
        let hue = PALETTE[nth % PALETTE.len()];
        return if base == orange {
            shade(hue, 0.45)
        } else if base == green {
            shade(hue, -0.35)
        } else {
            hue
        };
    }
    base
}

/// The outermost parts of Live at cursor's breakdown (live blocks, unattributed, pool cache,
/// workspace, runtime, other processes), in that order.
pub const BREAKDOWN: [Color32; 6] = [
    Color32::from_rgb(31, 119, 180),
    Color32::from_rgb(120, 170, 220),
    Color32::from_rgb(255, 160, 60),
    Color32::from_rgb(150, 110, 200),
    Color32::from_rgb(44, 160, 44),
    Color32::from_rgb(150, 150, 150),
];

/// A block of a segment: allocated, freed but pending (still used by a stream), free.
pub const BLOCK_ALLOCATED: Color32 = Color32::from_rgb(66, 133, 214);
/// See [`BLOCK_ALLOCATED`].
pub const BLOCK_PENDING_FREE: Color32 = Color32::from_rgb(230, 150, 50);
/// See [`BLOCK_ALLOCATED`].
pub const BLOCK_FREE: Color32 = Color32::from_gray(110);

/// A rank in the overview: an outlier, or not.
pub const RANK_OUTLIER: Color32 = Color32::from_rgb(214, 39, 40);
/// See [`RANK_OUTLIER`].
pub const RANK_NORMAL: Color32 = Color32::from_rgb(31, 119, 180);
/// A cluster summary's "before" values (the summary compared with), and its lowest rank per step.
pub const SUMMARY_BEFORE: Color32 = Color32::from_gray(140);

/// The steps' alternate bands on the memory chart, on a dark and a light background.
pub const STEP_BAND_DARK: Color32 = Color32::from_rgba_unmultiplied_const(255, 255, 255, 10);
/// See [`STEP_BAND_DARK`].
pub const STEP_BAND_LIGHT: Color32 = Color32::from_rgba_unmultiplied_const(0, 0, 80, 12);

/// A block's lifetime on the chart: its span, its allocation and release lines.
pub const LIFETIME_SPAN: Color32 = Color32::from_rgba_unmultiplied_const(255, 200, 0, 40);
/// See [`LIFETIME_SPAN`].
pub const LIFETIME_ALLOCATED: Color32 = Color32::from_rgb(0, 160, 0);
/// See [`LIFETIME_SPAN`].
pub const LIFETIME_RELEASED: Color32 = Color32::from_rgb(200, 0, 0);

/// Each role's colour, in `Role::ALL` order (the same in every view).
pub const ROLES: [Color32; 8] = [
    Color32::from_rgb(140, 140, 150), // before profiling: grey, what the profile cannot split
    Color32::from_rgb(148, 103, 189), // optimizer state: purple
    Color32::from_rgb(214, 39, 40),   // gradient: red
    Color32::from_rgb(44, 160, 44),   // input: green
    Color32::from_rgb(31, 119, 180),  // activation: blue
    Color32::from_rgb(255, 127, 14),  // backward temporary: orange
    Color32::from_rgb(188, 189, 34),  // temporary: olive
    Color32::from_rgb(227, 119, 194), // unknown: pink
];

/// The colour of `role`.
pub fn role_color(role: crate::model::Role) -> Color32 {
    ROLES[role.index()]
}

/// Operator Allocated drawn over the roles: dark on a light theme, light on a dark one.
pub fn role_total(light: bool) -> Color32 {
    if light {
        Color32::from_gray(40)
    } else {
        Color32::from_gray(225)
    }
}

/// The cursor line.
pub const CURSOR: Color32 = Color32::from_rgb(120, 120, 255);

/// The event picked on the snapshot's bands.
pub const PICKED_EVENT: Color32 = Color32::from_rgb(220, 40, 40);

/// The drag box of a zoom: fill and border.
pub const ZOOM_FILL: Color32 = Color32::from_rgba_unmultiplied_const(90, 140, 255, 40);
/// See [`ZOOM_FILL`].
pub const ZOOM_BORDER: Color32 = Color32::from_rgb(90, 140, 255);

/// The snapshot's summed band (allocations too small for a band of their own) and the floor
/// under the bands thinner than a pixel.
pub const SNAPSHOT_SUMMED: Color32 = Color32::from_gray(120);
/// See [`SNAPSHOT_SUMMED`].
pub const SNAPSHOT_FLOOR: Color32 = Color32::from_gray(150);

/// Text on a flame-graph frame (the frames are light in both themes).
pub const FLAME_TEXT: Color32 = Color32::from_gray(20);

/// A snapshot phase's strip on the active-memory chart: a light hue from its name, so that every
/// `forward` looks alike (the strips are light in both themes; their names use [`FLAME_TEXT`]).
pub fn phase_fill(name: &str) -> Color32 {
    let h = name
        .bytes()
        .fold(0u32, |a, b| a.wrapping_mul(31).wrapping_add(u32::from(b)));
    PALETTE[(h % PALETTE.len() as u32) as usize]
        .gamma_multiply(0.55)
        .blend(Color32::from_white_alpha(110))
}

/// What a flame-graph frame is, for its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// The root, or blocks without a stack: grey.
    Neutral,
    /// A framework operator: green.
    Operator,
    /// A library's frame (site-packages, the standard library): blue-grey.
    Library,
    /// The user's own code: warm.
    User,
}

/// A flame-graph frame's fill; `jitter` (0–1, from the frame's text) varies the hue a little so
/// that neighbours stay apart.
pub fn flame_fill(kind: FrameKind, jitter: f32) -> Color32 {
    let hsva = match kind {
        FrameKind::Neutral => Hsva::new(0.0, 0.0, 0.78, 1.0),
        FrameKind::Operator => Hsva::new(0.33 + 0.08 * jitter, 0.35, 0.85, 1.0),
        FrameKind::Library => Hsva::new(0.55 + 0.08 * jitter, 0.25, 0.88, 1.0),
        FrameKind::User => Hsva::new(0.02 + 0.1 * jitter, 0.55, 0.97, 1.0),
    };
    hsva.into()
}

/// A snapshot band's colour: the `hue` (0–1) of its innermost frame, lighter for every other
/// band (`light`) so neighbours stay apart; grey-blue for a band without a stack.
pub fn band_fill(hue: Option<f32>, light: bool) -> Color32 {
    match hue {
        None => Hsva::new(0.6, 0.12, if light { 0.7 } else { 0.62 }, 1.0).into(),
        Some(h) => Hsva::new(h, 0.5, if light { 0.92 } else { 0.82 }, 1.0).into(),
    }
}

/// The private pools' envelopes on the snapshot chart (CUDA graphs, `MemPool`), in pool order:
/// strong hues apart from the bands' pastel fills.
pub const POOLS: [Color32; 4] = [
    Color32::from_rgb(200, 30, 160),
    Color32::from_rgb(0, 150, 140),
    Color32::from_rgb(230, 120, 0),
    Color32::from_rgb(90, 60, 200),
];
