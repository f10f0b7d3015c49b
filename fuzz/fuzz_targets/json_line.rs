#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| asr_suite::fuzz::targets::json_line(data));
