//! The verdict as text: the same figures as its JSON, at most [`super::MAX_TEXT_LINES`] lines.

use serde_json::Value;

use super::Chinese;
use crate::model::Lang;

/// MiB of a JSON number, two decimals; `-` without one.
fn mib(v: &Value) -> String {
    v.as_f64().map_or("-".into(), |m| format!("{m:.2} MB"))
}

/// Bytes of a JSON number as MB, two decimals; `-` without one.
fn mb(v: &Value) -> String {
    v.as_f64()
        .map_or("-".into(), |b| format!("{:.2} MB", b / 1048576.0))
}

/// A JSON string or number as text; `-` for null.
fn s(v: &Value) -> String {
    match v {
        Value::String(t) => t.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

/// The verdict `v` as lines of text in `lang`; its advice and fixes in Chinese from `chinese`.
pub fn render(v: &Value, lang: Lang, chinese: &Chinese) -> String {
    let say = Say { lang, chinese };
    let mut lines: Vec<String> = match v["kind"].as_str() {
        Some("snapshot") => snapshot(v, &say),
        Some("summary") => summary(v, &say),
        _ => profile(v, &say),
    };
    if let Some(next) = v["next"].as_array() {
        let next = next.iter().map(s).collect::<Vec<_>>().join("  |  ");
        lines.push(match lang {
            Lang::En => format!("next: {next}"),
            Lang::Zh => format!("下一步：{next}"),
        });
    }
    lines.truncate(super::MAX_TEXT_LINES);
    // A name may hold a newline or a terminal's escape: each line stays one line, as written.
    lines
        .iter()
        .map(|l| {
            let one: String = l
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            format!("{one}\n")
        })
        .collect()
}

/// The language of the text, and the Chinese of the verdict's domain texts.
struct Say<'a> {
    lang: Lang,
    chinese: &'a Chinese,
}

impl Say<'_> {
    /// Whether the text is in Chinese.
    fn zh(&self) -> bool {
        self.lang == Lang::Zh
    }

    /// A domain text the verdict holds in English (advice, a fix), whole and in the text's
    /// language.
    fn text(&self, v: &Value) -> String {
        match v.as_str() {
            Some(shown) => self.chinese.of(self.lang, shown).to_string(),
            None => s(v),
        }
    }
}

fn profile(v: &Value, say: &Say<'_>) -> Vec<String> {
    let zh = say.zh();
    let p = &v["peak"];
    let device = match &v["device"] {
        Value::Null => String::new(),
        d if d
            .as_str()
            .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit())) =>
        {
            match zh {
                false => format!(" on device {}", s(d)),
                true => format!("（设备 {}）", s(d)),
            }
        }
        d => match zh {
            false => format!(" on {}", s(d)),
            true => format!("（{}）", s(d)),
        },
    };
    let ranks = match (v["ranks"]["count"].as_u64(), zh) {
        (Some(1), false) => "the profile's only rank".to_string(),
        (Some(1), true) => "数据中唯一的 rank".to_string(),
        (Some(n), false) => format!("{n} ranks in the profile"),
        (Some(n), true) => format!("数据共 {n} 个 rank"),
        (None, _) => "-".into(),
    };
    let peak = match (&p["at_ms"], p["of"].as_str(), zh) {
        (Value::Null, _, false) => "no peak (no memory curve and no blocks)".to_string(),
        (Value::Null, _, true) => "无峰值（没有内存曲线，也没有内存块）".to_string(),
        (t, Some("blocks"), false) => format!(
            "peak {} at {} ms (the blocks' total: no memory_record)",
            mib(&p["mib"]),
            s(t)
        ),
        (t, Some("blocks"), true) => format!(
            "峰值 {}，在 {} ms（内存块之和：没有 memory_record）",
            mib(&p["mib"]),
            s(t)
        ),
        (t, _, false) => format!("peak {} at {} ms", mib(&p["mib"]), s(t)),
        (t, _, true) => format!("峰值 {}，在 {} ms", mib(&p["mib"]), s(t)),
    };
    let step = match (&p["step"], zh) {
        (Value::Null, _) => String::new(),
        (st, false) => format!(", step {}", s(st)),
        (st, true) => format!("，第 {} 步", s(st)),
    };
    let reserved = match (&p["reserved_mib"], zh) {
        (Value::Null, _) => String::new(),
        (r, false) => format!("; reserved peak {}", mib(r)),
        (r, true) => format!("；保留内存峰值 {}", mib(r)),
    };
    let rank = s(&v["rank"]);
    let mut l = vec![match zh {
        false => format!("rank {rank}{device} ({ranks}): {peak}{step}{reserved}"),
        true => format!("rank {rank}{device}（{ranks}）：{peak}{step}{reserved}"),
    }];
    let m = &v["made_of"];
    let roles = m["roles"].as_array().filter(|r| !r.is_empty());
    // Roles the profile could tell apart; else (no host ops) the operators say it.
    let known = roles.is_some_and(|r| {
        r.iter()
            .any(|x| !matches!(x["role"].as_str(), Some("unknown" | "before_profiling")))
    });
    let list = |parts: Vec<String>| parts.join(if zh { "，" } else { ", " });
    if let Some(roles) = roles.filter(|_| known) {
        let parts: Vec<String> = roles
            .iter()
            .map(|r| format!("{} {}", role_name(&r["role"], say.lang), mib(&r["mib"])))
            .collect();
        l.push(match zh {
            false => format!("made of: {}", list(parts)),
            true => format!("组成：{}", list(parts)),
        });
    } else if let Some(ops) = m["operators"].as_array().filter(|o| !o.is_empty()) {
        let mut parts: Vec<String> = ops
            .iter()
            .map(|o| format!("{} {}", s(&o["name"]), mib(&o["mib"])))
            .collect();
        if m["before_profiling_mib"]
            .as_f64()
            .is_some_and(|b| b > 0.005)
        {
            let before = mib(&m["before_profiling_mib"]);
            parts.push(match zh {
                false => format!("before profiling {before}"),
                true => format!("采集开始前 {before}"),
            });
        }
        l.push(match zh {
            false => format!("made of (by operator): {}", list(parts)),
            true => format!("组成（按算子）：{}", list(parts)),
        });
    }
    for (key, name, label) in [
        ("modules", "path", if zh { "模块" } else { "module" }),
        ("lines", "line", if zh { "代码行" } else { "line" }),
    ] {
        for x in m[key].as_array().into_iter().flatten() {
            l.push(match zh {
                false => format!("  {label} {}: {}", s(&x[name]), mib(&x["mib"])),
                true => format!("  {label} {}：{}", s(&x[name]), mib(&x["mib"])),
            });
        }
    }
    let leak = &v["leak"];
    if !leak.is_null() {
        let verdict = match (leak["verdict"].as_str(), zh) {
            (Some("growing"), true) => "增长".to_string(),
            (Some("flat"), true) => "平稳".to_string(),
            (Some("unknown"), true) => "未知".to_string(),
            (_, _) => s(&leak["verdict"]),
        };
        let mut t = match (leak["steps"].as_u64(), zh) {
            (Some(0), false) => format!("leak: {verdict} (no training steps recorded)"),
            (Some(0), true) => format!("泄漏：{verdict}（未记录训练步）"),
            (Some(n), false) if n < 3 => format!(
                "leak: {verdict} (only {})",
                crate::model::plural::count(n, "step", "steps")
            ),
            (Some(n), true) if n < 3 => format!("泄漏：{verdict}（只有 {n} 步）"),
            (_, false) => format!("leak: {verdict} over {} steps", s(&leak["steps"])),
            (_, true) => format!("泄漏：{verdict}（共 {} 步）", s(&leak["steps"])),
        };
        for g in leak["growth"].as_array().into_iter().flatten() {
            let (a, b, n) = (s(&g["from_step"]), s(&g["to_step"]), s(&g["rises"]));
            let (up, op) = (mib(&g["mib"]), s(&g["top_operator"]));
            t.push_str(&match zh {
                false => format!("; steps {a}–{b} rose {n} times, +{up} (most: {op})"),
                true => format!("；第 {a}–{b} 步上升 {n} 次，+{up}（最多：{op}）"),
            });
        }
        l.push(t);
    }
    for a in v["advice"].as_array().into_iter().flatten() {
        l.push(match zh {
            false => format!("advice: {}", say.text(a)),
            true => format!("建议：{}", say.text(a)),
        });
    }
    let w = &v["whatif"];
    if let Some(levers) = w["levers"].as_array().filter(|x| !x.is_empty()) {
        let measured = mib(&w["measured_peak_mib"]);
        l.push(match zh {
            false => format!("what if (replayed from this run; measured peak {measured}):"),
            true => format!("假设分析（由本次运行回放；实测峰值 {measured}）："),
        });
        for x in levers {
            let change = x["change_mib"].as_f64().unwrap_or(0.0);
            let (lever, peak) = (s(&x["lever"]), mib(&x["peak_mib"]));
            l.push(match zh {
                false => format!("  {lever:<28} peak {peak} ({change:+.2} MB)"),
                true => format!("  {lever:<28} 峰值 {peak}（{change:+.2} MB）"),
            });
        }
    }
    if let Some(u) = v["unavailable"].as_object() {
        for (k, why) in u {
            let part = match k.as_str() {
                "steps" => "训练步",
                "roles" => "角色",
                "modules" => "模块",
                "lines" => "代码行",
                "operators" => "算子",
                other => other,
            };
            l.push(match zh {
                false => format!("no {k}: {}", s(why)),
                true => format!("无{part}：{}", s(why)),
            });
        }
    }
    l
}

fn snapshot(v: &Value, say: &Say<'_>) -> Vec<String> {
    let zh = say.zh();
    let mut l: Vec<String> = v["devices"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            let (device, peak) = (s(&d["device"]), mb(&d["peak_allocated_bytes"]));
            let (event, reserved) = (s(&d["peak_event"]), mb(&d["reserved_bytes"]));
            match zh {
                false => format!(
                    "{device}: peak allocated {peak} at event {event}; reserved at the end {reserved}"
                ),
                true => format!(
                    "{device}：已分配峰值 {peak}，在事件 {event}；结束时保留 {reserved}"
                ),
            }
        })
        .collect();
    for o in v["oom"].as_array().into_iter().flatten() {
        let (device, event) = (s(&o["device"]), s(&o["event"]));
        let cause = oom_cause(&o["verdict"], say.lang);
        let (asked, free) = (mb(&o["requested_bytes"]), mb(&o["free_in_segments_bytes"]));
        let (largest, on_device) = (
            mb(&o["largest_free_block_bytes"]),
            mb(&o["device_free_bytes"]),
        );
        l.push(match zh {
            false => format!(
                "OUT OF MEMORY on device {device} at event {event}: {cause} (asked {asked}, free in segments {free}, largest piece {largest}, free on the device {on_device})"
            ),
            true => format!(
                "设备 {device} 在事件 {event} 内存不足：{cause}；申请 {asked}，内存段中空闲 {free}，最大空闲块 {largest}，设备空闲 {on_device}"
            ),
        });
        if let Some(advice) = o["advice"].as_str().filter(|a| !a.is_empty()) {
            let advice = say.chinese.of(say.lang, advice);
            l.push(match zh {
                false => format!("fix: {advice}"),
                true => format!("修复：{advice}"),
            });
        }
        if !o["how"].is_null() {
            let how = say.text(&o["how"]);
            l.push(match zh {
                false => format!("  how: {how}"),
                true => format!("  办法：{how}"),
            });
        }
    }
    let f = &v["fragmentation"];
    if !f.is_null() {
        let causes: Vec<String> = f["causes"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| format!("{} {}", cause_name(&c["kind"], say.lang), mb(&c["bytes"])))
            .collect();
        let causes = match causes.is_empty() {
            true => "-".to_string(),
            false => causes.join(if zh { "，" } else { ", " }),
        };
        let (at, reserved) = (s(&f["at_event"]), mb(&f["reserved_bytes"]));
        let (allocated, fits) = (mb(&f["allocated_bytes"]), mb(&f["largest_possible_bytes"]));
        l.push(match zh {
            false => format!(
                "fragmentation at event {at}: reserved {reserved}, allocated {allocated}; causes: {causes}; largest request that fits {fits}"
            ),
            true => format!(
                "事件 {at} 的碎片：保留 {reserved}，已分配 {allocated}；原因：{causes}；无需新内存段即可满足的最大申请 {fits}"
            ),
        });
        let fix = f["fix"]
            .as_str()
            .filter(|x| !x.is_empty())
            .map(|x| say.chinese.of(say.lang, x));
        match fix {
            Some(fix) if f["not_why_it_ran_out"] == Value::Bool(true) => l.push(match zh {
                false => {
                    format!("  closes the largest cause: {fix} (not why it ran out: see above)")
                }
                true => format!("  可消除最大原因：{fix}（并非内存不足的原因：见上方）"),
            }),
            // An OOM's own advice is said under it.
            Some(_) if f["at_oom"] == Value::Bool(true) => {}
            Some(fix) => l.push(match zh {
                false => format!("fix: {fix}"),
                true => format!("修复：{fix}"),
            }),
            None => {}
        }
    }
    let ph = &v["peak_phase"];
    if !ph.is_null() {
        let (name, before) = (s(&ph["name"]), mb(&ph["allocated_before_bytes"]));
        let at_peak = mb(&ph["peak_allocated_bytes"]);
        l.push(match zh {
            false => {
                format!("the peak is in phase {name} ({before} before, {at_peak} at its peak)")
            }
            true => format!("峰值位于阶段 {name}（之前 {before}，阶段峰值 {at_peak}）"),
        });
    }
    for h in v["holders_at_end"].as_array().into_iter().flatten() {
        let line = match (h["line"].as_str(), zh) {
            (Some(line), _) => line.to_string(),
            (None, false) => "(no stack recorded)".into(),
            (None, true) => "（未记录调用栈）".into(),
        };
        let (bytes, blocks) = (mb(&h["bytes"]), s(&h["blocks"]));
        l.push(match zh {
            false => format!("  held at the end by {line}: {bytes} in {blocks} blocks"),
            true => format!("  结束时由 {line} 持有：{bytes}，{blocks} 个块"),
        });
    }
    for g in v["by_operator"]["live"].as_array().into_iter().flatten() {
        let (at, op) = (s(&v["by_operator"]["at_event"]), s(&g["op"]));
        let (step, bytes) = (s(&g["step"]), mb(&g["bytes"]));
        l.push(match zh {
            false => format!("  at event {at} by operator {op} step {step}: {bytes}"),
            true => format!("  事件 {at} 时算子 {op}（第 {step} 步）：{bytes}"),
        });
    }
    l
}

/// A role: its JSON name in English (as `memsight roles` prints it), its name in Chinese.
fn role_name(v: &Value, lang: Lang) -> String {
    match (v.as_str().and_then(crate::model::Role::parse), lang) {
        (Some(r), Lang::Zh) => r.name(lang).to_string(),
        _ => s(v),
    }
}

/// A fragmentation cause: its JSON name in English (as `memsight snapshot` prints it), its
/// name in Chinese.
fn cause_name(v: &Value, lang: Lang) -> String {
    use crate::snapshot::fragmentation::Cause;
    match (
        Cause::ALL.iter().find(|c| v.as_str() == Some(c.as_str())),
        lang,
    ) {
        (Some(c), Lang::Zh) => c.name(lang).to_string(),
        _ => s(v),
    }
}

/// An OOM verdict as `memsight snapshot` words it, in `lang`.
fn oom_cause(v: &Value, lang: Lang) -> String {
    use crate::snapshot::oom::OomVerdict as V;
    let verdict = match v.as_str() {
        Some("fragmentation") => V::Fragmentation,
        Some("exhaustion") => V::Exhaustion,
        Some("process_limit") => V::ProcessLimit,
        Some("no_request") => V::NoRequest,
        _ => return s(v),
    };
    verdict.render(lang).to_string()
}

fn summary(v: &Value, say: &Say<'_>) -> Vec<String> {
    let zh = say.zh();
    let p = &v["peak_mib"];
    let (n, lowest, median) = (s(&v["ranks"]), mib(&p["lowest"]), mib(&p["median"]));
    let (highest, outliers) = (mib(&p["highest"]), s(&v["outliers_total"]));
    let mut l = vec![match zh {
        false => format!(
            "{n} ranks: peak lowest {lowest}, median {median}, highest {highest}; {outliers} outliers"
        ),
        true => format!(
            "{n} 个 rank：峰值最低 {lowest}，中位数 {median}，最高 {highest}；离群 {outliers} 个"
        ),
    }];
    let who = |w: &Value| {
        format!(
            "{}{} {}",
            w["host"]
                .as_str()
                .map_or(String::new(), |h| format!("{h}/")),
            s(&w["rank"]),
            w["device"].as_str().unwrap_or("")
        )
    };
    for o in v["outliers"].as_array().into_iter().flatten() {
        let st = &o["step"];
        let against = o["above_median_mib"]
            .as_f64()
            .map_or("-".into(), |m| format!("{m:+.2} MB"));
        let step = match (st.is_null(), zh) {
            (true, _) => String::new(),
            (false, false) => format!(
                "; furthest above the others in step {} (+{})",
                s(&st["step"]),
                mib(&st["above_step_median_mib"])
            ),
            (false, true) => format!(
                "；第 {} 步高出其他 rank 最多（+{}）",
                s(&st["step"]),
                mib(&st["above_step_median_mib"])
            ),
        };
        let top = match (&o["top_operator"], zh) {
            (Value::Null, _) => String::new(),
            (t, false) => format!("; holds most in {} ({})", s(&t["name"]), mib(&t["mib"])),
            (t, true) => format!("；占用最多的是 {}（{}）", s(&t["name"]), mib(&t["mib"])),
        };
        let (rank, peak) = (who(&o["rank"]), mib(&o["peak_mib"]));
        l.push(match zh {
            false => {
                format!("  outlier {rank}: peak {peak} ({against} against the median){step}{top}")
            }
            true => format!("  离群 {rank}：峰值 {peak}（相对中位数 {against}）{step}{top}"),
        });
    }
    if let Some(n) = v["leak_suspects_total"].as_u64().filter(|&n| n > 0) {
        l.push(match zh {
            false => format!(
                "{} growing step after step, most growth first:",
                crate::model::plural::count(n, "leak suspect", "leak suspects")
            ),
            true => format!("{n} 个疑似泄漏（逐步增长），按增长从多到少："),
        });
    }
    for g in v["leak_suspects"].as_array().into_iter().flatten() {
        let (rank, rises, up) = (who(&g["rank"]), s(&g["rises"]), mib(&g["mib"]));
        l.push(match zh {
            false => format!("  leak suspect {rank}: rose {rises} steps in a row, +{up}"),
            true => format!("  疑似泄漏 {rank}：连续 {rises} 步上升，+{up}"),
        });
    }
    let f = &v["failed"];
    if f["count"].as_u64().is_some_and(|n| n > 0) {
        l.push(match zh {
            false => format!("{} ranks failed:", s(&f["count"])),
            true => format!("{} 个 rank 读取失败：", s(&f["count"])),
        });
        for r in f["first"].as_array().into_iter().flatten() {
            l.push(match zh {
                false => format!("  {}: {}", who(&r["rank"]), s(&r["error"])),
                true => format!("  {}：{}", who(&r["rank"]), s(&r["error"])),
            });
        }
    }
    l
}
