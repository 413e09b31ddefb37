//! Who a block belongs to, as a user reads it: the innermost frame of the user's own code in
//! the block's stack, and the accelerator the snapshot came from (`CUDA:0` / `NPU:0`).
//!
//! A snapshot recorded with `context="all"` lists C++ frames first: the unwinder
//! (`torch::unwind::unwind()`), `CapturedTraceback`, the caching allocator, the op's kernels,
//! then Python's own C frames, then the library's and the user's Python frames. Naming a
//! block by its first frame names every block `??(0): torch::unwind::unwind()`.

pub use super::model::Backend;
use super::model::Frame;
use crate::model::is_library_frame;

/// The frame that stands for a stack: its innermost Python frame outside Python's libraries
/// and installed packages (the user's own code); else its innermost Python frame; else its
/// innermost C++ frame that has a file and is not the allocator's own machinery; else its
/// innermost frame. None for an empty stack.
pub fn holder_frame(frames: &[Frame]) -> Option<&Frame> {
    let python = || frames.iter().filter(|f| is_python(f));
    python()
        .find(|f| !is_library_frame(&f.filename))
        .or_else(|| python().next())
        .or_else(|| {
            frames
                .iter()
                .find(|f| has_file(f) && !is_allocator_machinery(f))
        })
        .or_else(|| frames.first())
}

/// The index of [`holder_frame`] in `frames`.
pub fn holder_index(frames: &[Frame]) -> Option<usize> {
    let h = holder_frame(frames)?;
    frames.iter().position(|f| std::ptr::eq(f, h))
}

/// A frame of Python source (`.py`), as opposed to a C/C++ frame of the interpreter, PyTorch
/// or a driver.
pub(crate) fn is_python(f: &Frame) -> bool {
    let name = f.filename.to_ascii_lowercase();
    name.ends_with(".py") || name.ends_with(".pyx") || name.starts_with('<')
}

/// A C++ frame whose file the unwinder knew (`??` and the empty name: unknown).
fn has_file(f: &Frame) -> bool {
    !(f.filename.is_empty() || f.filename == "??")
}

/// The unwinder, the traceback capture and the caching allocator: every block's stack passes
/// through them, so they say nothing about the block.
fn is_allocator_machinery(f: &Frame) -> bool {
    const MACHINERY: [&str; 7] = [
        "torch::unwind::",
        "torch::CapturedTraceback",
        "torch::cuda::(anonymous namespace)::gather",
        "CachingAllocator",
        "c10::cuda::",
        "c10_npu::",
        "gather_with_cpp",
    ];
    MACHINERY.iter().any(|m| f.name.contains(m))
        || f.filename.ends_with("CachingAllocator.cpp")
        || f.filename == "memory_snapshot.cpp"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(filename: &str, line: i64, name: &str) -> Frame {
        Frame {
            filename: filename.into(),
            line,
            name: name.into(),
        }
    }

    /// The stack of a real H100 snapshot's block (`context="all"`), shortened.
    fn cuda_stack() -> Vec<Frame> {
        vec![
            frame("??", 0, "torch::unwind::unwind()"),
            frame(
                "??",
                0,
                "torch::CapturedTraceback::gather(bool, bool, bool)",
            ),
            frame(
                "memory_snapshot.cpp",
                0,
                "torch::cuda::(anonymous namespace)::gather_with_cpp()",
            ),
            frame(
                "CUDACachingAllocator.cpp",
                0,
                "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc",
            ),
            frame("Blas.cpp", 0, "at::native::addmm_out_cuda_impl"),
            frame("??", 0, "_PyObject_MakeTpCall"),
            frame(
                "/home/user/.venv/lib/python3.12/site-packages/torch/nn/modules/linear.py",
                134,
                "forward",
            ),
            frame("??", 0, "_PyEval_EvalFrameDefault"),
            frame("/home/user/train/make_cuda_refs.py", 190, "snapshots"),
            frame("/home/user/train/make_cuda_refs.py", 316, "<module>"),
        ]
    }

    #[test]
    fn the_holder_of_a_cuda_stack_is_the_users_innermost_python_frame() {
        let s = cuda_stack();
        assert_eq!(holder_frame(&s), Some(&s[8]));
        assert_eq!(holder_index(&s), Some(8));
    }

    #[test]
    fn without_user_code_the_innermost_python_frame_stands_for_the_stack() {
        let s = &cuda_stack()[..8];
        assert_eq!(holder_frame(s).map(|f| f.line), Some(134));
    }

    #[test]
    fn without_python_the_first_cpp_frame_past_the_allocator_stands_for_the_stack() {
        let s = &cuda_stack()[..5];
        assert_eq!(
            holder_frame(s).map(|f| f.filename.as_str()),
            Some("Blas.cpp")
        );
        let only_machinery = &cuda_stack()[..2];
        assert_eq!(holder_frame(only_machinery), only_machinery.first());
        assert_eq!(holder_frame(&[]), None);
    }

    #[test]
    fn a_relative_torch_path_is_a_library_frame_too() {
        let s = vec![
            frame("torch/nn/functional.py", 2914, "layer_norm"),
            frame("train.py", 66, "forward"),
        ];
        assert_eq!(holder_frame(&s), s.get(1));
    }

    #[test]
    fn frames_name_their_backend() {
        let s = cuda_stack();
        assert_eq!(s.iter().find_map(Backend::of_frame), Some(Backend::Cuda));
        let npu = frame(
            "/env/lib/python3.11/site-packages/torch_npu/utils/_module.py",
            10,
            "f",
        );
        assert_eq!(Backend::of_frame(&npu), Some(Backend::Npu));
        assert_eq!(Backend::Cuda.device_label(1), "CUDA:1");
        assert_eq!(Backend::Npu.device_label(0), "NPU:0");
        assert_eq!(Backend::Cuda.alloc_conf(), "PYTORCH_CUDA_ALLOC_CONF");
    }
}
