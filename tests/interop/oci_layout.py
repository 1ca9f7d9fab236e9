#!/usr/bin/env python3
"""Surgery on OCI image layouts and PKCS#7 blobs for the ocicrypt interop tests (tests/cli/interop_pkcs7.rs).

Independent of cryptadm on purpose: it edits what skopeo wrote, and rewrites DER with a generic TLV codec, so a
test does not check our code with our code.

  oci_layout.py get LAYOUT TAG ANNOTATION          print an annotation of the first layer of the tagged manifest
  oci_layout.py set SRC DST TAG ANNOTATION         copy SRC to DST, set that annotation to stdin (stripped), and
                                                   fix the manifest digest and size in DST/index.json
  oci_layout.py layer-digest LAYOUT TAG            print the digest of the first layer
  oci_layout.py pkcs7-variant FORM IN OUT          rewrite a PKCS#7 EnvelopedData (DER file IN) into OUT with
                                                   FORM = rfc5084   AES-GCM parameters as RFC 5084 writes them
                                                                    (30 11 04 0c NONCE 02 01 10) instead of Go's
                                                                    (10 13 30 11 84 0c NONCE 02 01 10)
                                                   FORM = segmented encryptedContent as constructed [0] holding
                                                                    OCTET STRINGs (go.mozilla.org/pkcs7, BER)
"""

import hashlib
import json
import os
import shutil
import sys

INDEX = "index.json"
REF_NAME = "org.opencontainers.image.ref.name"


def blob_path(layout, digest):
    algorithm, hex_digest = digest.split(":", 1)
    return os.path.join(layout, "blobs", algorithm, hex_digest)


def load_index(layout):
    with open(os.path.join(layout, INDEX), "rb") as f:
        return json.load(f)


def manifest_entry(index, tag):
    for entry in index["manifests"]:
        if entry.get("annotations", {}).get(REF_NAME) == tag:
            return entry
    sys.exit(f"no manifest tagged {tag!r}")


def load_manifest(layout, tag):
    entry = manifest_entry(load_index(layout), tag)
    with open(blob_path(layout, entry["digest"]), "rb") as f:
        return json.load(f)


def get(layout, tag, annotation):
    layer = load_manifest(layout, tag)["layers"][0]
    value = layer.get("annotations", {}).get(annotation)
    if value is None:
        sys.exit(f"the first layer has no annotation {annotation!r}")
    print(value)


def set_annotation(src, dst, tag, annotation):
    value = sys.stdin.read().strip()
    shutil.copytree(src, dst)
    index = load_index(dst)
    entry = manifest_entry(index, tag)
    manifest = load_manifest(dst, tag)
    manifest["layers"][0].setdefault("annotations", {})[annotation] = value
    # Go writes compact JSON; any bytes do, as long as the digest in the index is theirs.
    data = json.dumps(manifest, separators=(",", ":")).encode()
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    with open(blob_path(dst, digest), "wb") as f:
        f.write(data)
    entry["digest"] = digest
    entry["size"] = len(data)
    with open(os.path.join(dst, INDEX), "w") as f:
        json.dump(index, f, separators=(",", ":"))


def layer_digest(layout, tag):
    print(load_manifest(layout, tag)["layers"][0]["digest"])


# --- a generic DER codec: a node is (tag, children) when constructed, (tag, bytes) when primitive -------------


def read_tlv(data, pos):
    tag = data[pos]
    length = data[pos + 1]
    pos += 2
    if length & 0x80:
        count = length & 0x7F
        length = int.from_bytes(data[pos : pos + count], "big")
        pos += count
    return tag, data[pos : pos + length], pos + length


def parse(data):
    nodes, pos = [], 0
    while pos < len(data):
        tag, content, pos = read_tlv(data, pos)
        nodes.append((tag, parse(content) if tag & 0x20 else content))
    return nodes


def encode_length(n):
    if n < 0x80:
        return bytes([n])
    body = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(body)]) + body


def encode(nodes):
    out = b""
    for tag, value in nodes:
        content = encode(value) if isinstance(value, list) else value
        out += bytes([tag]) + encode_length(len(content)) + content
    return out


def encrypted_content_info(tree):
    """The children of EncryptedContentInfo: ContentInfo -> [0] -> EnvelopedData -> third element."""
    enveloped_data = tree[0][1][1][1][0][1]
    return enveloped_data[2][1]


def to_rfc5084(tree):
    algorithm = encrypted_content_info(tree)[1][1]
    tag, wrapped = algorithm[1]
    assert tag == 0x10, f"expected Go's primitive 0x10 parameters, found 0x{tag:02x}"
    (sequence,) = parse(wrapped)
    (nonce_tag, nonce), icv_len = sequence[1]
    assert nonce_tag == 0x84
    algorithm[1] = (0x30, [(0x04, nonce), icv_len])


def to_segmented(tree):
    info = encrypted_content_info(tree)
    tag, ciphertext = info[2]
    assert tag == 0x80, f"expected primitive [0] encryptedContent, found 0x{tag:02x}"
    info[2] = (0xA0, [(0x04, ciphertext)])


def pkcs7_variant(form, src, dst):
    with open(src, "rb") as f:
        tree = parse(f.read())
    {"rfc5084": to_rfc5084, "segmented": to_segmented}[form](tree)
    with open(dst, "wb") as f:
        f.write(encode(tree))


COMMANDS = {
    "get": (get, 3),
    "set": (set_annotation, 4),
    "layer-digest": (layer_digest, 2),
    "pkcs7-variant": (pkcs7_variant, 3),
}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS or len(sys.argv) - 2 != COMMANDS[sys.argv[1]][1]:
        sys.exit(__doc__)
    function, _ = COMMANDS[sys.argv[1]]
    function(*sys.argv[2:])
