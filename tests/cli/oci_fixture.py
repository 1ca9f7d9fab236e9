"""Builds and edits OCI image layouts for the image tests.

  oci_fixture.py make DIR TAG SPEC_JSON
      SPEC_JSON: {"platforms": [{"os": "linux", "architecture": "amd64", "layers": [
                     {"media": "tar+gzip" | "tar" | "tar+zstd-fake" | "nondistributable+gzip", "files": {"name": "content"},
                      "urls": ["https://…"] (optional), "absent": true (optional: no blob in the layout)}]}]}
      One platform -> index.json points at the manifest; several -> at an image index.
  oci_fixture.py layers DIR TAG
      Prints JSON: for every manifest (platform string or null), its layers' mediaType, digest, size, annotations.
  oci_fixture.py tamper DIR TAG MODE
      MODE: flip-first | flip-last | truncate | drop-pubopts | edit-hmac — changes layer 0 of the first manifest and
      rewrites every digest above it, so that only the ocicrypt checks can notice.
"""
import gzip
import hashlib
import io
import json
import os
import sys
import tarfile

MEDIA = {
    "tar": "application/vnd.oci.image.layer.v1.tar",
    "tar+gzip": "application/vnd.oci.image.layer.v1.tar+gzip",
    "nondistributable+gzip": "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
}
REF = "org.opencontainers.image.ref.name"


def put(layout, data):
    digest = hashlib.sha256(data).hexdigest()
    path = os.path.join(layout, "blobs", "sha256", digest)
    with open(path, "wb") as f:
        f.write(data)
    return "sha256:" + digest


def layer_tar(files):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, content in sorted(files.items()):
            data = content.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def make(layout, tag, spec):
    os.makedirs(os.path.join(layout, "blobs", "sha256"), exist_ok=True)
    with open(os.path.join(layout, "oci-layout"), "w") as f:
        json.dump({"imageLayoutVersion": "1.0.0"}, f)
    manifests = []
    for platform in spec["platforms"]:
        layers, diff_ids = [], []
        for layer in platform["layers"]:
            tar = layer_tar(layer["files"])
            diff_ids.append("sha256:" + hashlib.sha256(tar).hexdigest())
            blob = gzip.compress(tar, mtime=0) if layer["media"].endswith("gzip") else tar
            if layer.get("absent"):  # a foreign layer: the blob lives at its URLs, not in the layout
                digest = "sha256:" + hashlib.sha256(blob).hexdigest()
            else:
                digest = put(layout, blob)
            descriptor = {"mediaType": MEDIA[layer["media"]], "digest": digest, "size": len(blob)}
            if layer.get("urls"):
                descriptor["urls"] = layer["urls"]
            layers.append(descriptor)
        config = json.dumps({"architecture": platform["architecture"], "os": platform["os"],
                             "rootfs": {"type": "layers", "diff_ids": diff_ids}, "config": {}}).encode()
        manifest = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                               "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                                          "digest": put(layout, config), "size": len(config)},
                               "layers": layers}).encode()
        manifests.append({"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": put(layout, manifest),
                          "size": len(manifest),
                          "platform": {"os": platform["os"], "architecture": platform["architecture"]}})
    if len(manifests) == 1:
        root = dict(manifests[0])
        del root["platform"]
    else:
        index = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                            "manifests": manifests}).encode()
        root = {"mediaType": "application/vnd.oci.image.index.v1+json", "digest": put(layout, index), "size": len(index)}
    root["annotations"] = {REF: tag}
    with open(os.path.join(layout, "index.json"), "w") as f:
        json.dump({"schemaVersion": 2, "manifests": [root]}, f)


def blob(layout, digest):
    with open(os.path.join(layout, "blobs", "sha256", digest.split(":")[1]), "rb") as f:
        return f.read()


def root_of(layout, tag):
    with open(os.path.join(layout, "index.json")) as f:
        index = json.load(f)
    entries = [m for m in index["manifests"] if m.get("annotations", {}).get(REF) == tag]
    return index, entries[-1]


def manifests_of(layout, descriptor, platform=None):
    doc = json.loads(blob(layout, descriptor["digest"]))
    if "manifests" in doc:
        out = []
        for m in doc["manifests"]:
            p = m.get("platform")
            out += manifests_of(layout, m, p and f"{p['os']}/{p['architecture']}")
        return out
    return [(platform, descriptor, doc)]


def layers(layout, tag):
    _, root = root_of(layout, tag)
    out = []
    for platform, descriptor, doc in manifests_of(layout, root):
        out.append({"platform": platform, "manifest": descriptor["digest"], "mediaType": doc.get("mediaType"),
                    "layers": [{k: l.get(k) for k in ("mediaType", "digest", "size", "annotations", "urls")} for l in doc["layers"]]})
    print(json.dumps(out))


def tamper(layout, tag, mode):
    index, root = root_of(layout, tag)
    if root["mediaType"].endswith("index.v1+json"):
        raise SystemExit("tamper works on single-manifest images")
    manifest = json.loads(blob(layout, root["digest"]))
    layer = manifest["layers"][0]
    data = bytearray(blob(layout, layer["digest"]))
    annotations = layer.setdefault("annotations", {})
    if mode == "flip-first":
        data[0] ^= 1
    elif mode == "flip-last":
        data[-1] ^= 1
    elif mode == "truncate":
        data = data[:-1]
    elif mode == "drop-pubopts":
        del annotations["org.opencontainers.image.enc.pubopts"]
    elif mode == "edit-hmac":
        import base64
        pub = json.loads(base64.b64decode(annotations["org.opencontainers.image.enc.pubopts"]))
        mac = bytearray(base64.b64decode(pub["hmac"]))
        mac[0] ^= 1
        pub["hmac"] = base64.b64encode(bytes(mac)).decode()
        annotations["org.opencontainers.image.enc.pubopts"] = base64.b64encode(json.dumps(pub).encode()).decode()
    else:
        raise SystemExit("unknown mode " + mode)
    layer["digest"], layer["size"] = put(layout, bytes(data)), len(data)
    data = json.dumps(manifest).encode()
    root["digest"], root["size"] = put(layout, data), len(data)
    with open(os.path.join(layout, "index.json"), "w") as f:
        json.dump(index, f)


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "make":
        make(sys.argv[2], sys.argv[3], json.loads(sys.argv[4]))
    elif command == "layers":
        layers(sys.argv[2], sys.argv[3])
    elif command == "tamper":
        tamper(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        raise SystemExit(__doc__)
