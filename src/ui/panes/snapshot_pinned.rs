//! The snapshot view's line on pinned host memory (`record_pinned_host_memory=True`): what the
//! host caching allocator holds beside the device, and who holds the most of it. Host RAM, not
//! HBM: it is never added to the device's figures.

use crate::model::bytes_to_mib;
use crate::snapshot::pinned::PinnedSummary;
use crate::ui::format::grouped;
use crate::ui::i18n::{Text, Tr};

/// The figures (`{res}`, `{n}`, `{alloc}`, `{pend}`, `{peak}`: MB and segments).
pub const FIGURES: Text = Text {
    en: "Pinned host memory: {res} MB reserved in {segs}, {alloc} MB allocated, \
         {pend} MB waiting for streams; peak {peak} MB",
    zh: "锁页主机内存：保留 {res} MB（{n} 个内存段），已分配 {alloc} MB，{pend} MB 等待流完成；\
         峰值 {peak} MB",
};
/// Who holds the most of it (`{mb}`, `{frame}`).
pub const HOLDER: Text = Text {
    en: "largest holder: {mb} MB at {frame}",
    zh: "最大持有者：{frame}（{mb} MB）",
};

/// The line, with the largest holder's frame (the full stack on hover).
pub fn pinned_line(ui: &mut egui::Ui, t: &Tr, p: &PinnedSummary) {
    let mb = |b: i64| grouped(bytes_to_mib(b), 2);
    let figures = FIGURES
        .get(t)
        .replace("{res}", &mb(p.reserved_bytes))
        .replace("{n}", &p.segments.to_string())
        .replace(
            "{segs}",
            &crate::model::plural::count(p.segments as u64, "segment", "segments"),
        )
        .replace("{alloc}", &mb(p.allocated_bytes))
        .replace("{pend}", &mb(p.pending_free_bytes))
        .replace("{peak}", &mb(p.peak_allocated_bytes));
    ui.horizontal_wrapped(|ui| {
        ui.label(figures);
        if let Some(top) = p.top_stacks.first()
            && let Some(frame) = &top.frame
        {
            let stack: Vec<String> = top.frames.iter().map(|f| f.text()).collect();
            ui.weak(
                HOLDER
                    .get(t)
                    .replace("{mb}", &mb(top.bytes))
                    .replace("{frame}", &frame.short_text()),
            )
            .on_hover_text(stack.join("\n"));
        }
    });
}
