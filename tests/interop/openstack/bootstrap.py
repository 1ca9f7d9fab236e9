"""Creates the service project, the barbican and glance service users and the key-manager and image services
with their endpoints, through Keystone's v3 API (faster than one openstack client process per object). Region
KeyManagerOnly has the key-manager endpoint and no image endpoint (a cloud without Glance, for the tests)."""
import json
import sys
import urllib.request

keystone, admin_pw, service_pw, barbican, glance = sys.argv[1:6]


def call(method, path, body=None, token=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(keystone + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("X-Auth-Token", token)
    with urllib.request.urlopen(req) as resp:
        text = resp.read()
        return resp.headers, (json.loads(text) if text else None)


headers, _ = call("POST", "/auth/tokens", {"auth": {
    "identity": {"methods": ["password"], "password": {"user": {
        "name": "admin", "domain": {"id": "default"}, "password": admin_pw}}},
    "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}})
token = headers["X-Subject-Token"]
_, project = call("POST", "/projects", {"project": {"name": "service", "domain_id": "default"}}, token)
_, roles = call("GET", "/roles?name=admin", token=token)
admin_role = roles["roles"][0]["id"]
for role in ("creator", "member", "reader"):
    _, found = call("GET", f"/roles?name={role}", token=token)
    if not found["roles"]:
        call("POST", "/roles", {"role": {"name": role}}, token)
for name, service_type, url in (("barbican", "key-manager", barbican), ("glance", "image", glance)):
    _, user = call("POST", "/users", {"user": {"name": name, "domain_id": "default", "password": service_pw}}, token)
    call("PUT", f"/projects/{project['project']['id']}/users/{user['user']['id']}/roles/{admin_role}", token=token)
    _, service = call("POST", "/services", {"service": {"name": name, "type": service_type}}, token)
    for interface in ("public", "internal", "admin"):
        call("POST", "/endpoints", {"endpoint": {"service_id": service["service"]["id"], "interface": interface,
                                                 "url": url, "region_id": "RegionOne"}}, token)
    if service_type == "key-manager":
        call("POST", "/regions", {"region": {"id": "KeyManagerOnly"}}, token)
        call("POST", "/endpoints", {"endpoint": {"service_id": service["service"]["id"], "interface": "public",
                                                 "url": url, "region_id": "KeyManagerOnly"}}, token)
# Project `quota` with its own admin user (password: the admin's): Glance's user_storage_quota counts the images
# of one owner, so the tests fill this project up to its quota without touching the admin project's.
_, quota = call("POST", "/projects", {"project": {"name": "quota", "domain_id": "default"}}, token)
_, quser = call("POST", "/users", {"user": {"name": "quota", "domain_id": "default", "password": admin_pw}}, token)
call("PUT", f"/projects/{quota['project']['id']}/users/{quser['user']['id']}/roles/{admin_role}", token=token)
print("ok")
