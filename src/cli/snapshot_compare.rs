//! `memsight compare A.pickle B.pickle`: two allocator snapshots, each at its peak (or its end,
//! or a chosen event): the Δ of reserved, allocated and the memory not handed out by cause, and
//! which stacks (by the user's frame), block sizes and pools grew or shrank.

use std::io::Write;
use std::path::Path;

use super::compare::CompareArgs;
use crate::model::{Lang, bytes_to_mib};
use crate::snapshot::AllocatorSnapshot;
use crate::snapshot::compare::{Change, Moment, Side, SnapshotComparison, compare_snapshots};

/// Runs the comparison of two snapshot files and writes it.
pub fn run(a: &Path, b: &Path, args: &CompareArgs, out: &mut dyn Write) -> Result<(), String> {
    let open = |p: &Path| AllocatorSnapshot::open(p).map_err(|e| format!("{}: {e}", p.display()));
    let (sa, sb) = (open(a)?, open(b)?);
    let c = compare_snapshots((&sa, args.device, args.at_a), (&sb, args.device, args.at_b))
        .map_err(|e| e.to_string())?;
    let text = if args.json {
        let v = c.to_json(&a.display().to_string(), &b.display().to_string());
        format!(
            "{}\n",
            serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?
        )
    } else {
        let label = |s: &AllocatorSnapshot, side: &Side| s.backend.device_label(side.device);
        comparison_text(
            &c,
            [
                (a.display().to_string(), label(&sa, &c.a)),
                (b.display().to_string(), label(&sb, &c.b)),
            ],
            args.top,
        )
    };
    out.write_all(text.as_bytes()).map_err(|e| e.to_string())
}

/// MB with two decimals.
fn mb(b: i64) -> String {
    format!("{:.2}", bytes_to_mib(b))
}

/// A block size: bytes below a MB, MB above.
fn size(b: i64) -> String {
    if b.abs() < 1 << 20 {
        format!("{b} B")
    } else {
        format!("{} MB", mb(b))
    }
}

/// A signed change in MB.
fn signed_mb(b: i64) -> String {
    format!("{:+.2}", bytes_to_mib(b))
}

/// Where a side was read, in words.
fn when(side: &Side) -> String {
    match (side.moment, side.event) {
        (Moment::Peak, Some(k)) => format!("at its allocated peak (event {k})"),
        (_, Some(k)) => format!("after event {k}"),
        (_, None) => "at its end".to_string(),
    }
}

/// The text output: each side, the figures with their Δ, then the groups that changed most.
/// `files` is each side's (path, device label).
pub fn comparison_text(c: &SnapshotComparison, files: [(String, String); 2], top: usize) -> String {
    let mut text = String::new();
    for ((name, (path, device)), side) in ["A", "B"].iter().zip(&files).zip([&c.a, &c.b]) {
        text.push_str(&format!("{name}: {path}  {device} {}\n", when(side)));
    }
    if let Some(note) = c.devices_note() {
        text.push_str(&format!("note: {note}\n"));
    }
    text.push('\n');
    let mut rows = vec![
        row(
            "reserved",
            c.a.fragmentation.reserved_bytes,
            c.b.fragmentation.reserved_bytes,
        ),
        row(
            "allocated",
            c.a.fragmentation.allocated_bytes,
            c.b.fragmentation.allocated_bytes,
        ),
        row("not handed out", c.a.not_handed_out(), c.b.not_handed_out()),
    ];
    for (cause, _) in c.cause_deltas() {
        let (x, y) = (c.a.cause_bytes(cause), c.b.cause_bytes(cause));
        if x != 0 || y != 0 {
            rows.push(row(&format!("  {}", cause.as_str()), x, y));
        }
    }
    rows.push(row(
        "largest request that fits",
        c.a.fragmentation.largest_possible_bytes,
        c.b.fragmentation.largest_possible_bytes,
    ));
    text.push_str(&super::text_table(
        &["", "A(MB)", "B(MB)", "Delta(MB)"],
        &rows,
    ));
    for (title, fix) in [
        ("A", c.a.fragmentation.fix(Lang::En)),
        ("B", c.b.fragmentation.fix(Lang::En)),
    ] {
        if !fix.is_empty() {
            text.push_str(&format!("{title}: closes its largest cause: {fix}\n"));
        }
    }
    let frame = |f: &Option<crate::snapshot::Frame>| {
        f.as_ref()
            .map_or_else(|| "(no stack)".to_string(), crate::snapshot::Frame::text)
    };
    group_table(
        &mut text,
        "stacks that grew or shrank (by the user's frame)",
        "Frame",
        &c.stacks,
        frame,
        top,
    );
    group_table(
        &mut text,
        "block sizes that grew or shrank",
        "Size",
        &c.sizes,
        |&s| size(s),
        top,
    );
    text.push_str("\nmemory pools (segment_pool_id; 0,0 is the allocator's own)\n");
    let pools: Vec<Vec<String>> = c
        .pools
        .iter()
        .take(top)
        .map(|p| {
            vec![
                format!("{},{}", p.pool.0, p.pool.1),
                mb(p.a_reserved),
                mb(p.b_reserved),
                signed_mb(p.delta_reserved()),
                mb(p.a_allocated),
                mb(p.b_allocated),
                signed_mb(p.delta_allocated()),
            ]
        })
        .collect();
    text.push_str(&super::text_table(
        &[
            "Pool",
            "A reserved(MB)",
            "B reserved(MB)",
            "Delta(MB)",
            "A allocated(MB)",
            "B allocated(MB)",
            "Delta(MB)",
        ],
        &pools,
    ));
    text
}

/// One figure's row: A, B and B − A, MB.
fn row(label: &str, a: i64, b: i64) -> Vec<String> {
    vec![
        label.to_string(),
        mb(a),
        mb(b),
        signed_mb(b.saturating_sub(a)),
    ]
}

/// A titled table of the groups that changed, the largest change first (the first `top`).
fn group_table<K>(
    text: &mut String,
    title: &str,
    key_header: &str,
    changes: &[Change<K>],
    key: impl Fn(&K) -> String,
    top: usize,
) {
    text.push_str(&format!("\n{title}, largest change first\n"));
    if changes.is_empty() {
        text.push_str("  none\n");
        return;
    }
    let rows: Vec<Vec<String>> = changes
        .iter()
        .take(top)
        .map(|c| {
            vec![
                key(&c.key),
                mb(c.a_bytes),
                mb(c.b_bytes),
                signed_mb(c.delta()),
                c.a_blocks.to_string(),
                c.b_blocks.to_string(),
            ]
        })
        .collect();
    text.push_str(&super::text_table(
        &[
            key_header,
            "A(MB)",
            "B(MB)",
            "Delta(MB)",
            "A blocks",
            "B blocks",
        ],
        &rows,
    ));
    if changes.len() > top {
        text.push_str(&format!("  … and {} more\n", changes.len() - top));
    }
}
