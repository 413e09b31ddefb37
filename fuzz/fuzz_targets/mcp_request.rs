//! Fuzz target `mcp_request`: see `memsight::fuzzing`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    memsight::fuzzing::run("mcp_request", data);
});
