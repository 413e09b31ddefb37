//! Fuzz target `static_op_mem`: see `memsight::fuzzing`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    memsight::fuzzing::run("static_op_mem", data);
});
