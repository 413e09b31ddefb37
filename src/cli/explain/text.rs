//! The verdict as text: the same figures as its JSON, at most [`super::MAX_TEXT_LINES`] lines.

use serde_json::Value;

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

/// The verdict `v` as lines of text.
pub fn render(v: &Value) -> String {
    let mut lines: Vec<String> = match v["kind"].as_str() {
        Some("snapshot") => snapshot(v),
        Some("summary") => summary(v),
        _ => profile(v),
    };
    if let Some(next) = v["next"].as_array() {
        lines.push(format!(
            "next: {}",
            next.iter().map(s).collect::<Vec<_>>().join("  |  ")
        ));
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

fn profile(v: &Value) -> Vec<String> {
    let p = &v["peak"];
    let device = match &v["device"] {
        Value::Null => String::new(),
        d if d
            .as_str()
            .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit())) =>
        {
            format!(" on device {}", s(d))
        }
        d => format!(" on {}", s(d)),
    };
    let ranks = match v["ranks"]["count"].as_u64() {
        Some(1) => "the profile's only rank".to_string(),
        Some(n) => format!("{n} ranks in the profile"),
        None => "-".into(),
    };
    let peak = match (&p["at_ms"], p["of"].as_str()) {
        (Value::Null, _) => "no peak (no memory curve and no blocks)".to_string(),
        (t, Some("blocks")) => format!(
            "peak {} at {} ms (the blocks' total: no memory_record)",
            mib(&p["mib"]),
            s(t)
        ),
        (t, _) => format!("peak {} at {} ms", mib(&p["mib"]), s(t)),
    };
    let mut l = vec![format!(
        "rank {}{device} ({ranks}): {peak}{}{}",
        s(&v["rank"]),
        match &p["step"] {
            Value::Null => String::new(),
            st => format!(", step {}", s(st)),
        },
        match &p["reserved_mib"] {
            Value::Null => String::new(),
            r => format!("; reserved peak {}", mib(r)),
        }
    )];
    let m = &v["made_of"];
    let roles = m["roles"].as_array().filter(|r| !r.is_empty());
    // Roles the profile could tell apart; else (no host ops) the operators say it.
    let known = roles.is_some_and(|r| {
        r.iter()
            .any(|x| !matches!(x["role"].as_str(), Some("unknown" | "before_profiling")))
    });
    if let Some(roles) = roles.filter(|_| known) {
        let parts: Vec<String> = roles
            .iter()
            .map(|r| format!("{} {}", s(&r["role"]), mib(&r["mib"])))
            .collect();
        l.push(format!("made of: {}", parts.join(", ")));
    } else if let Some(ops) = m["operators"].as_array().filter(|o| !o.is_empty()) {
        let mut parts: Vec<String> = ops
            .iter()
            .map(|o| format!("{} {}", s(&o["name"]), mib(&o["mib"])))
            .collect();
        if m["before_profiling_mib"]
            .as_f64()
            .is_some_and(|b| b > 0.005)
        {
            parts.push(format!(
                "before profiling {}",
                mib(&m["before_profiling_mib"])
            ));
        }
        l.push(format!("made of (by operator): {}", parts.join(", ")));
    }
    for (key, name, label) in [("modules", "path", "module"), ("lines", "line", "line")] {
        for x in m[key].as_array().into_iter().flatten() {
            l.push(format!("  {label} {}: {}", s(&x[name]), mib(&x["mib"])));
        }
    }
    let leak = &v["leak"];
    if !leak.is_null() {
        let verdict = s(&leak["verdict"]);
        let mut t = match leak["steps"].as_u64() {
            Some(0) => format!("leak: {verdict} (no training steps recorded)"),
            Some(n) if n < 3 => format!(
                "leak: {verdict} (only {})",
                crate::model::plural::count(n, "step", "steps")
            ),
            _ => format!("leak: {verdict} over {} steps", s(&leak["steps"])),
        };
        for g in leak["growth"].as_array().into_iter().flatten() {
            t.push_str(&format!(
                "; steps {}–{} rose {} times, +{} (most: {})",
                s(&g["from_step"]),
                s(&g["to_step"]),
                s(&g["rises"]),
                mib(&g["mib"]),
                s(&g["top_operator"])
            ));
        }
        l.push(t);
    }
    for a in v["advice"].as_array().into_iter().flatten() {
        l.push(format!("advice: {}", s(a)));
    }
    let w = &v["whatif"];
    if let Some(levers) = w["levers"].as_array().filter(|x| !x.is_empty()) {
        l.push(format!(
            "what if (replayed from this run; measured peak {}):",
            mib(&w["measured_peak_mib"])
        ));
        for x in levers {
            let change = x["change_mib"].as_f64().unwrap_or(0.0);
            l.push(format!(
                "  {:<28} peak {} ({change:+.2} MB)",
                s(&x["lever"]),
                mib(&x["peak_mib"])
            ));
        }
    }
    if let Some(u) = v["unavailable"].as_object() {
        for (k, why) in u {
            l.push(format!("no {k}: {}", s(why)));
        }
    }
    l
}

fn snapshot(v: &Value) -> Vec<String> {
    let mut l: Vec<String> = v["devices"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            format!(
                "{}: peak allocated {} at event {}; reserved at the end {}",
                s(&d["device"]),
                mb(&d["peak_allocated_bytes"]),
                s(&d["peak_event"]),
                mb(&d["reserved_bytes"])
            )
        })
        .collect();
    for o in v["oom"].as_array().into_iter().flatten() {
        l.push(format!(
            "OUT OF MEMORY on device {} at event {}: {} (asked {}, free in segments {}, largest piece {}, free on the device {})",
            s(&o["device"]),
            s(&o["event"]),
            oom_cause(&o["verdict"]),
            mb(&o["requested_bytes"]),
            mb(&o["free_in_segments_bytes"]),
            mb(&o["largest_free_block_bytes"]),
            mb(&o["device_free_bytes"])
        ));
        if let Some(advice) = o["advice"].as_str().filter(|a| !a.is_empty()) {
            l.push(format!("fix: {advice}"));
        }
        if let Some(how) = o["how"].as_str() {
            l.push(format!("  how: {how}"));
        }
    }
    let f = &v["fragmentation"];
    if !f.is_null() {
        let causes: Vec<String> = f["causes"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| format!("{} {}", s(&c["kind"]), mb(&c["bytes"])))
            .collect();
        l.push(format!(
            "fragmentation at event {}: reserved {}, allocated {}; causes: {}; largest request that fits {}",
            s(&f["at_event"]),
            mb(&f["reserved_bytes"]),
            mb(&f["allocated_bytes"]),
            if causes.is_empty() { "-".into() } else { causes.join(", ") },
            mb(&f["largest_possible_bytes"])
        ));
        match f["fix"].as_str().filter(|x| !x.is_empty()) {
            Some(fix) if f["not_why_it_ran_out"] == Value::Bool(true) => l.push(format!(
                "  closes the largest cause: {fix} (not why it ran out: see above)"
            )),
            // An OOM's own advice is said under it.
            Some(_) if f["at_oom"] == Value::Bool(true) => {}
            Some(fix) => l.push(format!("fix: {fix}")),
            None => {}
        }
    }
    let ph = &v["peak_phase"];
    if !ph.is_null() {
        l.push(format!(
            "the peak is in phase {} ({} before, {} at its peak)",
            s(&ph["name"]),
            mb(&ph["allocated_before_bytes"]),
            mb(&ph["peak_allocated_bytes"])
        ));
    }
    for h in v["holders_at_end"].as_array().into_iter().flatten() {
        l.push(format!(
            "  held at the end by {}: {} in {} blocks",
            h["line"].as_str().unwrap_or("(no stack recorded)"),
            mb(&h["bytes"]),
            s(&h["blocks"])
        ));
    }
    for g in v["by_operator"]["live"].as_array().into_iter().flatten() {
        l.push(format!(
            "  at event {} by operator {} step {}: {}",
            s(&v["by_operator"]["at_event"]),
            s(&g["op"]),
            s(&g["step"]),
            mb(&g["bytes"])
        ));
    }
    l
}

/// An OOM verdict as `memsight snapshot` words it.
fn oom_cause(v: &Value) -> String {
    match v.as_str() {
        Some("fragmentation") => "fragmentation (enough was free, in pieces too small)".into(),
        Some("exhaustion") => "exhaustion (not enough was free)".into(),
        Some("process_limit") => "a limit on the process (the device had it free)".into(),
        _ => s(v),
    }
}

fn summary(v: &Value) -> Vec<String> {
    let p = &v["peak_mib"];
    let mut l = vec![format!(
        "{} ranks: peak lowest {}, median {}, highest {}; {} outliers",
        s(&v["ranks"]),
        mib(&p["lowest"]),
        mib(&p["median"]),
        mib(&p["highest"]),
        s(&v["outliers_total"])
    )];
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
        l.push(format!(
            "  outlier {}: peak {} ({} against the median){}{}",
            who(&o["rank"]),
            mib(&o["peak_mib"]),
            o["above_median_mib"]
                .as_f64()
                .map_or("-".into(), |m| format!("{m:+.2} MB")),
            match st.is_null() {
                true => String::new(),
                false => format!(
                    "; furthest above the others in step {} (+{})",
                    s(&st["step"]),
                    mib(&st["above_step_median_mib"])
                ),
            },
            match &o["top_operator"] {
                Value::Null => String::new(),
                t => format!("; holds most in {} ({})", s(&t["name"]), mib(&t["mib"])),
            }
        ));
    }
    if let Some(n) = v["leak_suspects_total"].as_u64().filter(|&n| n > 0) {
        l.push(format!(
            "{} growing step after step, most growth first:",
            crate::model::plural::count(n, "leak suspect", "leak suspects")
        ));
    }
    for g in v["leak_suspects"].as_array().into_iter().flatten() {
        l.push(format!(
            "  leak suspect {}: rose {} steps in a row, +{}",
            who(&g["rank"]),
            s(&g["rises"]),
            mib(&g["mib"])
        ));
    }
    let f = &v["failed"];
    if f["count"].as_u64().is_some_and(|n| n > 0) {
        l.push(format!("{} ranks failed:", s(&f["count"])));
        for r in f["first"].as_array().into_iter().flatten() {
            l.push(format!("  {}: {}", who(&r["rank"]), s(&r["error"])));
        }
    }
    l
}
