//! Fuzz target `npu_module_mem`: see `memsight::fuzzing`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    memsight::fuzzing::run("npu_module_mem", data);
});
