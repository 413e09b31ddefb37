//! Hostile inputs, made here rather than committed: small files that name the same data many
//! times (a pickle's memo), nest it deep (module spans) or hold names no tool expects, each
//! shaped like one a hostile round found (issue 86). Tests, the memory-bound test and the fuzz
//! seeds build them from these functions, so no blob over a few KB is kept in the repository.
//!
//! The pickles are written opcode by opcode (protocol 4: `PROTO`, `EMPTY_DICT`, `MARK`,
//! `SETITEMS`, `APPENDS`, `BINPUT`/`LONG_BINPUT`, `BINGET`/`LONG_BINGET`, `BINUNICODE`,
//! `BININT`/`LONG1`), the data opcodes Python's own pickler writes for a snapshot.

/// A pickle being written: its bytes and the next memo index.
#[derive(Debug, Default)]
pub struct PickleOut {
    /// The bytes so far.
    pub bytes: Vec<u8>,
    memo: u32,
}

impl PickleOut {
    /// A pickle of protocol 4.
    pub fn new() -> PickleOut {
        PickleOut {
            bytes: vec![0x80, 4],
            memo: 0,
        }
    }

    /// A text (`BINUNICODE`).
    pub fn text(&mut self, s: &str) -> &mut Self {
        self.bytes.push(b'X');
        self.bytes
            .extend_from_slice(&u32::try_from(s.len()).unwrap_or(u32::MAX).to_le_bytes());
        self.bytes.extend_from_slice(s.as_bytes());
        self
    }

    /// An integer (`BININT` when it fits 32 bits, else `LONG1`).
    pub fn int(&mut self, v: i64) -> &mut Self {
        match i32::try_from(v) {
            Ok(small) => {
                self.bytes.push(b'J');
                self.bytes.extend_from_slice(&small.to_le_bytes());
            }
            Err(_) => {
                self.bytes.extend_from_slice(&[0x8a, 8]);
                self.bytes.extend_from_slice(&v.to_le_bytes());
            }
        }
        self
    }

    /// `None`.
    pub fn none(&mut self) -> &mut Self {
        self.bytes.push(b'N');
        self
    }

    /// Stores the top of the stack in the memo; its index.
    pub fn put(&mut self) -> u32 {
        let i = self.memo;
        match u8::try_from(i) {
            Ok(b) => self.bytes.extend_from_slice(&[b'q', b]),
            Err(_) => {
                self.bytes.push(b'r');
                self.bytes.extend_from_slice(&i.to_le_bytes());
            }
        }
        self.memo += 1;
        i
    }

    /// Stores the top of the stack in the memo and takes it off (`POP`): an object defined
    /// once, to be referred to later by [`Self::get`]; its index.
    pub fn define(&mut self) -> u32 {
        let i = self.put();
        self.bytes.push(b'0');
        i
    }

    /// Pushes memo entry `i` again (a reference to the same object).
    pub fn get(&mut self, i: u32) -> &mut Self {
        match u8::try_from(i) {
            Ok(b) => self.bytes.extend_from_slice(&[b'h', b]),
            Err(_) => {
                self.bytes.push(b'j');
                self.bytes.extend_from_slice(&i.to_le_bytes());
            }
        }
        self
    }

    /// Starts a dict: `EMPTY_DICT`, `MARK`; its items follow, then [`Self::end_dict`].
    pub fn dict(&mut self) -> &mut Self {
        self.bytes.extend_from_slice(b"}(");
        self
    }

    /// Ends a dict's items (`SETITEMS`).
    pub fn end_dict(&mut self) -> &mut Self {
        self.bytes.push(b'u');
        self
    }

    /// Starts a list: `EMPTY_LIST`, `MARK`; its items follow, then [`Self::end_list`].
    pub fn list(&mut self) -> &mut Self {
        self.bytes.extend_from_slice(b"](");
        self
    }

    /// Ends a list's items (`APPENDS`).
    pub fn end_list(&mut self) -> &mut Self {
        self.bytes.push(b'e');
        self
    }

    /// A dict of text keys and integer values, memoized; its memo index.
    pub fn int_dict(&mut self, items: &[(&str, i64)]) -> u32 {
        self.dict();
        for (k, v) in items {
            self.text(k).int(*v);
        }
        self.end_dict();
        self.put()
    }

    /// The pickle, ended (`STOP`).
    pub fn finish(mut self) -> Vec<u8> {
        self.bytes.push(b'.');
        self.bytes
    }
}

/// Writes an event dict `{action, addr, size, stream, time_us, frames}` with `frames` given
/// by `frames` (a memo index of a list, or none: an empty list).
fn event(p: &mut PickleOut, action: &str, addr: i64, size: i64, time: i64, frames: Option<u32>) {
    p.dict();
    p.text("action").text(action);
    p.text("addr").int(addr);
    p.text("size").int(size);
    p.text("stream").int(0);
    p.text("time_us").int(time);
    p.text("frames");
    match frames {
        Some(i) => {
            p.get(i);
        }
        None => {
            p.list().end_list();
        }
    }
    p.end_dict();
}

/// A snapshot `{segments: [], device_traces: [[events…]]}` whose events `body` writes.
fn snapshot_with_trace(body: impl FnOnce(&mut PickleOut)) -> Vec<u8> {
    let mut p = PickleOut::new();
    p.dict();
    p.text("segments").list().end_list();
    p.text("device_traces").list().list();
    body(&mut p);
    p.end_list().end_list();
    p.end_dict();
    p.finish()
}

/// `stacks` alloc events, each with a stack of its own: `refs` references to the frame dict
/// memoized at `frame`, then a frame of its own (so no two stacks are equal).
fn stacks_of_one_frame(p: &mut PickleOut, frame: u32, stacks: usize, refs: usize) {
    for s in 0..stacks {
        p.list();
        for _ in 0..refs {
            p.get(frame);
        }
        p.dict();
        p.text("filename").text("own.py");
        p.text("line").int(s as i64);
        p.text("name").text("f");
        p.end_dict();
        p.end_list();
        let list = p.define();
        event(p, "alloc", 4096 * s as i64, 512, s as i64, Some(list));
    }
}

/// Issue 86 item 1: `stacks` distinct stacks, each of `refs` references to one shared frame
/// dict whose file name is `name_len` bytes (plus a frame of its own, so no two are equal): a
/// few hundred KB that a builder copying each frame per reference makes into gigabytes.
pub fn shared_frames_snapshot(stacks: usize, refs: usize, name_len: usize) -> Vec<u8> {
    snapshot_with_trace(|p| {
        p.dict();
        p.text("filename").text(&"f".repeat(name_len));
        p.text("line").int(1);
        p.text("name").text("forward");
        p.end_dict();
        let frame = p.define();
        stacks_of_one_frame(p, frame, stacks, refs);
    })
}

/// Issue 86 item 1, through `fx_original_trace`: one frame of FX-generated code standing for
/// `frames` of the model's (a traceback text), referenced `refs` times by each of `stacks`
/// stacks.
pub fn fx_frames_snapshot(stacks: usize, refs: usize, frames: usize) -> Vec<u8> {
    let trace: String = (0..frames)
        .map(|i| format!("  File \"/m/model_{i}.py\", line {i}, in forward_{i}\n    x\n"))
        .collect();
    snapshot_with_trace(|p| {
        p.dict();
        p.text("filename").text("/tmp/fx_generated_0.py");
        p.text("line").int(3);
        p.text("name").text("forward");
        p.text("fx_original_trace").text(&trace);
        p.end_dict();
        let frame = p.define();
        stacks_of_one_frame(p, frame, stacks, refs);
    })
}

/// Issue 86 item 2: `external_annotations` naming one `START` dict (a `name_len`-byte name)
/// `refs` times, nested in each other (never ended), over a trace of two events.
pub fn annotations_snapshot(refs: usize, name_len: usize) -> Vec<u8> {
    annotations_named_snapshot(refs, &"n".repeat(name_len))
}

/// [`annotations_snapshot`] with the annotation named `name` (a name holding newlines, a
/// terminal's escapes).
pub fn annotations_named_snapshot(refs: usize, name: &str) -> Vec<u8> {
    let mut p = PickleOut::new();
    p.dict();
    p.text("segments").list().end_list();
    p.text("device_traces").list().list();
    event(&mut p, "alloc", 0, 512, 10, None);
    event(&mut p, "free_completed", 0, 512, 20, None);
    p.end_list().end_list();
    p.text("external_annotations").list();
    p.dict();
    p.text("device").int(0);
    p.text("name").text(name);
    p.text("stage").text("START");
    p.text("time_us").int(5);
    p.end_dict();
    let a = p.put();
    for _ in 1..refs {
        p.get(a);
    }
    p.end_list();
    p.end_dict();
    p.finish()
}

/// Issue 86 item 8: `n` events, each with an action name of its own.
pub fn many_actions_snapshot(n: usize) -> Vec<u8> {
    snapshot_with_trace(|p| {
        for i in 0..n {
            event(p, &format!("act_{i}"), i as i64, 8, i as i64, None);
        }
    })
}

/// Issue 86 item 8: `ooms` `oom` events, then `allocs` allocations: each OOM replayed over
/// the trace after it was quadratic.
pub fn many_ooms_snapshot(ooms: usize, allocs: usize) -> Vec<u8> {
    snapshot_with_trace(|p| {
        for i in 0..ooms {
            event(p, "oom", 0, 1 << 20, i as i64, None);
        }
        for i in 0..allocs {
            event(p, "alloc", 512 * i as i64, 512, (ooms + i) as i64, None);
        }
    })
}

/// Issue 86 item 12: one segment with a free block, and an `oom` event that asked for `size`
/// bytes (0 or negative: no request at all).
pub fn oom_of_size_snapshot(size: i64) -> Vec<u8> {
    let mut p = PickleOut::new();
    p.dict();
    p.text("segments").list();
    p.dict();
    p.text("device").int(0);
    p.text("address").int(0);
    p.text("total_size").int(2 << 20);
    p.text("allocated_size").int(0);
    p.text("active_size").int(0);
    p.text("stream").int(0);
    p.text("segment_type").text("large");
    p.text("blocks").list();
    p.dict();
    p.text("address").int(0);
    p.text("size").int(2 << 20);
    p.text("state").text("inactive");
    p.end_dict();
    p.end_list();
    p.end_dict();
    p.end_list();
    p.text("device_traces").list().list();
    event(&mut p, "oom", 0, size, 1, None);
    p.end_list().end_list();
    p.end_dict();
    p.finish()
}

/// Issue 86 item 5: a PyTorch profiler trace (Chrome JSON) of one thread whose `nn.Module`
/// spans nest `depth` deep, each with an op and a 1 KB allocation inside, on a CUDA device
/// (`record_shapes`-free, `with_stack`-style `python_function` spans).
pub fn nested_modules_trace(depth: usize) -> String {
    let mut events = Vec::new();
    let end = 10 * depth as i64 + 10_000_000;
    for d in 0..depth {
        let start = 10 * d as i64;
        events.push(format!(
            r#"{{"ph":"X","cat":"python_function","name":"nn.Module: Block_{d}","pid":1,"tid":1,"ts":{start},"dur":{},"args":{{"Python id":{d},"Python parent id":{}}}}}"#,
            end - start,
            d as i64 - 1
        ));
        events.push(format!(
            r#"{{"ph":"X","cat":"cpu_op","name":"aten::empty","pid":1,"tid":1,"ts":{},"dur":2,"args":{{}}}}"#,
            start + 1
        ));
        events.push(format!(
            r#"{{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":{},"args":{{"Addr":{},"Bytes":1024,"Total Allocated":{},"Total Reserved":{},"Device Type":1,"Device Id":0}}}}"#,
            start + 2,
            4096 * (d + 1),
            1024 * (d + 1),
            2 << 20
        ));
    }
    format!(
        r#"{{"schemaVersion":1,"deviceProperties":[{{"id":0,"name":"NVIDIA H100","totalGlobalMem":85000000000}}],"traceEvents":[{}]}}"#,
        events.join(",\n")
    )
}

/// Issue 86 item 11: a trace whose module names collide once trimmed (`Linear_1 ` beside
/// `Linear_1`) or hold the path separator (`a/b` beside `a` holding `b`).
pub fn colliding_modules_trace() -> String {
    let spans = [
        ("nn.Module: Net_0", 0, 1000),
        ("nn.Module: Linear_1", 10, 100),
        ("nn.Module: Linear_1 ", 200, 100),
        ("nn.Module: a/b", 400, 100),
        ("nn.Module: a", 600, 200),
        ("nn.Module: b", 610, 100),
    ];
    let mut events = Vec::new();
    for (i, (name, ts, dur)) in spans.iter().enumerate() {
        events.push(format!(
            r#"{{"ph":"X","cat":"python_function","name":"{name}","pid":1,"tid":1,"ts":{ts},"dur":{dur},"args":{{}}}}"#
        ));
        let at = ts + if i == 4 { 150 } else { 5 };
        events.push(format!(
            r#"{{"ph":"X","cat":"cpu_op","name":"aten::empty","pid":1,"tid":1,"ts":{at},"dur":2,"args":{{}}}}"#
        ));
        events.push(format!(
            r#"{{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":{},"args":{{"Addr":{},"Bytes":1024,"Total Allocated":{},"Total Reserved":{},"Device Type":1,"Device Id":0}}}}"#,
            at + 1,
            4096 * (i + 1),
            1024 * (i + 1),
            2 << 20
        ));
    }
    format!(
        r#"{{"schemaVersion":1,"traceEvents":[{}]}}"#,
        events.join(",\n")
    )
}

/// One `nn.Module` span of [`trace_of_spans`].
#[derive(Debug, Clone, Copy)]
pub struct Span<'a> {
    /// The thread.
    pub thread: u64,
    /// Start, µs.
    pub start: i64,
    /// Length, µs.
    pub dur: i64,
    /// The module's name (the frame is `nn.Module: NAME`).
    pub name: &'a str,
    /// Whether an op runs inside, at its start.
    pub op: bool,
    /// What the op allocates, bytes (0: nothing).
    pub bytes: i64,
}

/// A PyTorch trace of `spans` (module forwards as `python_function` spans), each with its op
/// and allocation when it has one, on CUDA device 0. Names are written as JSON strings.
pub fn trace_of_spans(spans: &[Span<'_>]) -> String {
    let mut events = Vec::new();
    let mut held = 0i64;
    for (i, s) in spans.iter().enumerate() {
        let name = serde_json::to_string(&format!("nn.Module: {}", s.name)).unwrap_or_default();
        events.push(format!(
            r#"{{"ph":"X","cat":"python_function","name":{name},"pid":1,"tid":{},"ts":{},"dur":{},"args":{{}}}}"#,
            s.thread, s.start, s.dur
        ));
        if s.op {
            events.push(format!(
                r#"{{"ph":"X","cat":"cpu_op","name":"aten::empty","pid":1,"tid":{},"ts":{},"dur":1,"args":{{}}}}"#,
                s.thread, s.start
            ));
            if s.bytes > 0 {
                held += s.bytes;
                events.push(format!(
                    r#"{{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":{},"ts":{},"args":{{"Addr":{},"Bytes":{},"Total Allocated":{held},"Total Reserved":{},"Device Type":1,"Device Id":0}}}}"#,
                    s.thread,
                    s.start,
                    4096 * (i + 1),
                    s.bytes,
                    held.max(1 << 20)
                ));
            }
        }
    }
    format!(
        r#"{{"schemaVersion":1,"traceEvents":[{}]}}"#,
        events.join(",\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pickles_read_as_python_would_write_them() {
        // Small versions read: the writer is a valid pickle writer.
        let s = crate::snapshot::AllocatorSnapshot::from_bytes(&shared_frames_snapshot(3, 4, 8))
            .unwrap();
        assert_eq!(s.traces[0].len(), 3);
        assert_eq!(s.frames(s.traces[0][0].stack).len(), 5);
        let s =
            crate::snapshot::AllocatorSnapshot::from_bytes(&annotations_snapshot(3, 4)).unwrap();
        assert_eq!(s.annotations.len(), 3);
        let s = crate::snapshot::AllocatorSnapshot::from_bytes(&many_ooms_snapshot(2, 3)).unwrap();
        assert_eq!(s.traces[0].len(), 5);
    }
}
