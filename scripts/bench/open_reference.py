#!/usr/bin/env python3
"""Reference implementation of `cryptadm bootstrap open`, for benchmarks only.

Does the same job as `cryptadm bootstrap open --in IN --out OUT` for streams of
EncryptedConfig documents using the built-in `file` provider (docs/formats.md#machineadm-encryptedconfig
§3 and §7.2), with the OpenSSL-backed `cryptography` package:

    read the YAML stream -> for each EncryptedConfig: read the passphrase file,
    PBKDF2-HMAC-SHA-512 (iterations from the document, 32-byte key),
    AES-256-GCM decrypt (empty AAD, tag appended) -> write OUT atomically.

The output is written the way cryptadm writes it (temp file in the same
directory with mode 0600, fsync, rename, fsync of the directory), so both sides
of the benchmark do the same disk work. It is deliberately small and strict:
it is a yardstick, not a second implementation to maintain (no plugins, no
RemoteConfig handling, no lenient base64).

Usage: open_reference.py --in SEALED.yaml --out CONFIG.yaml
"""

import base64
import os
import sys

import yaml
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

# The C (libyaml) loader when present: the pure-Python one would make the
# reference slower than a competent implementation and flatter cryptadm.
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def passphrase_from_uri(uri: str) -> bytes:
    """The built-in `file` provider: file:///absolute/path, the bytes as they are."""
    if not uri.startswith("file:///"):
        sys.exit(f"open_reference: only file:/// passphrase URIs are supported, got {uri!r}")
    with open(uri[len("file://"):], "rb") as f:
        return f.read()


def decrypt(spec: dict) -> bytes:
    for field, expected in (("cipherAlgorithm", "aes-256-gcm"),
                            ("digestAlgorithm", "sha-512"),
                            ("keyDerivationAlgorithm", "pbkdf2")):
        if str(spec.get(field, expected)).lower() != expected:
            sys.exit(f"open_reference: unsupported {field} {spec[field]!r}")
    if spec["provider"] != "file":
        sys.exit("open_reference: only the `file` provider is supported")
    kdf = PBKDF2HMAC(
        algorithm=hashes.SHA512(),
        length=32,
        salt=base64.b64decode(spec["salt"]),
        iterations=int(spec.get("iterations", 50000)),
    )
    key = kdf.derive(passphrase_from_uri(spec["passphraseURI"]))
    # AESGCM.decrypt verifies the trailing 16-byte tag and raises InvalidTag otherwise.
    return AESGCM(key).decrypt(base64.b64decode(spec["iv"]), base64.b64decode(spec["ciphertext"]), None)


def write_atomically(path: str, data: bytes) -> None:
    """Same durability work as cryptadm's atomic::write."""
    directory = os.path.dirname(os.path.abspath(path))
    temp = os.path.join(directory, f".{os.path.basename(path)}.{os.urandom(6).hex()}.tmp")
    # Created 0600 from the start, like cryptadm (tempfile.mkstemp would do too, but costs an import).
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.rename(temp, path)
    except BaseException:
        os.unlink(temp)
        raise
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def parse_args(argv: list) -> dict:
    """`--in FILE --out FILE`, by hand: importing argparse would cost ~10 ms of every run."""
    if len(argv) != 4 or sorted(argv[0::2]) != ["--in", "--out"]:
        sys.exit("usage: open_reference.py --in SEALED.yaml --out CONFIG.yaml")
    return dict(zip(argv[0::2], argv[1::2]))


def main() -> None:
    args = parse_args(sys.argv[1:])

    with open(args["--in"], "rb") as f:
        documents = [d for d in yaml.load_all(f, Loader=LOADER) if d is not None]

    plaintext = bytearray()
    decrypted = 0
    for index, document in enumerate(documents, start=1):
        if document.get("kind") != "EncryptedConfig":
            sys.exit(f"open_reference: document {index}: only EncryptedConfig is supported")
        chunk = decrypt(document["spec"])
        # Same joining rule as cryptadm: a newline, then `---\n`, unless already there.
        if plaintext and not plaintext.endswith(b"\n"):
            plaintext += b"\n"
        if plaintext and not plaintext.endswith(b"---\n"):
            plaintext += b"---\n"
        plaintext += chunk
        decrypted += 1
    if not decrypted:
        sys.exit("open_reference: no EncryptedConfig document")
    write_atomically(args["--out"], bytes(plaintext))


if __name__ == "__main__":
    main()
