#!/usr/bin/env python3
"""A loopback stand-in for the container credential endpoint of ECS task roles and EKS Pod Identity (the EKS Pod
Identity Agent at 169.254.170.23, ECS's agent at 169.254.170.2).

    container_standin.py CREDENTIALS_JSON TOKEN_FILE LOG

Every GET must carry `Authorization: <the token in TOKEN_FILE>` (read at each request, as the agent checks the
pod's projected service-account token); else 401. The answer is the ECS/Pod Identity JSON document
(`AccessKeyId`, `SecretAccessKey`, `Token`, `Expiration` an hour ahead, `RoleArn`) with the keys of
CREDENTIALS_JSON ({"id", "secret", "token"}, as `aws_oracle.py assume` prints them). Each request is logged as
one line `GET PATH auth-ok|auth-missing|auth-wrong` to LOG. The port is printed on stdout's first line.
"""

import datetime
import http.server
import json
import sys

CREDENTIALS, TOKEN_FILE, LOG = sys.argv[1], sys.argv[2], sys.argv[3]


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body=b""):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        with open(TOKEN_FILE) as f:
            expected = f.read().strip()
        given = self.headers.get("Authorization")
        state = "auth-missing" if given is None else ("auth-ok" if given == expected else "auth-wrong")
        with open(LOG, "a") as log:
            log.write(f"GET {self.path} {state}\n")
        if state != "auth-ok":
            return self.answer(401, b'{"Message":"invalid authorization token"}')
        with open(CREDENTIALS) as f:
            keys = json.load(f)
        expires = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
        document = {
            "AccessKeyId": keys["id"],
            "SecretAccessKey": keys["secret"],
            "Token": keys["token"],
            "Expiration": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "RoleArn": "arn:aws:iam::123456789012:role/pod",
        }
        self.answer(200, json.dumps(document).encode())


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
