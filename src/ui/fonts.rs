//! The fonts behind egui's own: the system's CJK font when it has one (Chinese data names in the
//! look of the desktop), then the two fonts the app bundles, so that every character of its own
//! UI, in English and in Chinese, renders on a machine with no system fonts at all.
//!
//! The bundled fonts are subsets made by `scripts/subset-fonts.py`: Noto Sans CJK SC cut to the
//! 3,755 common characters of GB 2312 level 1 plus every non-ASCII character of the source
//! (790 KB; the whole font is 16 MB), and DejaVu Sans cut to the symbols Noto lacks (`▸`).
//! The `ui_glyphs` test fails when a string in the code has a character neither covers.
//!
//! Hand-written rather than a font-database crate: the candidates are a dozen well-known files,
//! and scanning every installed font at start-up (what `fontdb` does) costs more than it saves.

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The bundled fonts, in fallback order: (name, bytes). Licences beside them in `assets/fonts/`.
pub const BUNDLED: [(&str, &[u8]); 2] = [
    (
        "memsight-cjk",
        include_bytes!("../../assets/fonts/memsight-cjk.otf"),
    ),
    (
        "memsight-symbols",
        include_bytes!("../../assets/fonts/memsight-symbols.ttf"),
    ),
];

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

fn fallback(name: &str, data: egui::FontData) -> egui::epaint::text::FontInsert {
    egui::epaint::text::FontInsert {
        name: name.into(),
        data,
        families: [egui::FontFamily::Proportional, egui::FontFamily::Monospace]
            .into_iter()
            .map(|family| egui::epaint::text::InsertFontFamily {
                family,
                priority: egui::epaint::text::FontPriority::Lowest,
            })
            .collect(),
    }
}

/// Adds, after egui's own fonts, the system's CJK font (when there is one) and then the bundled
/// fonts; returns the system font's path, or `None` when the system has none (the UI then
/// draws with the bundled fonts alone, and rarer Chinese characters in data names show as
/// boxes; this is said once on standard error, and in the View menu).
pub fn install_fonts(ctx: &egui::Context) -> Option<PathBuf> {
    let system = find_cjk_font().zip(cjk_font_data());
    match &system {
        Some((_, (bytes, index))) => ctx.add_font(fallback(
            "memsight-system-cjk",
            egui::FontData::from_blob(bytes.clone(), *index),
        )),
        None => warn_no_system_font_once(),
    }
    for (name, bytes) in BUNDLED {
        ctx.add_font(fallback(name, egui::FontData::from_static(bytes)));
    }
    system.map(|((path, _), _)| path)
}

fn warn_no_system_font_once() {
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        eprintln!(
            "memsight: no Chinese font found on this system; the UI uses its bundled glyphs, \
             and rarer characters in data names may show as boxes (install Noto Sans CJK or \
             WenQuanYi, or set {FONT_ENV} to a font file)"
        );
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// egui with its own fonts and the bundled ones only: what a machine with no system fonts
    /// draws with.
    fn bundled_only() -> egui::Context {
        let ctx = egui::Context::default();
        for (name, bytes) in BUNDLED {
            ctx.add_font(fallback(name, egui::FontData::from_static(bytes)));
        }
        let _ = ctx.run_ui(egui::RawInput::default(), |_| {});
        ctx
    }

    /// Every character written in the code's strings: the whole UI in both languages (every
    /// `Tr` field, every `Message` rendering, legend and marker glyphs) is among them. Read
    /// from the files, not from a list, so a new string cannot escape the check.
    fn source_characters() -> std::collections::BTreeMap<char, String> {
        fn walk(dir: &Path, out: &mut std::collections::BTreeMap<char, String>) {
            let mut entries: Vec<_> = std::fs::read_dir(dir)
                .expect("src/ is readable")
                .map(|e| e.expect("entry").path())
                .collect();
            entries.sort();
            for p in entries {
                if p.is_dir() {
                    walk(&p, out);
                } else if p.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&p).expect("source is UTF-8");
                    for (n, line) in text.lines().enumerate() {
                        for c in line.chars().filter(|c| !c.is_ascii()) {
                            out.entry(c)
                                .or_insert_with(|| format!("{}:{}", p.display(), n + 1));
                        }
                    }
                }
            }
        }
        let mut out = std::collections::BTreeMap::new();
        walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut out);
        out
    }

    #[test]
    fn ui_glyphs_every_character_of_the_source_has_a_bundled_glyph() {
        let chars = source_characters();
        // The check would pass on an empty walk: the Chinese UI alone has hundreds.
        assert!(chars.len() > 300, "only {} characters found", chars.len());
        let ctx = bundled_only();
        let missing: Vec<String> = ctx.fonts_mut(|f| {
            chars
                .iter()
                .filter(|(c, _)| !c.is_control() && **c != '\u{feff}')
                .filter(|(c, _)| {
                    [egui::FontFamily::Proportional, egui::FontFamily::Monospace]
                        .into_iter()
                        .any(|family| !f.has_glyph(&egui::FontId::new(14.0, family), **c))
                })
                .map(|(c, at)| format!("{c:?} (U+{:04X}) at {at}", *c as u32))
                .collect()
        });
        assert!(
            missing.is_empty(),
            "no bundled glyph (run scripts/subset-fonts.py) for: {missing:#?}"
        );
    }

    #[test]
    fn the_symbols_the_ui_draws_need_the_bundled_fonts() {
        // Proves the check can fail: egui's own fonts lack these, the bundled ones have them.
        let plain = egui::Context::default();
        let _ = plain.run_ui(egui::RawInput::default(), |_| {});
        let font = egui::FontId::proportional(14.0);
        let ours = bundled_only();
        for c in ['●', '→', '←', '▸', '内', '存'] {
            assert!(!plain.fonts_mut(|f| f.has_glyph(&font, c)), "{c}");
            assert!(ours.fonts_mut(|f| f.has_glyph(&font, c)), "{c}");
        }
    }
}
