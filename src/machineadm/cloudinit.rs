//! Userdata that ships a sealed stream to a machine: the proposal's bootstrap template, rendered with minijinja.
//!
//! Templates see one variable, `machine_config` (the sealed stream as text), and two filters, `base64` and
//! `gzipBase64`, as the proposal defines them. The Go-template spelling `.machine_config` is accepted too.

use super::Error;
use crate::crypto::encoding::b64_encode;
use std::io::Write;

/// The built-in cloud-init template (spec/machineadm.md §7.3): the stream written 0600 under `/run/machineadm`
/// (not `/tmp`, which `systemd-tmpfiles-clean` races), then opened by an exec-form runcmd entry.
pub const DEFAULT_TEMPLATE: &str = "#cloud-config
write_files:
- path: /run/machineadm/machineadm_config.yaml
  owner: root:root
  permissions: '0600'
  encoding: gz+b64
  content: {{ machine_config | gzipBase64 }}
runcmd:
- [/usr/local/bin/cryptadm, bootstrap, open, --in, /run/machineadm/machineadm_config.yaml, --out, /run/machineadm/machine_config.yaml]
";

/// EC2 takes at most 16 KiB of raw userdata; larger output gets a warning.
pub const USERDATA_SIZE_WARNING: usize = 16 * 1024;

/// Bounds the work a template may do (a loop in a user template must not hang a pipeline).
const TEMPLATE_FUEL: u64 = 1_000_000;

/// Renders `template` with `machine_config`.
pub fn render_template(template: &str, machine_config: &str) -> Result<String, Error> {
    let mut env = minijinja::Environment::new();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    env.set_syntax(
        minijinja::syntax::SyntaxConfig::builder()
            .keep_trailing_newline(true)
            .build()
            .expect("default delimiters are valid"),
    );
    env.set_fuel(Some(TEMPLATE_FUEL));
    env.add_filter("base64", |value: String| b64_encode(value.as_bytes()));
    env.add_filter("gzipBase64", |value: String| gzip_base64(value.as_bytes()));
    let template = accept_go_template_dot(template);
    env.render_str(&template, minijinja::context! { machine_config => machine_config })
        .map_err(|e| Error::Template(describe_template_error(&e)))
}

/// gzip (maximum compression, mtime 0, no file name: reproducible), then one line of standard base64, which
/// cloud-init's `gz+b64` decodes.
pub fn gzip_base64(bytes: &[u8]) -> String {
    let mut encoder = flate2::GzBuilder::new().mtime(0).write(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes).expect("writing to memory cannot fail");
    b64_encode(&encoder.finish().expect("writing to memory cannot fail"))
}

/// Go templates reach data through a dot (`{{ .machine_config }}`); minijinja has no such syntax.
fn accept_go_template_dot(template: &str) -> String {
    let mut out = template.to_owned();
    for opening in ["{{", "{{-"] {
        for gap in ["", " "] {
            out = out.replace(&format!("{opening}{gap}.machine_config"), &format!("{opening} machine_config"));
        }
    }
    out
}

fn describe_template_error(error: &minijinja::Error) -> String {
    // minijinja's message already names the position, as `(in <string>:LINE)`.
    error.to_string().replace("(in <string>:", "(template line ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::read::GzDecoder;
    use std::io::Read;

    fn gunzip_b64(text: &str) -> String {
        let bytes = crate::crypto::encoding::b64_decode_lenient(text).unwrap();
        let mut out = String::new();
        GzDecoder::new(&bytes[..]).read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn default_template_round_trips() {
        let rendered = render_template(DEFAULT_TEMPLATE, "kind: X\n").unwrap();
        let content = rendered.lines().find_map(|l| l.strip_prefix("  content: ")).unwrap();
        assert_eq!(gunzip_b64(content), "kind: X\n");
        assert!(rendered.ends_with("machine_config.yaml]\n"));
    }

    #[test]
    fn filters_and_go_spelling() {
        assert_eq!(render_template("{{ machine_config | base64 }}", "hi").unwrap(), "aGk=");
        assert_eq!(render_template("{{ .machine_config }}|{{.machine_config}}", "hi").unwrap(), "hi|hi");
        assert_eq!(gzip_base64(b"x"), gzip_base64(b"x"), "gzip output is reproducible");
    }

    #[test]
    fn unknown_names_fail() {
        for bad in ["{{ machine_cfg }}", "{{ machine_config | gzip }}", "{{ machine_config"] {
            assert!(matches!(render_template(bad, "x"), Err(Error::Template(_))), "{bad}");
        }
        assert!(
            render_template("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "x")
                .is_err()
        );
    }
}
