//! Every reader of `rhea::serial` on arbitrary bytes: no panic, typed errors only, and every
//! accepted input re-encodes to exactly the same bytes. See `rhea_fuzz::run`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = rhea_fuzz::run(data);
});
