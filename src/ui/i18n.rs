//! Every string the app shows, in English and in Simplified Chinese: one catalogue ([`Tr`]), two
//! instances checked by the compiler (a missing translation does not build). The CLI stays
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
        for var in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            if let Ok(v) = std::env::var(var)
                && !v.is_empty()
                && v != "C"
                && v != "POSIX"
            {
                return Lang::from_locale(&v);
            }
        }
        sys_locale::get_locale().map_or(Lang::En, |l| Lang::from_locale(&l))
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

/// The strings of one language. `fn` fields format a message with its values (already
/// formatted for reading).
#[allow(missing_docs)] // each field is the text it names
pub struct Tr {
    /// Which language these are.
    pub lang: Lang,
    /// Cluster summary: heading (file, ranks, hosts).
    pub summary_title: fn(&str, usize, usize) -> String,
    /// Cluster summary: how long reading took (seconds).
    pub summary_read_in: fn(&str) -> String,
    /// Cluster summary: being read (file).
    pub summary_reading: fn(&str) -> String,
    /// Cluster summary: the compare button.
    pub summary_compare: &'static str,
    /// Its tooltip.
    pub summary_compare_hover: &'static str,
    /// Stop comparing summaries.
    pub summary_stop_compare: &'static str,
    /// Copy's tooltip in a summary.
    pub summary_copy_hover: &'static str,
    /// The baseline summary could not be read (why).
    pub summary_baseline_error: fn(&str) -> String,
    /// Why a summary file could not be read (the CLI's words in English).
    pub summary_error: fn(&crate::export::cluster_db::SummaryError) -> String,
    pub summary_read_cancelled: &'static str,
    /// Comparison line (file, matched, ranks, max before, max now).
    pub summary_compared: fn(&str, usize, usize, &str, &str) -> String,
    /// Ranks recorded with an error.
    pub summary_failed: fn(usize) -> String,
    /// The merge notes' header (count).
    pub summary_notes: fn(usize) -> String,
    /// "+N more" after a list of ranks.
    pub summary_more: fn(usize) -> String,
    /// The worst step (step, max MB, rank, median MB, ranks).
    pub summary_worst_step: fn(i64, &str, &str, &str, usize) -> String,
    /// No rank grows step after step.
    pub summary_no_leaks: &'static str,
    /// Ranks growing step after step (count, list).
    pub summary_leaks: fn(usize, &str) -> String,
    /// What counts as growing step after step (the leak line's tooltip).
    pub summary_leaks_rule: &'static str,
    /// The other summary's values, in legends.
    pub summary_before_series: &'static str,
    /// No step boundaries in the summary.
    pub summary_no_steps: &'static str,
    /// The step plot's lines: highest, median, lowest.
    pub summary_step_lines: [&'static str; 3],
    /// The step plot's x axis.
    pub summary_step_axis: &'static str,
    /// The curve plot's x axis.
    pub summary_time_axis: &'static str,
    /// The host filter's label.
    pub summary_host_filter: &'static str,
    /// Its hint.
    pub summary_host_hint: &'static str,
    /// The host filter matches whole host names only.
    pub summary_host_exact: &'static str,
    /// What the whole-name check does.
    pub summary_host_exact_hover: &'static str,
    /// The copy's column of the top operator's size, after its name.
    pub summary_top_operator_mb: &'static str,
    /// Ranks shown of all.
    pub summary_shown: fn(usize, usize) -> String,
    /// A summary table's column header.
    pub summary_header: fn(crate::model::cluster::SummaryColumn) -> &'static str,
    /// The folder link's tooltip.
    pub summary_open_hover: &'static str,
    /// How to see a rank's curve.
    pub summary_curve_hint: &'static str,
    /// The curve's title (rank, host).
    pub summary_curve_title: fn(&str, &str) -> String,
    /// Unpin the rank.
    pub summary_unpin: &'static str,
    /// A rank's folder is not here (rank, path, host).
    pub summary_unreachable: fn(&str, &str, &str, Option<&str>) -> String,
    /// The rank has no curve in the summary.
    pub summary_no_curve: &'static str,
    // Menus.
    pub file: &'static str,
    pub open_folder_menu: &'static str,
    pub open_folder: &'static str,
    pub open_db: &'static str,
    pub recent: &'static str,
    pub none_yet: &'static str,
    pub quit: &'static str,
    pub view: &'static str,
    pub language: &'static str,
    pub theme: &'static str,
    pub theme_system: &'static str,
    pub theme_light: &'static str,
    pub theme_dark: &'static str,
    pub help: &'static str,
    pub shortcuts_menu: &'static str,
    pub shortcuts_title: &'static str,
    pub shortcuts: &'static [(&'static str, &'static str)],
    pub save_chart: &'static str,
    pub saved_chart: fn(&str) -> String,
    /// The chart report's legend line: (curve, its peak in the window, when).
    pub report_peak: fn(&str, &str, &str) -> String,
    /// The chart report's first caption line: (profile, rank, host or "").
    pub report_title: fn(&str, &str, &str) -> String,
    /// The chart report's window: (from, to); the whole rank.
    pub report_window: fn(&str, &str) -> String,
    /// See `report_window`.
    pub report_whole: &'static str,
    pub cannot_save_chart: fn(&str) -> String,
    pub path: &'static str,
    /// View ▸ reopen the last profile at start.
    pub reopen_last: &'static str,
    /// Above the demo: what it is.
    pub demo_banner: &'static str,
    /// The last profile opened is no longer there (the demo opened instead).
    pub last_path_gone: fn(&str) -> String,
    /// After the demo banner's buttons.
    pub demo_drop_hint: &'static str,
    /// File ▸ Open path… (the menu entry).
    pub open_path_menu: &'static str,
    /// The Open path dialog's title.
    pub open_path_title: &'static str,
    /// Under the path field in the dialog.
    pub path_dialog_hint: &'static str,
    pub path_hint: &'static str,
    pub open: &'static str,
    pub no_such_path: fn(&str) -> String,
    pub dialog_folder: &'static str,
    pub dialog_db: &'static str,
    pub dialog_save: &'static str,
    pub dialog_save_button: &'static str,
    pub browser_file: &'static str,
    pub browser_hidden: &'static str,
    pub browser_parent: &'static str,
    pub browser_refresh: &'static str,
    pub cancel: &'static str,
    pub no_cjk_font: &'static str,
    // Parameter bar and start page.
    pub host_name: &'static str,
    pub all_hosts: &'static str,
    pub rank_id: &'static str,
    pub group_by: &'static str,
    /// The Group By choices: Overall, Stream, Component.
    pub group_names: [&'static str; 3],
    /// The details table's Role column header and filter label.
    pub role_header: &'static str,
    /// The details table's Module column header and filter label.
    pub module_header: &'static str,
    pub static_graph: &'static str,
    pub graph_id: &'static str,
    pub warnings: fn(usize) -> String,
    /// The parameter bar's button when there are notes but no warnings.
    pub notes: fn(usize) -> String,
    pub no_profile: &'static str,
    pub loading: &'static str,
    pub nothing_to_show: &'static str,
    pub welcome: &'static str,
    pub loading_progress: fn(&str, u64, u64, u64, u64) -> String,
    pub load_cancelled: &'static str,
    /// Load again, after a cancelled or failed load; its hover.
    pub retry: &'static str,
    /// See `retry`.
    pub retry_hover: &'static str,
    /// Retry's hover in a cluster overview that was cancelled.
    pub retry_overview_hover: &'static str,
    pub load_stopped: &'static str,
    /// A background task panicked: (what it was for, the panic's message).
    pub job_failed: fn(&str, &str) -> String,
    /// Closes the failed-task line.
    pub dismiss: &'static str,
    pub cannot_open: fn(&str, &str) -> String,
    pub no_memory_data: fn(&str, usize, &str) -> String,
    // The chart.
    pub reset_zoom: &'static str,
    pub reset_zoom_hover: &'static str,
    pub chart_hint: &'static str,
    pub sampled: fn(&str, &str) -> String,
    pub building_curves: fn(&str) -> String,
    pub no_curves: fn(&str) -> String,
    pub time_axis: &'static str,
    pub memory_axis: fn(&str) -> String,
    pub peak: fn(&str) -> String,
    /// A peak beyond the window's edge: value, time (ms), beyond the right edge.
    pub peak_beyond: fn(&str, &str, bool) -> String,
    pub in_view: &'static str,
    pub min: &'static str,
    pub max: &'static str,
    pub change: &'static str,
    pub go_to_peak: &'static str,
    pub curve_help: fn(&str) -> Option<&'static str>,
    /// The chart's "Start y at 0" checkbox and its hover.
    pub y_from_zero: &'static str,
    /// See [`Tr::y_from_zero`].
    pub y_from_zero_hover: &'static str,
    /// Curves below a zoomed view (minor ones, left out of the y fit): their names.
    pub below_view: fn(&str) -> String,
    /// A Stream-mode curve: stream number (from 1), quantity (Allocated, Activated, Reserved).
    pub stream_series: fn(usize, &str) -> String,
    /// A Stream-mode legend entry's hover: the stream's pointer.
    pub stream_pointer: fn(&str) -> String,
    /// Above the table in Stream mode: how many blocks have no stream and are not listed.
    pub rows_without_stream: fn(&str) -> String,
    // The details table.
    pub details_title: &'static str,
    pub name: &'static str,
    pub search_hint: &'static str,
    pub min_size: &'static str,
    pub max_size: &'static str,
    pub bad_number: &'static str,
    pub within: &'static str,
    pub rows: fn(&str) -> String,
    pub in_zoomed_range: &'static str,
    pub copy: &'static str,
    pub copy_hover: &'static str,
    pub copy_all: &'static str,
    pub copy_all_hover: &'static str,
    pub copied: fn(&str) -> String,
    pub export_csv: &'static str,
    pub export_hover: &'static str,
    pub clear_selection: fn(usize) -> String,
    pub sorting: &'static str,
    pub rows_per_page: &'static str,
    pub first: &'static str,
    pub previous: &'static str,
    pub next: &'static str,
    pub last: &'static str,
    pub page_of: fn(&str, &str) -> String,
    pub go_to_page: &'static str,
    pub go: &'static str,
    pub bad_page: fn(usize) -> String,
    pub sort_hover: fn(&str) -> String,
    pub file_order: &'static str,
    pub largest_first: &'static str,
    pub choose_save: &'static str,
    pub export_cancelled: &'static str,
    pub wrote_rows: fn(&str, &str) -> String,
    pub cannot_write: fn(&str, &Cause) -> String,
    // Live at cursor.
    pub live_title: &'static str,
    pub close: &'static str,
    pub live_summary: fn(&str, &str, &str) -> String,
    pub curves_at_cursor: &'static str,
    pub live_blocks_sum: &'static str,
    pub not_in_operator_memory: &'static str,
    pub not_in_operator_memory_hover: &'static str,
    pub by_operator: &'static str,
    pub operator: &'static str,
    pub total: &'static str,
    pub blocks: &'static str,
    pub largest_blocks: &'static str,
    pub size: &'static str,
    pub allocated_at: &'static str,
    pub before_capture: &'static str,
    // Component and static views, warnings.
    pub component_title: &'static str,
    pub component_none: &'static str,
    pub no_static_graph: &'static str,
    pub graph_ops: fn(&str) -> String,
    pub total_size: fn(&str) -> String,
    pub end_of_graph: &'static str,
    pub node_index: &'static str,
    pub memory_usage_mb: &'static str,
    pub load_warnings: &'static str,
    pub rows_skipped: fn(&str, u64) -> String,
    pub skipped_line: fn(u64, &str, &str) -> String,
    pub lossy_times: fn(usize) -> String,
    /// memory_record and operator_memory lie far apart in time: (how far, e.g. `134.0 days`).
    pub tables_apart: fn(&str) -> String,
    /// The buttons that zoom to one of the two tables.
    pub fit_records: &'static str,
    /// See `fit_records`.
    pub fit_operators: &'static str,
    /// Units of a long duration: days, hours, seconds.
    pub duration_units: [&'static str; 3],
    pub table_only: &'static str,
    /// Under the curves while the rest of the rank loads (progressive display).
    pub rest_loading: &'static str,
    /// The steps tab (with the step count).
    /// The roles tab's title.
    pub roles_tab: &'static str,
    /// Live at cursor: the live blocks by role.
    pub live_by_role: &'static str,
    /// The steps tab: each step's peak split by role.
    pub steps_by_role: &'static str,
    /// While the roles are computed.
    pub roles_computing: &'static str,
    /// The split's title at the cursor (ms).
    pub roles_at_cursor: fn(&str) -> String,
    /// The split's title at the peak (ms).
    pub roles_at_peak: fn(&str) -> String,
    /// The split's total row.
    pub roles_total: &'static str,
    /// Above the advice.
    pub roles_advice_title: &'static str,
    /// Each role's name, in `Role::ALL` order.
    pub role_names: [&'static str; 8],
    /// Advice: activations (MB, holders).
    pub advice_recompute: fn(&str, &str) -> String,
    /// Advice: optimizer state (MB, ranks, saved MB).
    pub advice_shard_optimizer: fn(&str, usize, &str) -> String,
    /// Advice: gradients (MB, ranks, saved MB).
    pub advice_shard_gradients: fn(&str, usize, &str) -> String,
    /// Advice: the pool's cache (MB).
    pub advice_expandable: fn(&str, &str) -> String,
    /// Advice: allocated before profiling (MB).
    pub advice_before_profiling: fn(&str) -> String,
    /// Advice: forward and backward temporaries (MB, the ops holding most).
    pub advice_temporaries: fn(&str, &str) -> String,
    pub steps_tab: fn(usize) -> String,
    /// The steps table's title.
    pub steps_title: &'static str,
    /// Where the steps came from.
    pub steps_source: fn(&str) -> String,
    /// The steps table's headers, in `StepColumn::ALL` order.
    pub step_headers: [&'static str; 12],
    /// Hover text of a step number.
    pub step_zoom_hover: &'static str,
    /// Hover text of a survivors cell.
    pub survivors_hover: &'static str,
    /// Growth: rises, first step, last step, growth text.
    pub growth: fn(usize, i64, i64, &str) -> String,
    /// Before the operators of a growth run.
    pub growth_operators: &'static str,
    /// No growth found.
    pub no_growth: &'static str,
    /// The details table shows a step's survivors: step, blocks.
    pub survivors_of: fn(i64, usize) -> String,
    /// Leaves the survivors filter.
    pub show_all_rows: &'static str,
    /// Title of the breakdown in Live at cursor.
    pub breakdown_title: &'static str,
    /// The parts of the breakdown, in `Part::ALL` order.
    pub breakdown_parts: [&'static str; 6],
    /// Hover texts of the parts.
    pub breakdown_hovers: [&'static str; 6],
    /// The total the parts add to.
    pub breakdown_total: &'static str,
    /// Components named under Runtime.
    pub breakdown_components: &'static str,
    /// The overview toggle in the parameter bar.
    pub overview_button: &'static str,
    /// Its hover text.
    pub overview_hover: &'static str,
    /// The overview's title: ranks summarised, ranks in all.
    pub overview_title: fn(usize, usize) -> String,
    /// The overview table's headers, in `OverviewColumn::ALL` order.
    pub overview_headers: [&'static str; 10],
    /// The spread of peak Operator Allocated: max, its rank, min, its rank, mean, max − min.
    pub overview_spread: fn(&str, &str, &str, &str, &str, &str) -> String,
    /// Outlier ranks (a list).
    pub overview_outliers: fn(&str) -> String,
    /// No outlier.
    /// Rank folders without memory data: how many, their names.
    pub overview_without_data: fn(usize, &str) -> String,
    pub overview_no_outliers: &'static str,
    /// Hover text of a rank in the overview.
    pub open_rank_hover: &'static str,
    /// The bar chart's y axis.
    pub overview_axis: &'static str,
    /// The x axis of a bar per rank.
    pub rank_axis_title: &'static str,
    /// File menu: compare with another profile.
    pub compare_with_menu: &'static str,
    /// Parameter bar: compare with a rank (label of the picker).
    pub compare_with: &'static str,
    /// The picker's "no comparison" entry.
    pub compare_none: &'static str,
    /// Align the baseline at (label of the picker).
    pub align_at: &'static str,
    /// Align at the origins.
    pub align_origins: &'static str,
    /// Align at a step's start.
    pub align_step: fn(i64) -> String,
    /// The legend's note on the dashed curves.
    pub baseline_note: fn(&str) -> String,
    /// While the baseline loads.
    pub baseline_loading: &'static str,
    /// The diff tab.
    pub diff_tab: &'static str,
    /// The diff table's title (the baseline's label).
    pub diff_title: fn(&str) -> String,
    /// The rows the per-operator table leaves out, A's then B's (rows, KB).
    pub diff_not_counted: fn(usize, &str, usize, &str) -> String,
    /// While the diff is computed.
    pub diff_computing: &'static str,
    /// The diff table's headers, in `DiffColumn::ALL` order.
    pub diff_headers: [&'static str; 9],
    /// Before the peak deltas.
    pub peak_deltas: &'static str,
    /// The details table shows the rank on screen.
    pub table_current: &'static str,
    /// The details table shows the baseline.
    pub table_baseline: &'static str,
    /// The baseline could not be loaded (why).
    pub baseline_failed: fn(&str) -> String,
    /// The call stacks tab.
    pub stacks_tab: &'static str,
    /// The details table's row grouping label.
    pub rows_label: &'static str,
    /// Row grouping choices: each block, by call stack, by source line, by host operator.
    pub row_groupings: [&'static str; 5],
    /// Hover text of the row grouping.
    pub rows_hover: &'static str,
    /// Group table headers: group, blocks, total, peak live, calls.
    pub group_headers: [&'static str; 5],
    /// A group without a call stack.
    pub no_stack: &'static str,
    /// A group without a host op.
    pub no_host_op: &'static str,
    /// The flame graph's choices: blocks alive at the cursor, allocated in the view.
    pub flame_modes: [&'static str; 2],
    /// Shown when the flame graph wants a cursor.
    pub flame_needs_cursor: &'static str,
    /// Under the flame graph.
    pub flame_hint: &'static str,
    /// The flame graph's root.
    pub all_blocks: &'static str,
    /// The flame graph's summary: blocks, MB.
    pub flame_summary: fn(&str, &str) -> String,
    /// Before the flame graph's breadcrumb, when zoomed into a frame.
    pub flame_zoomed: &'static str,
    /// The zoomed flame graph's button to the details table: how many blocks.
    pub flame_list_blocks: fn(&str) -> String,
    /// How many allocations have a stack: attributed, total, op without stack, outside any op.
    pub attribution: fn(usize, usize, usize, usize) -> String,
    /// A frame's tooltip: MB, blocks.
    pub frame_tip: fn(&str, u64) -> String,
    /// The details table shows the blocks under a flame graph frame: label, count.
    pub blocks_under: fn(&str, usize) -> String,
    /// The details table shows the blocks of a group: label, count.
    pub blocks_of: fn(&str, usize) -> String,
    /// The call stack tooltip's first line: the host op.
    pub allocated_by: fn(&str) -> String,
    /// No host op was running.
    pub no_op_running: &'static str,
    /// Which files a rank is read from, when it has both.
    pub source_label: &'static str,
    /// Hover text of the source switch.
    pub source_hover: &'static str,
    /// Reading a snapshot: its path.
    pub snapshot_reading: fn(&str) -> String,
    /// A snapshot could not be read: why.
    pub snapshot_failed: fn(&str) -> String,
    /// Why a rank could not be loaded.
    pub load_error: fn(&crate::ingest::LoadError) -> String,
    /// The profile has no rank at this index.
    pub no_rank: fn(usize) -> String,
    /// Why a snapshot could not be read.
    pub snapshot_error: fn(&crate::snapshot::SnapshotProblem) -> String,
    /// The snapshot view's title.
    pub snapshot_title: &'static str,
    /// The device picker's label.
    pub snapshot_device: &'static str,
    /// Back to the end state.
    pub snapshot_end: &'static str,
    /// The peak was before the first event.
    pub snapshot_before_trace: &'static str,
    /// Segments, reserved MB, allocated MB, peak MB, peak event, events.
    pub snapshot_figures: fn(usize, &str, &str, &str, &str, &str) -> String,
    /// The curve's x axis.
    pub snapshot_event_axis: &'static str,
    /// The curve's x axis when the events have times.
    pub snapshot_time_axis: &'static str,
    /// The curve's name.
    pub snapshot_allocated: &'static str,
    /// The picked event's marker.
    pub snapshot_picked: &'static str,
    /// Who holds memory just after event K: event, MB, blocks.
    pub snapshot_at_event: fn(usize, &str, u64) -> String,
    /// Who holds memory at the end.
    pub snapshot_at_end: &'static str,
    /// Leak suspects: blocks.
    pub snapshot_leaks: fn(u64) -> String,
    /// The never-freed blocks' title when the trace ends in an out-of-memory.
    pub snapshot_held_at_oom: fn(u64) -> String,
    /// Under the leak suspects' title: what a click on one does.
    pub snapshot_leaks_hint: &'static str,
    /// A leak suspect's hover line: what a click does.
    pub snapshot_leak_go: &'static str,
    /// An empty "who holds memory" or leak table.
    pub snapshot_nothing_held: &'static str,
    /// Stack table headers: MB, blocks, innermost frame.
    pub snapshot_headers: [&'static str; 3],
    /// The segment map's heading: when (see `snapshot_when_*`), segments, free MB inside them,
    /// its share of reserved (%), the largest free block's MB.
    pub snapshot_segments: fn(&str, usize, &str, &str, &str) -> String,
    /// "At the end", for the segment map's heading.
    pub snapshot_when_end: &'static str,
    /// "Just after event K", for the segment map's heading.
    pub snapshot_when_event: fn(usize) -> String,
    /// Under the active-memory chart: banded allocations, summed ones.
    pub snapshot_bands_legend: fn(usize, usize) -> String,
    /// The summed band on hover: allocations in it now, MB.
    pub snapshot_summed: fn(u32, &str) -> String,
    /// A band on hover: its size (with unit), when allocated, when freed.
    pub snapshot_band: fn(&str, &str, &str) -> String,
    /// Allocated at event K.
    pub snapshot_allocated_at: fn(usize) -> String,
    /// Held before the trace began.
    pub snapshot_held_before: &'static str,
    /// Freed at event K.
    pub snapshot_freed_at: fn(usize) -> String,
    /// Still held at the end.
    pub snapshot_held_at_end: &'static str,
    /// Picks the peak event.
    pub snapshot_go_peak: &'static str,
    /// Why an `oom` event happened: event, asked, free in segments, largest piece, free on the
    /// device (MB, formatted), fragmentation (else exhaustion).
    pub oom_verdict:
        fn(usize, &str, &str, &str, &str, crate::snapshot::oom::OomVerdict, &str) -> String,
    /// Picks the `oom` event.
    pub oom_go: &'static str,
    /// The memUsageInfo table's title, for a device.
    pub oom_modules: fn(i64) -> String,
    /// The heading of msMemScope's OOM rows (the dump's name).
    pub oom_memscope: fn(&str) -> String,
    /// A trigger: the call, the MB asked for, the return code.
    pub oom_memscope_trigger: fn(&str, &str, Option<i64>) -> String,
    /// The columns of msMemScope's OOM records.
    pub oom_memscope_headers: [&'static str; 5],
    /// A record of the largest blocks held.
    pub oom_memscope_top: &'static str,
    /// A record of the latest blocks held.
    pub oom_memscope_recent: &'static str,
    /// The heading of a folder of OOM bundles.
    pub oom_cluster_title: fn(&str) -> String,
    /// How many ran out of how many, and the room they had (MiB).
    pub oom_cluster_summary: fn(usize, usize, Option<&str>) -> String,
    /// The columns of the bundles' table.
    pub oom_cluster_headers: [&'static str; 8],
    /// Snapshots past the most read: (how many, the most).
    pub oom_cluster_left_out: fn(usize, usize) -> String,
    /// A verdict, short.
    pub oom_fragmentation: &'static str,
    /// A verdict, short.
    pub oom_exhaustion: &'static str,
    /// A verdict, short: a limit on the process.
    pub oom_process_limit: &'static str,
    /// How the holders are shown: table, flame graph.
    pub snapshot_views: [&'static str; 2],
    /// The flame graph's hint.
    pub snapshot_flame_hint: &'static str,
    /// The segment map's legend: allocated, pending free, free.
    pub snapshot_block_kinds: [&'static str; 3],
    /// A segment on hover: address, type, MB reserved, allocated, free, largest free block,
    /// blocks.
    pub snapshot_segment_hover: fn(&str, &str, &str, &str, &str, &str, usize) -> String,
    /// Marks an expandable segment.
    pub snapshot_expandable: &'static str,
    /// While the figures of a long trace are computed.
    pub snapshot_computing: &'static str,
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

/// English.
pub static EN: Tr = Tr {
    lang: Lang::En,
    summary_title: |file, n, hosts| {
        format!(
            "Cluster summary {file}: {} on {}",
            counted(n, "rank", "ranks"),
            counted(hosts, "host", "hosts")
        )
    },
    summary_read_in: |s| format!("read in {s} s"),
    summary_reading: |file| format!("Reading {file}…"),
    summary_compare: "Compare with summary…",
    summary_compare_hover: "Pick another summary (before a change): each rank's peak against the same rank's there",
    summary_stop_compare: "Stop comparing",
    summary_copy_hover: "The shown rows, in the table's order, as TSV (pastes into Excel)",
    summary_baseline_error: |e| format!("Could not read the summary to compare with: {e}"),
    summary_error: |e| e.to_string(),
    summary_read_cancelled: "Reading the summary was cancelled.",
    summary_compared: |file, matched, n, before, now| {
        format!(
            "Compared with {file}: {matched} of {} matched (same rank and device) · highest peak {before} → {now} MB",
            counted(n, "rank", "ranks")
        )
    },
    summary_failed: |n| {
        if n == 1 {
            "⚠ 1 rank could not be summarised (its Folder cell says why).".into()
        } else {
            format!("⚠ {n} ranks could not be summarised (their Folder cells say why).")
        }
    },
    summary_notes: |n| format!("Merge notes ({n})"),
    summary_more: |n| format!("+{n} more"),
    summary_worst_step: |step, max, rank, median, ranks| {
        format!(
            "Worst step: {step}, peak {max} MB on rank {rank} (median of {}: {median} MB)",
            counted(ranks, "rank", "ranks")
        )
    },
    summary_no_leaks: "No rank's memory grows step after step (3 rises of 1 MB or more in a row, kept to the end).",
    summary_leaks: |n, list| {
        format!(
            "⚠ {} step after step: {list}",
            if n == 1 {
                "1 rank grows".to_string()
            } else {
                format!("{n} ranks grow")
            }
        )
    },
    summary_leaks_rule: "3 or more rises of 1 MB or more in a row, kept to the end; the growth is counted from the first step's end.",
    summary_before_series: "before",
    summary_no_steps: "No step boundaries in these ranks.",
    summary_step_lines: ["Highest rank", "Median", "Lowest rank"],
    summary_step_axis: "Step",
    summary_time_axis: "Time (ms)",
    summary_host_filter: "Host:",
    summary_host_hint: "part of a host name",
    summary_host_exact: "Whole name",
    summary_host_exact_hover: "Match whole host names only: node7 then matches node7, not node70–node79.",
    summary_top_operator_mb: "Top operator(MB)",
    summary_shown: |shown, n| format!("{shown} of {}", counted(n, "rank", "ranks")),
    summary_header: |c| {
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
    },
    summary_open_hover: "Open this rank's folder",
    summary_curve_hint: "Hover a bar or a row to see that rank; click to pin it.",
    summary_curve_title: |rank, host| format!("Rank {rank} on {host}: min–max per bucket"),
    summary_unpin: "Unpin",
    summary_unreachable: |rank, path, host, machine| {
        let by = machine.map_or(String::new(), |m| format!("; summarised on {m}"));
        format!(
            "Rank {rank}'s folder {path} is not on this machine (the rank ran on {host}{by}). Mount or copy that folder, then open it."
        )
    },
    summary_no_curve: "This rank has no curve in the summary.",
    file: "File",
    open_folder_menu: "Open folder…  (Ctrl+O)",
    open_folder: "Open folder…",
    open_db: "Open file (.db, .json, .csv, .pickle)…",
    recent: "Recent folders",
    none_yet: "(none yet)",
    quit: "Quit",
    view: "View",
    language: "Language",
    theme: "Theme",
    theme_system: "System",
    theme_light: "Light",
    theme_dark: "Dark",
    help: "Help",
    shortcuts_menu: "Keyboard and mouse  (F1)",
    shortcuts_title: "Keyboard and mouse",
    shortcuts: &[
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
        ("F1", "This help"),
    ],
    save_chart: "Save chart as PNG…",
    saved_chart: |p| format!("saved the chart to {p}"),
    report_peak: |name, peak, at| format!("{name} — peak {peak} at {at}"),
    report_title: |profile, rank, host| {
        if host.is_empty() {
            format!("{profile} · rank {rank}")
        } else {
            format!("{profile} · rank {rank} ({host})")
        }
    },
    report_window: |a, b| format!("window {a} – {b}"),
    report_whole: "the whole rank",
    cannot_save_chart: |e| format!("cannot save the chart: {e}"),
    path: "Path",
    open_path_menu: "Open path…  (Ctrl+L)",
    reopen_last: "Reopen the last profile at start",
    demo_banner: "This is a generated demo profile, not your data. Open your own:",
    last_path_gone: |p| format!("The last profile opened, {p}, is no longer there."),
    demo_drop_hint: "or drag a profiling folder onto the window.",
    open_path_title: "Open a path",
    path_dialog_hint: "A profiling folder, a cluster folder, a .db file or an allocator snapshot (.pickle); Enter opens it.",
    path_hint: "type or paste a folder or .db path",
    open: "Open",
    no_such_path: |p| format!("No such file or folder: {p}"),
    dialog_folder: "Open profiling folder",
    dialog_db: "Open a profiler DB or an allocator snapshot (.db, .pickle)",
    dialog_save: "Export CSV",
    dialog_save_button: "Save",
    browser_file: "File:",
    browser_hidden: "Show hidden",
    browser_parent: "Parent folder",
    browser_refresh: "Refresh",
    cancel: "Cancel",
    no_cjk_font: "No Chinese font on this system: the UI uses its bundled glyphs, and rarer characters in data names may show as boxes. Install Noto Sans CJK or WenQuanYi, or set MEMSIGHT_CJK_FONT to a font file.",
    host_name: "Host Name",
    all_hosts: "All hosts",
    rank_id: "Rank ID",
    group_by: "Group By",
    group_names: ["Overall", "Stream", "Component"],
    role_header: "Role",
    module_header: "Module",
    static_graph: "Static graph",
    graph_id: "Graph ID",
    warnings: |n| format!("⚠ {n} {}", if n == 1 { "warning" } else { "warnings" }),
    notes: |n| format!("ℹ {n} {}", if n == 1 { "note" } else { "notes" }),
    no_profile: "No profile open: use File, Open folder… or drop a folder here.",
    loading: "Loading…",
    nothing_to_show: "Nothing to show",
    welcome: "Open a profiling folder (*_ascend_pt, *_ascend_ms, PROF_*, a cluster folder) or an ascend_pytorch_profiler*.db.",
    loading_progress: |what, files, done, total, rate| {
        format!(
            "loading {what}: {}, {done} of {total} MB, {rate} MB/s",
            plural::count(files, "file", "files")
        )
    },
    load_cancelled: "Loading was cancelled.",
    retry: "Retry",
    retry_hover: "Load the same profile and rank again",
    retry_overview_hover: "Summarise every rank again",
    load_stopped: "Loading stopped without a result.",
    job_failed: |what, why| {
        format!("A background task failed ({what}); the rest of memsight goes on. Cause: {why}")
    },
    dismiss: "Dismiss",
    cannot_open: |p, why| format!("cannot open {p}: {why}"),
    no_memory_data: |p, depth, extra| {
        format!(
            "no memory data found under {p}: looked for memory_record*.csv (torch_npu, \
             MindSpore, msprof) and ascend_pytorch_profiler*.db / ascend_mindspore_profiler*.db, \
             up to {} deep{extra}",
            counted(depth, "folder", "folders")
        )
    },
    reset_zoom: "Reset zoom",
    reset_zoom_hover: "Show the whole rank (Esc, or double-click the chart)",
    chart_hint: "drag: box zoom · wheel: zoom · right-drag or Shift+wheel: pan · click: live at cursor",
    sampled: |drawn, total| {
        format!("sampled (LTTB): showing {drawn} of {total} points — zoom in for full detail")
    },
    building_curves: |g| format!("Building the {g} curves…"),
    no_curves: |g| format!("No {g} curves in this rank's memory_record."),
    time_axis: "Time (ms)",
    memory_axis: |u| format!("Memory ({u})"),
    peak: |v| format!("peak {v}"),
    peak_beyond: |v, at, right| {
        if right {
            format!("peak {v} at {at} ms →")
        } else {
            format!("← peak {v} at {at} ms")
        }
    },
    in_view: "In view",
    min: "Min",
    max: "Max",
    change: "Δ (end − start)",
    go_to_peak: "Go to peak",
    curve_help: curve_help_en,
    stream_series: |k, q| format!("Stream {k} {q}"),
    y_from_zero: "y from 0",
    y_from_zero_hover: "Start the memory axis at 0. Off, it fits the curves in view; curves under 5 % of the largest do not pull it down.",
    below_view: |names| format!("below the view: {names} (tick \"y from 0\" to see them)"),
    stream_pointer: |p| format!("Stream pointer {p}"),
    rows_without_stream: |n| {
        if n == "1" {
            "1 block without a stream is not listed in Stream mode (as in Insight).".to_string()
        } else {
            format!("{n} blocks without a stream are not listed in Stream mode (as in Insight).")
        }
    },
    details_title: "Memory Allocation/Release Details",
    name: "Name",
    search_hint: "search",
    min_size: "Min Size(KB)",
    max_size: "Max Size(KB)",
    bad_number: "not a number: this bound is ignored",
    within: "Only allocated or released within the selection",
    rows: |n| format!("{n} {}", noun(n, "row", "rows")),
    in_zoomed_range: "(in the zoomed range)",
    copy: "Copy",
    copy_hover: "Selected rows, or this page, as TSV for Excel (Ctrl+C)",
    copy_all: "Copy all",
    copy_all_hover: "Every row that matches the filters, in the table's order, as TSV",
    copied: |n| format!("Copied {n} {}", noun(n, "row", "rows")),
    export_csv: "Export CSV…",
    export_hover: "Every matching row, to a file",
    clear_selection: |n| format!("Clear selection ({n})"),
    sorting: "sorting…",
    rows_per_page: "rows per page",
    first: "First",
    previous: "Previous",
    next: "Next",
    last: "Last",
    page_of: |a, b| format!("Page {a} of {b}"),
    go_to_page: "Go to page",
    go: "Go",
    bad_page: |n| format!("enter a page from 1 to {n}"),
    sort_hover: |d| format!("Sort: ascending → descending → {d}"),
    file_order: "file order",
    largest_first: "largest peak first",
    choose_save: "choose where to save the CSV…",
    export_cancelled: "export cancelled",
    wrote_rows: |n, p| format!("wrote {n} {} to {p}", noun(n, "row", "rows")),
    cannot_write: |p, e| format!("cannot write {p}: {e}"),
    live_title: "Live at cursor",
    close: "Close",
    live_summary: |t, n, total| format!("{t}: {n} {}, {total}", noun(n, "block", "blocks")),
    curves_at_cursor: "Curves at the cursor",
    live_blocks_sum: "Live blocks (operator_memory)",
    not_in_operator_memory: "Not in operator_memory",
    not_in_operator_memory_hover: "Operator Allocated minus the live blocks: memory allocated before profiling began (its blocks are not in operator_memory) or by allocations the profiler did not record",
    by_operator: "By operator",
    operator: "Operator",
    total: "Total",
    blocks: "Blocks",
    largest_blocks: "Largest blocks",
    size: "Size",
    allocated_at: "Allocated at",
    before_capture: "before capture",
    component_title: "Component peak memory (npu_module_mem, components ≥ 100 MB)",
    component_none: "No component reaches 100 MB (or the rank has no npu_module_mem).",
    no_static_graph: "This rank has no static graph.",
    graph_ops: |g| format!("Graph {g} ops"),
    total_size: |s| format!("Total Size {s}"),
    end_of_graph: "end of graph",
    node_index: "Node Index",
    memory_usage_mb: "Memory Usage (MB)",
    load_warnings: "Load warnings",
    rows_skipped: |p, n| format!("{p}: {n} {} skipped", if n == 1 { "row" } else { "rows" }),
    skipped_line: |n, why, text| format!("line {n}: {why} — {text}"),
    lossy_times: |n| {
        format!(
            "⚠ Timestamps in {n} file(s) were saved in scientific notation (like 1.69512E+15), \
             probably by Excel: they lost their precision, so times here are only approximate. \
             Open the profiler's original files (not a copy saved by Excel) or its .db export."
        )
    },
    tables_apart: |gap| {
        format!(
            "⚠ memory_record and operator_memory are {gap} apart (different clocks, or times \
             rounded by Excel): the whole rank shows each as a speck."
        )
    },
    fit_records: "Fit to memory_record",
    fit_operators: "Fit to operator_memory",
    duration_units: ["days", "h", "s"],
    table_only: "This rank has no memory_record: there are no curves, only the allocations below.",
    rest_loading: "Loading operator_memory and the rest of the rank… the table, steps and call stacks appear when it is read.",
    roles_tab: "Memory by role",
    live_by_role: "Live blocks by role",
    steps_by_role: "Each step's peak by role",
    roles_computing: "Working out each block's role…",
    roles_at_cursor: |ms| format!("Roles at the cursor ({ms} ms)"),
    roles_at_peak: |ms| format!("Roles at the Operator Allocated peak ({ms} ms)"),
    roles_total: "Total",
    roles_advice_title: "What would lower the peak",
    role_names: [
        "before profiling",
        "optimizer state",
        "gradient",
        "input",
        "activation",
        "backward temporary",
        "temporary",
        "unknown",
    ],
    advice_recompute: |mb, who| {
        format!(
            "Activations hold {mb} at the peak: recompute them (activation checkpointing) or use a smaller micro-batch. Held most by: {who}"
        )
    },
    advice_shard_optimizer: |mb, n, saves| {
        if n <= 1 {
            return format!(
                "Optimizer state allocated in the profile holds {mb} at the peak: sharding it over N data-parallel ranks (ZeRO-1, distributed optimizer) saves (N−1)/N of it (this profile has one rank)"
            );
        }
        format!(
            "Optimizer state allocated in the profile holds {mb} at the peak: sharding it over the {n} data-parallel ranks (ZeRO-1, distributed optimizer) saves {saves} on this rank"
        )
    },
    advice_shard_gradients: |mb, n, saves| {
        if n <= 1 {
            return format!(
                "Gradients hold {mb} at the peak: sharding them over N ranks (ZeRO-2, FSDP) saves (N−1)/N of it (this profile has one rank); smaller DDP buckets lower the extra copies"
            );
        }
        format!(
            "Gradients hold {mb} at the peak: sharding them over the {n} ranks (ZeRO-2, FSDP) saves {saves}; smaller DDP buckets lower the extra copies"
        )
    },
    advice_temporaries: |mb, who| {
        format!(
            "Temporaries (forward and backward intermediates) hold {mb} at the peak: in-place ops, fused kernels (fused attention, fused optimizer) or computing in smaller chunks lower them. Held most by: {who}"
        )
    },
    advice_expandable: |mb, conf| {
        format!(
            "The pool caches {mb} at the peak (Operator Reserved − Allocated):\n{conf}=expandable_segments:True lets it reuse that memory instead of reserving more"
        )
    },
    advice_before_profiling: |mb| {
        format!(
            "{mb} was allocated before profiling began (weights, optimizer state of earlier steps, buffers): the profile cannot tell them apart; profiling from step 1 splits it by role"
        )
    },
    steps_tab: |n| format!("Steps ({n})"),
    steps_title: "Memory per step",
    steps_source: |s| format!("steps from {s}"),
    step_headers: [
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
    ],
    step_zoom_hover: "Zoom the chart to this step",
    survivors_hover: "Blocks allocated in this step and still alive at its end: click to list exactly them in the details table",
    growth: |n, a, b, mb| {
        format!(
            "⚠ Possible leak: Operator Allocated at the end of each step rose {n} steps in a row (#{a} → #{b}, {mb})."
        )
    },
    growth_operators: "Allocated in those steps and still alive, by operator:",
    no_growth: "No growth: the end-of-step value does not rise 3 steps in a row.",
    survivors_of: |s, n| {
        format!(
            "Survivors of step #{s}: {n} {}",
            if n == 1 { "block" } else { "blocks" }
        )
    },
    show_all_rows: "Show all",
    breakdown_title: "Where the memory is",
    breakdown_parts: [
        "Live blocks",
        "Allocated, not in operator_memory",
        "Cached in the pool",
        "Workspace",
        "CANN runtime and other components",
        "Other processes",
    ],
    breakdown_hovers: [
        "Blocks of operator_memory alive at the cursor",
        "Operator Allocated minus the live blocks: allocated before profiling started, or not recorded",
        "Operator Reserved minus Operator Allocated: held by the framework's caching allocator (free or fragmented)",
        "Workspace Reserved (CANN operator workspaces)",
        "APP Reserved minus Operator Reserved and Workspace: CANN runtime, HCCL, graph engine and other components",
        "Device memory in use minus APP Reserved: other processes on this NPU",
    ],
    breakdown_total: "Total",
    breakdown_components: "Components (npu_module_mem)",
    overview_button: "Cluster overview",
    overview_hover: "Every rank's peaks side by side: which rank is worst",
    overview_title: |done, n| {
        format!(
            "Cluster overview: {done} of {} summarised",
            counted(n, "rank", "ranks")
        )
    },
    overview_headers: [
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
    ],
    overview_spread: |max, max_rank, min, min_rank, mean, range| {
        format!(
            "Peak Operator Allocated: max {max} (rank {max_rank}) · min {min} (rank {min_rank}) · mean {mean} · max − min {range}"
        )
    },
    overview_outliers: |list| format!("⚠ Outliers: {list}"),
    overview_no_outliers: "No outlier (ranks beyond 1.5 × IQR of the quartiles).",
    overview_without_data: |n, names| {
        if n == 1 {
            format!(
                "1 rank folder holds no memory data and is not shown: {names} (profile it with profile_memory=True)."
            )
        } else {
            format!(
                "{n} rank folders hold no memory data and are not shown: {names} (profile them with profile_memory=True)."
            )
        }
    },
    open_rank_hover: "Open this rank",
    overview_axis: "Peak (MB)",
    rank_axis_title: "Rank",
    compare_with_menu: "Compare with…",
    compare_with: "Compare with",
    compare_none: "nothing",
    align_at: "Align at",
    align_origins: "origins",
    align_step: |s| format!("start of step #{s}"),
    baseline_note: |l| format!("dashed: baseline {l}"),
    baseline_loading: "loading the baseline…",
    diff_tab: "Diff vs baseline",
    diff_title: |l| format!("Per operator: baseline A = {l}, B = this rank"),
    diff_not_counted: |a, akb, b, bkb| {
        format!(
            "Not counted: rows with a negative size, releases of memory allocated before profiling (A: {} of {akb} KB, B: {} of {bkb} KB).",
            counted(a, "row", "rows"),
            counted(b, "row", "rows")
        )
    },
    diff_computing: "comparing the operators…",
    diff_headers: [
        "Name",
        "A(KB)",
        "B(KB)",
        "Delta(KB)",
        "A blocks",
        "B blocks",
        "A at peak(MB)",
        "B at peak(MB)",
        "Delta at peak(MB)",
    ],
    peak_deltas: "Peaks A → B:",
    table_current: "Table: this rank",
    table_baseline: "Table: baseline",
    baseline_failed: |e| format!("cannot compare: {e}"),
    stacks_tab: "Flame graph",
    rows_label: "Rows:",
    row_groupings: [
        "Each block",
        "By call stack",
        "By source line",
        "By host operator",
        "By role",
    ],
    rows_hover: "Group the blocks the filters match by who allocated them; click a group to list its blocks",
    group_headers: ["Group", "Blocks", "Total(MB)", "Peak live(MB)", "Calls"],
    no_stack: "(no call stack)",
    no_host_op: "(no host op running)",
    flame_modes: ["Alive at cursor", "Allocated in view"],
    flame_needs_cursor: "Click the chart to place the cursor: the graph shows the blocks alive there.",
    flame_hint: "Width is memory. Click a frame to zoom into it; the details table then lists its blocks.",
    all_blocks: "All blocks",
    flame_summary: |n, size| format!("{n} {}, {size}", noun(n, "block", "blocks")),
    flame_zoomed: "Zoomed into:",
    flame_list_blocks: |n| format!("List its {n} {}", noun(n, "block", "blocks")),
    attribution: |a, t, ns, o| {
        format!(
            "{a} of {} {} a call stack ({ns} in an op without one, {o} outside any host op)",
            counted(t, "allocation", "allocations"),
            if a == 1 { "has" } else { "have" }
        )
    },
    frame_tip: |size, n| format!("{size} in {n} {}", if n == 1 { "block" } else { "blocks" }),
    blocks_under: |l, n| format!("Blocks under {l}: {n}"),
    blocks_of: |l, n| format!("Blocks of {l}: {n}"),
    allocated_by: |op| format!("Allocated in {op}"),
    no_op_running: "No host op was running when it was allocated",
    source_label: "Data:",
    source_hover: "This rank has both a DB and CSV files: choose which to read",
    snapshot_reading: |p| format!("Reading the allocator snapshot {p}…"),
    snapshot_failed: |e| format!("Cannot read this snapshot: {e}"),
    load_error: |e| e.to_string(),
    no_rank: |i| format!("no rank at index {i}"),
    snapshot_error: |p| match p {
        crate::snapshot::SnapshotProblem::Read(e) => e.to_string(),
        crate::snapshot::SnapshotProblem::Task(e) => e.clone(),
    },
    snapshot_title: "Allocator snapshot",
    snapshot_device: "Device:",
    snapshot_end: "Back to the end",
    snapshot_before_trace: "before the first event",
    snapshot_figures: |seg, res, alloc, peak, at, ev| {
        format!(
            "{} · reserved {res} MB · allocated at the end {alloc} MB · peak allocated {peak} MB at event {at} · {ev} {}",
            counted(seg, "segment", "segments"),
            noun(ev, "event", "events")
        )
    },
    snapshot_event_axis: "Allocator event",
    snapshot_time_axis: "Time since the first event (ms)",
    snapshot_allocated: "Allocated",
    snapshot_picked: "Picked event",
    snapshot_at_event: |k, mb, n| {
        format!(
            "Who holds memory just after event #{k}: {mb} MB in {}",
            plural::count(n, "block", "blocks")
        )
    },
    snapshot_at_end: "Who holds memory at the end (click the curve to pick an event)",
    snapshot_nothing_held: "No block is held here.",
    snapshot_leaks_hint: "Click a stack to go to where its last block was allocated.",
    snapshot_leak_go: "Click: go to the event that allocated its last block that is never freed",
    snapshot_held_at_oom: |n| {
        format!(
            "Held at the OOM: {n} {} allocated in the trace and not freed when the allocation failed",
            if n == 1 { "block" } else { "blocks" }
        )
    },
    snapshot_leaks: |n| {
        format!(
            "Leak suspects: {n} {} allocated in the trace and never freed",
            if n == 1 { "block" } else { "blocks" }
        )
    },
    snapshot_segments: |when, n, free, pct, largest| {
        format!(
            "Segments {when}: {n} · free inside segments {free} MB ({pct} % of reserved) · largest free block {largest} MB"
        )
    },
    snapshot_when_end: "at the end",
    snapshot_when_event: |k| format!("just after event #{k}"),
    snapshot_bands_legend: |n, m| match m {
        // Every allocation has a band of its own: no grey band to explain.
        0 => format!(
            "Each band is one allocation, coloured by its innermost frame ({n} in all). Drag to zoom, double-click to see all, click to pick an event."
        ),
        _ => format!(
            "Each band is one allocation, coloured by its innermost frame: the {n} largest have their own, the other {m} are summed in grey on top. Drag to zoom, double-click to see all, click to pick an event."
        ),
    },
    snapshot_summed: |n, mb| format!("{n} smaller allocations, summed: {mb} MB"),
    snapshot_band: |size, from, to| format!("{size} · {from} · {to}"),
    snapshot_allocated_at: |k| format!("allocated at event #{k}"),
    snapshot_held_before: "held before the trace began",
    snapshot_freed_at: |k| format!("freed at event #{k}"),
    snapshot_held_at_end: "still held at the end",
    snapshot_go_peak: "Go to the peak",
    oom_verdict: |k, asked, free, largest, device, verdict, conf| {
        use crate::snapshot::oom::OomVerdict as V;
        let why = match verdict {
            V::Fragmentation => format!(
                "Fragmentation: the memory was there, in pieces too small. Try \
                 {conf}=expandable_segments:True, or free the cache before this step."
            ),
            V::Exhaustion => "Exhaustion: not enough was free. Hold less: recompute activations, \
                 a smaller micro-batch, shard optimizer state."
                .to_string(),
            V::ProcessLimit => "A limit on the process: the device had it free, but this process \
                 could not get it (a per-process memory fraction, or another process's \
                 reservation). Raise the limit, or hold less."
                .to_string(),
        };
        format!(
            "Out of memory at event #{k}: asked for {asked} MB; free in the allocator's segments \
             {free} MB (largest piece {largest} MB), free on the device {device} MB. {why}"
        )
    },
    oom_go: "Go to the OOM",
    oom_modules: |d| format!("Memory by CANN module at the OOM (memUsageInfo, NPU:{d})"),
    oom_memscope: |file| format!("msMemScope at the OOM ({file})"),
    oom_memscope_trigger: |func, asked, ret| {
        let ret = ret.map_or(String::new(), |r| format!(", return code {r}"));
        format!(
            "{func} asked for {asked} MB and failed{ret}. The blocks held then, largest and latest:"
        )
    },
    oom_memscope_headers: [
        "List",
        "Pool",
        "Size (MB)",
        "Address",
        "Python (innermost frame)",
    ],
    oom_memscope_top: "largest",
    oom_memscope_recent: "latest",
    oom_cluster_title: |dir| format!("Out-of-memory bundles in {dir}"),
    oom_cluster_summary: |out, all, room| {
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
    },
    oom_cluster_headers: [
        "File",
        "Device",
        "Ran out",
        "Requested (MB)",
        "Device free (MB)",
        "Reserved (MB)",
        "Peak allocated (MB)",
        "Headroom (MB)",
    ],
    oom_cluster_left_out: |n, most| format!("{n} more snapshots not read (at most {most} are)"),
    oom_fragmentation: "fragmentation",
    oom_exhaustion: "exhaustion",
    oom_process_limit: "process limit",
    snapshot_views: ["Table", "Flame graph"],
    snapshot_flame_hint: "Width is memory; the outermost frame on top. Click a frame to list its blocks.",
    snapshot_block_kinds: ["allocated", "pending free", "free"],
    snapshot_segment_hover: |addr, kind, total, alloc, free, largest, blocks| {
        format!(
            "{addr} ({kind}): {total} MB reserved, {alloc} MB allocated, {free} MB free, largest free block {largest} MB, {}",
            counted(blocks, "block", "blocks")
        )
    },
    snapshot_expandable: "expandable",
    snapshot_computing: "Computing the figures for this event…",
    snapshot_headers: [
        "MB",
        "Blocks",
        "Allocated at (innermost frame; hover for the stack)",
    ],
};

/// 简体中文.
pub static ZH: Tr = Tr {
    lang: Lang::Zh,
    summary_title: |file, n, hosts| format!("集群汇总 {file}：{hosts} 台主机上的 {n} 个 rank"),
    summary_read_in: |s| format!("读取用时 {s} 秒"),
    summary_reading: |file| format!("正在读取 {file}…"),
    summary_compare: "与另一汇总对比…",
    summary_compare_hover: "选择另一个汇总（改动之前的）：逐 rank 对比峰值",
    summary_stop_compare: "停止对比",
    summary_copy_hover: "按表格当前顺序，以 TSV 复制显示的行（可粘贴到 Excel）",
    summary_baseline_error: |e| format!("无法读取用于对比的汇总：{e}"),
    summary_error: zh_summary_error,
    summary_read_cancelled: "已取消读取汇总。",
    summary_compared: |file, matched, n, before, now| {
        format!(
            "与 {file} 对比：{n} 个 rank 中 {matched} 个匹配（同 rank 同设备）· 最高峰值 {before} → {now} MB"
        )
    },
    summary_failed: |n| format!("⚠ {n} 个 rank 未能汇总（原因见“文件夹”列）。"),
    summary_notes: |n| format!("合并说明（{n}）"),
    summary_more: |n| format!("另有 {n} 个"),
    summary_worst_step: |step, max, rank, median, ranks| {
        format!(
            "最差的迭代：{step}，rank {rank} 峰值 {max} MB（{ranks} 个 rank 的中位数：{median} MB）"
        )
    },
    summary_no_leaks: "没有 rank 的内存逐迭代增长（连续 3 次上升且每次不少于 1 MB，并保持到最后）。",
    summary_leaks: |n, list| format!("⚠ {n} 个 rank 的内存逐迭代增长：{list}"),
    summary_leaks_rule: "连续 3 次以上上升且每次不少于 1 MB，并保持到最后；增长量自第一个迭代结束时起计算。",
    summary_before_series: "对比基准",
    summary_no_steps: "这些 rank 没有迭代边界。",
    summary_step_lines: ["最高 rank", "中位数", "最低 rank"],
    summary_step_axis: "迭代",
    summary_time_axis: "时间 (ms)",
    summary_host_filter: "主机：",
    summary_host_hint: "主机名的一部分",
    summary_host_exact: "完整名称",
    summary_host_exact_hover: "只匹配完整的主机名：node7 只匹配 node7，不匹配 node70–node79。",
    summary_top_operator_mb: "占用最多的算子(MB)",
    summary_shown: |shown, n| format!("显示 {shown}/{n} 个 rank"),
    summary_header: |c| {
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
    },
    summary_open_hover: "打开此 rank 的文件夹",
    summary_curve_hint: "鼠标悬停在柱或行上查看该 rank；单击可固定。",
    summary_curve_title: |rank, host| format!("{host} 上的 rank {rank}：每段的最小–最大值"),
    summary_unpin: "取消固定",
    summary_unreachable: |rank, path, host, machine| {
        let by = machine.map_or(String::new(), |m| format!("；在 {m} 上汇总"));
        format!(
            "rank {rank} 的文件夹 {path} 不在本机（该 rank 运行于 {host}{by}）。请挂载或复制该文件夹后再打开。"
        )
    },
    summary_no_curve: "汇总中没有此 rank 的曲线。",
    file: "文件",
    open_folder_menu: "打开文件夹…  (Ctrl+O)",
    open_folder: "打开文件夹…",
    open_db: "打开文件 (.db, .json, .csv, .pickle)…",
    recent: "最近打开",
    none_yet: "（暂无）",
    quit: "退出",
    view: "视图",
    language: "语言",
    theme: "主题",
    theme_system: "跟随系统",
    theme_light: "浅色",
    theme_dark: "深色",
    help: "帮助",
    shortcuts_menu: "键盘与鼠标  (F1)",
    shortcuts_title: "键盘与鼠标",
    shortcuts: &[
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
        ("F1", "本帮助"),
    ],
    save_chart: "将图表另存为 PNG…",
    saved_chart: |p| format!("图表已保存到 {p}"),
    report_peak: |name, peak, at| format!("{name} — 峰值 {peak}，于 {at}"),
    report_title: |profile, rank, host| {
        if host.is_empty() {
            format!("{profile} · rank {rank}")
        } else {
            format!("{profile} · rank {rank} ({host})")
        }
    },
    report_window: |a, b| format!("时间窗口 {a} – {b}"),
    report_whole: "整个 rank",
    cannot_save_chart: |e| format!("无法保存图表：{e}"),
    path: "路径",
    open_path_menu: "打开路径…  (Ctrl+L)",
    reopen_last: "启动时重新打开上次的数据",
    demo_banner: "这是生成的演示数据，不是你的数据。打开你自己的数据：",
    last_path_gone: |p| format!("上次打开的数据 {p} 已不存在。"),
    demo_drop_hint: "或把性能数据文件夹拖到窗口上。",
    open_path_title: "打开路径",
    path_dialog_hint: "性能数据文件夹、集群文件夹、.db 文件或分配器快照（.pickle）；按回车打开。",
    path_hint: "输入或粘贴文件夹或 .db 路径",
    open: "打开",
    no_such_path: |p| format!("文件或文件夹不存在：{p}"),
    dialog_folder: "打开性能数据文件夹",
    dialog_db: "打开性能数据库或内存快照（.db、.pickle）",
    dialog_save: "导出 CSV",
    dialog_save_button: "保存",
    browser_file: "文件：",
    browser_hidden: "显示隐藏文件",
    browser_parent: "上一级文件夹",
    browser_refresh: "刷新",
    cancel: "取消",
    no_cjk_font: "系统中未找到中文字体：界面使用内置字形，数据名称中的生僻字可能显示为方框。请安装 Noto Sans CJK 或文泉驿字体，或将 MEMSIGHT_CJK_FONT 设为字体文件路径。",
    host_name: "主机名",
    all_hosts: "全部主机",
    rank_id: "Rank 编号",
    group_by: "分组方式",
    group_names: ["总体", "按流 (Stream)", "按组件 (Component)"],
    role_header: "角色",
    module_header: "模块",
    static_graph: "静态图",
    graph_id: "图 ID",
    warnings: |n| format!("⚠ {n} 条警告"),
    notes: |n| format!("ℹ {n} 条说明"),
    no_profile: "未打开数据：请使用“文件”菜单中的“打开文件夹…”，或把文件夹拖到这里。",
    loading: "正在加载…",
    nothing_to_show: "没有可显示的内容",
    welcome: "打开性能数据文件夹（*_ascend_pt、*_ascend_ms、PROF_*、集群文件夹）或 ascend_pytorch_profiler*.db。",
    loading_progress: |what, files, done, total, rate| {
        format!("正在加载 {what}：{files} 个文件，{done} / {total} MB，{rate} MB/s")
    },
    load_cancelled: "加载已取消。",
    retry: "重试",
    retry_hover: "重新加载同一个性能数据和 rank",
    retry_overview_hover: "重新汇总所有 rank",
    load_stopped: "加载未完成即停止。",
    job_failed: |what, why| {
        format!("后台任务失败（{what}），memsight 的其余部分照常工作。原因：{why}")
    },
    dismiss: "关闭",
    cannot_open: |p, why| format!("无法打开 {p}：{why}"),
    no_memory_data: |p, depth, extra| {
        format!(
            "在 {p} 下没有找到内存数据：已查找 memory_record*.csv（torch_npu、MindSpore、msprof）\
             和 ascend_pytorch_profiler*.db / ascend_mindspore_profiler*.db，最深 {depth} 层文件夹{extra}"
        )
    },
    reset_zoom: "重置缩放",
    reset_zoom_hover: "显示整个 rank（Esc，或双击图表）",
    chart_hint: "拖动：框选放大 · 滚轮：缩放 · 右键拖动或 Shift+滚轮：平移 · 单击：光标处存活内存",
    sampled: |drawn, total| {
        format!("已采样 (LTTB)：显示 {total} 个点中的 {drawn} 个——放大可看全部细节")
    },
    building_curves: |g| format!("正在生成 {g} 曲线…"),
    no_curves: |g| format!("此 rank 的 memory_record 中没有 {g} 曲线。"),
    time_axis: "时间 (ms)",
    memory_axis: |u| format!("内存 ({u})"),
    peak: |v| format!("峰值 {v}"),
    peak_beyond: |v, at, right| {
        if right {
            format!("峰值 {v}（{at} ms）→")
        } else {
            format!("← 峰值 {v}（{at} ms）")
        }
    },
    in_view: "视图内",
    min: "最小",
    max: "最大",
    change: "Δ（结束 − 开始）",
    go_to_peak: "转到峰值",
    curve_help: curve_help_zh,
    stream_series: |k, q| format!("流 {k} {q}"),
    y_from_zero: "纵轴从 0 开始",
    y_from_zero_hover: "内存轴从 0 开始。关闭时纵轴适配视图内的曲线；低于最大值 5% 的曲线不会把纵轴拉低。",
    below_view: |names| format!("视图下方：{names}（勾选“纵轴从 0 开始”可查看）"),
    stream_pointer: |p| format!("流指针 {p}"),
    rows_without_stream: |n| format!("{n} 个没有流的内存块在“流”模式下不列出（与 Insight 一致）。"),
    details_title: "内存申请/释放详情",
    name: "名称",
    search_hint: "搜索",
    min_size: "最小 Size(KB)",
    max_size: "最大 Size(KB)",
    bad_number: "不是数字：忽略此条件",
    within: "仅显示在选区内申请或释放的块",
    rows: |n| format!("{n} 行"),
    in_zoomed_range: "（缩放范围内）",
    copy: "复制",
    copy_hover: "以 TSV 复制选中的行（或本页），可直接粘贴到 Excel（Ctrl+C）",
    copy_all: "复制全部",
    copy_all_hover: "按表格当前顺序，以 TSV 复制所有符合筛选条件的行",
    copied: |n| format!("已复制 {n} 行"),
    export_csv: "导出 CSV…",
    export_hover: "把所有符合条件的行写入文件",
    clear_selection: |n| format!("清除选择 ({n})"),
    sorting: "正在排序…",
    rows_per_page: "每页行数",
    first: "首页",
    previous: "上一页",
    next: "下一页",
    last: "末页",
    page_of: |a, b| format!("第 {a} / {b} 页"),
    go_to_page: "跳转到页",
    go: "跳转",
    bad_page: |n| format!("请输入 1 到 {n} 之间的页码"),
    sort_hover: |d| format!("排序：升序 → 降序 → {d}"),
    file_order: "文件顺序",
    largest_first: "峰值从大到小",
    choose_save: "请选择 CSV 的保存位置…",
    export_cancelled: "已取消导出",
    wrote_rows: |n, p| format!("已将 {n} 行写入 {p}"),
    cannot_write: |p, e| format!("无法写入 {p}：{}", e.render(L::Zh)),
    live_title: "光标处存活内存",
    close: "关闭",
    live_summary: |t, n, total| format!("{t}：{n} 个块，共 {total}"),
    curves_at_cursor: "光标处的曲线值",
    live_blocks_sum: "存活块合计 (operator_memory)",
    not_in_operator_memory: "不在 operator_memory 中",
    not_in_operator_memory_hover: "Operator Allocated 减去存活块：采集开始前已申请的内存（其块不在 operator_memory 中），或采集未记录的申请",
    by_operator: "按算子",
    operator: "算子",
    total: "合计",
    blocks: "块数",
    largest_blocks: "最大的块",
    size: "大小",
    allocated_at: "申请时间",
    before_capture: "采集开始前",
    component_title: "组件峰值内存（npu_module_mem，组件 ≥ 100 MB）",
    component_none: "没有组件达到 100 MB（或此 rank 没有 npu_module_mem）。",
    no_static_graph: "此 rank 没有静态图。",
    graph_ops: |g| format!("图 {g} 的算子"),
    total_size: |s| format!("总大小 {s}"),
    end_of_graph: "图结束",
    node_index: "节点索引",
    memory_usage_mb: "内存使用 (MB)",
    load_warnings: "加载警告",
    rows_skipped: |p, n| format!("{p}：跳过 {n} 行"),
    skipped_line: |n, why, text| format!("第 {n} 行：{why} — {text}"),
    tables_apart: |gap| {
        format!(
            "⚠ memory_record 与 operator_memory 在时间上相距 {gap}（时钟不同，或时间被 Excel 舍入）：\
             整个 rank 的视图中二者都只是一个点。"
        )
    },
    fit_records: "缩放到 memory_record",
    fit_operators: "缩放到 operator_memory",
    duration_units: ["天", "小时", "秒"],
    lossy_times: |n| {
        format!(
            "⚠ 有 {n} 个文件的时间戳以科学计数法保存（如 1.69512E+15），多半是经 Excel 另存所致：\
             精度已丢失，这里的时间只是近似值。请打开性能工具生成的原始文件（不要用 Excel 另存的副本），或使用 .db 导出。"
        )
    },
    table_only: "此 rank 没有 memory_record：没有曲线，只有下面的内存申请记录。",
    rest_loading: "正在加载 operator_memory 等其余数据…… 读完后显示表格、迭代步和调用栈。",
    roles_tab: "按角色的内存",
    live_by_role: "存活内存块按角色",
    steps_by_role: "各迭代峰值按角色拆分",
    roles_computing: "正在判断每个内存块的角色…",
    roles_at_cursor: |ms| format!("光标处的角色（{ms} ms）"),
    roles_at_peak: |ms| format!("Operator Allocated 峰值处的角色（{ms} ms）"),
    roles_total: "合计",
    roles_advice_title: "如何降低峰值",
    role_names: [
        "采集前已分配",
        "优化器状态",
        "梯度",
        "输入",
        "激活值",
        "反向临时内存",
        "临时内存",
        "未知",
    ],
    advice_recompute: |mb, who| {
        format!(
            "峰值时激活值占 {mb}：可用重计算（activation checkpointing）或减小 micro-batch。占用最多的位置：{who}"
        )
    },
    advice_shard_optimizer: |mb, n, saves| {
        if n <= 1 {
            return format!(
                "采集中分配的优化器状态在峰值时占 {mb}：在 N 个数据并行 rank 间切分（ZeRO-1、分布式优化器）可节省其中的 (N−1)/N（本数据只有 1 个 rank）"
            );
        }
        format!(
            "采集中分配的优化器状态在峰值时占 {mb}：在 {n} 个数据并行 rank 间切分（ZeRO-1、分布式优化器）可在本 rank 节省 {saves}"
        )
    },
    advice_shard_gradients: |mb, n, saves| {
        if n <= 1 {
            return format!(
                "峰值时梯度占 {mb}：在 N 个 rank 间切分（ZeRO-2、FSDP）可节省其中的 (N−1)/N（本数据只有 1 个 rank）；减小 DDP bucket 可减少额外拷贝"
            );
        }
        format!(
            "峰值时梯度占 {mb}：在 {n} 个 rank 间切分（ZeRO-2、FSDP）可节省 {saves}；减小 DDP bucket 可减少额外拷贝"
        )
    },
    advice_temporaries: |mb, who| {
        format!(
            "峰值时临时内存（前向与反向的中间结果）占 {mb}：可改用原地（in-place）算子、融合算子（融合注意力、融合优化器），或分块计算。占用最多的算子：{who}"
        )
    },
    advice_expandable: |mb, conf| {
        format!(
            "峰值时内存池缓存了 {mb}（Operator Reserved − Allocated）：\n设置 {conf}=expandable_segments:True 可复用这部分内存，而不是再申请"
        )
    },
    advice_before_profiling: |mb| {
        format!(
            "{mb} 在采集开始前就已分配（权重、之前迭代的优化器状态、缓冲区），本次数据无法区分；从第 1 个迭代开始采集即可按角色拆分"
        )
    },
    steps_tab: |n| format!("迭代 ({n})"),
    steps_title: "各迭代内存",
    steps_source: |s| format!("迭代来自 {s}"),
    step_headers: [
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
    ],
    step_zoom_hover: "将图表缩放到此迭代",
    survivors_hover: "在此迭代中申请、到迭代结束仍未释放的块：点击后在明细表中只列出这些块",
    growth: |n, a, b, mb| {
        format!(
            "⚠ 可能存在内存泄漏：每个迭代结束时的 Operator Allocated 连续 {n} 个迭代上升（#{a} → #{b}，{mb}）。"
        )
    },
    growth_operators: "在这些迭代中申请且仍未释放的内存，按算子：",
    no_growth: "无持续增长：迭代结束时的内存没有连续 3 个迭代上升。",
    survivors_of: |s, n| format!("迭代 #{s} 的存活块：{n} 个"),
    show_all_rows: "显示全部",
    breakdown_title: "内存去向",
    breakdown_parts: [
        "存活的块",
        "已分配但不在 operator_memory 中",
        "内存池缓存",
        "Workspace",
        "CANN 运行时及其他组件",
        "其他进程",
    ],
    breakdown_hovers: [
        "光标处仍存活的 operator_memory 块",
        "Operator Allocated 减去存活块：采集开始前已分配，或未被记录",
        "Operator Reserved 减去 Operator Allocated：框架缓存分配器持有的内存（空闲或碎片）",
        "Workspace Reserved（CANN 算子 workspace）",
        "APP Reserved 减去 Operator Reserved 和 Workspace：CANN 运行时、HCCL、图引擎等组件",
        "设备已用内存减去 APP Reserved：此 NPU 上的其他进程",
    ],
    breakdown_total: "合计",
    breakdown_components: "组件 (npu_module_mem)",
    overview_button: "集群总览",
    overview_hover: "并排查看每个 rank 的峰值：哪个 rank 最差",
    overview_title: |done, n| format!("集群总览：已汇总 {done}/{n} 个 rank"),
    overview_headers: [
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
    ],
    overview_spread: |max, max_rank, min, min_rank, mean, range| {
        format!(
            "峰值 Operator Allocated：最大 {max} (rank {max_rank}) · 最小 {min} (rank {min_rank}) · 平均 {mean} · 极差 {range}"
        )
    },
    overview_outliers: |list| format!("⚠ 离群：{list}"),
    overview_no_outliers: "无离群 rank (以四分位距 1.5 倍为界)。",
    overview_without_data: |n, names| {
        format!(
            "{n} 个 rank 文件夹没有内存数据，未显示：{names}（采集时需设置 profile_memory=True）。"
        )
    },
    open_rank_hover: "打开此 rank",
    overview_axis: "峰值 (MB)",
    rank_axis_title: "Rank",
    compare_with_menu: "与…对比",
    compare_with: "对比",
    compare_none: "无",
    align_at: "对齐于",
    align_origins: "起点",
    align_step: |s| format!("迭代 #{s} 开始"),
    baseline_note: |l| format!("虚线：基线 {l}"),
    baseline_loading: "正在加载基线…",
    diff_tab: "与基线的差异",
    diff_title: |l| format!("按算子：基线 A = {l}，B = 当前 rank"),
    diff_not_counted: |a, akb, b, bkb| {
        format!(
            "未计入：大小为负的行，即采集开始前申请的内存的释放（A：{a} 行，共 {akb} KB；B：{b} 行，共 {bkb} KB）。"
        )
    },
    diff_computing: "正在比较算子…",
    diff_headers: [
        "名称",
        "A(KB)",
        "B(KB)",
        "差值(KB)",
        "A 块数",
        "B 块数",
        "A 峰值时(MB)",
        "B 峰值时(MB)",
        "峰值时差值(MB)",
    ],
    peak_deltas: "峰值 A → B：",
    table_current: "表格：当前 rank",
    table_baseline: "表格：基线",
    baseline_failed: |e| format!("无法对比：{e}"),
    stacks_tab: "火焰图",
    rows_label: "行：",
    row_groupings: ["逐块", "按调用栈", "按代码行", "按主机算子", "按角色"],
    rows_hover: "按分配者对筛选出的内存块分组；点击分组可列出其内存块",
    group_headers: ["分组", "块数", "总分配(MB)", "峰值占用(MB)", "调用次数"],
    no_stack: "（无调用栈）",
    no_host_op: "（无主机算子运行）",
    flame_modes: ["光标处存活", "视图内分配"],
    flame_needs_cursor: "点击图表放置光标：图中显示该时刻存活的内存块。",
    flame_hint: "宽度即内存大小。点击某一帧可放大该帧，详情表随之列出其内存块。",
    all_blocks: "全部内存块",
    flame_summary: |n, size| format!("{n} 个内存块，{size}"),
    flame_zoomed: "已放大：",
    flame_list_blocks: |n| format!("列出其 {n} 个内存块"),
    attribution: |a, t, ns, o| {
        format!("{t} 次分配中 {a} 次有调用栈（{ns} 次所在算子无调用栈，{o} 次不在任何主机算子内）")
    },
    frame_tip: |size, n| format!("{size}，{n} 个内存块"),
    blocks_under: |l, n| format!("{l} 下的内存块：{n} 个"),
    blocks_of: |l, n| format!("{l} 的内存块：{n} 个"),
    allocated_by: |op| format!("分配于 {op}"),
    no_op_running: "分配时没有主机算子在运行",
    source_label: "数据：",
    source_hover: "该 rank 同时有 DB 和 CSV 文件：选择读取哪一种",
    snapshot_reading: |p| format!("正在读取内存分配器快照 {p}…"),
    snapshot_failed: |e| format!("无法读取该快照：{e}"),
    snapshot_error: zh_snapshot_error,
    load_error: zh_load_error,
    no_rank: |i| format!("没有序号为 {i} 的 rank"),
    snapshot_title: "内存分配器快照",
    snapshot_device: "设备：",
    snapshot_end: "回到结束状态",
    snapshot_before_trace: "第一个事件之前",
    snapshot_figures: |seg, res, alloc, peak, at, ev| {
        format!(
            "{seg} 个段 · 保留 {res} MB · 结束时已分配 {alloc} MB · 已分配峰值 {peak} MB（事件 {at}）· 共 {ev} 个事件"
        )
    },
    snapshot_event_axis: "分配器事件",
    snapshot_time_axis: "距第一个事件的时间（ms）",
    snapshot_allocated: "已分配",
    snapshot_picked: "所选事件",
    snapshot_at_event: |k, mb, n| format!("事件 #{k} 之后的内存持有者：{mb} MB，{n} 个内存块"),
    snapshot_at_end: "结束时的内存持有者（点击曲线可选择事件）",
    snapshot_nothing_held: "此处没有被持有的内存块。",
    snapshot_leaks_hint: "点击调用栈，跳到其最后一个内存块被分配的事件。",
    snapshot_leak_go: "点击：跳到分配其最后一个从未释放的内存块的事件",
    snapshot_leaks: |n| format!("疑似泄漏：{n} 个在记录期间分配且从未释放的内存块"),
    snapshot_held_at_oom: |n| {
        format!("内存不足时仍占用：{n} 个在记录期间分配、分配失败时仍未释放的内存块")
    },
    snapshot_headers: ["MB", "块数", "分配位置（最内层帧；悬停查看调用栈）"],
    snapshot_segments: |when, n, free, pct, largest| {
        format!(
            "{when}的内存段：{n} 个 · 段内空闲 {free} MB（占预留的 {pct} %）· 最大空闲块 {largest} MB"
        )
    },
    snapshot_when_end: "结束时",
    snapshot_when_event: |k| format!("事件 #{k} 之后"),
    snapshot_bands_legend: |n, m| match m {
        0 => format!(
            "每条色带是一次分配，按最内层帧着色（共 {n} 次）。拖动可缩放，双击看全部，单击可选择事件。"
        ),
        _ => format!(
            "每条色带是一次分配，按最内层帧着色：最大的 {n} 次分配各占一条，其余 {m} 次合并为顶部的灰色带。拖动可缩放，双击看全部，单击可选择事件。"
        ),
    },
    snapshot_summed: |n, mb| format!("{n} 次较小的分配（合计）：{mb} MB"),
    snapshot_band: |size, from, to| format!("{size} · {from} · {to}"),
    snapshot_allocated_at: |k| format!("分配于事件 #{k}"),
    snapshot_held_before: "记录开始前已持有",
    snapshot_freed_at: |k| format!("释放于事件 #{k}"),
    snapshot_held_at_end: "结束时仍持有",
    snapshot_go_peak: "跳到峰值",
    oom_verdict: |k, asked, free, largest, device, verdict, conf| {
        use crate::snapshot::oom::OomVerdict as V;
        let why = match verdict {
            V::Fragmentation => format!(
                "碎片化：内存足够，但被切成了过小的块。可尝试 \
                 {conf}=expandable_segments:True，或在此步之前释放缓存。"
            ),
            V::Exhaustion => {
                "耗尽：空闲内存不够。需要减少占用：重计算激活值、减小 micro-batch、切分优化器状态。"
                    .to_string()
            }
            V::ProcessLimit => "进程上限：设备上有足够的空闲内存，但本进程拿不到\
                 （进程内存比例上限，或被其他进程占用）。请提高上限或减少占用。"
                .to_string(),
        };
        format!(
            "在事件 #{k} 内存不足：申请 {asked} MB；分配器内存段中空闲 {free} MB\
             （最大空闲块 {largest} MB），设备空闲 {device} MB。{why}"
        )
    },
    oom_go: "跳到内存不足处",
    oom_modules: |d| format!("内存不足时各 CANN 模块的内存（memUsageInfo，NPU:{d}）"),
    oom_memscope: |file| format!("msMemScope 记录的内存不足（{file}）"),
    oom_memscope_trigger: |func, asked, ret| {
        let ret = ret.map_or(String::new(), |r| format!("，返回码 {r}"));
        format!("{func} 申请 {asked} MB 失败{ret}。当时占用的内存块（最大的、最近的）：")
    },
    oom_memscope_headers: ["列表", "内存池", "大小 (MB)", "地址", "Python（最内层帧）"],
    oom_memscope_top: "最大",
    oom_memscope_recent: "最近",
    oom_cluster_title: |dir| format!("{dir} 中的内存不足（OOM）快照"),
    oom_cluster_summary: |out, all, room| {
        let room = room.map_or(String::new(), |r| {
            format!(
                "内存不足的 rank 可用 {r} MB（OOM 时的预留加设备空闲）；余量是各设备距此还剩多少。"
            )
        });
        format!("{all} 个设备中有 {out} 个内存不足。{room}点击文件名可打开该快照。")
    },
    oom_cluster_headers: [
        "文件",
        "设备",
        "内存不足",
        "申请 (MB)",
        "设备空闲 (MB)",
        "预留 (MB)",
        "峰值已分配 (MB)",
        "余量 (MB)",
    ],
    oom_cluster_left_out: |n, most| format!("另有 {n} 个快照未读取（最多读取 {most} 个）"),
    oom_fragmentation: "碎片化",
    oom_exhaustion: "耗尽",
    oom_process_limit: "进程上限",
    snapshot_views: ["表格", "火焰图"],
    snapshot_flame_hint: "宽度即内存，最外层帧在上。点击某帧可列出其内存块。",
    snapshot_block_kinds: ["已分配", "待释放", "空闲"],
    snapshot_segment_hover: |addr, kind, total, alloc, free, largest, blocks| {
        format!(
            "{addr}（{kind}）：预留 {total} MB，已分配 {alloc} MB，空闲 {free} MB，最大空闲块 {largest} MB，{blocks} 个块"
        )
    },
    snapshot_expandable: "可扩展",
    snapshot_computing: "正在计算该事件的数据……",
};

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
            (EN.no_memory_data)("/p", 1, ""),
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
