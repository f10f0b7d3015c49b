#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| asr_suite::fuzz::targets::producer_output(data));
