#!/usr/bin/env python3
"""An ocicrypt key provider (`cmd` kind, docs/formats.md#key-providers) for cryptadm's tests.

Like lumjjb/simple-ocicrypt-keyprovider, it wraps the private options with AES-256-GCM under a fixed key and
returns a JSON blob {"key_url", "wrapped_key", "wrap_type"}. Unlike it, it first checks that the request has
exactly the shape Go's encoding/json gives ocicrypt's structs, and exits 2 with the reason on stderr if not.

usage: keyprovider_aesgcm.py NAME [--fail | --sleep SECONDS | --flood BYTES | --empty | --garbage]
  NAME        the provider's name: its own parameter must be in the request
  --fail      exit 3 after printing a reason on stderr
  --sleep N   sleep N seconds before answering (timeout tests)
  --flood N   print N bytes of junk on stdout (output bound tests)
  --empty     answer with no annotation / no optsdata
  --garbage   answer with something that is not JSON
"""

import base64
import binascii
import json
import os
import sys
import time

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

KEY = bytes(range(32))
KEY_URL = "test://keyprovider_aesgcm/key-1"


def fail(reason, status=2):
    print(f"keyprovider_aesgcm: {reason}", file=sys.stderr)
    sys.exit(status)


def b64(text, what):
    """Go decodes []byte with the standard alphabet and padding; so must every value we are sent."""
    if not isinstance(text, str):
        fail(f"{what} is not a base64 string: {text!r}")
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error:
        fail(f"{what} is not standard base64: {text!r}")


def check_keys(obj, keys, what):
    if not isinstance(obj, dict) or list(obj) != keys:
        fail(f"{what}: expected keys {keys} in this order, got {obj!r}")


def check_params(params, what):
    if not isinstance(params, dict):
        fail(f"{what} is not an object: {params!r}")
    if list(params) != sorted(params):
        fail(f"{what}: keys not sorted as Go marshals maps: {list(params)}")
    for key, values in params.items():
        if not isinstance(values, list):
            fail(f"{what}.{key} is not an array")
        for value in values:
            b64(value, f"{what}.{key}[]")
    return {key: [base64.b64decode(v) for v in values] for key, values in params.items()}


def main():
    args = sys.argv[1:]
    if not args:
        fail("usage: keyprovider_aesgcm.py NAME [options]")
    name, mode = args[0], args[1:]

    request = json.load(sys.stdin)
    check_keys(request, ["op", "keywrapparams", "keyunwrapparams"], "request")
    wrap_params, unwrap_params = request["keywrapparams"], request["keyunwrapparams"]
    check_keys(wrap_params, ["ec", "optsdata"], "keywrapparams")
    check_keys(unwrap_params, ["dc", "annotation"], "keyunwrapparams")

    if mode[:1] == ["--fail"]:
        fail("the KMS refused the request", status=3)
    if mode[:1] == ["--sleep"]:
        time.sleep(float(mode[1]))
    if mode[:1] == ["--flood"]:
        sys.stdout.write("x" * int(mode[1]))
        return
    if mode[:1] == ["--garbage"]:
        print("this is not JSON")
        return
    empty = mode[:1] == ["--empty"]

    if request["op"] == "keywrap":
        if unwrap_params != {"dc": None, "annotation": None}:
            fail(f"keyunwrapparams of a keywrap request must be null: {unwrap_params!r}")
        ec = wrap_params["ec"]
        check_keys(ec, ["Parameters", "DecryptConfig"], "ec")
        params = check_params(ec["Parameters"], "ec.Parameters")
        if name not in params:
            fail(f"ec.Parameters lacks this provider's own parameter {name!r}: {list(params)}")
        check_keys(ec["DecryptConfig"], ["Parameters"], "ec.DecryptConfig")
        if ec["DecryptConfig"]["Parameters"] is not None:
            check_params(ec["DecryptConfig"]["Parameters"], "ec.DecryptConfig.Parameters")
        optsdata = b64(wrap_params["optsdata"], "optsdata")
        nonce = os.urandom(12)
        wrapped = nonce + AESGCM(KEY).encrypt(nonce, optsdata, None)
        blob = json.dumps({
            "key_url": KEY_URL,
            "wrapped_key": base64.b64encode(wrapped).decode(),
            "wrap_type": "AES",
            "options": [v.decode("latin-1") for v in params[name]],
        }).encode()
        annotation = None if empty else base64.b64encode(blob).decode()
        json.dump({"keywrapresults": {"annotation": annotation}}, sys.stdout)
    elif request["op"] == "keyunwrap":
        if wrap_params != {"ec": None, "optsdata": None}:
            fail(f"keywrapparams of a keyunwrap request must be null: {wrap_params!r}")
        dc = unwrap_params["dc"]
        check_keys(dc, ["Parameters"], "dc")
        check_params(dc["Parameters"], "dc.Parameters")
        blob = json.loads(b64(unwrap_params["annotation"], "annotation"))
        if blob.get("key_url") != KEY_URL or blob.get("wrap_type") != "AES":
            fail(f"not a blob of this provider: {blob!r}")
        wrapped = base64.b64decode(blob["wrapped_key"])
        optsdata = AESGCM(KEY).decrypt(wrapped[:12], wrapped[12:], None)
        result = None if empty else base64.b64encode(optsdata).decode()
        json.dump({"keyunwrapresults": {"optsdata": result}}, sys.stdout)
    else:
        fail(f"unknown op {request['op']!r}")


if __name__ == "__main__":
    main()
