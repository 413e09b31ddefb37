//! The private pools (CUDA graphs, `MemPool`) on the snapshot's active-memory chart: each pool's
//! reserved bytes drawn as an envelope over the events and what it held inside it, with a line
//! per pool under the chart. The figures come from [`crate::snapshot::pools`].

use egui_plot::PlotUi;

use crate::model::bytes_to_mib;
use crate::snapshot::pools::PoolTrack;
use crate::ui::format::grouped;
use crate::ui::i18n::{Text, Tr};
use crate::ui::palette::POOLS;
use crate::ui::plot::step_line::StepLine;

use super::snapshot_bands::Bands;

/// The envelope's name (`{p}`: the pool id).
pub const RESERVED: Text = Text {
    en: "Pool {p}: reserved",
    zh: "私有池 {p}：保留",
};
/// What it held inside (`{p}`).
pub const HELD: Text = Text {
    en: "Pool {p}: allocated",
    zh: "私有池 {p}：已分配",
};
/// The line under the chart (`{p}`, `{n}` segments, `{res}` / `{peak}` / `{held}` MB at the
/// end / its peak / held at the end).
pub const LEGEND: Text = Text {
    en: "Private pool {p} (CUDA graph or MemPool): {segs}, {res} MB reserved \
         (peak {peak} MB), {held} MB allocated",
    zh: "私有池 {p}（CUDA Graph 或 MemPool）：{n} 个内存段，保留 {res} MB（峰值 {peak} MB），\
         已分配 {held} MB",
};

/// A pool id as the user reads it: `(1, 0)`.
fn id(p: &PoolTrack) -> String {
    format!("({}, {})", p.pool.0, p.pool.1)
}

/// The most any pool reserved, MB (the chart's height must hold it).
pub fn peak_mb(pools: &[PoolTrack]) -> f64 {
    pools
        .iter()
        .map(|p| bytes_to_mib(p.peak_reserved_bytes))
        .fold(0.0, f64::max)
}

/// (reserved, held) of `p` as step points over the chart's x: the start from before the first
/// event, each change at its event's x, held to the trace's end.
pub fn envelope(p: &PoolTrack, bands: &Bands) -> (Vec<[f64; 2]>, Vec<[f64; 2]>) {
    let end = bands.full().1;
    let mut reserved = vec![[bands.x_of(-1), bytes_to_mib(p.start.0)]];
    let mut held = vec![[bands.x_of(-1), bytes_to_mib(p.start.1)]];
    for &(k, r, h) in &p.steps {
        let x = bands.x_of(k as i64);
        for (line, v) in [(&mut reserved, r), (&mut held, h)] {
            let last = line.last().map_or(0.0, |q| q[1]);
            line.push([x, last]);
            line.push([x, bytes_to_mib(v)]);
        }
    }
    for line in [&mut reserved, &mut held] {
        let last = line.last().map_or(0.0, |q| q[1]);
        line.push([end, last]);
    }
    (reserved, held)
}

/// Draws every pool's envelope and held line.
pub fn draw(plot_ui: &mut PlotUi<'_>, t: &Tr, pools: &[PoolTrack], bands: &Bands) {
    for (i, p) in pools.iter().enumerate() {
        let color = POOLS[i % POOLS.len()];
        let (reserved, held) = envelope(p, bands);
        let pid = id(p);
        plot_ui.add(StepLine::new(
            &RESERVED.get(t).replace("{p}", &pid),
            &reserved,
            color,
        ));
        plot_ui.add(StepLine::new(
            &HELD.get(t).replace("{p}", &pid),
            &held,
            color.gamma_multiply(0.6),
        ));
    }
}

/// One line per pool under the chart, in its colour.
pub fn legend(ui: &mut egui::Ui, t: &Tr, pools: &[PoolTrack]) {
    let mb = |b: i64| grouped(bytes_to_mib(b), 2);
    for (i, p) in pools.iter().enumerate() {
        ui.colored_label(
            POOLS[i % POOLS.len()],
            LEGEND
                .get(t)
                .replace("{p}", &id(p))
                .replace("{n}", &p.segments.to_string())
                .replace(
                    "{segs}",
                    &crate::model::plural::count(p.segments as u64, "segment", "segments"),
                )
                .replace("{res}", &mb(p.reserved_bytes))
                .replace("{peak}", &mb(p.peak_reserved_bytes))
                .replace("{held}", &mb(p.allocated_bytes)),
        );
    }
}
