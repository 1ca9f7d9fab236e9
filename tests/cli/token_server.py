"""A registry token service for the registry tests: what Docker Hub, GHCR, Quay and Harbor put in front of a
registry, small enough to read. docker-registry's `auth: token:` section points its challenge at it.

  token_server.py --cert PATH --password-file PATH --service NAME --issuer NAME [--push-ttl SECONDS]

It makes an RSA key and a self-signed certificate for it, writes the certificate (PEM) to --cert (the
registry's `rootcertbundle`), listens on a free loopback port and prints the port on the first line of stdout.

GET /token?service=NAME&scope=repository:REPO:ACTIONS (scope may repeat, or be absent) answers
{"token", "access_token", "expires_in", "issued_at"}: a JWT signed with RS256 whose header carries the
certificate as a one-element `x5c` chain (the registry verifies it against its rootcertbundle) and whose claims
are iss (--issuer), sub (the user, or "" for anonymous), aud (--service), exp, nbf, iat, jti and
access: [{"type", "name", "actions"}]. HTTP Basic credentials are checked: alice with the password in
--password-file (its first line) gets what she asks of pull and push on any repository; a request without
credentials gets pull only (so an anonymous push is refused by the registry, insufficient scope); wrong
credentials are answered 401. A wrong service is answered 400.

Tokens granting push expire after --push-ttl seconds as the registry sees them (default 300; up to a second
more, exp being in whole seconds). The registry accepts a token until 60 s (distribution's clock-skew leeway)
past its `exp`, so a token meant to die sooner says exp = now + TTL - 60 (clients that read `exp` see it expired
at once; oci-client then asks for a new token before each of its own requests). Pull-only tokens live 300 s.

It exits when its stdin ends: a test holds a pipe to it, so it goes when the test process does.

One line on stdout per request: "token USER SCOPES -> GRANTED" (USER is "anonymous" without credentials; SCOPES
and GRANTED are space-separated scopes, "-" when none), or "refused USER" for wrong credentials.
"""
import argparse
import base64
import datetime
import http.server
import json
import math
import os
import sys
import threading
import time
import urllib.parse

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID

LEEWAY = 60  # distribution's token.Leeway, added to exp when the registry checks it
PULL_TTL = 300
USER = "alice"

parser = argparse.ArgumentParser()
parser.add_argument("--cert", required=True)
parser.add_argument("--password-file", required=True)
parser.add_argument("--service", required=True)
parser.add_argument("--issuer", required=True)
parser.add_argument("--push-ttl", type=int, default=PULL_TTL)
options = parser.parse_args()

with open(options.password_file, encoding="utf-8") as f:
    password = f.readline().rstrip("\r\n")

key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "registry token signer")])
now = datetime.datetime.now(datetime.timezone.utc)
certificate = (
    x509.CertificateBuilder()
    .subject_name(name)
    .issuer_name(name)
    .public_key(key.public_key())
    .serial_number(x509.random_serial_number())
    .not_valid_before(now - datetime.timedelta(hours=1))
    .not_valid_after(now + datetime.timedelta(days=1))
    .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
    .add_extension(
        x509.KeyUsage(
            digital_signature=True,
            content_commitment=False,
            key_encipherment=False,
            data_encipherment=False,
            key_agreement=False,
            key_cert_sign=True,
            crl_sign=False,
            encipher_only=False,
            decipher_only=False,
        ),
        critical=True,
    )
    .sign(key, hashes.SHA256())
)
temporary = options.cert + ".tmp"
with open(temporary, "wb") as f:
    f.write(certificate.public_bytes(serialization.Encoding.PEM))
os.replace(temporary, options.cert)
# The chain in the JWT header: standard base64 (not URL-safe) DER, as RFC 7515 says for x5c.
chain = [base64.b64encode(certificate.public_bytes(serialization.Encoding.DER)).decode("ascii")]

lock = threading.Lock()


def say(line):
    with lock:
        print(line, flush=True)


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def sign(subject, access, ttl):
    issued = time.time()
    header = {"typ": "JWT", "alg": "RS256", "x5c": chain}
    claims = {
        "iss": options.issuer,
        "sub": subject,
        "aud": options.service,
        # Whole seconds (the registry reads an int64), rounded up: the token lives TTL seconds at least.
        "exp": math.ceil(issued + ttl) - LEEWAY,
        "nbf": int(issued) - 1,
        "iat": int(issued),
        "jti": os.urandom(16).hex(),
        "access": access,
    }
    signing_input = ".".join(b64url(json.dumps(part, separators=(",", ":")).encode()) for part in (header, claims))
    signature = key.sign(signing_input.encode("ascii"), padding.PKCS1v15(), hashes.SHA256())
    return signing_input + "." + b64url(signature)


def grant(scopes, allowed):
    """The access claim for the scopes asked: each repository scope cut down to the `allowed` actions."""
    access = []
    for scope in scopes:
        kind, _, rest = scope.partition(":")
        repository, _, actions = rest.rpartition(":")
        if kind != "repository" or not repository:
            continue
        granted = [a for a in actions.split(",") if a in allowed]
        if granted:
            access.append({"type": "repository", "name": repository, "actions": granted})
    return access


def credentials(header):
    """(user, password) from a Basic Authorization header; None without one."""
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic":
        return ("?", None)
    try:
        user, _, secret = base64.b64decode(value.strip()).decode("utf-8").partition(":")
    except ValueError:
        return ("?", None)
    return (user, secret)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, status, body, extra=()):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path != "/token":
            self.answer(404, {"details": "not found"})
            return
        query = urllib.parse.parse_qs(url.query)
        if query.get("service", [""])[0] != options.service:
            self.answer(400, {"details": "unknown service"})
            return
        scopes = [s for value in query.get("scope", []) for s in value.split(" ") if s]
        given = credentials(self.headers.get("Authorization"))
        if given is None:
            user, allowed = "anonymous", ("pull",)
        elif given == (USER, password):
            user, allowed = USER, ("pull", "push")
        else:
            say(f"refused {given[0]}")
            self.answer(
                401,
                {"details": "incorrect username or password"},
                [("WWW-Authenticate", 'Basic realm="token"')],
            )
            return
        access = grant(scopes, allowed)
        pushes = any("push" in a["actions"] for a in access)
        ttl = options.push_ttl if pushes else PULL_TTL
        token = sign("" if user == "anonymous" else user, access, ttl)
        granted = " ".join(f"repository:{a['name']}:{','.join(a['actions'])}" for a in access)
        say(f"token {user} {' '.join(scopes) or '-'} -> {granted or '-'}")
        issued_at = datetime.datetime.now(datetime.timezone.utc).isoformat()
        self.answer(200, {"token": token, "access_token": token, "expires_in": ttl, "issued_at": issued_at})

    def log_message(self, *args):
        pass  # stdout carries one line per token request, nothing else


def watch_stdin():
    while sys.stdin.buffer.read(65536):
        pass
    os._exit(0)


threading.Thread(target=watch_stdin, daemon=True).start()
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
try:
    server.serve_forever()
except KeyboardInterrupt:
    sys.exit(0)
