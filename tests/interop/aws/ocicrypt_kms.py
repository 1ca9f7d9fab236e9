#!/usr/bin/env python3
"""ocicrypt layers whose keys AWS KMS wraps, read and written with AWS's own SDK (boto3) and the `cryptography`
package only, as the independent side of cryptadm's image tests (tests/cli/aws_image.rs).

The layer cipher is ocicrypt's AES_256_CTR_HMAC_SHA256 (docs/formats.md): AES-256-CTR under the 32-byte `symkey`
with the 16-byte `nonce` as the initial counter block, HMAC-SHA-256 keyed with `symkey` over the whole ciphertext
in the public options. The private options JSON is wrapped by KMS Encrypt and stored, as key provider `cryptadm`'s
answer, under `org.opencontainers.image.enc.keys.provider.cryptadm`:
{"scheme":"aws-kms","recipients":[{"key":"aws-kms://ARN","ciphertext":"<base64 CiphertextBlob>"}]}; entries made since
issue 42 add "context": {"cryptadm:layer": DIGEST}, the encryption context KMS Decrypt needs (DIGEST: the plaintext
layer's, as the private options name it).

Credentials, region and endpoint are boto3's own (AWS_ENDPOINT_URL, AWS_DEFAULT_REGION, AWS_ACCESS_KEY_ID…).

    open LAYOUT            for every layer of the layout's one manifest: the `aws-kms` entries of its blob
                           decrypted by KMS Decrypt (KeyId: the entry's ARN; the encryption context rebuilt from
                           the entry's record), the layer decrypted and its HMAC
                           checked; prints JSON [{"keys": [ARN…], "digest": sha256 of the plaintext blob,
                           "opts_digest": the private options' digest, "diff_id": sha256 of the uncompressed tar}]
    encrypt SRC DST ARN [CLAIMED]
                           copies layout SRC (one manifest, gzip layers) to DST with every layer encrypted and its
                           private options wrapped by KMS Encrypt under ARN; the blob names CLAIMED instead when
                           given (a ciphertext of one key recorded for another)
"""

import base64
import gzip
import hashlib
import hmac
import json
import os
import shutil
import sys

import boto3
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

ANNOTATION = "org.opencontainers.image.enc.keys.provider.cryptadm"
PUBOPTS = "org.opencontainers.image.enc.pubopts"
ENCRYPTED = "+encrypted"
INDEX_TYPES = ("application/vnd.oci.image.index.v1+json", "application/vnd.docker.distribution.manifest.list.v2+json")


def kms():
    return boto3.client("kms", endpoint_url=os.environ.get("AWS_ENDPOINT_URL"))


def blob_path(layout, digest):
    return os.path.join(layout, "blobs", *digest.split(":", 1))


def read_blob(layout, digest):
    with open(blob_path(layout, digest), "rb") as f:
        data = f.read()
    assert "sha256:" + hashlib.sha256(data).hexdigest() == digest, f"blob {digest} does not match its digest"
    return data


def put_blob(layout, data):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    with open(blob_path(layout, digest), "wb") as f:
        f.write(data)
    return digest


def manifest_descriptor(layout):
    """The index entry of the layout's one manifest (an image index with one manifest is descended)."""
    with open(os.path.join(layout, "index.json"), "rb") as f:
        index = json.load(f)
    entry = index["manifests"][0]
    while entry.get("mediaType") in INDEX_TYPES:
        entry = json.loads(read_blob(layout, entry["digest"]))["manifests"][0]
    return index, entry


def ctr(key, nonce, data):
    return Cipher(algorithms.AES(key), modes.CTR(nonce)).encryptor().update(data)


def open_layout(layout):
    _, entry = manifest_descriptor(layout)
    manifest = json.loads(read_blob(layout, entry["digest"]))
    results = []
    for layer in manifest["layers"]:
        annotations = layer.get("annotations", {})
        blob = json.loads(base64.b64decode(annotations[ANNOTATION]))
        entries = [e for e in blob["recipients"] if e["key"].startswith("aws-kms://")]
        assert entries, f"no aws-kms entry in {blob}"
        options = None
        for e in entries:
            arn = e["key"][len("aws-kms://"):]
            # The encryption context, rebuilt from what the entry records (none in older images).
            context = {"EncryptionContext": {"cryptadm:layer": e["context"]["cryptadm:layer"]}} if "context" in e else {}
            answer = kms().decrypt(CiphertextBlob=base64.b64decode(e["ciphertext"], validate=True), KeyId=arn,
                                   **context)
            options = json.loads(answer["Plaintext"])
            if context:
                assert options["digest"] == context["EncryptionContext"]["cryptadm:layer"], "bound to another layer"
        pubopts = json.loads(base64.b64decode(annotations[PUBOPTS]))
        assert pubopts["cipher"] == "AES_256_CTR_HMAC_SHA256", pubopts
        key = base64.b64decode(options["symkey"])
        nonce = base64.b64decode(options["cipheroptions"]["nonce"])
        assert (len(key), len(nonce)) == (32, 16)
        ciphertext = read_blob(layout, layer["digest"])
        mac = hmac.new(key, ciphertext, hashlib.sha256).digest()
        assert hmac.compare_digest(mac, base64.b64decode(pubopts["hmac"])), "the layer's HMAC does not match"
        plaintext = ctr(key, nonce, ciphertext)
        tar = gzip.decompress(plaintext) if "gzip" in layer["mediaType"] else plaintext
        results.append({
            "keys": [e["key"] for e in entries],
            "digest": "sha256:" + hashlib.sha256(plaintext).hexdigest(),
            "opts_digest": options["digest"],
            "diff_id": "sha256:" + hashlib.sha256(tar).hexdigest(),
        })
    print(json.dumps(results))


def encrypt_layout(src, dst, arn, claimed):
    shutil.copytree(src, dst)
    index, entry = manifest_descriptor(dst)
    assert index["manifests"][0] is entry, "one manifest, straight from index.json"
    manifest = json.loads(read_blob(dst, entry["digest"]))
    for layer in manifest["layers"]:
        plaintext = read_blob(dst, layer["digest"])
        key, nonce = os.urandom(32), os.urandom(16)
        ciphertext = ctr(key, nonce, plaintext)
        mac = hmac.new(key, ciphertext, hashlib.sha256).digest()
        # Go's encoding/json: []byte as standard base64, fields in declaration order.
        options = json.dumps({"symkey": base64.b64encode(key).decode(), "digest": layer["digest"],
                              "cipheroptions": {"nonce": base64.b64encode(nonce).decode()}}, separators=(",", ":"))
        wrapped = kms().encrypt(KeyId=arn, Plaintext=options.encode())["CiphertextBlob"]
        blob = {"scheme": "aws-kms",
                "recipients": [{"key": "aws-kms://" + claimed, "ciphertext": base64.b64encode(wrapped).decode()}]}
        pubopts = {"cipher": "AES_256_CTR_HMAC_SHA256", "hmac": base64.b64encode(mac).decode(), "cipheroptions": {}}
        layer["annotations"] = {
            ANNOTATION: base64.b64encode(json.dumps(blob, separators=(",", ":")).encode()).decode(),
            PUBOPTS: base64.b64encode(json.dumps(pubopts, separators=(",", ":")).encode()).decode(),
        }
        layer["mediaType"] += ENCRYPTED
        layer["digest"] = put_blob(dst, ciphertext)
        layer["size"] = len(ciphertext)
    data = json.dumps(manifest, separators=(",", ":")).encode()
    entry["digest"], entry["size"] = put_blob(dst, data), len(data)
    with open(os.path.join(dst, "index.json"), "w") as f:
        json.dump(index, f, separators=(",", ":"))


def main(argv):
    if argv[:1] == ["open"] and len(argv) == 2:
        open_layout(argv[1])
    elif argv[:1] == ["encrypt"] and len(argv) in (4, 5):
        encrypt_layout(argv[1], argv[2], argv[3], argv[-1])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
