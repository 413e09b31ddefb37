//! Every string the app shows, in English and in Simplified Chinese: one catalogue (the
//! `catalogue!` macro below) in which each key has both languages side by side, giving the type
//! [`Tr`] and its two instances (a missing translation does not build). The CLI stays
//! English. Data names stay as the files spell them in both languages: column headers (they are
//! the CSV's columns and what Copy pastes), curve names and Group By modes (Insight's terms).

use crate::model::plural;
use crate::model::{Cause, Lang as L};

/// Why a summary file could not be read, in Chinese (SQLite's and the OS's words said by their
/// kind, see [`Cause`]).
fn zh_summary_error(e: &crate::export::cluster_db::SummaryError) -> String {
    use crate::export::cluster_db::{NotSummaryWhy, SummaryError};
    match e {
        SummaryError::NotASummary { path, why } => {
            let why = match why {
                NotSummaryWhy::Folder => {
                    "这是一个文件夹，不是汇总文件（汇总文件是 `memsight summarize` 写出的 .db）"
                        .to_string()
                }
                NotSummaryWhy::Unopenable {
                    cause,
                    exists: true,
                } => {
                    format!("不是 memsight 汇总文件：{}", cause.render(L::Zh))
                }
                NotSummaryWhy::Unopenable {
                    cause,
                    exists: false,
                } => cause.render(L::Zh),
                NotSummaryWhy::NotMemsight => {
                    "不是 memsight 汇总文件（用 `memsight summarize PATH --out FILE.db` 生成）"
                        .to_string()
                }
                NotSummaryWhy::Schema { found, reads } => {
                    format!("汇总文件的结构版本为 {found}；此版本的 memsight 读取版本 {reads}")
                }
            };
            format!("{path}：{why}")
        }
        SummaryError::Sqlite { path, source } => {
            let cause = Cause {
                en: source.to_string(),
                path: None,
                kind: crate::ingest::sqlite_kind(source),
            };
            format!("{path}：{}", cause.render(L::Zh))
        }
        SummaryError::Io { path, source } => {
            let cause = Cause::io(source.to_string(), None, source);
            format!("{path}：{}", cause.render(L::Zh))
        }
    }
}

fn zh_load_error(e: &crate::ingest::LoadError) -> String {
    use crate::ingest::{LoadError, NoDataReason};
    match e {
        LoadError::Cancelled => "加载已取消。".into(),
        LoadError::NoData { rank, reason } => {
            let why = match reason {
                NoDataReason::NoDataRows { files } => format!("{files}：没有数据行"),
                NoDataReason::Unreadable { errors } => {
                    let said: Vec<String> = errors.iter().map(|c| c.render(L::Zh)).collect();
                    format!("无法读取：{}", said.join("；"))
                }
                NoDataReason::NoRows => "没有 memory_record 或 operator_memory 数据行".into(),
                NoDataReason::DbFailed { path, cause } => {
                    format!("{path}：无法读取（{}）", cause.render(L::Zh))
                }
                NoDataReason::NoImporter { name } => format!("没有名为 {name} 的读取器"),
                NoDataReason::MemScope(p) => p.render(L::Zh),
                NoDataReason::Other(t) => t.clone(),
            };
            format!("rank {rank}：{why}")
        }
    }
}

/// Why a snapshot could not be read, in Chinese (the OS's own words stay as it says them).
fn zh_snapshot_error(p: &crate::snapshot::SnapshotProblem) -> String {
    use crate::snapshot::SnapshotError;
    match p {
        crate::snapshot::SnapshotProblem::Read(e) => match e {
            SnapshotError::Io { path, source } => format!("无法读取 {path}：{source}"),
            SnapshotError::Pickle { path, source } => {
                let what = if source.truncated {
                    "文件在一条指令中途结束（文件被截断？）".to_string()
                } else {
                    source.msg.clone()
                };
                format!(
                    "{path}：不是可读取的 pickle（第 {} 字节：{what}）",
                    source.at
                )
            }
            SnapshotError::NotAPickle { path, what } => {
                format!(
                    "{path}：不是内存快照：该文件是{}，不是 pickle",
                    zh_file_kind(*what)
                )
            }
            SnapshotError::Repeated {
                path,
                built,
                objects,
            } => format!(
                "{path}：快照通过引用重复同一批块或事件（{built} 个块、事件和段，只有 {objects} 个对象；PyTorch 从不这样写），已拒绝展开"
            ),
            SnapshotError::NotASnapshot { path } => {
                format!("{path}：不是内存快照（没有 'segments' 或 'device_traces'）")
            }
            SnapshotError::TooLarge { path, source } => {
                format!("{path}：{}", source.render(L::Zh))
            }
        },
        crate::snapshot::SnapshotProblem::Task(e) => format!("读取时出错：{e}"),
    }
}

/// What a file that is not a pickle looks like, in Chinese.
fn zh_file_kind(what: crate::snapshot::model::FileKind) -> &'static str {
    use crate::snapshot::model::FileKind;
    match what {
        FileKind::Empty => "空文件",
        FileKind::Gzip => " gzip 压缩文件（请先解压）",
        FileKind::Zip => " zip 压缩包",
        FileKind::Sqlite => " SQLite 数据库",
        FileKind::Json => " JSON 文件",
        FileKind::Text => " CSV 或文本文件",
    }
}

pub use crate::model::Lang;

impl Lang {
    /// The system's language: `LC_ALL`, `LC_MESSAGES`, `LANG` (in that order, as POSIX reads
    /// them), else the OS setting (Windows, macOS).
    pub fn system() -> Lang {
        Lang::from_env()
            .unwrap_or_else(|| sys_locale::get_locale().map_or(Lang::En, |l| Lang::from_locale(&l)))
    }

    /// Its strings.
    pub fn tr(self) -> &'static Tr {
        match self {
            Lang::En => &EN,
            Lang::Zh => &ZH,
        }
    }
}

/// A text written once in both languages, side by side, kept with what it names (a job
/// kind's task, …) rather than in [`Tr`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Text {
    /// English.
    pub en: &'static str,
    /// 简体中文.
    pub zh: &'static str,
}

impl Text {
    /// The text in `t`'s language.
    pub fn get(&self, t: &Tr) -> &'static str {
        match t.lang {
            Lang::En => self.en,
            Lang::Zh => self.zh,
        }
    }
}

/// One line on what a curve of the Overall view means (from torch_npu's and CANN's documentation
/// of these files), by its legend name.
/// The English noun for a count written as text (`1` takes the singular; `1,024`, `0` and `2`
/// the plural).
fn noun(n: &str, one: &'static str, many: &'static str) -> &'static str {
    if n.trim() == "1" { one } else { many }
}

/// `n` with its noun (`1 rank`, `3 ranks`): [`plural::count`] for a `usize`.
fn counted(n: usize, one: &'static str, many: &'static str) -> String {
    plural::count(n as u64, one, many)
}

fn curve_help_en(name: &str) -> Option<&'static str> {
    Some(match name {
        "Operator Allocated" => {
            "Memory held by tensors: the PyTorch (or MindSpore) allocator's allocated total"
        }
        "Operator Reserved" => {
            "Memory the allocator has taken from the device: allocated plus its cache"
        }
        "Operator Activated" => {
            "Memory requested by streams, including freed memory still held for reuse by other streams"
        }
        "APP Reserved" => {
            "All device memory of the process: framework, CANN runtime, HCCL, workspace"
        }
        "Workspace Allocated" => "Operator workspace memory in use (CANN)",
        "Workspace Reserved" => "Operator workspace memory held by its allocator (CANN)",
        "Device" => "The whole device's memory in use, every process's (the card's own counter)",
        _ => return None,
    })
}

fn curve_help_zh(name: &str) -> Option<&'static str> {
    Some(match name {
        "Operator Allocated" => "张量占用的内存：PyTorch（或 MindSpore）内存分配器的已分配总量",
        "Operator Reserved" => "分配器从设备申请的内存：已分配加缓存",
        "Operator Activated" => "各流申请的内存，包括已释放但仍被其他流复用的内存",
        "APP Reserved" => "进程占用的全部设备内存：框架、CANN 运行时、HCCL、workspace",
        "Workspace Allocated" => "算子 workspace 正在使用的内存（CANN）",
        "Workspace Reserved" => "算子 workspace 分配器持有的内存（CANN）",
        "Device" => "整个设备正在使用的内存，包括所有进程（设备自身的计数）",
        _ => return None,
    })
}

/// Declares [`Tr`] and its two instances, [`EN`] and [`ZH`], from one list in which each key
/// has its doc, its type and both languages side by side:
///
/// ```text
/// /// What the text is for.
/// key: Type;
///     en: English;
///     zh: 简体中文;
/// ```
///
/// A key missing a language does not match the macro, so it does not build.
macro_rules! catalogue {
    ($($(#[$doc:meta])* $key:ident: $ty:ty; en: $en:expr; zh: $zh:expr;)*) => {
        /// The strings of one language. `fn` fields format a message with its values (already
        /// formatted for reading).
        #[allow(missing_docs)] // a key without a doc is the text it names
        pub struct Tr {
            /// Which language these are.
            pub lang: Lang,
            $($(#[$doc])* pub $key: $ty,)*
        }

        /// English.
        pub static EN: Tr = Tr {
            lang: Lang::En,
            $($key: $en,)*
        };

        /// 简体中文.
        pub static ZH: Tr = Tr {
            lang: Lang::Zh,
            $($key: $zh,)*
        };
    };
}

catalogue! {
    /// Cluster summary: heading (file, ranks, hosts).
    summary_title: fn(&str, usize, usize) -> String;
        en: |file, n, hosts| {
            format!(
                "Cluster summary {file}: {} on {}",
                counted(n, "rank", "ranks"),
                counted(hosts, "host", "hosts")
            )
        };
        zh: |file, n, hosts| format!("集群汇总 {file}：{hosts} 台主机上的 {n} 个 rank");
    /// Cluster summary: how long reading took (seconds).
    summary_read_in: fn(&str) -> String;
        en: |s| format!("read in {s} s");
        zh: |s| format!("读取用时 {s} 秒");
    /// Cluster summary: being read (file).
    summary_reading: fn(&str) -> String;
        en: |file| format!("Reading {file}…");
        zh: |file| format!("正在读取 {file}…");
    /// Cluster summary: the compare button.
    summary_compare: &'static str;
        en: "Compare with summary…";
        zh: "与另一汇总对比…";
    /// Its tooltip.
    summary_compare_hover: &'static str;
        en: "Pick another summary (before a change): each rank's peak against the same rank's there";
        zh: "选择另一个汇总（改动之前的）：逐 rank 对比峰值";
    /// Stop comparing summaries.
    summary_stop_compare: &'static str;
        en: "Stop comparing";
        zh: "停止对比";
    /// Copy's tooltip in a summary.
    summary_copy_hover: &'static str;
        en: "The shown rows, in the table's order, as TSV (pastes into Excel)";
        zh: "按表格当前顺序，以 TSV 复制显示的行（可粘贴到 Excel）";
    /// The baseline summary could not be read (why).
    summary_baseline_error: fn(&str) -> String;
        en: |e| format!("Could not read the summary to compare with: {e}");
        zh: |e| format!("无法读取用于对比的汇总：{e}");
    /// Why a summary file could not be read (the CLI's words in English).
    summary_error: fn(&crate::export::cluster_db::SummaryError) -> String;
        en: |e| e.to_string();
        zh: zh_summary_error;
    summary_read_cancelled: &'static str;
        en: "Reading the summary was cancelled.";
        zh: "已取消读取汇总。";
    /// Comparison line (file, matched, ranks, max before, max now).
    summary_compared: fn(&str, usize, usize, &str, &str) -> String;
        en: |file, matched, n, before, now| {
            format!(
                "Compared with {file}: {matched} of {} matched (same rank and device) · highest peak {before} → {now} MB",
                counted(n, "rank", "ranks")
            )
        };
        zh: |file, matched, n, before, now| {
            format!(
                "与 {file} 对比：{n} 个 rank 中 {matched} 个匹配（同 rank 同设备）· 最高峰值 {before} → {now} MB"
            )
        };
    /// Ranks recorded with an error.
    summary_failed: fn(usize) -> String;
        en: |n| {
            if n == 1 {
                "⚠ 1 rank could not be summarised (its Folder cell says why).".into()
            } else {
                format!("⚠ {n} ranks could not be summarised (their Folder cells say why).")
            }
        };
        zh: |n| format!("⚠ {n} 个 rank 未能汇总（原因见“文件夹”列）。");
    /// The merge notes' header (count).
    summary_notes: fn(usize) -> String;
        en: |n| format!("Merge notes ({n})");
        zh: |n| format!("合并说明（{n}）");
    /// "+N more" after a list of ranks.
    summary_more: fn(usize) -> String;
        en: |n| format!("+{n} more");
        zh: |n| format!("另有 {n} 个");
    /// The worst step (step, max MB, rank, median MB, ranks).
    summary_worst_step: fn(i64, &str, &str, &str, usize) -> String;
        en: |step, max, rank, median, ranks| {
            format!(
                "Worst step: {step}, peak {max} MB on rank {rank} (median of {}: {median} MB)",
                counted(ranks, "rank", "ranks")
            )
        };
        zh: |step, max, rank, median, ranks| {
            format!(
                "最差的迭代：{step}，rank {rank} 峰值 {max} MB（{ranks} 个 rank 的中位数：{median} MB）"
            )
        };
    /// No rank grows step after step.
    summary_no_leaks: &'static str;
        en: "No rank's memory grows step after step (3 rises of 1 MB or more in a row, kept to the end).";
        zh: "没有 rank 的内存逐迭代增长（连续 3 次上升且每次不少于 1 MB，并保持到最后）。";
    /// Ranks growing step after step (count, list).
    summary_leaks: fn(usize, &str) -> String;
        en: |n, list| {
            format!(
                "⚠ {} step after step: {list}",
                if n == 1 {
                    "1 rank grows".to_string()
                } else {
                    format!("{n} ranks grow")
                }
            )
        };
        zh: |n, list| format!("⚠ {n} 个 rank 的内存逐迭代增长：{list}");
    /// What counts as growing step after step (the leak line's tooltip).
    summary_leaks_rule: &'static str;
        en: "3 or more rises of 1 MB or more in a row, kept to the end; the growth is counted from the first step's end.";
        zh: "连续 3 次以上上升且每次不少于 1 MB，并保持到最后；增长量自第一个迭代结束时起计算。";
    /// The other summary's values, in legends.
    summary_before_series: &'static str;
        en: "before";
        zh: "对比基准";
    /// No step boundaries in the summary.
    summary_no_steps: &'static str;
        en: "No step boundaries in these ranks.";
        zh: "这些 rank 没有迭代边界。";
    /// The step plot's lines: highest, median, lowest.
    summary_step_lines: [&'static str; 3];
        en: ["Highest rank", "Median", "Lowest rank"];
        zh: ["最高 rank", "中位数", "最低 rank"];
    /// The step plot's x axis.
    summary_step_axis: &'static str;
        en: "Step";
        zh: "迭代";
    /// The curve plot's x axis.
    summary_time_axis: &'static str;
        en: "Time (ms)";
        zh: "时间 (ms)";
    /// The host filter's label.
    summary_host_filter: &'static str;
        en: "Host:";
        zh: "主机：";
    /// Its hint.
    summary_host_hint: &'static str;
        en: "part of a host name";
        zh: "主机名的一部分";
    /// The host filter matches whole host names only.
    summary_host_exact: &'static str;
        en: "Whole name";
        zh: "完整名称";
    /// What the whole-name check does.
    summary_host_exact_hover: &'static str;
        en: "Match whole host names only: node7 then matches node7, not node70–node79.";
        zh: "只匹配完整的主机名：node7 只匹配 node7，不匹配 node70–node79。";
    /// The copy's column of the top operator's size, after its name.
    summary_top_operator_mb: &'static str;
        en: "Top operator(MB)";
        zh: "占用最多的算子(MB)";
    /// Ranks shown of all.
    summary_shown: fn(usize, usize) -> String;
        en: |shown, n| format!("{shown} of {}", counted(n, "rank", "ranks"));
        zh: |shown, n| format!("显示 {shown}/{n} 个 rank");
    /// A summary table's column header.
    summary_header: fn(crate::model::cluster::SummaryColumn) -> &'static str;
        en: |c| {
            use crate::model::cluster::SummaryColumn as C;
            match c {
                C::Rank => "Rank",
                C::Host => "Host",
                C::Device => "Device",
                C::PeakAllocated => "Peak Allocated(MB)",
                C::PeakAt => "Peak at(ms)",
                C::PeakReserved => "Peak Reserved(MB)",
                C::Steps => "Steps",
                C::Growth => "Growth over steps(MB)",
                C::TopOperator => "Top operator at peak",
                C::Before => "Before(MB)",
                C::Delta => "Δ(MB)",
                C::Folder => "Folder",
            }
        };
        zh: |c| {
            use crate::model::cluster::SummaryColumn as C;
            match c {
                C::Rank => "Rank",
                C::Host => "主机",
                C::Device => "设备",
                C::PeakAllocated => "峰值 Allocated(MB)",
                C::PeakAt => "峰值时刻(ms)",
                C::PeakReserved => "峰值 Reserved(MB)",
                C::Steps => "迭代数",
                C::Growth => "逐迭代增长(MB)",
                C::TopOperator => "峰值时占用最多的算子",
                C::Before => "对比基准(MB)",
                C::Delta => "Δ(MB)",
                C::Folder => "文件夹",
            }
        };
    /// The folder link's tooltip.
    summary_open_hover: &'static str;
        en: "Open this rank's folder";
        zh: "打开此 rank 的文件夹";
    /// How to see a rank's curve.
    summary_curve_hint: &'static str;
        en: "Hover a bar or a row to see that rank; click to pin it.";
        zh: "鼠标悬停在柱或行上查看该 rank；单击可固定。";
    /// The curve's title (rank, host).
    summary_curve_title: fn(&str, &str) -> String;
        en: |rank, host| format!("Rank {rank} on {host}: min–max per bucket");
        zh: |rank, host| format!("{host} 上的 rank {rank}：每段的最小–最大值");
    /// Unpin the rank.
    summary_unpin: &'static str;
        en: "Unpin";
        zh: "取消固定";
    /// A rank's folder is not here (rank, path, host).
    summary_unreachable: fn(&str, &str, &str, Option<&str>) -> String;
        en: |rank, path, host, machine| {
            let by = machine.map_or(String::new(), |m| format!("; summarised on {m}"));
            format!(
                "Rank {rank}'s folder {path} is not on this machine (the rank ran on {host}{by}). Mount or copy that folder, then open it."
            )
        };
        zh: |rank, path, host, machine| {
            let by = machine.map_or(String::new(), |m| format!("；在 {m} 上汇总"));
            format!(
                "rank {rank} 的文件夹 {path} 不在本机（该 rank 运行于 {host}{by}）。请挂载或复制该文件夹后再打开。"
            )
        };
    /// The rank has no curve in the summary.
    summary_no_curve: &'static str;
        en: "This rank has no curve in the summary.";
        zh: "汇总中没有此 rank 的曲线。";
    // Menus.
    file: &'static str;
        en: "File";
        zh: "文件";
    open_folder_menu: &'static str;
        en: "Open folder…  (Ctrl+O)";
        zh: "打开文件夹…  (Ctrl+O)";
    open_folder: &'static str;
        en: "Open folder…";
        zh: "打开文件夹…";
    open_db: &'static str;
        en: "Open file (.db, .json, .csv, .pickle)…";
        zh: "打开文件 (.db, .json, .csv, .pickle)…";
    recent: &'static str;
        en: "Recent folders";
        zh: "最近打开";
    none_yet: &'static str;
        en: "(none yet)";
        zh: "（暂无）";
    quit: &'static str;
        en: "Quit";
        zh: "退出";
    view: &'static str;
        en: "View";
        zh: "视图";
    language: &'static str;
        en: "Language";
        zh: "语言";
    theme: &'static str;
        en: "Theme";
        zh: "主题";
    theme_system: &'static str;
        en: "System";
        zh: "跟随系统";
    theme_light: &'static str;
        en: "Light";
        zh: "浅色";
    theme_dark: &'static str;
        en: "Dark";
        zh: "深色";
    help: &'static str;
        en: "Help";
        zh: "帮助";
    shortcuts_menu: &'static str;
        en: "Keyboard and mouse  (F1)";
        zh: "键盘与鼠标  (F1)";
    shortcuts_title: &'static str;
        en: "Keyboard and mouse";
        zh: "键盘与鼠标";
    shortcuts: &'static [(&'static str, &'static str)];
        en: &[
            ("Ctrl+O", "Open a folder"),
            ("Ctrl+L", "Type or paste a path to open"),
            ("Drag a folder onto the window", "Open it"),
            ("Drag on the chart", "Zoom to the box"),
            ("Mouse wheel on the chart", "Zoom around the pointer"),
            (
                "+ / − / 0",
                "Zoom the chart in, out, back to the whole rank",
            ),
            ("Right-drag, Shift+wheel", "Pan"),
            (
                "Click on the chart",
                "Live at cursor (snaps to a peak nearby)",
            ),
            ("Double-click on the chart, Esc", "Show the whole rank"),
            ("Click a legend entry", "Hide or show the curve"),
            (
                "Click a row",
                "Select it alone; Ctrl+click adds or removes it; Shift+click selects a range",
            ),
            ("Ctrl+A", "Select every row of the page"),
            ("Ctrl+C", "Copy the selected rows (or the page) as TSV"),
            ("← / →", "Previous / next page"),
            ("Alt+←", "Back to the summary or snapshot shown before"),
            ("F1", "This help"),
        ];
        zh: &[
            ("Ctrl+O", "打开文件夹"),
            ("Ctrl+L", "输入或粘贴要打开的路径"),
            ("把文件夹拖到窗口上", "打开它"),
            ("在图上拖动", "框选放大"),
            ("在图上滚动滚轮", "以指针为中心缩放"),
            ("+ / − / 0", "放大、缩小图表，或显示整个 rank"),
            ("右键拖动、Shift+滚轮", "平移"),
            ("单击图表", "查看光标处存活内存（靠近峰值时吸附到峰值）"),
            ("双击图表、Esc", "显示整个 rank"),
            ("单击图例", "隐藏或显示曲线"),
            (
                "单击行",
                "只选中该行；Ctrl+单击添加或取消；Shift+单击选中一段",
            ),
            ("Ctrl+A", "选中本页所有行"),
            ("Ctrl+C", "以 TSV 复制选中的行（或本页）"),
            ("← / →", "上一页 / 下一页"),
            ("Alt+←", "返回之前的汇总或快照"),
            ("F1", "本帮助"),
        ];
    /// The menu bar's way back to the document shown before (its file name).
    back_to: fn(&str) -> String;
        en: |name| format!("← Back to {name}");
        zh: |name| format!("← 返回 {name}");
    save_chart: &'static str;
        en: "Save chart as PNG…";
        zh: "将图表另存为 PNG…";
    saved_chart: fn(&str) -> String;
        en: |p| format!("saved the chart to {p}");
        zh: |p| format!("图表已保存到 {p}");
    /// The chart report's legend line: (curve, its peak in the window, when).
    report_peak: fn(&str, &str, &str) -> String;
        en: |name, peak, at| format!("{name} — peak {peak} at {at}");
        zh: |name, peak, at| format!("{name} — 峰值 {peak}，于 {at}");
    /// The chart report's first caption line: (profile, rank, host or "").
    report_title: fn(&str, &str, &str) -> String;
        en: |profile, rank, host| {
            if host.is_empty() {
                format!("{profile} · rank {rank}")
            } else {
                format!("{profile} · rank {rank} ({host})")
            }
        };
        zh: |profile, rank, host| {
            if host.is_empty() {
                format!("{profile} · rank {rank}")
            } else {
                format!("{profile} · rank {rank} ({host})")
            }
        };
    /// The chart report's window: (from, to); the whole rank.
    report_window: fn(&str, &str) -> String;
        en: |a, b| format!("window {a} – {b}");
        zh: |a, b| format!("时间窗口 {a} – {b}");
    /// See `report_window`.
    report_whole: &'static str;
        en: "the whole rank";
        zh: "整个 rank";
    cannot_save_chart: fn(&str) -> String;
        en: |e| format!("cannot save the chart: {e}");
        zh: |e| format!("无法保存图表：{e}");
    path: &'static str;
        en: "Path";
        zh: "路径";
    /// View ▸ reopen the last profile at start.
    reopen_last: &'static str;
        en: "Reopen the last profile at start";
        zh: "启动时重新打开上次的数据";
    /// Above the demo: what it is.
    demo_banner: &'static str;
        en: "This is a generated demo profile, not your data. Open your own:";
        zh: "这是生成的演示数据，不是你的数据。打开你自己的数据：";
    /// The last profile opened is no longer there (the demo opened instead).
    last_path_gone: fn(&str) -> String;
        en: |p| format!("The last profile opened, {p}, is no longer there.");
        zh: |p| format!("上次打开的数据 {p} 已不存在。");
    /// After the demo banner's buttons.
    demo_drop_hint: &'static str;
        en: "or drag a profiling folder onto the window.";
        zh: "或把性能数据文件夹拖到窗口上。";
    /// File ▸ Open path… (the menu entry).
    open_path_menu: &'static str;
        en: "Open path…  (Ctrl+L)";
        zh: "打开路径…  (Ctrl+L)";
    /// The Open path dialog's title.
    open_path_title: &'static str;
        en: "Open a path";
        zh: "打开路径";
    /// Under the path field in the dialog.
    path_dialog_hint: &'static str;
        en: "A profiling folder, a cluster folder, a .db file or an allocator snapshot (.pickle); Enter opens it.";
        zh: "性能数据文件夹、集群文件夹、.db 文件或分配器快照（.pickle）；按回车打开。";
    path_hint: &'static str;
        en: "type or paste a folder or .db path";
        zh: "输入或粘贴文件夹或 .db 路径";
    open: &'static str;
        en: "Open";
        zh: "打开";
    no_such_path: fn(&str) -> String;
        en: |p| format!("No such file or folder: {p}");
        zh: |p| format!("文件或文件夹不存在：{p}");
    dialog_folder: &'static str;
        en: "Open profiling folder";
        zh: "打开性能数据文件夹";
    dialog_db: &'static str;
        en: "Open a profiler DB or an allocator snapshot (.db, .pickle)";
        zh: "打开性能数据库或内存快照（.db、.pickle）";
    dialog_save: &'static str;
        en: "Export CSV";
        zh: "导出 CSV";
    dialog_save_button: &'static str;
        en: "Save";
        zh: "保存";
    browser_file: &'static str;
        en: "File:";
        zh: "文件：";
    browser_hidden: &'static str;
        en: "Show hidden";
        zh: "显示隐藏文件";
    browser_parent: &'static str;
        en: "Parent folder";
        zh: "上一级文件夹";
    browser_refresh: &'static str;
        en: "Refresh";
        zh: "刷新";
    cancel: &'static str;
        en: "Cancel";
        zh: "取消";
    no_cjk_font: &'static str;
        en: "No Chinese font on this system: the UI uses its bundled glyphs, and rarer characters in data names may show as boxes. Install Noto Sans CJK or WenQuanYi, or set MEMSIGHT_CJK_FONT to a font file.";
        zh: "系统中未找到中文字体：界面使用内置字形，数据名称中的生僻字可能显示为方框。请安装 Noto Sans CJK 或文泉驿字体，或将 MEMSIGHT_CJK_FONT 设为字体文件路径。";
    // Parameter bar and start page.
    host_name: &'static str;
        en: "Host Name";
        zh: "主机名";
    all_hosts: &'static str;
        en: "All hosts";
        zh: "全部主机";
    rank_id: &'static str;
        en: "Rank ID";
        zh: "Rank 编号";
    group_by: &'static str;
        en: "Group By";
        zh: "分组方式";
    /// The Group By choices: Overall, Stream, Component.
    group_names: [&'static str; 3];
        en: ["Overall", "Stream", "Component"];
        zh: ["总体", "按流 (Stream)", "按组件 (Component)"];
    /// The details table's Role column header and filter label.
    role_header: &'static str;
        en: "Role";
        zh: "角色";
    /// The details table's Module column header and filter label.
    module_header: &'static str;
        en: "Module";
        zh: "模块";
    static_graph: &'static str;
        en: "Static graph";
        zh: "静态图";
    graph_id: &'static str;
        en: "Graph ID";
        zh: "图 ID";
    warnings: fn(usize) -> String;
        en: |n| format!("⚠ {n} {}", if n == 1 { "warning" } else { "warnings" });
        zh: |n| format!("⚠ {n} 条警告");
    /// The parameter bar's button when there are notes but no warnings.
    notes: fn(usize) -> String;
        en: |n| format!("ℹ {n} {}", if n == 1 { "note" } else { "notes" });
        zh: |n| format!("ℹ {n} 条说明");
    no_profile: &'static str;
        en: "No profile open: use File, Open folder… or drop a folder here.";
        zh: "未打开数据：请使用“文件”菜单中的“打开文件夹…”，或把文件夹拖到这里。";
    loading: &'static str;
        en: "Loading…";
        zh: "正在加载…";
    nothing_to_show: &'static str;
        en: "Nothing to show";
        zh: "没有可显示的内容";
    welcome: &'static str;
        en: "Open a profiling folder (*_ascend_pt, *_ascend_ms, PROF_*, a cluster folder) or an ascend_pytorch_profiler*.db.";
        zh: "打开性能数据文件夹（*_ascend_pt、*_ascend_ms、PROF_*、集群文件夹）或 ascend_pytorch_profiler*.db。";
    loading_progress: fn(&str, u64, u64, u64, u64) -> String;
        en: |what, files, done, total, rate| {
            format!(
                "loading {what}: {}, {done} of {total} MB, {rate} MB/s",
                plural::count(files, "file", "files")
            )
        };
        zh: |what, files, done, total, rate| {
            format!("正在加载 {what}：{files} 个文件，{done} / {total} MB，{rate} MB/s")
        };
    load_cancelled: &'static str;
        en: "Loading was cancelled.";
        zh: "加载已取消。";
    /// Load again, after a cancelled or failed load; its hover.
    retry: &'static str;
        en: "Retry";
        zh: "重试";
    /// See `retry`.
    retry_hover: &'static str;
        en: "Load the same profile and rank again";
        zh: "重新加载同一个性能数据和 rank";
    /// Retry's hover in a cluster overview that was cancelled.
    retry_overview_hover: &'static str;
        en: "Summarise every rank again";
        zh: "重新汇总所有 rank";
    load_stopped: &'static str;
        en: "Loading stopped without a result.";
        zh: "加载未完成即停止。";
    /// A background task panicked: (what it was for, the panic's message).
    job_failed: fn(&str, &str) -> String;
        en: |what, why| {
            format!("A background task failed ({what}); the rest of memsight goes on. Cause: {why}")
        };
        zh: |what, why| {
            format!("后台任务失败（{what}），memsight 的其余部分照常工作。原因：{why}")
        };
    /// Closes the failed-task line.
    dismiss: &'static str;
        en: "Dismiss";
        zh: "关闭";
    cannot_open: fn(&str, &str) -> String;
        en: |p, why| format!("cannot open {p}: {why}");
        zh: |p, why| format!("无法打开 {p}：{why}");
    no_memory_data: fn(&str, usize, &[&str], &str) -> String;
        en: |p, depth, also, extra| {
            let also: String = also.iter().map(|a| format!(", {a}")).collect();
            format!(
                "no memory data found under {p}: looked for memory_record*.csv (torch_npu, \
                 MindSpore, msprof), ascend_pytorch_profiler*.db / ascend_mindspore_profiler*.db\
                 {also}, up to {} deep{extra}",
                counted(depth, "folder", "folders")
            )
        };
        zh: |p, depth, also, extra| {
            let also: String = also.iter().map(|a| format!("、{a}")).collect();
            format!(
                "在 {p} 下没有找到内存数据：已查找 memory_record*.csv（torch_npu、MindSpore、msprof）\
                 、ascend_pytorch_profiler*.db / ascend_mindspore_profiler*.db{also}，\
                 最深 {depth} 层文件夹{extra}"
            )
        };
    // The chart.
    reset_zoom: &'static str;
        en: "Reset zoom";
        zh: "重置缩放";
    reset_zoom_hover: &'static str;
        en: "Show the whole rank (Esc, or double-click the chart)";
        zh: "显示整个 rank（Esc，或双击图表）";
    chart_hint: &'static str;
        en: "drag: box zoom · wheel: zoom · right-drag or Shift+wheel: pan · click: live at cursor";
        zh: "拖动：框选放大 · 滚轮：缩放 · 右键拖动或 Shift+滚轮：平移 · 单击：光标处存活内存";
    sampled: fn(&str, &str) -> String;
        en: |drawn, total| {
            format!("sampled (LTTB): showing {drawn} of {total} points — zoom in for full detail")
        };
        zh: |drawn, total| {
            format!("已采样 (LTTB)：显示 {total} 个点中的 {drawn} 个——放大可看全部细节")
        };
    building_curves: fn(&str) -> String;
        en: |g| format!("Building the {g} curves…");
        zh: |g| format!("正在生成 {g} 曲线…");
    no_curves: fn(&str) -> String;
        en: |g| format!("No {g} curves in this rank's memory_record.");
        zh: |g| format!("此 rank 的 memory_record 中没有 {g} 曲线。");
    time_axis: &'static str;
        en: "Time (ms)";
        zh: "时间 (ms)";
    memory_axis: fn(&str) -> String;
        en: |u| format!("Memory ({u})");
        zh: |u| format!("内存 ({u})");
    peak: fn(&str) -> String;
        en: |v| format!("peak {v}");
        zh: |v| format!("峰值 {v}");
    /// A peak beyond the window's edge: value, time (ms), beyond the right edge.
    peak_beyond: fn(&str, &str, bool) -> String;
        en: |v, at, right| {
            if right {
                format!("peak {v} at {at} ms →")
            } else {
                format!("← peak {v} at {at} ms")
            }
        };
        zh: |v, at, right| {
            if right {
                format!("峰值 {v}（{at} ms）→")
            } else {
                format!("← 峰值 {v}（{at} ms）")
            }
        };
    in_view: &'static str;
        en: "In view";
        zh: "视图内";
    min: &'static str;
        en: "Min";
        zh: "最小";
    max: &'static str;
        en: "Max";
        zh: "最大";
    change: &'static str;
        en: "Δ (end − start)";
        zh: "Δ（结束 − 开始）";
    go_to_peak: &'static str;
        en: "Go to peak";
        zh: "转到峰值";
    curve_help: fn(&str) -> Option<&'static str>;
        en: curve_help_en;
        zh: curve_help_zh;
    /// The chart's "Start y at 0" checkbox and its hover.
    y_from_zero: &'static str;
        en: "y from 0";
        zh: "纵轴从 0 开始";
    /// See [`Tr::y_from_zero`].
    y_from_zero_hover: &'static str;
        en: "Start the memory axis at 0. Off, it fits the curves in view; curves under 5 % of the largest do not pull it down.";
        zh: "内存轴从 0 开始。关闭时纵轴适配视图内的曲线；低于最大值 5% 的曲线不会把纵轴拉低。";
    /// Curves below a zoomed view (minor ones, left out of the y fit): their names.
    below_view: fn(&str) -> String;
        en: |names| format!("below the view: {names} (tick \"y from 0\" to see them)");
        zh: |names| format!("视图下方：{names}（勾选“纵轴从 0 开始”可查看）");
    /// A Stream-mode curve: stream number (from 1), quantity (Allocated, Activated, Reserved).
    stream_series: fn(usize, &str) -> String;
        en: |k, q| format!("Stream {k} {q}");
        zh: |k, q| format!("流 {k} {q}");
    /// A Stream-mode legend entry's hover: the stream's pointer.
    stream_pointer: fn(&str) -> String;
        en: |p| format!("Stream pointer {p}");
        zh: |p| format!("流指针 {p}");
    /// Above the table in Stream mode: how many blocks have no stream and are not listed.
    rows_without_stream: fn(&str) -> String;
        en: |n| {
            if n == "1" {
                "1 block without a stream is not listed in Stream mode (as in Insight).".to_string()
            } else {
                format!("{n} blocks without a stream are not listed in Stream mode (as in Insight).")
            }
        };
        zh: |n| format!("{n} 个没有流的内存块在“流”模式下不列出（与 Insight 一致）。");
    // The details table.
    details_title: &'static str;
        en: "Memory Allocation/Release Details";
        zh: "内存申请/释放详情";
    name: &'static str;
        en: "Name";
        zh: "名称";
    search_hint: &'static str;
        en: "search";
        zh: "搜索";
    min_size: &'static str;
        en: "Min Size(KB)";
        zh: "最小 Size(KB)";
    max_size: &'static str;
        en: "Max Size(KB)";
        zh: "最大 Size(KB)";
    bad_number: &'static str;
        en: "not a number: this bound is ignored";
        zh: "不是数字：忽略此条件";
    within: &'static str;
        en: "Only allocated or released within the selection";
        zh: "仅显示在选区内申请或释放的块";
    rows: fn(&str) -> String;
        en: |n| format!("{n} {}", noun(n, "row", "rows"));
        zh: |n| format!("{n} 行");
    in_zoomed_range: &'static str;
        en: "(in the zoomed range)";
        zh: "（缩放范围内）";
    copy: &'static str;
        en: "Copy";
        zh: "复制";
    copy_hover: &'static str;
        en: "Selected rows, or this page, as TSV for Excel (Ctrl+C)";
        zh: "以 TSV 复制选中的行（或本页），可直接粘贴到 Excel（Ctrl+C）";
    copy_all: &'static str;
        en: "Copy all";
        zh: "复制全部";
    copy_all_hover: &'static str;
        en: "Every row that matches the filters, in the table's order, as TSV";
        zh: "按表格当前顺序，以 TSV 复制所有符合筛选条件的行";
    copied: fn(&str) -> String;
        en: |n| format!("Copied {n} {}", noun(n, "row", "rows"));
        zh: |n| format!("已复制 {n} 行");
    export_csv: &'static str;
        en: "Export CSV…";
        zh: "导出 CSV…";
    export_hover: &'static str;
        en: "Every matching row, to a file";
        zh: "把所有符合条件的行写入文件";
    clear_selection: fn(usize) -> String;
        en: |n| format!("Clear selection ({n})");
        zh: |n| format!("清除选择 ({n})");
    sorting: &'static str;
        en: "sorting…";
        zh: "正在排序…";
    rows_per_page: &'static str;
        en: "rows per page";
        zh: "每页行数";
    first: &'static str;
        en: "First";
        zh: "首页";
    previous: &'static str;
        en: "Previous";
        zh: "上一页";
    next: &'static str;
        en: "Next";
        zh: "下一页";
    last: &'static str;
        en: "Last";
        zh: "末页";
    page_of: fn(&str, &str) -> String;
        en: |a, b| format!("Page {a} of {b}");
        zh: |a, b| format!("第 {a} / {b} 页");
    go_to_page: &'static str;
        en: "Go to page";
        zh: "跳转到页";
    go: &'static str;
        en: "Go";
        zh: "跳转";
    bad_page: fn(usize) -> String;
        en: |n| format!("enter a page from 1 to {n}");
        zh: |n| format!("请输入 1 到 {n} 之间的页码");
    sort_hover: fn(&str) -> String;
        en: |d| format!("Sort: ascending → descending → {d}");
        zh: |d| format!("排序：升序 → 降序 → {d}");
    file_order: &'static str;
        en: "file order";
        zh: "文件顺序";
    largest_first: &'static str;
        en: "largest peak first";
        zh: "峰值从大到小";
    choose_save: &'static str;
        en: "choose where to save the CSV…";
        zh: "请选择 CSV 的保存位置…";
    export_cancelled: &'static str;
        en: "export cancelled";
        zh: "已取消导出";
    wrote_rows: fn(&str, &str) -> String;
        en: |n, p| format!("wrote {n} {} to {p}", noun(n, "row", "rows"));
        zh: |n, p| format!("已将 {n} 行写入 {p}");
    cannot_write: fn(&str, &Cause) -> String;
        en: |p, e| format!("cannot write {p}: {e}");
        zh: |p, e| format!("无法写入 {p}：{}", e.render(L::Zh));
    // Live at cursor.
    live_title: &'static str;
        en: "Live at cursor";
        zh: "光标处存活内存";
    close: &'static str;
        en: "Close";
        zh: "关闭";
    live_summary: fn(&str, &str, &str) -> String;
        en: |t, n, total| format!("{t}: {n} {}, {total}", noun(n, "block", "blocks"));
        zh: |t, n, total| format!("{t}：{n} 个块，共 {total}");
    curves_at_cursor: &'static str;
        en: "Curves at the cursor";
        zh: "光标处的曲线值";
    live_blocks_sum: &'static str;
        en: "Live blocks (operator_memory)";
        zh: "存活块合计 (operator_memory)";
    not_in_operator_memory: &'static str;
        en: "Not in operator_memory";
        zh: "不在 operator_memory 中";
    not_in_operator_memory_hover: &'static str;
        en: "Operator Allocated minus the live blocks: memory allocated before profiling began (its blocks are not in operator_memory) or by allocations the profiler did not record";
        zh: "Operator Allocated 减去存活块：采集开始前已申请的内存（其块不在 operator_memory 中），或采集未记录的申请";
    by_operator: &'static str;
        en: "By operator";
        zh: "按算子";
    operator: &'static str;
        en: "Operator";
        zh: "算子";
    total: &'static str;
        en: "Total";
        zh: "合计";
    blocks: &'static str;
        en: "Blocks";
        zh: "块数";
    largest_blocks: &'static str;
        en: "Largest blocks";
        zh: "最大的块";
    size: &'static str;
        en: "Size";
        zh: "大小";
    allocated_at: &'static str;
        en: "Allocated at";
        zh: "申请时间";
    before_capture: &'static str;
        en: "before capture";
        zh: "采集开始前";
    // Component and static views, warnings.
    component_title: &'static str;
        en: "Component peak memory (npu_module_mem, components ≥ 100 MB)";
        zh: "组件峰值内存（npu_module_mem，组件 ≥ 100 MB）";
    component_none: &'static str;
        en: "No component reaches 100 MB (or the rank has no npu_module_mem).";
        zh: "没有组件达到 100 MB（或此 rank 没有 npu_module_mem）。";
    no_static_graph: &'static str;
        en: "This rank has no static graph.";
        zh: "此 rank 没有静态图。";
    graph_ops: fn(&str) -> String;
        en: |g| format!("Graph {g} ops");
        zh: |g| format!("图 {g} 的算子");
    total_size: fn(&str) -> String;
        en: |s| format!("Total Size {s}");
        zh: |s| format!("总大小 {s}");
    end_of_graph: &'static str;
        en: "end of graph";
        zh: "图结束";
    node_index: &'static str;
        en: "Node Index";
        zh: "节点索引";
    memory_usage_mb: &'static str;
        en: "Memory Usage (MB)";
        zh: "内存使用 (MB)";
    load_warnings: &'static str;
        en: "Load warnings";
        zh: "加载警告";
    rows_skipped: fn(&str, u64) -> String;
        en: |p, n| format!("{p}: {n} {} skipped", if n == 1 { "row" } else { "rows" });
        zh: |p, n| format!("{p}：跳过 {n} 行");
    skipped_line: fn(u64, &str, &str) -> String;
        en: |n, why, text| format!("line {n}: {why} — {text}");
        zh: |n, why, text| format!("第 {n} 行：{why} — {text}");
    lossy_times: fn(usize) -> String;
        en: |n| {
            format!(
                "⚠ Timestamps in {n} file(s) were saved in scientific notation (like 1.69512E+15), \
                 probably by Excel: they lost their precision, so times here are only approximate. \
                 Open the profiler's original files (not a copy saved by Excel) or its .db export."
            )
        };
        zh: |n| {
            format!(
                "⚠ 有 {n} 个文件的时间戳以科学计数法保存（如 1.69512E+15），多半是经 Excel 另存所致：\
                 精度已丢失，这里的时间只是近似值。请打开性能工具生成的原始文件（不要用 Excel 另存的副本），或使用 .db 导出。"
            )
        };
    /// memory_record and operator_memory lie far apart in time: (how far, e.g. `134.0 days`).
    tables_apart: fn(&str) -> String;
        en: |gap| {
            format!(
                "⚠ memory_record and operator_memory are {gap} apart (different clocks, or times \
                 rounded by Excel): the whole rank shows each as a speck."
            )
        };
        zh: |gap| {
            format!(
                "⚠ memory_record 与 operator_memory 在时间上相距 {gap}（时钟不同，或时间被 Excel 舍入）：\
                 整个 rank 的视图中二者都只是一个点。"
            )
        };
    /// The buttons that zoom to one of the two tables.
    fit_records: &'static str;
        en: "Fit to memory_record";
        zh: "缩放到 memory_record";
    /// See `fit_records`.
    fit_operators: &'static str;
        en: "Fit to operator_memory";
        zh: "缩放到 operator_memory";
    /// Units of a long duration: days, hours, seconds.
    duration_units: [&'static str; 3];
        en: ["days", "h", "s"];
        zh: ["天", "小时", "秒"];
    table_only: &'static str;
        en: "This rank has no memory_record: there are no curves, only the allocations below.";
        zh: "此 rank 没有 memory_record：没有曲线，只有下面的内存申请记录。";
    /// Under the curves while the rest of the rank loads (progressive display).
    rest_loading: &'static str;
        en: "Loading operator_memory and the rest of the rank… the table, steps and call stacks appear when it is read.";
        zh: "正在加载 operator_memory 等其余数据…… 读完后显示表格、迭代步和调用栈。";
    /// The same for a rank read by an importer (an msMemScope dump, a PyTorch trace: no
    /// operator_memory file).
    rest_loading_imported: &'static str;
        en: "Loading the rest of the rank (its blocks, names and call stacks)… the table, steps and call stacks appear when it is read.";
        zh: "正在加载该 rank 的其余数据（内存块、名称和调用栈）…… 读完后显示表格、迭代步和调用栈。";
    /// The steps tab (with the step count).
    /// The roles tab's title.
    roles_tab: &'static str;
        en: "Memory by role";
        zh: "按角色的内存";
    /// Live at cursor: the live blocks by role.
    live_by_role: &'static str;
        en: "Live blocks by role";
        zh: "存活内存块按角色";
    /// The steps tab: each step's peak split by role.
    steps_by_role: &'static str;
        en: "Each step's peak by role";
        zh: "各迭代峰值按角色拆分";
    /// While the roles are computed.
    roles_computing: &'static str;
        en: "Working out each block's role…";
        zh: "正在判断每个内存块的角色…";
    /// The split's title at the cursor (ms).
    roles_at_cursor: fn(&str) -> String;
        en: |ms| format!("Roles at the cursor ({ms} ms)");
        zh: |ms| format!("光标处的角色（{ms} ms）");
    /// The split's title at the peak (ms).
    roles_at_peak: fn(&str) -> String;
        en: |ms| format!("Roles at the Operator Allocated peak ({ms} ms)");
        zh: |ms| format!("Operator Allocated 峰值处的角色（{ms} ms）");
    /// The split's total row.
    roles_total: &'static str;
        en: "Total";
        zh: "合计";
    /// Above the advice.
    roles_advice_title: &'static str;
        en: "What would lower the peak";
        zh: "如何降低峰值";
    steps_tab: fn(usize) -> String;
        en: |n| format!("Steps ({n})");
        zh: |n| format!("迭代 ({n})");
    /// The steps table's title.
    steps_title: &'static str;
        en: "Memory per step";
        zh: "各迭代内存";
    /// Where the steps came from.
    steps_source: fn(&str) -> String;
        en: |s| format!("steps from {s}");
        zh: |s| format!("迭代来自 {s}");
    /// The steps table's headers, in `StepColumn::ALL` order.
    step_headers: [&'static str; 12];
        en: [
            "Step",
            "Start(ms)",
            "End(ms)",
            "Duration(ms)",
            "Peak Allocated(MB)",
            "Peak at(ms)",
            "Peak Reserved(MB)",
            "Peak APP(MB)",
            "End Allocated(MB)",
            "Change(MB)",
            "Survivors",
            "Survivors(MB)",
        ];
        zh: [
            "迭代",
            "开始(ms)",
            "结束(ms)",
            "时长(ms)",
            "峰值 Allocated(MB)",
            "峰值时间(ms)",
            "峰值 Reserved(MB)",
            "峰值 APP(MB)",
            "结束时 Allocated(MB)",
            "变化(MB)",
            "存活块",
            "存活块(MB)",
        ];
    /// Hover text of a step number.
    step_zoom_hover: &'static str;
        en: "Zoom the chart to this step";
        zh: "将图表缩放到此迭代";
    /// Hover text of a survivors cell.
    survivors_hover: &'static str;
        en: "Blocks allocated in this step and still alive at its end: click to list exactly them in the details table";
        zh: "在此迭代中申请、到迭代结束仍未释放的块：点击后在明细表中只列出这些块";
    /// Growth: rises, first step, last step, growth text.
    growth: fn(usize, i64, i64, &str) -> String;
        en: |n, a, b, mb| {
            format!(
                "⚠ Possible leak: Operator Allocated at the end of each step rose {n} steps in a row (#{a} → #{b}, {mb})."
            )
        };
        zh: |n, a, b, mb| {
            format!(
                "⚠ 可能存在内存泄漏：每个迭代结束时的 Operator Allocated 连续 {n} 个迭代上升（#{a} → #{b}，{mb}）。"
            )
        };
    /// Before the operators of a growth run.
    growth_operators: &'static str;
        en: "Allocated in those steps and still alive, by operator:";
        zh: "在这些迭代中申请且仍未释放的内存，按算子：";
    /// No growth found.
    no_growth: &'static str;
        en: "No growth: the end-of-step value does not rise 3 steps in a row.";
        zh: "无持续增长：迭代结束时的内存没有连续 3 个迭代上升。";
    /// The details table shows a step's survivors: step, blocks.
    survivors_of: fn(i64, usize) -> String;
        en: |s, n| {
            format!(
                "Survivors of step #{s}: {n} {}",
                if n == 1 { "block" } else { "blocks" }
            )
        };
        zh: |s, n| format!("迭代 #{s} 的存活块：{n} 个");
    /// Leaves the survivors filter.
    show_all_rows: &'static str;
        en: "Show all";
        zh: "显示全部";
    /// Title of the breakdown in Live at cursor.
    breakdown_title: &'static str;
        en: "Where the memory is";
        zh: "内存去向";
    /// The parts of the breakdown, in `Part::ALL` order.
    breakdown_parts: [&'static str; 6];
        en: [
            "Live blocks",
            "Allocated, not in operator_memory",
            "Cached in the pool",
            "Workspace",
            "CANN runtime and other components",
            "Other processes",
        ];
        zh: [
            "存活的块",
            "已分配但不在 operator_memory 中",
            "内存池缓存",
            "Workspace",
            "CANN 运行时及其他组件",
            "其他进程",
        ];
    /// Hover texts of the parts.
    breakdown_hovers: [&'static str; 6];
        en: [
            "Blocks of operator_memory alive at the cursor",
            "Operator Allocated minus the live blocks: allocated before profiling started, or not recorded",
            "Operator Reserved minus Operator Allocated: held by the framework's caching allocator (free or fragmented)",
            "Workspace Reserved (CANN operator workspaces)",
            "APP Reserved minus Operator Reserved and Workspace: CANN runtime, HCCL, graph engine and other components",
            "Device memory in use minus APP Reserved: other processes on this NPU",
        ];
        zh: [
            "光标处仍存活的 operator_memory 块",
            "Operator Allocated 减去存活块：采集开始前已分配，或未被记录",
            "Operator Reserved 减去 Operator Allocated：框架缓存分配器持有的内存（空闲或碎片）",
            "Workspace Reserved（CANN 算子 workspace）",
            "APP Reserved 减去 Operator Reserved 和 Workspace：CANN 运行时、HCCL、图引擎等组件",
            "设备已用内存减去 APP Reserved：此 NPU 上的其他进程",
        ];
    /// The total the parts add to.
    breakdown_total: &'static str;
        en: "Total";
        zh: "合计";
    /// Components named under Runtime.
    breakdown_components: &'static str;
        en: "Components (npu_module_mem)";
        zh: "组件 (npu_module_mem)";
    /// The overview toggle in the parameter bar.
    overview_button: &'static str;
        en: "Cluster overview";
        zh: "集群总览";
    /// Its hover text.
    overview_hover: &'static str;
        en: "Every rank's peaks side by side: which rank is worst";
        zh: "并排查看每个 rank 的峰值：哪个 rank 最差";
    /// The overview's title: ranks summarised, ranks in all.
    overview_title: fn(usize, usize) -> String;
        en: |done, n| {
            format!(
                "Cluster overview: {done} of {} summarised",
                counted(n, "rank", "ranks")
            )
        };
        zh: |done, n| format!("集群总览：已汇总 {done}/{n} 个 rank");
    /// The overview table's headers, in `OverviewColumn::ALL` order.
    overview_headers: [&'static str; 10];
        en: [
            "Rank",
            "Device",
            "Host",
            "Peak Allocated(MB)",
            "Peak at(ms)",
            "Peak Reserved(MB)",
            "Peak APP(MB)",
            "Largest allocation",
            "Skipped rows",
            "Warnings",
        ];
        zh: [
            "Rank",
            "设备",
            "主机",
            "峰值 Allocated(MB)",
            "峰值时间(ms)",
            "峰值 Reserved(MB)",
            "峰值 APP(MB)",
            "最大申请",
            "跳过行数",
            "警告",
        ];
    /// The spread of peak Operator Allocated: max, its rank, min, its rank, mean, max − min.
    overview_spread: fn(&str, &str, &str, &str, &str, &str) -> String;
        en: |max, max_rank, min, min_rank, mean, range| {
            format!(
                "Peak Operator Allocated: max {max} (rank {max_rank}) · min {min} (rank {min_rank}) · mean {mean} · max − min {range}"
            )
        };
        zh: |max, max_rank, min, min_rank, mean, range| {
            format!(
                "峰值 Operator Allocated：最大 {max} (rank {max_rank}) · 最小 {min} (rank {min_rank}) · 平均 {mean} · 极差 {range}"
            )
        };
    /// Outlier ranks (a list).
    overview_outliers: fn(&str) -> String;
        en: |list| format!("⚠ Outliers: {list}");
        zh: |list| format!("⚠ 离群：{list}");
    /// No outlier.
    /// Rank folders without memory data: how many, their names.
    overview_without_data: fn(usize, &str) -> String;
        en: |n, names| {
            if n == 1 {
                format!(
                    "1 rank folder holds no memory data and is not shown: {names} (profile it with profile_memory=True)."
                )
            } else {
                format!(
                    "{n} rank folders hold no memory data and are not shown: {names} (profile them with profile_memory=True)."
                )
            }
        };
        zh: |n, names| {
            format!(
                "{n} 个 rank 文件夹没有内存数据，未显示：{names}（采集时需设置 profile_memory=True）。"
            )
        };
    overview_no_outliers: &'static str;
        en: "No outlier (ranks beyond 1.5 × IQR of the quartiles).";
        zh: "无离群 rank (以四分位距 1.5 倍为界)。";
    /// Hover text of a rank in the overview.
    open_rank_hover: &'static str;
        en: "Open this rank";
        zh: "打开此 rank";
    /// The bar chart's y axis.
    overview_axis: &'static str;
        en: "Peak (MB)";
        zh: "峰值 (MB)";
    /// The x axis of a bar per rank.
    rank_axis_title: &'static str;
        en: "Rank";
        zh: "Rank";
    /// File menu: compare with another profile.
    compare_with_menu: &'static str;
        en: "Compare with folder…";
        zh: "与文件夹对比…";
    /// File ▸ Compare with a file (a DB or a trace).
    compare_with_file_menu: &'static str;
        en: "Compare with file (.db, .json)…";
        zh: "与文件对比 (.db, .json)…";
    /// Parameter bar: compare with a rank (label of the picker).
    compare_with: &'static str;
        en: "Compare with";
        zh: "对比";
    /// The picker's "no comparison" entry.
    compare_none: &'static str;
        en: "nothing";
        zh: "无";
    /// Align the baseline at (label of the picker).
    align_at: &'static str;
        en: "Align at";
        zh: "对齐于";
    /// Align at the origins.
    align_origins: &'static str;
        en: "origins";
        zh: "起点";
    /// Align at a step's start.
    align_step: fn(i64) -> String;
        en: |s| format!("start of step #{s}");
        zh: |s| format!("迭代 #{s} 开始");
    /// The legend's note on the dashed curves.
    baseline_note: fn(&str) -> String;
        en: |l| format!("dashed: baseline {l}");
        zh: |l| format!("虚线：基线 {l}");
    /// While the baseline loads.
    baseline_loading: &'static str;
        en: "loading the baseline…";
        zh: "正在加载基线…";
    /// The diff tab.
    diff_tab: &'static str;
        en: "Diff vs baseline";
        zh: "与基线的差异";
    /// The diff table's title (the baseline's label).
    diff_title: fn(&str) -> String;
        en: |l| format!("Per operator: baseline A = {l}, B = this rank");
        zh: |l| format!("按算子：基线 A = {l}，B = 当前 rank");
    /// While the diff is computed.
    diff_computing: &'static str;
        en: "comparing the operators…";
        zh: "正在比较算子…";
    /// Before the peak deltas.
    peak_deltas: &'static str;
        en: "Peaks A → B:";
        zh: "峰值 A → B：";
    /// The details table shows the rank on screen.
    table_current: &'static str;
        en: "Table: this rank";
        zh: "表格：当前 rank";
    /// The details table shows the baseline.
    table_baseline: &'static str;
        en: "Table: baseline";
        zh: "表格：基线";
    /// The baseline could not be loaded (why).
    baseline_failed: fn(&str) -> String;
        en: |e| format!("cannot compare: {e}");
        zh: |e| format!("无法对比：{e}");
    /// The call stacks tab.
    stacks_tab: &'static str;
        en: "Flame graph";
        zh: "火焰图";
    /// The details table's row grouping label.
    rows_label: &'static str;
        en: "Rows:";
        zh: "行：";
    /// Row grouping choices: each block, by call stack, by source line, by host operator.
    row_groupings: [&'static str; 5];
        en: [
            "Each block",
            "By call stack",
            "By source line",
            "By host operator",
            "By role",
        ];
        zh: ["逐块", "按调用栈", "按代码行", "按主机算子", "按角色"];
    /// Hover text of the row grouping.
    rows_hover: &'static str;
        en: "Group the blocks the filters match by who allocated them; click a group to list its blocks";
        zh: "按分配者对筛选出的内存块分组；点击分组可列出其内存块";
    /// Group table headers: group, blocks, total, peak live, calls.
    group_headers: [&'static str; 5];
        en: ["Group", "Blocks", "Total(MB)", "Peak live(MB)", "Calls"];
        zh: ["分组", "块数", "总分配(MB)", "峰值占用(MB)", "调用次数"];
    /// A group without a call stack.
    no_stack: &'static str;
        en: "(no call stack)";
        zh: "（无调用栈）";
    /// A group without a host op.
    no_host_op: &'static str;
        en: "(no host op running)";
        zh: "（无主机算子运行）";
    /// The flame graph's choices: blocks alive at the cursor, allocated in the view.
    flame_modes: [&'static str; 2];
        en: ["Alive at cursor", "Allocated in view"];
        zh: ["光标处存活", "视图内分配"];
    /// Shown when the flame graph wants a cursor.
    flame_needs_cursor: &'static str;
        en: "Click the chart to place the cursor: the graph shows the blocks alive there.";
        zh: "点击图表放置光标：图中显示该时刻存活的内存块。";
    /// Under the flame graph.
    flame_hint: &'static str;
        en: "Width is memory. Click a frame to zoom into it; the details table then lists its blocks.";
        zh: "宽度即内存大小。点击某一帧可放大该帧，详情表随之列出其内存块。";
    /// The flame graph's root.
    all_blocks: &'static str;
        en: "All blocks";
        zh: "全部内存块";
    /// The flame graph's summary: blocks, MB.
    flame_summary: fn(&str, &str) -> String;
        en: |n, size| format!("{n} {}, {size}", noun(n, "block", "blocks"));
        zh: |n, size| format!("{n} 个内存块，{size}");
    /// Before the flame graph's breadcrumb, when zoomed into a frame.
    flame_zoomed: &'static str;
        en: "Zoomed into:";
        zh: "已放大：";
    /// The zoomed flame graph's button to the details table: how many blocks.
    flame_list_blocks: fn(&str) -> String;
        en: |n| format!("List its {n} {}", noun(n, "block", "blocks"));
        zh: |n| format!("列出其 {n} 个内存块");
    /// How many allocations have a stack: attributed, total, op without stack, outside any op.
    attribution: fn(usize, usize, usize, usize) -> String;
        en: |a, t, ns, o| {
            format!(
                "{a} of {} {} a call stack ({ns} in an op without one, {o} outside any host op)",
                counted(t, "allocation", "allocations"),
                if a == 1 { "has" } else { "have" }
            )
        };
        zh: |a, t, ns, o| {
            format!("{t} 次分配中 {a} 次有调用栈（{ns} 次所在算子无调用栈，{o} 次不在任何主机算子内）")
        };
    /// A frame's tooltip: MB, blocks.
    frame_tip: fn(&str, u64) -> String;
        en: |size, n| format!("{size} in {n} {}", if n == 1 { "block" } else { "blocks" });
        zh: |size, n| format!("{size}，{n} 个内存块");
    /// The details table shows the blocks under a flame graph frame: label, count.
    blocks_under: fn(&str, usize) -> String;
        en: |l, n| format!("Blocks under {l}: {n}");
        zh: |l, n| format!("{l} 下的内存块：{n} 个");
    /// The details table shows the blocks of a group: label, count.
    blocks_of: fn(&str, usize) -> String;
        en: |l, n| format!("Blocks of {l}: {n}");
        zh: |l, n| format!("{l} 的内存块：{n} 个");
    /// The call stack tooltip's first line: the host op.
    allocated_by: fn(&str) -> String;
        en: |op| format!("Allocated in {op}");
        zh: |op| format!("分配于 {op}");
    /// No host op was running.
    no_op_running: &'static str;
        en: "No host op was running when it was allocated";
        zh: "分配时没有主机算子在运行";
    /// Which files a rank is read from, when it has both.
    source_label: &'static str;
        en: "Data:";
        zh: "数据：";
    /// Hover text of the source switch.
    source_hover: &'static str;
        en: "This rank has both a DB and CSV files: choose which to read";
        zh: "该 rank 同时有 DB 和 CSV 文件：选择读取哪一种";
    /// Reading a snapshot: its path.
    snapshot_reading: fn(&str) -> String;
        en: |p| format!("Reading the allocator snapshot {p}…");
        zh: |p| format!("正在读取内存分配器快照 {p}…");
    /// A snapshot could not be read: why.
    snapshot_failed: fn(&str) -> String;
        en: |e| format!("Cannot read this snapshot: {e}");
        zh: |e| format!("无法读取该快照：{e}");
    /// Why a rank could not be loaded.
    load_error: fn(&crate::ingest::LoadError) -> String;
        en: |e| e.to_string();
        zh: zh_load_error;
    /// The profile has no rank at this index.
    no_rank: fn(usize) -> String;
        en: |i| format!("no rank at index {i}");
        zh: |i| format!("没有序号为 {i} 的 rank");
    /// Why a snapshot could not be read.
    snapshot_error: fn(&crate::snapshot::SnapshotProblem) -> String;
        en: |p| match p {
            crate::snapshot::SnapshotProblem::Read(e) => e.to_string(),
            crate::snapshot::SnapshotProblem::Task(e) => e.clone(),
        };
        zh: zh_snapshot_error;
    /// The snapshot view's title.
    snapshot_title: &'static str;
        en: "Allocator snapshot";
        zh: "内存分配器快照";
    /// The device picker's label.
    snapshot_device: &'static str;
        en: "Device:";
        zh: "设备：";
    /// Back to the end state.
    snapshot_end: &'static str;
        en: "Back to the end";
        zh: "回到结束状态";
    /// The peak was before the first event.
    snapshot_before_trace: &'static str;
        en: "before the first event";
        zh: "第一个事件之前";
    /// Segments, reserved MB, allocated MB, peak MB, peak event, events.
    snapshot_figures: fn(usize, &str, &str, &str, &str, &str) -> String;
        en: |seg, res, alloc, peak, at, ev| {
            format!(
                "{} · reserved {res} MB · allocated at the end {alloc} MB · peak allocated {peak} MB at event {at} · {ev} {}",
                counted(seg, "segment", "segments"),
                noun(ev, "event", "events")
            )
        };
        zh: |seg, res, alloc, peak, at, ev| {
            format!(
                "{seg} 个段 · 保留 {res} MB · 结束时已分配 {alloc} MB · 已分配峰值 {peak} MB（事件 {at}）· 共 {ev} 个事件"
            )
        };
    /// The curve's x axis.
    snapshot_event_axis: &'static str;
        en: "Allocator event";
        zh: "分配器事件";
    /// The curve's x axis when the events have times.
    snapshot_time_axis: &'static str;
        en: "Time since the first event (ms)";
        zh: "距第一个事件的时间（ms）";
    /// The curve's name.
    snapshot_allocated: &'static str;
        en: "Allocated";
        zh: "已分配";
    /// The picked event's marker.
    snapshot_picked: &'static str;
        en: "Picked event";
        zh: "所选事件";
    /// Who holds memory just after event K: event, MB, blocks.
    snapshot_at_event: fn(usize, &str, u64) -> String;
        en: |k, mb, n| {
            format!(
                "Who holds memory just after event #{k}: {mb} MB in {}",
                plural::count(n, "block", "blocks")
            )
        };
        zh: |k, mb, n| format!("事件 #{k} 之后的内存持有者：{mb} MB，{n} 个内存块");
    /// Who holds memory at the end.
    snapshot_at_end: &'static str;
        en: "Who holds memory at the end (click the curve to pick an event)";
        zh: "结束时的内存持有者（点击曲线可选择事件）";
    /// Leak suspects: blocks.
    snapshot_leaks: fn(u64) -> String;
        en: |n| {
            format!(
                "Leak suspects: {n} {} allocated in the trace and never freed",
                if n == 1 { "block" } else { "blocks" }
            )
        };
        zh: |n| format!("疑似泄漏：{n} 个在记录期间分配且从未释放的内存块");
    /// The never-freed blocks' title when the trace ends in an out-of-memory.
    snapshot_held_at_oom: fn(u64) -> String;
        en: |n| {
            format!(
                "Held at the OOM: {n} {} allocated in the trace and not freed when the allocation failed",
                if n == 1 { "block" } else { "blocks" }
            )
        };
        zh: |n| {
            format!("内存不足时仍占用：{n} 个在记录期间分配、分配失败时仍未释放的内存块")
        };
    /// Under the leak suspects' title: what a click on one does.
    snapshot_leaks_hint: &'static str;
        en: "Click a stack to go to where its last block was allocated.";
        zh: "点击调用栈，跳到其最后一个内存块被分配的事件。";
    /// A leak suspect's hover line: what a click does.
    snapshot_leak_go: &'static str;
        en: "Click: go to the event that allocated its last block that is never freed";
        zh: "点击：跳到分配其最后一个从未释放的内存块的事件";
    /// An empty "who holds memory" or leak table.
    snapshot_nothing_held: &'static str;
        en: "No block is held here.";
        zh: "此处没有被持有的内存块。";
    /// Stack table headers: MB, blocks, innermost frame.
    snapshot_headers: [&'static str; 3];
        en: [
            "MB",
            "Blocks",
            "Allocated at (innermost frame; hover for the stack)",
        ];
        zh: ["MB", "块数", "分配位置（最内层帧；悬停查看调用栈）"];
    /// The segment map's heading: when (see `snapshot_when_*`), segments, free MB inside them,
    /// its share of reserved (%), the largest free block's MB.
    snapshot_segments: fn(&str, usize, &str, &str, &str) -> String;
        en: |when, n, free, pct, largest| {
            format!(
                "Segments {when}: {n} · free inside segments {free} MB ({pct} % of reserved) · largest free block {largest} MB"
            )
        };
        zh: |when, n, free, pct, largest| {
            format!(
                "{when}的内存段：{n} 个 · 段内空闲 {free} MB（占预留的 {pct} %）· 最大空闲块 {largest} MB"
            )
        };
    /// "At the end", for the segment map's heading.
    snapshot_when_end: &'static str;
        en: "at the end";
        zh: "结束时";
    /// "Just after event K", for the segment map's heading.
    snapshot_when_event: fn(usize) -> String;
        en: |k| format!("just after event #{k}");
        zh: |k| format!("事件 #{k} 之后");
    /// Under the active-memory chart: banded allocations, summed ones.
    snapshot_bands_legend: fn(usize, usize) -> String;
        en: |n, m| match m {
            // Every allocation has a band of its own: no grey band to explain.
            0 => format!(
                "Each band is one allocation, coloured by its innermost frame ({n} in all). Drag to zoom, double-click to see all, click to pick an event."
            ),
            _ => format!(
                "Each band is one allocation, coloured by its innermost frame: the {n} largest have their own, the other {m} are summed in grey on top. Drag to zoom, double-click to see all, click to pick an event."
            ),
        };
        zh: |n, m| match m {
            0 => format!(
                "每条色带是一次分配，按最内层帧着色（共 {n} 次）。拖动可缩放，双击看全部，单击可选择事件。"
            ),
            _ => format!(
                "每条色带是一次分配，按最内层帧着色：最大的 {n} 次分配各占一条，其余 {m} 次合并为顶部的灰色带。拖动可缩放，双击看全部，单击可选择事件。"
            ),
        };
    /// The summed band on hover: allocations in it now, MB.
    snapshot_summed: fn(u32, &str) -> String;
        en: |n, mb| format!("{n} smaller allocations, summed: {mb} MB");
        zh: |n, mb| format!("{n} 次较小的分配（合计）：{mb} MB");
    /// A band on hover: its size (with unit), when allocated, when freed.
    snapshot_band: fn(&str, &str, &str) -> String;
        en: |size, from, to| format!("{size} · {from} · {to}");
        zh: |size, from, to| format!("{size} · {from} · {to}");
    /// Allocated at event K.
    snapshot_allocated_at: fn(usize) -> String;
        en: |k| format!("allocated at event #{k}");
        zh: |k| format!("分配于事件 #{k}");
    /// Held before the trace began.
    snapshot_held_before: &'static str;
        en: "held before the trace began";
        zh: "记录开始前已持有";
    /// Freed at event K.
    snapshot_freed_at: fn(usize) -> String;
        en: |k| format!("freed at event #{k}");
        zh: |k| format!("释放于事件 #{k}");
    /// Still held at the end.
    snapshot_held_at_end: &'static str;
        en: "still held at the end";
        zh: "结束时仍持有";
    /// Picks the peak event.
    snapshot_go_peak: &'static str;
        en: "Go to the peak";
        zh: "跳到峰值";
    /// Picks the `oom` event.
    oom_go: &'static str;
        en: "Go to the OOM";
        zh: "跳到内存不足处";
    /// The memUsageInfo table's title, for a device.
    oom_modules: fn(i64) -> String;
        en: |d| format!("Memory by CANN module at the OOM (memUsageInfo, NPU:{d})");
        zh: |d| format!("内存不足时各 CANN 模块的内存（memUsageInfo，NPU:{d}）");
    /// The heading of msMemScope's OOM rows (the dump's name).
    oom_memscope: fn(&str) -> String;
        en: |file| format!("msMemScope at the OOM ({file})");
        zh: |file| format!("msMemScope 记录的内存不足（{file}）");
    /// A trigger: the call, the MB asked for, the return code.
    oom_memscope_trigger: fn(&str, &str, Option<i64>) -> String;
        en: |func, asked, ret| {
            let ret = ret.map_or(String::new(), |r| format!(", return code {r}"));
            format!(
                "{func} asked for {asked} MB and failed{ret}. The blocks held then, largest and latest:"
            )
        };
        zh: |func, asked, ret| {
            let ret = ret.map_or(String::new(), |r| format!("，返回码 {r}"));
            format!("{func} 申请 {asked} MB 失败{ret}。当时占用的内存块（最大的、最近的）：")
        };
    /// The columns of msMemScope's OOM records.
    oom_memscope_headers: [&'static str; 5];
        en: [
            "List",
            "Pool",
            "Size (MB)",
            "Address",
            "Python (innermost frame)",
        ];
        zh: ["列表", "内存池", "大小 (MB)", "地址", "Python（最内层帧）"];
    /// A record of the largest blocks held.
    oom_memscope_top: &'static str;
        en: "largest";
        zh: "最大";
    /// A record of the latest blocks held.
    oom_memscope_recent: &'static str;
        en: "latest";
        zh: "最近";
    /// The heading of a folder of OOM bundles.
    oom_cluster_title: fn(&str) -> String;
        en: |dir| format!("Out-of-memory bundles in {dir}");
        zh: |dir| format!("{dir} 中的内存不足（OOM）快照");
    /// How many ran out of how many, and the room they had (MiB).
    oom_cluster_summary: fn(usize, usize, Option<&str>) -> String;
        en: |out, all, room| {
            let room = room.map_or(String::new(), |r| {
                format!(
                    " The ranks that ran out had {r} MB (their reserve at the OOM plus the device's \
                     free memory); Headroom is what each device had left of that."
                )
            });
            format!(
                "{out} of {} ran out of memory.{room} Click a file to open it.",
                counted(all, "device", "devices")
            )
        };
        zh: |out, all, room| {
            let room = room.map_or(String::new(), |r| {
                format!(
                    "内存不足的 rank 可用 {r} MB（OOM 时的预留加设备空闲）；余量是各设备距此还剩多少。"
                )
            });
            format!("{all} 个设备中有 {out} 个内存不足。{room}点击文件名可打开该快照。")
        };
    /// The columns of the bundles' table.
    oom_cluster_headers: [&'static str; 8];
        en: [
            "File",
            "Device",
            "Ran out",
            "Requested (MB)",
            "Device free (MB)",
            "Reserved (MB)",
            "Peak allocated (MB)",
            "Headroom (MB)",
        ];
        zh: [
            "文件",
            "设备",
            "内存不足",
            "申请 (MB)",
            "设备空闲 (MB)",
            "预留 (MB)",
            "峰值已分配 (MB)",
            "余量 (MB)",
        ];
    /// Snapshots past the most read: (how many, the most).
    oom_cluster_left_out: fn(usize, usize) -> String;
        en: |n, most| format!("{n} more snapshots not read (at most {most} are)");
        zh: |n, most| format!("另有 {n} 个快照未读取（最多读取 {most} 个）");
    /// A verdict, short.
    oom_fragmentation: &'static str;
        en: "fragmentation";
        zh: "碎片化";
    /// A verdict, short.
    oom_exhaustion: &'static str;
        en: "exhaustion";
        zh: "耗尽";
    /// A verdict, short: a limit on the process.
    oom_process_limit: &'static str;
        en: "process limit";
        zh: "进程上限";
    /// A verdict, short: the event asked for no bytes (size 0 or less).
    oom_no_request: &'static str;
        en: "no request size";
        zh: "无请求大小";
    /// How the holders are shown: table, flame graph.
    snapshot_views: [&'static str; 2];
        en: ["Table", "Flame graph"];
        zh: ["表格", "火焰图"];
    /// The flame graph's hint.
    snapshot_flame_hint: &'static str;
        en: "Width is memory; the outermost frame on top. Click a frame to list its blocks.";
        zh: "宽度即内存，最外层帧在上。点击某帧可列出其内存块。";
    /// The segment map's legend: allocated, pending free, free.
    snapshot_block_kinds: [&'static str; 3];
        en: ["allocated", "pending free", "free"];
        zh: ["已分配", "待释放", "空闲"];
    /// A segment on hover: address, type, MB reserved, allocated, free, largest free block,
    /// blocks.
    snapshot_segment_hover: fn(&str, &str, &str, &str, &str, &str, usize) -> String;
        en: |addr, kind, total, alloc, free, largest, blocks| {
            format!(
                "{addr} ({kind}): {total} MB reserved, {alloc} MB allocated, {free} MB free, largest free block {largest} MB, {}",
                counted(blocks, "block", "blocks")
            )
        };
        zh: |addr, kind, total, alloc, free, largest, blocks| {
            format!(
                "{addr}（{kind}）：预留 {total} MB，已分配 {alloc} MB，空闲 {free} MB，最大空闲块 {largest} MB，{blocks} 个块"
            )
        };
    /// Marks an expandable segment.
    snapshot_expandable: &'static str;
        en: "expandable";
        zh: "可扩展";
    /// While the figures of a long trace are computed.
    snapshot_computing: &'static str;
        en: "Computing the figures for this event…";
        zh: "正在计算该事件的数据……";
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The texts of `texts` where a count of 1 is followed by a plural noun (`1 ranks`).
    fn one_then_plural(texts: &[String]) -> Vec<String> {
        const PLURALS: [&str; 15] = [
            "ranks",
            "hosts",
            "steps",
            "blocks",
            "warnings",
            "rows",
            "files",
            "folders",
            "events",
            "segments",
            "allocations",
            "devices",
            "groups",
            "ops",
            "stacks",
        ];
        texts
            .iter()
            .filter(|t| {
                t.split(|c: char| !c.is_alphanumeric())
                    .collect::<Vec<_>>()
                    .windows(2)
                    .any(|w| w[0] == "1" && PLURALS.contains(&w[1]))
            })
            .cloned()
            .collect()
    }

    /// English counts agree with their nouns (issue 26 item 17: "1 warnings", "1 rows
    /// skipped"); Chinese has one word for the cursor and no full-width brackets around a
    /// tab's count.
    #[test]
    fn counts_read_right_in_both_languages() {
        assert_eq!((EN.rows)("1"), "1 row");
        assert_eq!((EN.rows)("1,024"), "1,024 rows");
        assert_eq!((EN.warnings)(1), "⚠ 1 warning");
        assert_eq!((EN.warnings)(2), "⚠ 2 warnings");
        assert_eq!((EN.rows_skipped)("a.csv", 1), "a.csv: 1 row skipped");
        assert_eq!((EN.copied)("1"), "Copied 1 row");
        assert_eq!((EN.frame_tip)("1.00 MB", 1), "1.00 MB in 1 block");
        assert_eq!((ZH.steps_tab)(8), "迭代 (8)");
        // Issue 43 item 12: every count that can be 1 says so in the singular.
        let ones = [
            (EN.summary_title)("s.db", 1, 1),
            (EN.summary_compared)("b.db", 1, 1, "1", "2"),
            (EN.summary_failed)(1),
            (EN.summary_worst_step)(1, "1", "0", "1", 1),
            (EN.summary_leaks)(1, "0"),
            (EN.summary_shown)(1, 1),
            (EN.loading_progress)("x", 1, 1, 1, 1),
            (EN.no_memory_data)("/p", 1, &[], ""),
            (EN.overview_title)(1, 1),
            (EN.attribution)(1, 1, 0, 0),
            (EN.snapshot_figures)(1, "1", "1", "1", "#0", "1"),
            (EN.snapshot_at_event)(0, "1", 1),
            (EN.oom_cluster_summary)(1, 1, None),
            (EN.snapshot_segment_hover)("0x0", "large", "1", "1", "0", "0", 1),
            (EN.snapshot_leaks)(1),
            (EN.snapshot_held_at_oom)(1),
        ];
        let plural_after_one = one_then_plural(&ones);
        assert!(plural_after_one.is_empty(), "{plural_after_one:?}");
        let zh = format!(
            "{} {} {:?}",
            ZH.flame_needs_cursor, ZH.chart_hint, ZH.flame_modes
        );
        assert!(!zh.contains("游标"), "{zh}");
        assert_eq!(
            (ZH.cannot_write)(
                "/p/x.csv",
                &std::io::Error::from(std::io::ErrorKind::PermissionDenied).into()
            ),
            "无法写入 /p/x.csv：没有访问权限"
        );
    }

    #[test]
    fn locales_choose_the_language() {
        for zh in ["zh_CN.UTF-8", "zh-Hans-CN", "zh_TW", "ZH", "zh"] {
            assert_eq!(Lang::from_locale(zh), Lang::Zh, "{zh}");
        }
        for en in ["en_US.UTF-8", "C", "", "de-DE", "zhuang"] {
            assert_eq!(Lang::from_locale(en), Lang::En, "{en}");
        }
        for l in Lang::ALL {
            assert_eq!(Lang::parse(l.code()), Some(l));
        }
    }

    #[test]
    fn every_curve_of_the_overall_view_is_explained_in_both_languages() {
        for name in [
            "Operator Allocated",
            "Operator Reserved",
            "Operator Activated",
            "APP Reserved",
            "Workspace Allocated",
            "Workspace Reserved",
        ] {
            assert!((EN.curve_help)(name).is_some() && (ZH.curve_help)(name).is_some());
        }
    }
}
