//! Fuzz target `snapshot_fields`: see `memsight::fuzzing`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    memsight::fuzzing::run("snapshot_fields", data);
});
