#!/usr/bin/env python3
"""An independent JWE implementation for interop tests of cryptadm's JWE key wrapper (docs/formats.md#key-wrapping-schemes).

Built on Python's jwcrypto (and through it `cryptography`/OpenSSL), not on cryptadm's code or RustCrypto, so
that agreement between the two means something.

    decrypt --key PEM --in JWE --out FILE
        decrypts a JWE (any serialization) with the private key; exit 16 if the key fits no recipient
    encrypt --in FILE --recipient ALG=PEM [--recipient ALG=PEM ...] --enc ENC [--zip] [--compact]
            [--apu TEXT] [--apv TEXT]
        prints a JWE: flattened JSON for one recipient, general JSON for several, or compact
    jwk --in PEM [--alg ALG] [--kid KID]
        prints the public JWK of a PEM key, with `alg` and `kid` when given
    shape --in JWE
        prints the JWE's layout as JSON: member names in document order, the exact protected header text,
        each recipient's member and header names in order, and whether binary members are unpadded base64url

Exit status: 0 success, 2 usage, 3 malformed input, 4 jwcrypto missing, 16 no key fits.
"""

import argparse
import base64
import json
import re
import sys

try:
    from jwcrypto import jwe, jwk
    from jwcrypto.common import JWException, base64url_encode
except ImportError as error:  # pragma: no cover - reported to the Rust test
    sys.stderr.write(f"oracle: the `jwcrypto` package is not importable: {error}\n")
    sys.exit(4)

EXIT_INPUT = 3
EXIT_UNAUTHENTICATED = 16

# Everything the decrypting side of spec 6.1 accepts, and nothing else.
ALGORITHMS = [
    "RSA-OAEP", "RSA-OAEP-256", "ECDH-ES+A128KW", "ECDH-ES+A192KW", "ECDH-ES+A256KW",
    "A128GCM", "A192GCM", "A256GCM", "A128CBC-HS256", "A192CBC-HS384", "A256CBC-HS512",
]
BASE64URL = re.compile(r"[A-Za-z0-9_-]*")
BINARY_MEMBERS = ["protected", "encrypted_key", "iv", "ciphertext", "tag"]


def read(path):
    with open(path, "rb") as f:
        return f.read()


def pem_key(path):
    return jwk.JWK.from_pem(read(path))


def decrypt(args):
    token = jwe.JWE(algs=ALGORITHMS)
    try:
        token.deserialize(read(args.input).decode("ascii").strip())
    except (ValueError, JWException) as error:
        sys.stderr.write(f"oracle: malformed JWE: {error}\n")
        return EXIT_INPUT
    try:
        token.decrypt(pem_key(args.key))
    except JWException as error:
        sys.stderr.write(f"oracle: no recipient fits the key: {error}\n")
        return EXIT_UNAUTHENTICATED
    with open(args.out, "wb") as f:
        f.write(token.payload)
    return 0


def recipient_header(alg, args):
    header = {"alg": alg}
    if args.apu is not None:
        header["apu"] = base64url_encode(args.apu.encode())
    if args.apv is not None:
        header["apv"] = base64url_encode(args.apv.encode())
    return header


def encrypt(args):
    protected = {"enc": args.enc}
    if args.zip:
        protected["zip"] = "DEF"
    recipients = [spec.split("=", 1) for spec in args.recipient]
    if args.compact:
        # The compact form has only the protected header: the one recipient's parameters go there.
        if len(recipients) != 1:
            raise SystemExit("oracle: --compact takes exactly one --recipient")
        protected.update(recipient_header(recipients[0][0], args))
    token = jwe.JWE(read(args.input), protected=json.dumps(protected), algs=ALGORITHMS)
    for alg, path in recipients:
        header = None if args.compact else json.dumps(recipient_header(alg, args))
        token.add_recipient(pem_key(path), header=header)
    sys.stdout.write(token.serialize(compact=args.compact))
    return 0


def export_jwk(args):
    key = json.loads(pem_key(args.input).export_public())
    key.pop("kid", None)  # jwcrypto adds a thumbprint; only an explicit --kid is wanted
    if args.alg:
        key["alg"] = args.alg
    if args.kid:
        key["kid"] = args.kid
    sys.stdout.write(json.dumps(key))
    return 0


def unpadded(value):
    return isinstance(value, str) and BASE64URL.fullmatch(value) is not None


def decode(value):
    return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))


def shape(args):
    # json.loads keeps members in document order, which is what is checked here.
    document = json.loads(read(args.input))
    summary = {
        "members": list(document),
        "protected": decode(document["protected"]).decode("utf-8"),
        "unpadded": all(unpadded(document[m]) for m in BINARY_MEMBERS if m in document),
        "recipients": [],
    }
    for recipient in document.get("recipients", []):
        header = recipient.get("header", {})
        summary["recipients"].append({
            "members": list(recipient),
            "header": list(header),
            "epk": list(header.get("epk", {})),
            "unpadded": unpadded(recipient.get("encrypted_key")),
        })
    if document.get("recipients"):
        summary["top_level_key_is_first_recipients"] = (
            document.get("encrypted_key") == document["recipients"][0]["encrypted_key"])
    sys.stdout.write(json.dumps(summary))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("decrypt")
    p.add_argument("--key", required=True)
    p.add_argument("--in", dest="input", required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(run=decrypt)
    p = commands.add_parser("encrypt")
    p.add_argument("--in", dest="input", required=True)
    p.add_argument("--recipient", action="append", required=True)
    p.add_argument("--enc", required=True)
    p.add_argument("--zip", action="store_true")
    p.add_argument("--compact", action="store_true")
    p.add_argument("--apu")
    p.add_argument("--apv")
    p.set_defaults(run=encrypt)
    p = commands.add_parser("jwk")
    p.add_argument("--in", dest="input", required=True)
    p.add_argument("--alg")
    p.add_argument("--kid")
    p.set_defaults(run=export_jwk)
    p = commands.add_parser("shape")
    p.add_argument("--in", dest="input", required=True)
    p.set_defaults(run=shape)
    args = parser.parse_args()
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
