//! Fuzzes user bootstrap templates (`seal --template`): rendering must never panic and, with the template
//! fuel limit, never run away; a template error is an ordinary `Err`.

use cryptadm::machineadm::render_template;

/// One fuzz input: panics (or fails an assertion) on a bug, returns otherwise.
pub fn run(data: &[u8]) {
    let Ok(template) = std::str::from_utf8(data) else { return };
    let _ = render_template(template, "x");
}
