//! The source seam (`ingest::importer`), proved with a toy source written here: one module's
//! worth of code (recognise by content, list ranks, load one) is all a new kind of input needs
//! for discovery, loading and the summaries every view and the CLI are built on. The figures are
//! checked against plain arithmetic over the toy file's lines.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use memsight::ingest::importer::Importer;
use memsight::ingest::{LoadControl, LoadError, discover, discover_with, load_rank_using};
use memsight::model::{
    Component, DataSource, Format, MemoryRecords, NULL, RankData, RankInfo, SourceChoice,
};

/// `*.memlog`: a first line `# memlog v1`, then `device,alloc_ns,free_ns,bytes,name` (free 0:
/// never freed). One rank per device.
struct MemLog;

const NAME: &str = "toy-memlog";

fn rows(path: &Path) -> Vec<(String, i64, i64, i64, String)> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .skip(1)
        .filter_map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            Some((
                c.first()?.to_string(),
                c.get(1)?.parse().ok()?,
                c.get(2)?.parse().ok()?,
                c.get(3)?.parse().ok()?,
                c.get(4)?.to_string(),
            ))
        })
        .collect()
}

impl Importer for MemLog {
    fn name(&self) -> &'static str {
        NAME
    }

    fn looks_for(&self) -> &'static str {
        "*.memlog (a test's own format)"
    }

    fn wants(&self, file_name: &str) -> bool {
        file_name.ends_with(".memlog")
    }

    fn recognises(&self, _path: &Path, head: &[u8]) -> bool {
        head.starts_with(b"# memlog v1")
    }

    fn ranks(
        &self,
        path: &Path,
        _notes: &mut Vec<memsight::model::Message>,
        _control: &LoadControl,
    ) -> Vec<RankInfo> {
        let mut devices: Vec<String> = rows(path).into_iter().map(|r| r.0).collect();
        devices.sort();
        devices.dedup();
        devices
            .into_iter()
            .map(|d| {
                let mut info = RankInfo::without_files(
                    d.clone(),
                    Format::Imported(NAME),
                    path.parent().unwrap_or(Path::new("")).to_path_buf(),
                );
                info.device = Some(d.clone());
                info.source = DataSource::Imported {
                    importer: NAME,
                    path: path.to_path_buf(),
                    part: d,
                    prefetch: Default::default(),
                };
                info
            })
            .collect()
    }

    fn load(&self, info: &RankInfo, _control: &LoadControl) -> Result<RankData, LoadError> {
        let DataSource::Imported { path, part, .. } = &info.source else {
            return Err(LoadError::NoData {
                rank: info.rank.clone(),
                reason: "not mine".into(),
            });
        };
        let mut data = RankData::empty(info.clone());
        let stream = data.strings.intern("");
        let mut events: Vec<(i64, i64)> = Vec::new();
        for (dev, a, f, bytes, name) in rows(path) {
            if dev != *part {
                continue;
            }
            let name = data.strings.intern(&name);
            let free = if f == 0 { NULL } else { f };
            let dur = if f == 0 { NULL } else { f - a };
            let mut cells = [NULL; memsight::model::OP_I64_COLUMNS];
            cells[0] = bytes;
            cells[1] = a;
            cells[2] = free;
            cells[4] = dur;
            data.operators.push_row(name, stream, cells);
            events.push((a, bytes));
            if f != 0 {
                events.push((f, -bytes));
            }
        }
        events.sort();
        let mut records = MemoryRecords::default();
        let mut total = 0;
        for (t, d) in events {
            total += d;
            records.push(Component::PtaGe, t, total, total, 0, stream);
        }
        data.records = Arc::new(records);
        Ok(data)
    }
}

static TOY: MemLog = MemLog;

/// A folder with one memlog of two devices, a `.memlog` that is not one (wrong first line) and
/// an unrelated file. Returns the folder and the real memlog.
fn folder() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("job.memlog");
    std::fs::write(
        &log,
        "# memlog v1\n\
         0,100,400,1048576,aten::add\n\
         0,200,0,2097152,aten::mm\n\
         1,150,300,524288,aten::add\n\
         0,350,500,4194304,aten::bmm\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("other.memlog"), "not a memlog\n0,1,2,3,x\n").unwrap();
    std::fs::write(dir.path().join("readme.txt"), "hello").unwrap();
    (dir, log)
}

#[test]
fn a_new_source_is_one_importer_away() {
    let (dir, log) = folder();
    // Without the importer, nothing there is memory data.
    assert!(discover(dir.path()).is_err());
    // A folder with nothing any importer recognises: the message says what each looked for.
    let empty = tempfile::tempdir().unwrap();
    let said = discover_with(empty.path(), &[&TOY])
        .unwrap_err()
        .to_string();
    assert!(said.contains("*.memlog (a test's own format)"), "{said}");
    let said = discover_with(empty.path(), &[]).unwrap_err().to_string();
    assert!(!said.contains("memlog"), "{said}");
    // With it: a rank per device of the file it recognises by content; the look-alike is not.
    let profile = discover_with(dir.path(), &[&TOY]).expect("the toy ranks");
    let ranks: Vec<(&str, &str)> = profile
        .ranks
        .iter()
        .map(|r| (r.rank.as_str(), r.source.kind()))
        .collect();
    assert_eq!(ranks, [("0", NAME), ("1", NAME)]);
    assert_eq!(profile.ranks[0].format.as_str(), NAME);
    // The file given alone finds the same ranks.
    assert_eq!(discover_with(&log, &[&TOY]).unwrap().ranks.len(), 2);

    // Loading device 0: its rows, and the curve's peak by plain arithmetic over the lines.
    let info = &profile.ranks[0];
    let data = load_rank_using(info, &LoadControl::new(), &mut |_| {}, &[&TOY]).unwrap();
    assert_eq!(data.operators.len(), 3);
    let mut events = vec![(100, 1), (400, -1), (200, 2), (350, 4), (500, -4)];
    events.sort();
    let (mut total, mut peak) = (0i64, 0i64);
    for (_, mib) in events {
        total += mib;
        peak = peak.max(total);
    }
    assert_eq!(peak, 7, "1 + 2 + 4 MiB live at 350 ns");
    let summary = memsight::export::summarize(&data);
    let got = summary.peaks.operator_allocated.expect("a peak").mib;
    assert!((got - peak as f64).abs() < 1e-9, "{got}");
    assert_eq!(summary.source, NAME);
    assert_eq!(data.time_origin_ns, 100, "the earliest time");
    // The Data switch leaves an imported rank as it is.
    assert!(info.with_source(SourceChoice::Csv).is_none());
    let auto = info.with_source(SourceChoice::Auto).expect("itself");
    assert_eq!(auto.source, info.source);

    // A rank naming an importer that is not there is an error, not a panic.
    assert!(matches!(
        load_rank_using(info, &LoadControl::new(), &mut |_| {}, &[]),
        Err(LoadError::NoData { .. })
    ));
}
