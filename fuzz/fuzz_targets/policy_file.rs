#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    openkeel_auth::fuzzing::policy_file(data);
});
