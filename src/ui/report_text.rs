//! Text for the chart report ([`crate::ui::chart_image`]): egui's own proportional font with the
//! system's CJK font as fallback, measured with skrifa and drawn as vello_cpu glyph runs.
//!
//! Hand-written rather than a text-layout crate: the report's labels are single lines of Latin
//! digits and CJK names, so a per-character fallback with advance widths is all the shaping they
//! need, and both crates are already built for egui.

use std::sync::Arc;

use skrifa::instance::{LocationRef, Size};
use skrifa::{FontRef, MetadataProvider};
use vello_cpu::kurbo::Affine;
use vello_cpu::peniko::{Blob, FontData};
use vello_cpu::{Glyph, RenderContext, Resources};

/// One font face: its bytes (for skrifa) and the same bytes as vello's font handle.
struct Face {
    bytes: Arc<dyn AsRef<[u8]> + Send + Sync>,
    index: u32,
    handle: FontData,
}

impl Face {
    fn new(bytes: Arc<dyn AsRef<[u8]> + Send + Sync>, index: u32) -> Option<Face> {
        // A face skrifa cannot read is no face at all.
        FontRef::from_index((*bytes).as_ref(), index).ok()?;
        let handle = FontData::new(Blob::new(Arc::clone(&bytes)), index);
        Some(Face {
            bytes,
            index,
            handle,
        })
    }

    fn font(&self) -> Option<FontRef<'_>> {
        FontRef::from_index((*self.bytes).as_ref(), self.index).ok()
    }
}

/// The faces text is drawn with, first choice first.
pub struct ReportFonts {
    faces: Vec<Face>,
}

/// A run of glyphs of one face, placed from the text's start.
struct Run {
    face: usize,
    glyphs: Vec<Glyph>,
}

impl ReportFonts {
    /// egui's default proportional font, the system's CJK font when there is one, then the
    /// bundled fonts (as in the app).
    pub fn load() -> ReportFonts {
        let defs = egui::FontDefinitions::default();
        let mut faces = Vec::new();
        if let Some(name) = defs
            .families
            .get(&egui::FontFamily::Proportional)
            .and_then(|names| names.first())
            && let Some(data) = defs.font_data.get(name)
            && let Some(face) = Face::new(Arc::clone(&data.font), data.index)
        {
            faces.push(face);
        }
        if let Some((bytes, index)) = crate::ui::fonts::cjk_font_data()
            && let Some(face) = Face::new(bytes, index)
        {
            faces.push(face);
        }
        for (_, bytes) in crate::ui::fonts::BUNDLED {
            let blob: Arc<dyn AsRef<[u8]> + Send + Sync> = Arc::new(bytes);
            if let Some(face) = Face::new(blob, 0) {
                faces.push(face);
            }
        }
        ReportFonts { faces }
    }

    /// Whether any face could be read (without one, no text is drawn).
    pub fn has_text(&self) -> bool {
        !self.faces.is_empty()
    }

    /// The glyph runs of `text` at `px` pixels, x from 0 on the baseline, and its width.
    fn layout(&self, text: &str, px: f32) -> (Vec<Run>, f32) {
        let size = Size::new(px);
        let fonts: Vec<Option<FontRef<'_>>> = self.faces.iter().map(Face::font).collect();
        let maps: Vec<_> = fonts
            .iter()
            .map(|f| {
                f.as_ref()
                    .map(|f| (f.charmap(), f.glyph_metrics(size, LocationRef::default())))
            })
            .collect();
        let mut runs: Vec<Run> = Vec::new();
        let mut x = 0.0f32;
        for ch in text.chars() {
            // The first face that has the character; the first face's missing glyph otherwise.
            let found = maps.iter().enumerate().find_map(|(k, m)| {
                let (cmap, metrics) = m.as_ref()?;
                let gid = cmap.map(ch)?;
                (gid.to_u32() != 0).then(|| (k, gid, metrics.advance_width(gid).unwrap_or(0.0)))
            });
            let (face, gid, advance) = match found {
                Some(f) => f,
                None => match maps.first().and_then(Option::as_ref) {
                    Some((_, metrics)) => {
                        let gid = skrifa::GlyphId::new(0);
                        (0, gid, metrics.advance_width(gid).unwrap_or(px * 0.5))
                    }
                    None => continue,
                },
            };
            let glyph = Glyph {
                id: gid.to_u32(),
                x,
                y: 0.0,
            };
            match runs.last_mut() {
                Some(run) if run.face == face => run.glyphs.push(glyph),
                _ => runs.push(Run {
                    face,
                    glyphs: vec![glyph],
                }),
            }
            x += advance;
        }
        (runs, x)
    }

    /// The width of `text` at `px` pixels.
    pub fn width(&self, text: &str, px: f32) -> f32 {
        self.layout(text, px).1
    }

    /// The first face's ascent at `px` pixels (the baseline's distance below a line's top).
    pub fn ascent(&self, px: f32) -> f32 {
        self.faces
            .first()
            .and_then(Face::font)
            .map_or(px * 0.8, |f| {
                f.metrics(Size::new(px), LocationRef::default()).ascent
            })
    }

    /// Draws `text` with the context's current paint, its baseline's start at the origin of
    /// `at` (so a rotation in `at` turns the text).
    pub fn draw(
        &self,
        ctx: &mut RenderContext,
        resources: &mut Resources,
        text: &str,
        px: f32,
        at: Affine,
    ) {
        let (runs, _) = self.layout(text, px);
        let before = *ctx.transform();
        ctx.set_transform(at);
        for run in runs {
            let Some(face) = self.faces.get(run.face) else {
                continue;
            };
            ctx.glyph_run(resources, &face.handle)
                .font_size(px)
                .hint(false)
                .fill_glyphs(run.glyphs.into_iter());
        }
        ctx.set_transform(before);
    }
}
