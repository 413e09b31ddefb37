//! Where a point's label goes on a plot (screen space): next to its own point, inside the
//! plot, over no other label and nearer its own point than any other labelled point; or
//! nowhere, when the plot has no such room (a label far from its point says the wrong thing).

use egui::{Pos2, Rect, Vec2, pos2};

/// Gap between a point and its label, points.
pub const GAP: f32 = 5.0;
/// Points closer than this (two markers' radii) look like one place: either's label serves.
pub const SAME_PLACE: f32 = 8.0;
/// A marker's radius: a label may be this much nearer another point than its own (the eye
/// does not tell those distances apart; the marker itself is this wide).
pub const MARKER_RADIUS: f32 = 4.0;
/// How many label heights a label may move away from its point to make room for another.
pub const MAX_ROWS_AWAY: usize = 3;

/// One label to place: the point it belongs to and the size of its text.
#[derive(Clone, Copy, Debug)]
pub struct LabelSpot {
    /// The point (screen position) the label names.
    pub point: Pos2,
    /// The text's laid-out size.
    pub size: Vec2,
    /// Which side of the point the label prefers (towards the plot's middle reads best).
    pub prefer_left: bool,
}

/// Places `spots` inside `frame`. Points at the same place (within [`SAME_PLACE`]) share one
/// block of labels, one row each, the highest point's on top. Blocks are placed highest point
/// first, each at the first candidate spot (beside its point, then up to [`MAX_ROWS_AWAY`]
/// rows above or below) that lies inside the frame, overlaps no placed label, covers no other
/// point and is no nearer another point than its own. `None` where no candidate fits.
pub fn place_labels(spots: &[LabelSpot], frame: Rect) -> Vec<Option<Rect>> {
    let mut placed: Vec<Option<Rect>> = vec![None; spots.len()];
    let mut taken: Vec<Rect> = Vec::with_capacity(spots.len());
    for group in same_place_groups(spots) {
        let first = spots[group[0]];
        let block = LabelSpot {
            point: first.point,
            size: Vec2::new(
                group.iter().map(|&i| spots[i].size.x).fold(0.0, f32::max),
                group.iter().map(|&i| spots[i].size.y + 1.0).sum::<f32>() - 1.0,
            ),
            prefer_left: first.prefer_left,
        };
        let own = |r: &Rect| {
            group
                .iter()
                .map(|&i| r.distance_to_pos(spots[i].point))
                .fold(f32::INFINITY, f32::min)
        };
        // The block's rows, each the width of its own text, on the side of the block facing
        // the point.
        let rows = |r: &Rect| {
            let mut top = r.min.y;
            group
                .iter()
                .map(|&i| {
                    let size = spots[i].size;
                    let x = if r.center().x < block.point.x {
                        r.max.x - size.x
                    } else {
                        r.min.x
                    };
                    let row = Rect::from_min_size(pos2(x, top), size);
                    top += size.y + 1.0;
                    row
                })
                .collect::<Vec<_>>()
        };
        let row_fits = |r: &Rect| {
            frame.contains_rect(*r)
                && !taken.iter().any(|t| t.intersects(r.shrink(0.5)))
                && spots
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| !group.contains(j))
                    .all(|(_, o)| {
                        !r.expand(3.0).contains(o.point)
                            && own(r) <= r.distance_to_pos(o.point) + MARKER_RADIUS
                    })
        };
        let Some(found) = candidates(block, frame)
            .map(|r| rows(&r))
            .find(|rows| rows.iter().all(row_fits))
        else {
            continue;
        };
        for (&i, r) in group.iter().zip(found) {
            taken.push(r);
            placed[i] = Some(r);
        }
    }
    placed
}

/// The spots grouped by place, highest first: a group is a point and every later one (by
/// height) within [`SAME_PLACE`] of it.
fn same_place_groups(spots: &[LabelSpot]) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..spots.len()).collect();
    order.sort_by(|&a, &b| spots[a].point.y.total_cmp(&spots[b].point.y));
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut grouped = vec![false; spots.len()];
    for (k, &i) in order.iter().enumerate() {
        if grouped[i] {
            continue;
        }
        let mut group = vec![i];
        for &j in &order[k + 1..] {
            if !grouped[j] && spots[j].point.distance(spots[i].point) < SAME_PLACE {
                grouped[j] = true;
                group.push(j);
            }
        }
        groups.push(group);
    }
    groups
}

/// The spots a label may take around its point, best first: diagonally above on the preferred
/// side, the other side, diagonally below, level with the point, beside it moved just inside
/// the frame's top or bottom; then the diagonal ones a row further away each time.
fn candidates(spot: LabelSpot, frame: Rect) -> impl Iterator<Item = Rect> {
    let LabelSpot {
        point: p,
        size,
        prefer_left,
    } = spot;
    let left = p.x - GAP - size.x;
    let right = p.x + GAP;
    let (first, second) = if prefer_left {
        (left, right)
    } else {
        (right, left)
    };
    (0..=MAX_ROWS_AWAY).flat_map(move |k| {
        let away = k as f32 * (size.y + 1.0);
        let above = p.y - GAP - size.y - away;
        let below = p.y + GAP + away;
        let mut spots = vec![
            pos2(first, above),
            pos2(second, above),
            pos2(first, below),
            pos2(second, below),
        ];
        if k == 0 {
            let level = p.y - size.y / 2.0;
            spots.extend([pos2(first, level), pos2(second, level)]);
            // Beside the point, moved just inside the frame's top or bottom: only for a point
            // inside the frame (a label never stands in for a point out of sight).
            if (frame.top()..=frame.bottom()).contains(&p.y) {
                let inside = level.clamp(frame.top(), (frame.bottom() - size.y).max(frame.top()));
                spots.extend([pos2(first, inside), pos2(second, inside)]);
            }
        }
        spots
            .into_iter()
            .map(move |min| Rect::from_min_size(min, size))
    })
}

/// A label spot for a point beyond the plot's left or right edge: anchored on that edge at the
/// point's height held inside the frame, reading inwards.
pub fn edge_spot(frame: Rect, beyond_right: bool, y: f32, size: Vec2) -> LabelSpot {
    let x = if beyond_right {
        frame.right()
    } else {
        frame.left()
    };
    LabelSpot {
        point: pos2(x, y.clamp(frame.top(), frame.bottom())),
        size,
        prefer_left: beyond_right,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZE: Vec2 = Vec2::new(90.0, 12.0);

    fn spot(x: f32, y: f32, frame: Rect) -> LabelSpot {
        LabelSpot {
            point: pos2(x, y),
            size: SIZE,
            prefer_left: x > frame.center().x,
        }
    }

    /// Every placed label is inside the frame, overlaps no other, lies within a few rows of its
    /// point and is no nearer another point than its own.
    fn check(spots: &[LabelSpot], placed: &[Option<Rect>], frame: Rect) {
        for (i, r) in placed.iter().enumerate() {
            let Some(r) = r else { continue };
            assert!(frame.contains_rect(*r), "label {i} {r:?} leaves {frame:?}");
            let own = r.distance_to_pos(spots[i].point);
            assert!(
                own <= GAP + (SIZE.y + 1.0) * MAX_ROWS_AWAY as f32 + 1.0,
                "label {i} is {own} px away"
            );
            for (j, o) in spots.iter().enumerate() {
                if j != i && o.point.distance(spots[i].point) >= SAME_PLACE {
                    let other = r.distance_to_pos(o.point);
                    assert!(
                        own <= other + MARKER_RADIUS,
                        "label {i} is nearer point {j}"
                    );
                }
                if let Some(q) = placed[j].filter(|_| j != i) {
                    assert!(!r.intersects(q.shrink(0.5)), "labels {i} and {j} overlap");
                }
            }
        }
    }

    #[test]
    fn peaks_in_the_top_right_corner_stay_there_not_beside_the_small_series_at_the_bottom() {
        // The 1M-allocation profile at 1280×720: four series peak in the top right corner,
        // two tiny ones at the bottom (on the 0 line, one at the left, one at the right).
        let frame = Rect::from_min_max(pos2(50.0, 105.0), pos2(1256.0, 336.0));
        let spots = [
            spot(1243.0, 118.0, frame),
            spot(1244.0, 122.0, frame),
            spot(1244.0, 123.0, frame),
            spot(1243.0, 148.0, frame),
            spot(52.0, 330.0, frame),
            spot(1250.0, 331.0, frame),
        ];
        let placed = place_labels(&spots, frame);
        check(&spots, &placed, frame);
        for (i, r) in placed.iter().enumerate().take(4) {
            let r = r.unwrap_or_else(|| panic!("label {i} has room near its point"));
            assert!(
                r.max.y < 230.0,
                "label {i} {r:?} is in the lower half, its peak is at the top"
            );
        }
    }

    #[test]
    fn labels_at_one_point_stack_next_to_it() {
        let frame = Rect::from_min_max(pos2(0.0, 0.0), pos2(800.0, 300.0));
        let spots = [spot(400.0, 150.0, frame); 4];
        let placed = place_labels(&spots, frame);
        check(&spots, &placed, frame);
        assert!(placed.iter().all(Option::is_some), "{placed:?}");
    }

    #[test]
    fn a_label_without_room_near_its_point_is_left_out() {
        // A plot too small for any label.
        let frame = Rect::from_min_max(pos2(0.0, 0.0), pos2(60.0, 10.0));
        let spots = [spot(30.0, 5.0, frame)];
        assert_eq!(place_labels(&spots, frame), vec![None]);
    }

    #[test]
    fn many_points_in_a_row_never_get_a_neighbours_label() {
        let frame = Rect::from_min_max(pos2(0.0, 0.0), pos2(1000.0, 200.0));
        let spots: Vec<LabelSpot> = (0..12)
            .map(|i| spot(40.0 + 80.0 * i as f32, 100.0 + (i % 3) as f32 * 4.0, frame))
            .collect();
        let placed = place_labels(&spots, frame);
        check(&spots, &placed, frame);
    }

    #[test]
    fn an_edge_label_reads_inwards_and_stays_inside() {
        let frame = Rect::from_min_max(pos2(50.0, 100.0), pos2(1000.0, 400.0));
        for (right, y) in [(true, 20.0), (false, 500.0), (true, 250.0)] {
            let s = edge_spot(frame, right, y, SIZE);
            let placed = place_labels(&[s], frame);
            let r = placed[0].expect("room at the edge");
            assert!(frame.contains_rect(r));
        }
    }
}
