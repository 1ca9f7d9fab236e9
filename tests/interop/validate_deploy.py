#!/usr/bin/env python3
"""Validates deploy/: the Kubernetes objects with kubernetes-validate --strict for one version, and every
csiaddons.openshift.io object against the openAPIV3Schema of the CRD vendored in deploy/vendor/csi-addons/
(with the apiserver's structural rules that jsonschema does not know: no unknown fields).

usage: validate_deploy.py DEPLOY_DIR KUBERNETES_VERSION; prints one line per object, exits 1 on a failure."""
import glob
import os
import subprocess
import sys

import jsonschema
import yaml


def strict(schema):
    """The apiserver prunes/rejects unknown fields in structural schemas: make every object closed."""
    if isinstance(schema, dict):
        schema = {k: strict(v) for k, v in schema.items()}
        if schema.get("type") == "object" and "properties" in schema and "additionalProperties" not in schema \
                and not schema.get("x-kubernetes-preserve-unknown-fields"):
            schema["additionalProperties"] = False
        return schema
    if isinstance(schema, list):
        return [strict(v) for v in schema]
    return schema


def main():
    deploy, version = sys.argv[1], sys.argv[2]
    schemas = {}
    for path in glob.glob(os.path.join(deploy, "vendor/csi-addons/*.yaml")):
        crd = yaml.safe_load(open(path))
        for v in crd["spec"]["versions"]:
            schemas[(crd["spec"]["group"] + "/" + v["name"], crd["spec"]["names"]["kind"])] = v["schema"]["openAPIV3Schema"]
    failed = False
    builtin = []
    files = sorted(glob.glob(os.path.join(deploy, "*.yaml")) + glob.glob(os.path.join(deploy, "examples/*.yaml")))
    for path in files:
        docs = [d for d in yaml.safe_load_all(open(path)) if d]
        custom = [d for d in docs if d["apiVersion"].startswith("csiaddons.openshift.io/")]
        if len(custom) != len(docs):
            builtin.append(path)
        for doc in custom:
            schema = schemas.get((doc["apiVersion"], doc["kind"]))
            if schema is None:
                print(f"FAIL {path}: no vendored CRD for {doc['apiVersion']} {doc['kind']}")
                failed = True
                continue
            body = {k: v for k, v in doc.items() if k != "metadata"}
            try:
                jsonschema.validate(body, strict(schema))
                print(f"ok {path}: {doc['kind']}/{doc['metadata']['name']} against the vendored CRD")
            except jsonschema.ValidationError as e:
                print(f"FAIL {path}: {doc['kind']}/{doc['metadata']['name']}: {e.message}")
                failed = True
    result = subprocess.run(["kubernetes-validate", "--strict", "-k", version, *builtin], capture_output=True, text=True)
    print(result.stdout + result.stderr)
    if result.returncode != 0:
        failed = True
    sys.exit(1 if failed else 0)


main()
