//! A CJK-capable font from the system, added as the fallback of egui's own fonts so that
//! Chinese paths, rank names, operator names and the Chinese UI render instead of boxes.
//!
//! Hand-written rather than a font-database crate: the candidates are a dozen well-known files,
//! and scanning every installed font at start-up (what `fontdb` does) costs more than it saves.
//! No font is bundled: a CJK font is 5–20 MB.

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Fonts larger than this are not read (no CJK font comes close).
const MAX_FONT_BYTES: u64 = 64 << 20;

/// Environment variable naming a font file to use instead of the search.
pub const FONT_ENV: &str = "MEMSIGHT_CJK_FONT";

/// Known CJK fonts: (path, face index in a collection). Linux (Noto/Source Han, WenQuanYi,
/// Droid), Windows (Microsoft YaHei, SimHei, SimSun), macOS (PingFang, Hiragino, STHeiti).
const CANDIDATES: &[(&str, u32)] = &[
    ("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc", 2),
    ("/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc", 2),
    (
        "/usr/share/fonts/google-noto-cjk/NotoSansCJK-Regular.ttc",
        2,
    ),
    (
        "/usr/share/fonts/opentype/source-han-sans/SourceHanSans-Regular.ttc",
        2,
    ),
    (
        "/usr/share/fonts/adobe-source-han-sans/SourceHanSans-Regular.ttc",
        2,
    ),
    ("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc", 0),
    (
        "/usr/share/fonts/wenquanyi/wqy-microhei/wqy-microhei.ttc",
        0,
    ),
    ("/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc", 0),
    ("/usr/share/fonts/wenquanyi/wqy-zenhei/wqy-zenhei.ttc", 0),
    (
        "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
        0,
    ),
    ("C:\\Windows\\Fonts\\msyh.ttc", 0),
    ("C:\\Windows\\Fonts\\msyh.ttf", 0),
    ("C:\\Windows\\Fonts\\simhei.ttf", 0),
    ("C:\\Windows\\Fonts\\simsun.ttc", 0),
    ("/System/Library/Fonts/PingFang.ttc", 0),
    ("/System/Library/Fonts/Hiragino Sans GB.ttc", 0),
    ("/System/Library/Fonts/STHeiti Light.ttc", 0),
    ("/Library/Fonts/Arial Unicode.ttf", 0),
];

/// The CJK font to use: `MEMSIGHT_CJK_FONT` when it names a file, else the first candidate
/// present (on Windows under `%WINDIR%` too).
pub fn find_cjk_font() -> Option<(PathBuf, u32)> {
    if let Some(p) = std::env::var_os(FONT_ENV).map(PathBuf::from)
        && p.is_file()
    {
        return Some((p, 0));
    }
    let windir = std::env::var_os("WINDIR").map(PathBuf::from);
    CANDIDATES.iter().find_map(|&(path, index)| {
        let p = match (&windir, path.strip_prefix("C:\\Windows\\")) {
            (Some(w), Some(rest)) => w.join(rest),
            _ => PathBuf::from(path),
        };
        p.is_file().then_some((p, index))
    })
}

fn read_font(path: &Path) -> Option<Vec<u8>> {
    let len = std::fs::metadata(path).ok()?.len();
    if len > MAX_FONT_BYTES {
        return None;
    }
    std::fs::read(path).ok()
}

/// The system's CJK font file's bytes and face index, read once per process (the chart report
/// draws with it too); `None` when the system has none.
pub fn cjk_font_data() -> Option<(Arc<Vec<u8>>, u32)> {
    static FONT: std::sync::OnceLock<Option<(Arc<Vec<u8>>, u32)>> = std::sync::OnceLock::new();
    FONT.get_or_init(|| {
        let (path, index) = find_cjk_font()?;
        Some((Arc::new(read_font(&path)?), index))
    })
    .clone()
}

/// Adds the system's CJK font as the last fallback of both font families; returns its path, or
/// `None` (and Chinese shows as boxes) when the system has none.
pub fn install_cjk_font(ctx: &egui::Context) -> Option<PathBuf> {
    let (path, _) = find_cjk_font()?;
    let (bytes, index) = cjk_font_data()?;
    let data = egui::FontData::from_blob(bytes, index);
    ctx.add_font(egui::epaint::text::FontInsert {
        name: "memsight-cjk".into(),
        data,
        families: [egui::FontFamily::Proportional, egui::FontFamily::Monospace]
            .into_iter()
            .map(|family| egui::epaint::text::InsertFontFamily {
                family,
                priority: egui::epaint::text::FontPriority::Lowest,
            })
            .collect(),
    });
    Some(path)
}
