//! Fuzzes user bootstrap templates (`seal --template`): rendering must never panic and, with the template
//! fuel limit, never run away; a template error is an ordinary `Err`.
#![no_main]

use cryptadm::machineadm::render_template;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(template) = std::str::from_utf8(data) else { return };
    let _ = render_template(template, "x");
});
