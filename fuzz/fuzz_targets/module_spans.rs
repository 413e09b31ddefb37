//! Fuzz target `module_spans`: see `memsight::fuzzing`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    memsight::fuzzing::run("module_spans", data);
});
