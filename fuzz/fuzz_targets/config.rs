#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    openkeel_core::fuzzing::config(data);
});
