//! FX-augmented frames (`_dump_snapshot(augment_with_fx_traces=True)`): PyTorch adds to each
//! frame of FX-generated code (`fx_generated_*.py`) the node it ran (`fx_node_op`,
//! `fx_node_name`) and the model's own source stack that produced the node
//! (`fx_original_trace`, a Python traceback text). memsight shows the model's frames in place
//! of the generated one, so holders name the model's line, not the generated code.

use super::model::Frame;

/// The frames of a Python traceback text (`  File "x.py", line 12, in forward` lines, the
/// outermost first, each followed by its source line and carets), innermost first as a
/// snapshot's stacks are. Lines that are not a `File` line are skipped; an empty text gives
/// no frames.
pub fn original_frames(trace: &str) -> Vec<Frame> {
    let mut frames: Vec<Frame> = trace.lines().filter_map(file_line).collect();
    frames.reverse();
    frames
}

/// One `File "path", line N, in name` line of a traceback.
fn file_line(line: &str) -> Option<Frame> {
    let rest = line.trim_start().strip_prefix("File \"")?;
    let (filename, rest) = rest.split_once("\", line ")?;
    let (number, name) = rest.split_once(", in ")?;
    Some(Frame {
        filename: filename.to_string(),
        line: number.trim().parse().ok()?,
        name: name.trim_end().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `fx_original_trace` PyTorch 2.15 wrote for a `torch.compile(backend="aot_eager")`
    /// node, with the caret line of Python 3.11.
    const TRACE: &str = "  File \"/home/user/train.py\", line 40, in step\n    loss = model(x)\n  \
                         File \"/home/user/model.py\", line 9, in forward\n    y = s.fc(x)\n        \
                         ^^^^^^^\n";

    #[test]
    fn a_traceback_reads_innermost_first() {
        let f = original_frames(TRACE);
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].text(), "/home/user/model.py(9): forward");
        assert_eq!(f[1].text(), "/home/user/train.py(40): step");
    }

    #[test]
    fn text_that_is_not_a_traceback_gives_no_frames() {
        assert!(original_frames("").is_empty());
        assert!(original_frames("File \"x.py\", line ?, in f").is_empty());
        assert!(original_frames("not a trace\n\n").is_empty());
        // A name with a comma and a path with a quote-free space survive.
        let f = original_frames("File \"/a b/c.py\", line 3, in <lambda>, x\n");
        assert_eq!(f[0].filename, "/a b/c.py");
        assert_eq!(f[0].name, "<lambda>, x");
    }
}
