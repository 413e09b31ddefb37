//! Save chart as PNG: the window's pixels (an egui screenshot) cropped to the chart pane and
//! written as PNG at screen resolution.

use std::path::Path;

use egui::{ColorImage, Rect};

/// The part of `shot` (the window at `pixels_per_point`) under `rect` (points), clamped to it.
pub fn crop(shot: &ColorImage, rect: Rect, pixels_per_point: f32) -> ColorImage {
    let [w, h] = shot.size;
    let full = Rect::from_min_size(
        egui::Pos2::ZERO,
        egui::vec2(w as f32, h as f32) / pixels_per_point.max(0.01),
    );
    shot.region(&rect.intersect(full), Some(pixels_per_point))
}

/// `image` as PNG bytes (8-bit RGBA).
pub fn encode_png(image: &ColorImage) -> Result<Vec<u8>, String> {
    let [w, h] = image.size;
    let (w32, h32) = (
        u32::try_from(w).map_err(|e| e.to_string())?,
        u32::try_from(h).map_err(|e| e.to_string())?,
    );
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w32, h32);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header().map_err(|e| e.to_string())?;
        let rgba: Vec<u8> = image
            .pixels
            .iter()
            .flat_map(|c| c.to_srgba_unmultiplied())
            .collect();
        writer.write_image_data(&rgba).map_err(|e| e.to_string())?;
    }
    Ok(out)
}

/// Writes `image` as a PNG file at `path`.
pub fn save_png(image: &ColorImage, path: &Path) -> Result<(), String> {
    let bytes = encode_png(image)?;
    std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// The native save dialog for a PNG (rfd); `Unavailable` when none can be shown.
pub fn native_png_picker() -> super::file_browser::PickOutcome {
    super::file_browser::native_outcome(|| {
        let dialog = rfd::FileDialog::new();
        let dialog = match super::file_browser::save_folder() {
            Some(dir) => dialog.set_directory(dir),
            None => dialog,
        };
        dialog
            .set_file_name("memsight_chart.png")
            .add_filter("PNG", &["png"])
            .save_file()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crop_is_the_rect_at_screen_resolution_and_encodes_as_png() {
        let mut shot = ColorImage::filled([200, 100], egui::Color32::BLACK);
        shot.pixels[150] = egui::Color32::RED; // (150, 0)
        // 2 pixels per point: the rect (70,0)-(90,20) points is (140,0)-(180,40) pixels.
        let part = crop(
            &shot,
            Rect::from_min_max(egui::pos2(70.0, 0.0), egui::pos2(90.0, 20.0)),
            2.0,
        );
        assert_eq!(part.size, [40, 40]);
        assert_eq!(part.pixels[10], egui::Color32::RED);
        // Past the window's edge it is clamped.
        let edge = crop(
            &shot,
            Rect::from_min_max(egui::pos2(90.0, 40.0), egui::pos2(500.0, 500.0)),
            2.0,
        );
        assert_eq!(edge.size, [20, 20]);
        let png = encode_png(&part).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        let decoder = png::Decoder::new(std::io::Cursor::new(png));
        let reader = decoder.read_info().unwrap();
        assert_eq!((reader.info().width, reader.info().height), (40, 40));
    }
}
