#!/usr/bin/env python3
"""The Vault/OpenBao half of the `vault-transit` bootstrap provider, independently of cryptadm: plain HTTP to the
server (urllib), the passphraseURI format from docs/key-managers.md (vault-transit://<base64url(ciphertext)>@MOUNT/KEY,
a mount containing `/` written with %2F), and the passphrase = the raw bytes of the Transit data key.

    datakey MOUNT KEY PASSPHRASE_OUT   asks MOUNT/datakey/plaintext/KEY (256 bits), writes the raw key bytes to
                                       PASSPHRASE_OUT and prints the passphraseURI to record
    unwrap URI PASSPHRASE_OUT          decrypts the URI's wrapped key with MOUNT/decrypt/KEY and writes the bytes

The server comes from BAO_ADDR (plain http:// only: this is a test helper), the token from BAO_TOKEN.
"""

import base64
import json
import os
import sys
import urllib.request


def call(path, body):
    request = urllib.request.Request(
        os.environ["BAO_ADDR"].rstrip("/") + "/v1/" + path,
        data=json.dumps(body).encode(),
        headers={"X-Vault-Token": os.environ["BAO_TOKEN"], "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)["data"]


def write_secret(path, data):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


def main(argv):
    if len(argv) == 5 and argv[1] == "datakey":
        mount, key, out = argv[2], argv[3], argv[4]
        data = call(f"{mount}/datakey/plaintext/{key}", {"bits": 256})
        write_secret(out, base64.b64decode(data["plaintext"]))
        wrapped = base64.urlsafe_b64encode(data["ciphertext"].encode()).decode().rstrip("=")
        print(f"vault-transit://{wrapped}@{mount.replace('/', '%2F')}/{key}")
        return 0
    if len(argv) == 4 and argv[1] == "unwrap":
        uri, out = argv[2], argv[3]
        rest = uri.removeprefix("vault-transit://")
        wrapped, location = rest.split("@", 1)
        mount, key = location.rsplit("/", 1)
        ciphertext = base64.urlsafe_b64decode(wrapped + "=" * (-len(wrapped) % 4)).decode()
        data = call(f"{mount.replace('%2F', '/')}/decrypt/{key}", {"ciphertext": ciphertext})
        write_secret(out, base64.b64decode(data["plaintext"]))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
