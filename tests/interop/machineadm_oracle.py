#!/usr/bin/env python3
"""An independent implementation of the machineadm EncryptedConfig envelope, for interop tests.

Written from docs/formats.md#machineadm-encryptedconfig, not from cryptadm's Rust code, and
built on Python's `cryptography` package (OpenSSL) instead of RustCrypto, so that agreement between the two
means something.

    seal --in FILE --passphrase-file FILE --provider NAME --passphrase-uri URI
        prints one EncryptedConfig YAML document, laid out as in spec section 7.1
    open --in FILE --passphrase-file FILE --out FILE
        decrypts every EncryptedConfig of the stream (RemoteConfig documents are skipped) and writes the bytes

The passphrase is the passphrase file's bytes exactly; nothing is stripped.

Exit status: 0 success, 2 usage, 3 malformed or unsupported input, 16 authentication failure (wrong passphrase
or altered document), 4 `cryptography` missing.
"""

import argparse
import base64
import binascii
import os
import re
import sys

try:
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC
except ImportError as error:  # pragma: no cover - reported to the Rust test
    sys.stderr.write(f"oracle: the `cryptography` package is not importable: {error}\n")
    sys.exit(4)

API_VERSION = "machineadm.cluster.x-k8s.io/v1alpha1"
KIND = "EncryptedConfig"
ITERATIONS = 50000
KEY_LEN = 32
SALT_LEN = 16
IV_LEN = 12
TAG_LEN = 16
MAX_ITERATIONS = 10_000_000

EXIT_USAGE = 2
EXIT_INPUT = 3
EXIT_UNAUTHENTICATED = 16


class OracleError(Exception):
    """A failure with an exit status."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def derive_key(passphrase: bytes, salt: bytes, iterations: int) -> bytes:
    """PBKDF2 with HMAC-SHA-512 as the PRF, 32-byte output (the AES-256 key)."""
    kdf = PBKDF2HMAC(algorithm=hashes.SHA512(), length=KEY_LEN, salt=salt, iterations=iterations)
    return kdf.derive(passphrase)


def b64(data: bytes) -> str:
    """Standard alphabet, `=` padding, one line."""
    return base64.b64encode(data).decode("ascii")


def unb64(field: str, text: str) -> bytes:
    """Strict decoding: cryptadm must emit canonical standard base64, so nothing is tolerated here."""
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError) as error:
        raise OracleError(EXIT_INPUT, f"spec.{field} is not standard padded base64: {error}")


# A YAML plain scalar that needs no quoting in block context (kept conservative on purpose).
PLAIN_SCALAR = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./:@+=%~-]*")


def yaml_scalar(value: str) -> str:
    """A plain scalar when safe, else a double-quoted one (JSON string syntax is valid YAML)."""
    if PLAIN_SCALAR.fullmatch(value) and ": " not in value and value not in ("null", "true", "false", "~"):
        return value
    out = ['"']
    for ch in value:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def seal(plaintext: bytes, passphrase: bytes, provider: str, uri: str, salt: bytes, iv: bytes) -> str:
    key = derive_key(passphrase, salt, ITERATIONS)
    # AESGCM.encrypt returns the ciphertext with the 16-byte tag appended; no associated data.
    ciphertext = AESGCM(key).encrypt(iv, plaintext, None)
    return (
        f"apiVersion: {API_VERSION}\n"
        f"kind: {KIND}\n"
        f"spec:\n"
        f"  provider: {yaml_scalar(provider)}\n"
        f"  passphraseURI: {yaml_scalar(uri)}\n"
        f"  ciphertext: {b64(ciphertext)}\n"
        f"  salt: {b64(salt)}\n"
        f"  iv: {b64(iv)}\n"
        f"  cipherAlgorithm: aes-256-gcm\n"
        f"  digestAlgorithm: sha-512\n"
        f'  iterations: "{ITERATIONS}"\n'
        f"  keyDerivationAlgorithm: pbkdf2\n"
    )


# --- reading -------------------------------------------------------------------------------------------------


def unquote(raw: str, line_no: int):
    """The value of a flat `key: value` line: plain, 'single' or "double" quoted."""
    raw = raw.strip()
    if raw == "" or raw in ("~", "null"):
        return None
    if raw[0] == "'":
        if len(raw) < 2 or raw[-1] != "'":
            raise OracleError(EXIT_INPUT, f"line {line_no}: unterminated single-quoted scalar")
        return raw[1:-1].replace("''", "'")
    if raw[0] == '"':
        if len(raw) < 2 or raw[-1] != '"':
            raise OracleError(EXIT_INPUT, f"line {line_no}: unterminated double-quoted scalar")
        body, out, i = raw[1:-1], [], 0
        simple = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "/": "/", "0": "\0", "r": "\r"}
        while i < len(body):
            ch = body[i]
            if ch != "\\":
                out.append(ch)
                i += 1
                continue
            nxt = body[i + 1 : i + 2]
            if nxt in simple:
                out.append(simple[nxt])
                i += 2
            elif nxt in ("x", "u", "U"):
                width = {"x": 2, "u": 4, "U": 8}[nxt]
                out.append(chr(int(body[i + 2 : i + 2 + width], 16)))
                i += 2 + width
            else:
                raise OracleError(EXIT_INPUT, f"line {line_no}: unsupported escape \\{nxt}")
        return "".join(out)
    if " #" in raw:
        raw = raw.split(" #", 1)[0].rstrip()
    return raw


BLOCK_HEADER = re.compile(r"([|>])([+-]?)")


def block_scalar(style: str, chomping: str, lines, line_no: int) -> str:
    """The value of a `|` (literal) or `>` (folded) block scalar from its content lines (indent removed).
    Folding is the simple case only: lines are joined with spaces, and blank lines inside are refused."""
    trailing = 0
    while lines and lines[-1] == "":
        lines.pop()
        trailing += 1
    if style == ">":
        if "" in lines:
            raise OracleError(EXIT_INPUT, f"line {line_no}: blank lines in a folded scalar are not supported")
        body = " ".join(lines)
    else:
        body = "\n".join(lines)
    if chomping == "-" or not body:
        return body
    return body + "\n" * (1 + trailing if chomping == "+" else 1)


def parse_by_hand(text: str):
    """A parser for the only shape machineadm documents have: top-level keys whose values are scalars or one
    level of indented `key: value` lines, documents separated by `---`, `#` comments. A value may also be a
    block scalar (`>-`, `|` ...) on the following, more indented lines, which is how some YAML emitters write
    long strings."""
    documents, current, section = [], {}, None
    block = None  # (target mapping, key, style, chomping, key indent, first line number, content lines)

    def finish_block():
        target, key, style, chomping, _, first, lines = block
        if lines:
            width = min(len(l) - len(l.lstrip(" ")) for l in lines if l.strip())
            lines = [l[width:] if l.strip() else "" for l in lines]
        target[key] = block_scalar(style, chomping, lines, first)

    for line_no, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip()
        if block is not None:
            indent = len(line) - len(line.lstrip(" "))
            if not stripped or indent > block[4]:
                block[6].append(line)
                continue
            finish_block()
            block = None
        if line.startswith("---"):
            if current:
                documents.append(current)
            current, section = {}, None
            continue
        if line.startswith("..."):
            continue
        if not stripped or stripped.startswith("#"):
            continue
        indented = line[0] in " \t"
        key, sep, value = stripped.partition(":")
        if not sep or (value and not value[0].isspace()):
            raise OracleError(EXIT_INPUT, f"line {line_no}: expected `key: value`, found {stripped[:40]!r}")
        key = key.strip()
        header = BLOCK_HEADER.fullmatch(value.strip())
        if indented:
            if section is None:
                raise OracleError(EXIT_INPUT, f"line {line_no}: indented line outside a mapping")
            if header:
                indent = len(line) - len(line.lstrip(" "))
                block = (section, key, header.group(1), header.group(2), indent, line_no, [])
            else:
                section[key] = unquote(value, line_no)
        elif header:
            section = None
            block = (current, key, header.group(1), header.group(2), 0, line_no, [])
        elif value.strip() == "":
            section = {}
            current[key] = section
        else:
            section = None
            current[key] = unquote(value, line_no)
    if block is not None:
        finish_block()
    if current:
        documents.append(current)
    return documents


def parse_stream(text: str, parser: str):
    if parser in ("auto", "yaml"):
        try:
            import yaml  # PyYAML, if this Python has it
        except ImportError:
            if parser == "yaml":
                raise OracleError(EXIT_USAGE, "--parser yaml: PyYAML is not importable")
        else:
            try:
                return [d for d in yaml.safe_load_all(text) if d is not None]
            except yaml.YAMLError as error:
                raise OracleError(EXIT_INPUT, f"not a valid YAML stream: {error}")
    return parse_by_hand(text)


def field(spec: dict, name: str, index: int) -> str:
    value = spec.get(name)
    if not isinstance(value, str):
        raise OracleError(EXIT_INPUT, f"document {index}: spec.{name} is missing or not a string")
    return value


def open_stream(data: bytes, passphrase: bytes, parser: str) -> bytes:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise OracleError(EXIT_INPUT, f"the stream is not UTF-8: {error}")
    out = bytearray()
    opened = 0
    for index, doc in enumerate(parse_stream(text, parser), start=1):
        if not isinstance(doc, dict):
            raise OracleError(EXIT_INPUT, f"document {index}: not a mapping")
        if doc.get("apiVersion") != API_VERSION:
            raise OracleError(EXIT_INPUT, f"document {index}: unsupported apiVersion {doc.get('apiVersion')!r}")
        if doc.get("kind") == "RemoteConfig":
            continue
        if doc.get("kind") != KIND:
            raise OracleError(EXIT_INPUT, f"document {index}: unsupported kind {doc.get('kind')!r}")
        spec = doc.get("spec")
        if not isinstance(spec, dict):
            raise OracleError(EXIT_INPUT, f"document {index}: spec is missing or not a mapping")
        for name, expected in (
            ("cipherAlgorithm", "aes-256-gcm"),
            ("digestAlgorithm", "sha-512"),
            ("keyDerivationAlgorithm", "pbkdf2"),
        ):
            if field(spec, name, index) != expected:
                raise OracleError(EXIT_INPUT, f"document {index}: spec.{name} is {spec[name]!r}, not {expected!r}")
        # cryptadm writes a quoted string; an integer here would mean it changed its output format.
        iterations_text = field(spec, "iterations", index)
        if not iterations_text.isdigit() or not 1 <= int(iterations_text) <= MAX_ITERATIONS:
            raise OracleError(EXIT_INPUT, f"document {index}: spec.iterations {iterations_text!r} is out of range")
        field(spec, "provider", index)
        field(spec, "passphraseURI", index)
        salt = unb64("salt", field(spec, "salt", index))
        iv = unb64("iv", field(spec, "iv", index))
        ciphertext = unb64("ciphertext", field(spec, "ciphertext", index))
        if len(salt) < 8:
            raise OracleError(EXIT_INPUT, f"document {index}: spec.salt is {len(salt)} bytes (need at least 8)")
        if len(iv) != IV_LEN:
            raise OracleError(EXIT_INPUT, f"document {index}: spec.iv is {len(iv)} bytes, not {IV_LEN}")
        if len(ciphertext) < TAG_LEN:
            raise OracleError(EXIT_INPUT, f"document {index}: spec.ciphertext is shorter than the GCM tag")
        key = derive_key(passphrase, salt, int(iterations_text))
        try:
            chunk = AESGCM(key).decrypt(iv, ciphertext, None)
        except InvalidTag:
            raise OracleError(
                EXIT_UNAUTHENTICATED,
                f"document {index}: authentication failed (wrong passphrase or altered document)",
            )
        if out and not out.endswith(b"---\n"):
            out += b"---\n" if out.endswith(b"\n") else b"\n---\n"
        out += chunk
        opened += 1
    if opened == 0:
        raise OracleError(EXIT_INPUT, "the stream holds no EncryptedConfig document")
    return bytes(out)


# --- command line --------------------------------------------------------------------------------------------


def read_bytes(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    with open(path, "rb") as handle:
        return handle.read()


def hex_bytes(name: str, text: str, length=None) -> bytes:
    try:
        value = bytes.fromhex(text)
    except ValueError:
        raise OracleError(EXIT_USAGE, f"--{name}-hex is not hex")
    if length is not None and len(value) != length:
        raise OracleError(EXIT_USAGE, f"--{name}-hex must be {length} bytes")
    return value


def main(argv) -> int:
    parser = argparse.ArgumentParser(prog="machineadm_oracle.py", description=__doc__.split("\n\n")[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    seal_cmd = verbs.add_parser("seal")
    seal_cmd.add_argument("--in", dest="input", required=True)
    seal_cmd.add_argument("--passphrase-file", required=True)
    seal_cmd.add_argument("--provider", required=True)
    seal_cmd.add_argument("--passphrase-uri", required=True)
    seal_cmd.add_argument("--salt-hex", help=argparse.SUPPRESS)
    seal_cmd.add_argument("--iv-hex", help=argparse.SUPPRESS)
    open_cmd = verbs.add_parser("open")
    open_cmd.add_argument("--in", dest="input", required=True)
    open_cmd.add_argument("--passphrase-file", required=True)
    open_cmd.add_argument("--out", required=True)
    open_cmd.add_argument("--parser", choices=("auto", "yaml", "hand"), default="auto", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    try:
        passphrase = read_bytes(args.passphrase_file)
        if not passphrase:
            raise OracleError(EXIT_USAGE, "the passphrase is empty")
        if args.verb == "seal":
            salt = hex_bytes("salt", args.salt_hex) if args.salt_hex else os.urandom(SALT_LEN)
            iv = hex_bytes("iv", args.iv_hex, IV_LEN) if args.iv_hex else os.urandom(IV_LEN)
            document = seal(read_bytes(args.input), passphrase, args.provider, args.passphrase_uri, salt, iv)
            sys.stdout.write(document)
            sys.stdout.flush()
        else:
            plaintext = open_stream(read_bytes(args.input), passphrase, args.parser)
            if args.out == "-":
                sys.stdout.buffer.write(plaintext)
                sys.stdout.flush()
            else:
                with open(args.out, "wb") as handle:
                    handle.write(plaintext)
        return 0
    except OracleError as error:
        sys.stderr.write(f"oracle: {error}\n")
        return error.status
    except OSError as error:
        sys.stderr.write(f"oracle: {error}\n")
        return EXIT_INPUT


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
