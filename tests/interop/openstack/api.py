"""One raw OpenStack API call for the tests, logged in as the harness's admin: what the openstack client has no
command for (Barbican consumers) or shows only partly. Usage: api.py ENV_FILE SERVICE METHOD PATH [JSON_BODY]
(SERVICE: keystone, key-manager, image). Prints `STATUS` on the first line, then the body."""
import json
import sys
import urllib.error
import urllib.request

env = dict(line.strip().split("=", 1) for line in open(sys.argv[1]) if "=" in line)
service, method, path = sys.argv[2:5]
body = sys.argv[5].encode() if len(sys.argv) > 5 else None
base = {"keystone": env["KEYSTONE_URL"], "key-manager": env["BARBICAN_URL"], "image": env["GLANCE_URL"]}[service]

req = urllib.request.Request(env["KEYSTONE_URL"] + "/auth/tokens", method="POST", data=json.dumps({"auth": {
    "identity": {"methods": ["password"], "password": {"user": {
        "name": "admin", "domain": {"id": "default"}, "password": env["ADMIN_PASSWORD"]}}},
    "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}}).encode())
req.add_header("Content-Type", "application/json")
with urllib.request.urlopen(req) as resp:
    token = resp.headers["X-Subject-Token"]
if path == "token":
    print(200)
    print(token)
    sys.exit(0)

req = urllib.request.Request(base + path, data=body, method=method)
req.add_header("X-Auth-Token", token)
req.add_header("OpenStack-API-Version", "key-manager 1.1")
if body is not None:
    req.add_header("Content-Type", "application/json")
try:
    with urllib.request.urlopen(req) as resp:
        status, text = resp.status, resp.read()
except urllib.error.HTTPError as e:
    status, text = e.code, e.read()
print(status)
sys.stdout.write(text.decode(errors="replace"))
