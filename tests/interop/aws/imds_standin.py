#!/usr/bin/env python3
"""A loopback stand-in for the EC2 instance metadata service, IMDSv2 only (as an instance with
HttpTokens=required answers).

    imds_standin.py CREDENTIALS_JSON LIFE_SECONDS LOG

`PUT /latest/api/token` with `X-aws-ec2-metadata-token-ttl-seconds` gives a session token; every GET without
that token is refused with 401. `GET /latest/meta-data/iam/security-credentials/` lists the role `cryptadm-node`;
`…/cryptadm-node` serves the keys of CREDENTIALS_JSON ({"id": …, "secret": …}, read again at each request) with
an Expiration LIFE_SECONDS from now; `/latest/meta-data/placement/region` answers eu-west-1. Each request is
logged as one line `METHOD PATH token-ok|no-token` to LOG when it arrives, and the keys' answer once more as
`GET PATH served` after it was sent (a test that stops the stand-in once the keys are out waits for that line, not
the first: in between, the client has not got them). The port is printed on stdout's first line.
"""

import datetime
import http.server
import json
import secrets
import sys

CREDENTIALS, LIFE, LOG = sys.argv[1], int(sys.argv[2]), sys.argv[3]
TOKENS = set()
ROLE = "cryptadm-node"


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body=b""):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def note(self, state):
        with open(LOG, "a") as log:
            log.write(f"{self.command} {self.path} {state}\n")

    def do_PUT(self):
        if self.path == "/latest/api/token" and self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
            token = secrets.token_urlsafe(24)
            TOKENS.add(token)
            self.note("token-issued")
            return self.answer(200, token.encode())
        self.note("bad-put")
        self.answer(400)

    def do_GET(self):
        if self.headers.get("X-aws-ec2-metadata-token") not in TOKENS:
            self.note("no-token")
            return self.answer(401)
        self.note("token-ok")
        base = "/latest/meta-data/iam/security-credentials/"
        if self.path == base:
            return self.answer(200, ROLE.encode())
        if self.path == base + ROLE:
            with open(CREDENTIALS) as f:
                keys = json.load(f)
            expires = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=LIFE)
            document = {
                "Code": "Success",
                "Type": "AWS-HMAC",
                "AccessKeyId": keys["id"],
                "SecretAccessKey": keys["secret"],
                "Token": keys.get("token", "imds-session-token"),
                "Expiration": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
            self.answer(200, json.dumps(document).encode())
            self.note("served")
            return None
        if self.path == "/latest/meta-data/placement/region":
            return self.answer(200, b"eu-west-1")
        self.answer(404)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
