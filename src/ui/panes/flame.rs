//! The call stacks tab: a memory-weighted icicle (flame) graph of the blocks alive at the cursor
//! or allocated in the visible window, from the outermost Python frame down to the operator
//! that holds the memory. Clicking a frame zooms into it (its ancestors stay on top, a
//! breadcrumb leads back) and lists its blocks in the details table.

use crate::ui::palette::{FLAME_TEXT, FrameKind, flame_fill};
use std::sync::Arc;

use super::PaneCx;
use super::groups::short_frame;
use crate::analysis::stacks::{Flame, FlameFrame};
use crate::analysis::{ViewId, live_at};
use crate::model::{CallStacks, NULL, RankData, is_library_frame};
use crate::ui::command::Command;
use crate::ui::format::grouped;
use crate::ui::i18n::Tr;
use crate::ui::jobs::{Job, JobKey, Place, Poll};
use crate::ui::state::{RowSubset, SubsetWhy};

/// The job that builds a flame graph of a big selection of blocks.
pub const FLAME_JOB: crate::ui::jobs::JobKind =
    crate::ui::jobs::JobKind::new("flame", "the flame graph", "火焰图");

/// Which blocks the flame graph shows: the pane's own choice ([`crate::ui::choices`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FlameMode {
    /// The blocks alive at the cursor.
    #[default]
    AliveAtCursor,
    /// The blocks allocated in the visible window.
    AllocatedInView,
}

impl crate::ui::choices::Choice for FlameMode {
    const ID: &'static str = "flame";
}

/// Ranks with more selected blocks than this build their flame graph in a job.
const BACKGROUND_ROWS: usize = 200_000;

/// What a flame graph was built for.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FlameKey {
    view: ViewId,
    mode: FlameMode,
    /// Cursor (alive-at mode) or window (allocated-in mode), ns from origin.
    at: Option<i64>,
    window: Option<(i64, i64)>,
}

/// The flame pane's state between frames.
#[derive(Default)]
pub struct FlamePane {
    built: Option<(FlameKey, Arc<Flame>)>,
    job: Option<(FlameKey, Job<Flame>)>,
    /// The frame zoomed into, as a path from the root (it survives a new cursor: the graph
    /// built there zooms to the same frames, as deep as they exist).
    pub focus: Vec<FlameFrame>,
}

/// The rows a flame graph of `key` shows.
fn rows_for(data: &RankData, index: &crate::analysis::LiveIndex, key: &FlameKey) -> Vec<u32> {
    match key.mode {
        FlameMode::AliveAtCursor => {
            let mut rows = key
                .at
                .map_or_else(Vec::new, |t| live_at(data, index, t).rows);
            rows.sort_unstable();
            rows
        }
        FlameMode::AllocatedInView => {
            let o = &data.operators;
            (0..o.len() as u32)
                .filter(|&r| {
                    let t = o.alloc_time[r as usize];
                    t != NULL
                        && key
                            .window
                            .is_none_or(|(a, b)| (a..=b).contains(&data.rel_ns(t)))
                })
                .collect()
        }
    }
}

impl FlamePane {
    /// The graph for the state, built now, or in a job for a big selection (the last graph
    /// shows meanwhile).
    fn flame(&mut self, cx: &mut PaneCx<'_>) -> Option<Arc<Flame>> {
        let state = cx.state;
        let key = FlameKey {
            view: cx.view.id(),
            mode: state.choice::<FlameMode>(),
            at: state.link.cursor,
            window: state.link.window.map(|w| w.ns()),
        };
        if let Some((k, job)) = &self.job
            && let Poll::Msg(f) = job.poll()
        {
            self.built = Some((k.clone(), Arc::new(f)));
            self.job = None;
        }
        let current = self.built.as_ref().is_some_and(|(k, _)| *k == key);
        let pending = self.job.as_ref().is_some_and(|(k, _)| *k == key);
        if !current && !pending && !state.link.moving {
            let view = Arc::clone(cx.view);
            let stacks_rows = view.data.operators.len();
            if stacks_rows <= BACKGROUND_ROWS {
                let rows = rows_for(&view.data, view.live_index(), &key);
                if let Some(stacks) = &view.data.stacks {
                    let f = Flame::build(&view.data, stacks, &rows);
                    self.built = Some((key, Arc::new(f)));
                }
            } else {
                let k = key.clone();
                let job = cx
                    .jobs
                    .run(JobKey::new(FLAME_JOB), Place::Thread, move |_| {
                        let rows = rows_for(&view.data, view.live_index(), &k);
                        view.data
                            .stacks
                            .as_ref()
                            .map(|s| Flame::build(&view.data, s, &rows))
                            .unwrap_or_default()
                    });
                self.job = Some((key, job));
            }
        }
        self.built
            .as_ref()
            .filter(|(k, _)| k.view == cx.view.id())
            .map(|(_, f)| Arc::clone(f))
    }

    /// The tab: mode, summary, the graph.
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut PaneCx<'_>) {
        let t = cx.t;
        let Some(stacks) = cx.view.data.stacks.as_ref() else {
            return;
        };
        ui.horizontal_wrapped(|ui| {
            for (mode, text) in [
                (FlameMode::AliveAtCursor, t.flame_modes[0]),
                (FlameMode::AllocatedInView, t.flame_modes[1]),
            ] {
                if ui
                    .selectable_label(cx.state.choice::<FlameMode>() == mode, text)
                    .clicked()
                {
                    cx.out
                        .push(Command::choose(move |m: &mut FlameMode| *m = mode));
                }
            }
            ui.separator();
            let total = stacks.row_op.len();
            ui.weak((t.attribution)(
                total - stacks.unattributed - stacks.without_stack,
                total,
                stacks.without_stack,
                stacks.unattributed,
            ));
        });
        if cx.state.choice::<FlameMode>() == FlameMode::AliveAtCursor
            && cx.state.link.cursor.is_none()
        {
            ui.label(t.flame_needs_cursor);
            return;
        }
        let Some(flame) = self.flame(cx) else {
            crate::ui::spinner::spinner(ui);
            return;
        };
        let root = &flame.nodes[0];
        ui.horizontal(|ui| {
            ui.label((t.flame_summary)(
                &grouped(root.blocks as f64, 0),
                &crate::ui::format::bytes(root.bytes),
            ));
            ui.weak(t.flame_hint);
            if self.job.is_some() {
                crate::ui::spinner::spinner(ui);
            }
        });
        let focus = flame.find(&self.focus);
        let mut picked = breadcrumb(ui, t, &cx.view.data, stacks, &flame, focus, cx.out);
        if let Some(node) = draw(ui, t, &cx.view.data, stacks, &flame, focus) {
            picked = Some(node);
        }
        if let Some(node) = picked {
            self.focus = flame.path_to(node);
            // The table lists the frame's blocks; the graph stays on screen, zoomed.
            if node == 0 {
                cx.out.push(Command::FilterRows(None));
            } else {
                let label = node_text(t, &cx.view.data, stacks, &flame, node);
                cx.out.push(Command::FilterRows(Some(RowSubset {
                    why: SubsetWhy::Frame(label),
                    rows: Arc::new(flame.rows_under(node)),
                })));
                cx.out.push(Command::ShowTab(TAB));
            }
        }
    }
}

/// The way back from a zoomed frame: the root and every frame down to `focus`, each a link
/// (the last one, where the graph is, plain), after "List its N blocks" (the table, filtered
/// to the zoomed frame, comes forward). Returns the node clicked.
fn breadcrumb(
    ui: &mut egui::Ui,
    t: &Tr,
    data: &RankData,
    stacks: &CallStacks,
    flame: &Flame,
    focus: usize,
    out: &mut Vec<Command>,
) -> Option<usize> {
    if focus == 0 {
        return None;
    }
    let mut clicked = None;
    ui.horizontal_wrapped(|ui| {
        let blocks = flame.nodes[focus].blocks;
        if ui
            .button((t.flame_list_blocks)(&grouped(blocks as f64, 0)))
            .clicked()
        {
            out.push(Command::ShowTab(crate::ui::state::TabId::DETAILS));
        }
        ui.weak(t.flame_zoomed);
        let chain = flame.ancestors(focus);
        for (k, &n) in chain.iter().enumerate() {
            if k > 0 {
                ui.weak("›");
            }
            let text = node_text(t, data, stacks, flame, n);
            if n == focus {
                ui.strong(text);
            } else if ui.link(text).clicked() {
                clicked = Some(n);
            }
        }
    });
    clicked
}

/// A node's text as drawn: the frame without its folder, the operator, or the root's name.
fn node_text(t: &Tr, data: &RankData, stacks: &CallStacks, flame: &Flame, node: usize) -> String {
    match flame.nodes[node].frame {
        FlameFrame::Root => t.all_blocks.to_string(),
        FlameFrame::NoStack => t.no_stack.to_string(),
        FlameFrame::Frame(f) => short_frame(stacks.frames.get(f)).to_string(),
        FlameFrame::Operator(_) => flame.label(data, stacks, node).unwrap_or("").to_string(),
    }
}

/// A node's fill: the user's own frames warm, library frames blue-grey, operators green, the
/// root and blocks without a stack grey. The hue varies with the text so neighbours differ.
fn fill(stacks: &CallStacks, frame: FlameFrame, text: &str) -> egui::Color32 {
    let h = text
        .bytes()
        .fold(0u32, |a, b| a.wrapping_mul(31).wrapping_add(u32::from(b)));
    let jitter = (h % 1000) as f32 / 1000.0;
    let kind = match frame {
        FlameFrame::Root | FlameFrame::NoStack => FrameKind::Neutral,
        FlameFrame::Operator(_) => FrameKind::Operator,
        FlameFrame::Frame(f) if is_library_frame(stacks.frames.get(f)) => FrameKind::Library,
        FlameFrame::Frame(_) => FrameKind::User,
    };
    flame_fill(kind, jitter)
}

/// How one node of an icicle is drawn: its text in the box, its text in full (hover), its fill.
pub struct NodeLook {
    /// Drawn in the box (truncated to fit).
    pub text: String,
    /// The hover's heading.
    pub full: String,
    /// The box's colour.
    pub fill: egui::Color32,
}

/// Paints the icicle (root on top) zoomed into `focus`; returns the node clicked, if any.
fn draw(
    ui: &mut egui::Ui,
    t: &Tr,
    data: &RankData,
    stacks: &CallStacks,
    flame: &Flame,
    focus: usize,
) -> Option<usize> {
    draw_icicle(ui, t, flame, focus, &|n| {
        let text = node_text(t, data, stacks, flame, n);
        let frame = flame.nodes[n].frame;
        NodeLook {
            fill: fill(stacks, frame, &text),
            full: match frame {
                FlameFrame::Frame(f) => stacks.frames.get(f).to_string(),
                _ => text.clone(),
            },
            text,
        }
    })
}

/// Paints any icicle (root on top), each node as `look` says, zoomed into `focus` (0: the whole
/// graph): the focused node and its ancestors span the width, its subtree shares it below.
/// Returns the node clicked, if any.
pub fn draw_icicle(
    ui: &mut egui::Ui,
    t: &Tr,
    flame: &Flame,
    focus: usize,
    look: &dyn Fn(usize) -> NodeLook,
) -> Option<usize> {
    let row_h = ui.text_style_height(&egui::TextStyle::Body) + 6.0;
    let focus = if focus < flame.nodes.len() { focus } else { 0 };
    let levels = flame.depth_under(focus) + 1;
    let mut clicked = None;
    egui::ScrollArea::vertical()
        .auto_shrink([false, false])
        .show(ui, |ui| {
            let width = ui.available_width().max(100.0);
            let (rect, resp) = ui.allocate_exact_size(
                egui::vec2(width, levels as f32 * row_h),
                egui::Sense::hover(),
            );
            let painter = ui.painter_at(rect);
            let by_bytes = flame.nodes[0].bytes > 0;
            let weight = |n: usize| {
                if by_bytes {
                    flame.nodes[n].bytes as f64
                } else {
                    flame.nodes[n].blocks as f64
                }
            };
            // Lay out: the focus's ancestors span the width; below the focus each child gets
            // its share of its parent's width, heaviest first.
            let mut boxes: Vec<(usize, egui::Rect)> = Vec::new();
            let chain = flame.ancestors(focus);
            for &n in &chain[..chain.len() - 1] {
                let y = rect.top() + flame.nodes[n].depth as f32 * row_h;
                boxes.push((
                    n,
                    egui::Rect::from_min_size(
                        egui::pos2(rect.left(), y),
                        egui::vec2(rect.width(), row_h - 1.0),
                    ),
                ));
            }
            let mut todo = vec![(focus, rect.left(), rect.width())];
            while let Some((n, x, w)) = todo.pop() {
                let y = rect.top() + flame.nodes[n].depth as f32 * row_h;
                boxes.push((
                    n,
                    egui::Rect::from_min_size(egui::pos2(x, y), egui::vec2(w, row_h - 1.0)),
                ));
                let total = weight(n).max(1.0);
                let mut cx = x;
                for &c in &flame.nodes[n].children {
                    let cw = (f64::from(w) * weight(c) / total) as f32;
                    if cw < 0.5 {
                        break; // the rest are lighter still
                    }
                    todo.push((c, cx, cw));
                    cx += cw;
                }
            }
            let font = egui::TextStyle::Small.resolve(ui.style());
            for &(n, b) in &boxes {
                let NodeLook { text, full, fill } = look(n);
                let inner = b.shrink2(egui::vec2(0.5, 0.0));
                // Each frame is a widget of its own: hover, click, and a name for screen readers
                // (and tests).
                let r = ui.interact(b, resp.id.with(n), egui::Sense::click());
                let name = text.clone();
                r.widget_info(|| {
                    egui::WidgetInfo::labeled(egui::Role::Button, true, name.as_str())
                });
                painter.rect_filled(inner, 2.0, fill);
                if r.hovered() {
                    painter.rect_stroke(
                        inner,
                        2.0,
                        egui::Stroke::new(1.5, egui::Color32::BLACK),
                        egui::StrokeKind::Inside,
                    );
                }
                if b.width() > 28.0 {
                    let mut job = egui::text::LayoutJob::simple_singleline(
                        text.clone(),
                        font.clone(),
                        FLAME_TEXT,
                    );
                    job.wrap = egui::text::TextWrapping::from_wrap_mode_and_width(
                        egui::TextWrapMode::Truncate,
                        b.width() - 6.0,
                    );
                    let galley = painter.layout_job(job);
                    let pos = egui::pos2(b.left() + 3.0, b.center().y - galley.size().y / 2.0);
                    painter.galley(pos, galley, FLAME_TEXT);
                }
                let node = &flame.nodes[n];
                let tip = (t.frame_tip)(&crate::ui::format::bytes(node.bytes), node.blocks);
                let r = r.on_hover_ui_at_pointer(|ui| {
                    ui.strong(full);
                    ui.label(tip);
                });
                if r.clicked() {
                    clicked = Some(n);
                }
            }
        });
    clicked
}

/// The call stacks tab's id.
pub const TAB: crate::ui::state::TabId = crate::ui::state::TabId("stacks");

impl super::tab::BottomPane for FlamePane {
    fn id(&self) -> crate::ui::state::TabId {
        TAB
    }

    fn title(&self, t: &'static Tr, cx: &PaneCx<'_>) -> String {
        let _ = cx;
        t.stacks_tab.to_string()
    }

    fn offered(&self, cx: &PaneCx<'_>) -> bool {
        super::tab::has_call_stacks(cx.view)
    }

    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut PaneCx<'_>) {
        FlamePane::ui(self, ui, cx);
    }
}
