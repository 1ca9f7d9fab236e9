//! Userdata that ships a sealed stream to a machine: the proposal's bootstrap template, rendered with minijinja.
//!
//! Templates see one variable, `machine_config` (the sealed stream as text), and two filters, `base64` and
//! `gzipBase64`, as the proposal defines them. The Go-template spelling `.machine_config` is accepted too.

use super::Error;
use crate::crypto::encoding::b64_encode;
use std::io::Write;

/// Where the rendered userdata and Ignition configs expect the cryptadm binary unless told otherwise.
pub const DEFAULT_CRYPTADM_PATH: &str = "/usr/local/bin/cryptadm";
/// Where cloud-init writes the sealed stream.
pub const CLOUD_INIT_STREAM_PATH: &str = "/run/machineadm/machineadm_config.yaml";
/// Where the rendered userdata and Ignition configs have `cryptadm bootstrap open` write the configuration.
pub const CONFIG_PATH: &str = "/run/machineadm/machine_config.yaml";

/// The built-in cloud-init template (docs/bootstrap.md) for a cryptadm at `cryptadm_path` (checked with
/// [`validate_cryptadm_path`]): the stream written 0600 under `/run/machineadm` (not `/tmp`, which
/// `systemd-tmpfiles-clean` races), then opened by an exec-form runcmd entry.
pub fn default_template(cryptadm_path: &str) -> Result<String, Error> {
    validate_cryptadm_path(cryptadm_path)?;
    Ok(format!(
        "#cloud-config
write_files:
- path: {CLOUD_INIT_STREAM_PATH}
  owner: root:root
  permissions: '0600'
  encoding: gz+b64
  content: {{{{ machine_config | gzipBase64 }}}}
runcmd:
- [{cryptadm_path}, bootstrap, open, --in, {CLOUD_INIT_STREAM_PATH}, --out, {CONFIG_PATH}]
"
    ))
}

/// A cryptadm path goes unquoted into a YAML flow sequence, a minijinja template and a systemd `ExecStart=`
/// line: it must be absolute and hold only characters none of them treats specially (letters, digits, `/`, `.`,
/// `_`, `-`, `+`). systemd would expand `%` and `$`, split on blanks and quotes; YAML would end the item at `,`
/// or `]`, or start a comment at `#`.
pub fn validate_cryptadm_path(path: &str) -> Result<(), Error> {
    let bad = |problem| Err(Error::BadCryptadmPath { path: path.into(), problem });
    if !path.starts_with('/') {
        return bad("is not absolute");
    }
    if path.ends_with('/') {
        return bad("names a directory");
    }
    if !path.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'-' | b'+')) {
        return bad("may hold only letters, digits and `/._-+` (systemd and YAML would change other characters)");
    }
    if path.split('/').any(|part| part == "..") {
        return bad("has a `..` component");
    }
    Ok(())
}

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
        let rendered = render_template(&default_template(DEFAULT_CRYPTADM_PATH).unwrap(), "kind: X\n").unwrap();
        let content = rendered.lines().find_map(|l| l.strip_prefix("  content: ")).unwrap();
        assert_eq!(gunzip_b64(content), "kind: X\n");
        assert!(rendered.ends_with("machine_config.yaml]\n"));
    }

    #[test]
    fn cryptadm_paths() {
        for good in ["/usr/local/bin/cryptadm", "/opt/cryptadm-1.2/bin/cryptadm_x86+64"] {
            assert!(validate_cryptadm_path(good).is_ok(), "{good}");
        }
        for bad in [
            "cryptadm",
            "bin/cryptadm",
            "/usr/bin/",
            "/a b",
            "/a%i",
            "/a$HOME",
            "/a'b",
            "/a\"b",
            "/a\\b",
            "/a,b",
            "/a]b",
            "/a#b",
            "/a:b",
            "/a\nb",
            "/a/../b",
            "/ä",
        ] {
            assert!(validate_cryptadm_path(bad).is_err(), "{bad:?}");
        }
        let rendered = default_template("/opt/bin/cryptadm").unwrap();
        assert!(rendered.contains("- [/opt/bin/cryptadm, bootstrap, open,"), "{rendered}");
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
