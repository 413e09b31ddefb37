//! Self-timing for `MEMSIGHT_BENCH=SECONDS memsight PATH`: reports when curves first reach the
//! screen, then pans and zooms across the rank every frame for SECONDS, prints frame-time
//! statistics to stderr and closes the window. Used to measure the app under Xvfb.

use std::time::{Duration, Instant};

/// The view (ms) of frame `frame` of the benchmark motion over a rank spanning `extent` (ms):
/// alternately a pan of a 20 % window across the rank and a zoom in and out around its middle,
/// 120 frames each.
pub fn motion((a, b): (f64, f64), frame: u64) -> (f64, f64) {
    let span = b - a;
    let phase = (frame % 120) as f64 / 120.0;
    if (frame / 120).is_multiple_of(2) {
        let w = span * 0.2;
        let x = a + (span - w) * phase;
        (x, x + w)
    } else {
        let w = span * (1.0 - 0.999 * (phase * std::f64::consts::PI).sin());
        let mid = a + span / 2.0;
        (mid - w / 2.0, mid + w / 2.0)
    }
}

/// The running measurement.
pub struct Bench {
    started: Instant,
    duration: Duration,
    first_curves: Option<Duration>,
    moving_since: Option<Instant>,
    last_frame: Option<Instant>,
    frame_gaps: Vec<f64>,
    ui_times: Vec<f64>,
    frame: u64,
    reported: bool,
    cpu_times: Vec<f64>,
}

impl Bench {
    /// From the environment; `started` is when the process started.
    pub fn from_env(started: Instant) -> Option<Bench> {
        let secs: f64 = std::env::var("MEMSIGHT_BENCH").ok()?.parse().ok()?;
        Some(Bench {
            started,
            duration: Duration::from_secs_f64(secs.max(0.5)),
            first_curves: None,
            moving_since: None,
            last_frame: None,
            frame_gaps: Vec::new(),
            ui_times: Vec::new(),
            frame: 0,
            reported: false,
            cpu_times: Vec::new(),
        })
    }

    /// Before a frame: returns whether the run is done (true once), and the window (ms) to show
    /// this frame (once curves are up).
    pub fn before_frame(&mut self, extent_ms: Option<(f64, f64)>) -> (bool, Option<(f64, f64)>) {
        let now = Instant::now();
        if let Some(last) = self.last_frame
            && self.moving_since.is_some()
        {
            self.frame_gaps.push((now - last).as_secs_f64() * 1e3);
        }
        self.last_frame = Some(now);
        let Some((a, b)) = extent_ms else {
            return (false, None);
        };
        if self.first_curves.is_none() {
            self.first_curves = Some(self.started.elapsed());
            eprintln!(
                "memsight bench: first curves on screen {:.3} s after start",
                self.started.elapsed().as_secs_f64()
            );
            self.moving_since = Some(now);
            return (false, None);
        }
        let since = self.moving_since.map_or(Duration::ZERO, |m| now - m);
        if since >= self.duration {
            let first = !self.reported;
            self.reported = true;
            return (first, None);
        }
        self.frame += 1;
        (false, Some(motion((a, b), self.frame)))
    }

    /// After a frame: how long the app's own UI code took.
    pub fn after_frame(&mut self, ui_started: Instant) {
        if self.moving_since.is_some() {
            self.ui_times.push(ui_started.elapsed().as_secs_f64() * 1e3);
        }
    }

    /// eframe's CPU time of the previous frame (ui + tessellation, not rendering), seconds.
    pub fn record_cpu(&mut self, seconds: Option<f32>) {
        if let (Some(s), Some(_)) = (seconds, self.moving_since) {
            self.cpu_times.push(f64::from(s) * 1e3);
        }
    }

    /// The report.
    pub fn report(&self) -> String {
        let stats = |v: &[f64]| {
            let mut s = v.to_vec();
            s.sort_by(f64::total_cmp);
            let pick = |q: f64| {
                s.get(((s.len() as f64 - 1.0) * q).round() as usize)
                    .copied()
                    .unwrap_or(0.0)
            };
            (
                s.iter().sum::<f64>() / s.len().max(1) as f64,
                pick(0.5),
                pick(0.95),
                pick(1.0),
            )
        };
        let (gm, g50, g95, gmax) = stats(&self.frame_gaps);
        let (um, u50, u95, umax) = stats(&self.ui_times);
        let (cm, c50, c95, cmax) = stats(&self.cpu_times);
        format!(
            "memsight bench: {} frames while panning/zooming; frame interval mean {gm:.2} ms (≈{:.1} fps), p50 {g50:.2}, p95 {g95:.2}, max {gmax:.2} ms; app ui() mean {um:.2}, p50 {u50:.2}, p95 {u95:.2}, max {umax:.2} ms; ui + tessellation (eframe cpu_usage) mean {cm:.2}, p50 {c50:.2}, p95 {c95:.2}, max {cmax:.2} ms",
            self.frame_gaps.len(),
            1000.0 / gm.max(1e-9)
        )
    }
}
