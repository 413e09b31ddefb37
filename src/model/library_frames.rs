//! Which stack frames are the user's own code, and which are Python's or an installed
//! package's: the user can change only their own, so that is the frame a block is named by.

/// Installed packages whose frames PyTorch's profiler writes relative to `sys.path`
/// (`torch/nn/functional.py(2914): layer_norm`), which no folder marks as a library.
const PACKAGES: [&str; 26] = [
    "accelerate",
    "apex",
    "deepspeed",
    "einops",
    "flash_attn",
    "functorch",
    "megatron",
    "mindspeed",
    "mindspore",
    "numpy",
    "peft",
    "safetensors",
    "torch",
    "torch_npu",
    "torchair",
    "torchaudio",
    "torchrec",
    "torchvision",
    "transformers",
    "triton",
    "trl",
    "typing_extensions",
    "vllm",
    "xformers",
    "tqdm",
    "timm",
];

/// Standard-library modules seen in training stacks, written relative to `sys.path` the same
/// way (`typing.py(2154): cast`). Generic names a user script could carry (`test`, `code`,
/// `profile`, `random`) are left out: a user's `test.py` is not a library.
const STDLIB: [&str; 40] = [
    "_collections_abc",
    "_weakrefset",
    "abc",
    "ast",
    "asyncio",
    "bdb",
    "cProfile",
    "codecs",
    "collections",
    "concurrent",
    "contextlib",
    "contextvars",
    "copy",
    "copyreg",
    "dataclasses",
    "dis",
    "encodings",
    "enum",
    "functools",
    "genericpath",
    "importlib",
    "inspect",
    "json",
    "linecache",
    "logging",
    "multiprocessing",
    "ntpath",
    "pathlib",
    "pdb",
    "pickle",
    "posixpath",
    "queue",
    "runpy",
    "selectors",
    "shutil",
    "subprocess",
    "threading",
    "traceback",
    "typing",
    "warnings",
];

/// A frame of Python itself or of an installed package, as opposed to the user's code:
/// - absolute paths under `site-packages`, `dist-packages` or the standard library
///   (`lib/python3.x`);
/// - `<frozen …>`, `<string>`;
/// - paths PyTorch wrote relative to `sys.path` whose first part is a known package or
///   standard module (`torch/nn/functional.py`, `typing.py`).
pub fn is_library_frame(frame: &str) -> bool {
    let path = frame.replace('\\', "/");
    let lower = path.to_lowercase();
    lower.starts_with('<')
        || lower.contains("/site-packages/")
        || lower.contains("/dist-packages/")
        || (lower.contains("/lib/")
            && lower
                .split('/')
                .any(|seg| seg.starts_with("python3") || seg.starts_with("python2")))
        || relative_root(&path)
            .is_some_and(|root| PACKAGES.contains(&root) || STDLIB.contains(&root))
}

/// The first part of a relative path (`torch` of `torch/nn/f.py(3): g`, `typing` of
/// `typing.py(2154): cast`); None for an absolute path.
fn relative_root(path: &str) -> Option<&str> {
    let absolute =
        path.starts_with('/') || path.starts_with('~') || path.as_bytes().get(1) == Some(&b':');
    if absolute {
        return None;
    }
    let path = path.strip_prefix("./").unwrap_or(path);
    let first = path.split(['/', '(']).next()?;
    Some(first.strip_suffix(".py").unwrap_or(first))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_frames() {
        assert!(is_library_frame(
            "/home/u/.local/lib/python3.9/site-packages/torch/_utils.py(180): _rebuild_tensor"
        ));
        assert!(is_library_frame(
            "/home/u/miniconda3/lib/python3.9/multiprocessing/queues.py(122): get"
        ));
        assert!(is_library_frame("<string>(1): <module>"));
        assert!(is_library_frame(
            r"C:\Python311\Lib\site-packages\torch\nn\modules\conv.py(456): forward"
        ));
        assert!(!is_library_frame(
            "/home/u/imagenet_script/main.py(345): train"
        ));
        assert!(!is_library_frame("/data/训练/模型.py(12): forward"));
    }

    /// PyTorch's profiler writes frames relative to `sys.path` (a real H100 trace).
    #[test]
    fn relative_library_frames_as_the_profiler_writes_them() {
        assert!(is_library_frame("torch/nn/functional.py(2914): layer_norm"));
        assert!(is_library_frame(
            r"torch\nn\modules\linear.py(130): forward"
        ));
        assert!(is_library_frame("typing.py(2154): cast"));
        assert!(is_library_frame("torch_npu/utils/_module.py(10): f"));
        assert!(is_library_frame("torch/nn/functional.py"));
        assert!(!is_library_frame("make_cuda_refs.py(75): forward"));
        assert!(!is_library_frame("model/torchlike.py(3): f"));
        assert!(!is_library_frame("test.py(1): main"));
        assert!(!is_library_frame("/work/torch/train.py(3): main"));
    }
}
