"""Builds an OCI image layout with one (or --layers N) large gzip layers, for scripts/bench/image.sh and
registry.sh.

  make_oci_image.py DIR TAG DATA_BYTES [--level N] [--threads N] [--chunk-mib N] [--layers N]

The layer is a tar holding one file of DATA_BYTES random bytes, compressed with gzip at --level (default 1).
Random data does not compress, so the blob is a little larger than DATA_BYTES. Nothing is held in memory
whole: the tar stream is made in chunks, each chunk compressed on a worker thread (zlib releases the GIL) as
raw deflate ending in a sync flush, the way pigz does, so the chunks join into ONE ordinary gzip member. The
main thread writes the chunks in order to a temporary file while hashing the tar (diff_id), the blob (digest)
and the CRC-32 of the tar (gzip trailer), then renames the file to blobs/sha256/<digest>. Config, manifest,
oci-layout and index.json (tagged TAG) follow. tests/cli/oci_fixture.py builds layers in memory and cannot do this.

With --layers N, N such layers, each of its own random data (so N different blobs).

Prints one JSON object: {"digest", "size", "diff_id", "data_bytes", "seconds"} (of the first layer).
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import struct
import sys
import tarfile
import time
import zlib

LAYER_MEDIA = "application/vnd.oci.image.layer.v1.tar+gzip"
REF = "org.opencontainers.image.ref.name"


def put(layout, data):
    digest = hashlib.sha256(data).hexdigest()
    with open(os.path.join(layout, "blobs", "sha256", digest), "wb") as f:
        f.write(data)
    return "sha256:" + digest, len(data)


def tar_pieces(data_bytes, chunk):
    """The tar stream as (kind, length) pieces: header, random data in chunks, padding and end blocks."""
    info = tarfile.TarInfo("bench/random.bin")
    info.size = data_bytes
    info.mtime = 0
    info.mode = 0o644
    header = info.tobuf(format=tarfile.PAX_FORMAT)
    pad = (-data_bytes) % 512
    yield header
    left = data_bytes
    while left:
        n = min(chunk, left)
        yield n  # an int: make n random bytes on the worker
        left -= n
    yield b"\0" * (pad + 1024)


def compress(piece, level, last):
    raw = os.urandom(piece) if isinstance(piece, int) else piece
    co = zlib.compressobj(level, zlib.DEFLATED, -15)  # raw deflate: the gzip header and trailer are ours
    out = co.compress(raw) + co.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH)
    return raw, out


def build_layer(args, blobs):
    """Writes one layer blob; returns its digest, size and diff_id."""
    tar_hash, blob_hash, crc, tar_len = hashlib.sha256(), hashlib.sha256(), 0, 0
    temp = os.path.join(blobs, ".building")
    # mtime 0, no name, XFL 0, OS 255 (unknown): what Go's gzip writer puts in a header.
    header = b"\x1f\x8b\x08\x00" + struct.pack("<I", 0) + b"\x00\xff"
    pieces = list(tar_pieces(args.data_bytes, args.chunk_mib << 20))
    with open(temp, "wb") as out, concurrent.futures.ThreadPoolExecutor(args.threads) as pool:
        def emit(data):
            out.write(data)
            blob_hash.update(data)
        emit(header)
        window, pending = args.threads * 2, []
        for i, piece in enumerate(pieces):
            pending.append(pool.submit(compress, piece, args.level, i == len(pieces) - 1))
            while len(pending) > window or (pending and i == len(pieces) - 1):
                raw, deflated = pending.pop(0).result()
                tar_hash.update(raw)
                crc = zlib.crc32(raw, crc)
                tar_len += len(raw)
                emit(deflated)
        emit(struct.pack("<II", crc & 0xFFFFFFFF, tar_len & 0xFFFFFFFF))
    blob_digest = "sha256:" + blob_hash.hexdigest()
    os.replace(temp, os.path.join(blobs, blob_hash.hexdigest()))
    blob_size = os.path.getsize(os.path.join(blobs, blob_hash.hexdigest()))
    diff_id = "sha256:" + tar_hash.hexdigest()

    return blob_digest, blob_size, diff_id


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("layout")
    parser.add_argument("tag")
    parser.add_argument("data_bytes", type=int)
    parser.add_argument("--level", type=int, default=1)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--chunk-mib", type=int, default=8)
    parser.add_argument("--layers", type=int, default=1)
    args = parser.parse_args()
    start = time.perf_counter()

    blobs = os.path.join(args.layout, "blobs", "sha256")
    os.makedirs(blobs, exist_ok=True)
    with open(os.path.join(args.layout, "oci-layout"), "w") as f:
        json.dump({"imageLayoutVersion": "1.0.0"}, f)

    layers = [build_layer(args, blobs) for _ in range(args.layers)]
    blob_digest, blob_size, diff_id = layers[0]

    config = json.dumps({"architecture": "amd64", "os": "linux", "config": {},
                         "rootfs": {"type": "layers", "diff_ids": [d for _, _, d in layers]}}).encode()
    config_digest, config_size = put(args.layout, config)
    manifest = json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest,
                   "size": config_size},
        "layers": [{"mediaType": LAYER_MEDIA, "digest": d, "size": n} for d, n, _ in layers],
    }).encode()
    manifest_digest, manifest_size = put(args.layout, manifest)
    with open(os.path.join(args.layout, "index.json"), "w") as f:
        json.dump({"schemaVersion": 2, "manifests": [{
            "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": manifest_digest,
            "size": manifest_size, "annotations": {REF: args.tag}}]}, f)
    json.dump({"digest": blob_digest, "size": blob_size, "diff_id": diff_id, "data_bytes": args.data_bytes,
               "seconds": time.perf_counter() - start}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
