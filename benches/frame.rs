//! The app's CPU cost per frame while panning and zooming, without any renderer: egui's UI pass
//! (all of memsight's UI code) plus tessellation into triangles, on a 1400×900 window. This is
//! what must fit in 16.7 ms for 60 fps on a machine whose GPU rasterises for free; under Xvfb the
//! software rasteriser adds its own cost on top (`MEMSIGHT_BENCH`, see the README).
//!
//! Profiles: the bundled demo, plus the folder in `MEMSIGHT_FRAME_PROFILE` if set (for example a
//! 10M-row rank made with `memsight generate --allocs 2500000`).

use std::path::PathBuf;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use memsight::ui::MemsightApp;
use memsight::ui::bench::motion;

struct Frames {
    app: MemsightApp,
    ctx: egui::Context,
    extent: (f64, f64),
    frame: u64,
}

impl Frames {
    fn open(path: PathBuf) -> Frames {
        let mut app = MemsightApp::new(Some(path), Vec::new(), None);
        app.wait_for_load();
        let view = app.view().expect("the profile loads");
        let (a, b) = view.time_extent();
        let mut f = Frames {
            app,
            ctx: egui::Context::default(),
            extent: (memsight::model::ns_to_ms(a), memsight::model::ns_to_ms(b)),
            frame: 0,
        };
        for _ in 0..3 {
            f.step();
        }
        f
    }

    fn input() -> egui::RawInput {
        egui::RawInput {
            screen_rect: Some(egui::Rect::from_min_size(
                egui::Pos2::ZERO,
                egui::vec2(1400.0, 900.0),
            )),
            ..Default::default()
        }
    }

    /// One frame of the motion: (UI pass seconds, tessellation seconds, vertices).
    fn step(&mut self) -> (f64, f64, usize) {
        self.frame += 1;
        let (a, b) = motion(self.extent, self.frame);
        self.app.apply(memsight::ui::Command::SetWindow {
            window: memsight::model::TimeWindow::from_ms(a, b),
            moving: true,
        });
        let app = &mut self.app;
        let t0 = Instant::now();
        let out = self.ctx.run_ui(Self::input(), |ui| app.ui_root(ui));
        let t1 = Instant::now();
        let prims = self.ctx.tessellate(out.shapes, out.pixels_per_point);
        let t2 = Instant::now();
        let vertices = prims
            .iter()
            .map(|p| match &p.primitive {
                egui::epaint::Primitive::Mesh(m) => m.vertices.len(),
                egui::epaint::Primitive::Callback(_) => 0,
            })
            .sum();
        ((t1 - t0).as_secs_f64(), (t2 - t1).as_secs_f64(), vertices)
    }
}

fn percentiles(mut v: Vec<f64>) -> String {
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize] * 1e3;
    format!(
        "p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms",
        at(0.5),
        at(0.95),
        at(1.0)
    )
}

fn frame(c: &mut Criterion) {
    let demo = memsight::cli::demo_profile_path().expect("the demo profile");
    let mut profiles = vec![("demo", demo)];
    if let Some(p) = std::env::var_os("MEMSIGHT_FRAME_PROFILE") {
        profiles.push(("profile", PathBuf::from(p)));
    }
    for (name, path) in profiles {
        let mut f = Frames::open(path);
        // One full cycle of the motion (pan, then zoom) with per-frame figures.
        let (mut ui, mut tess, mut verts) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..480 {
            let (u, t, v) = f.step();
            ui.push(u);
            tess.push(t);
            verts.push(v as f64 / 1e3);
        }
        let total: Vec<f64> = ui.iter().zip(&tess).map(|(u, t)| u + t).collect();
        verts.sort_by(f64::total_cmp);
        eprintln!(
            "frame/{name}: ui {}; tessellation {}; ui + tessellation {}; {:.0}k vertices (p50)",
            percentiles(ui),
            percentiles(tess),
            percentiles(total),
            verts[verts.len() / 2],
        );
        c.bench_function(&format!("frame/{name}"), |b| b.iter(|| f.step()));
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = frame
}
criterion_main!(benches);
