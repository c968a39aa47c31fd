#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    openkeel_rpc::fuzzing::oslo_message(data);
});
