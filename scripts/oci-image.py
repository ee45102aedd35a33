#!/usr/bin/env python3
"""Writes an OCI image archive (oci-layout, index.json, blobs) from one binary, without a container
engine or a registry; `ctr images import` takes it. The image holds the binary (stripped), exactly
the shared libraries `ldd` says it loads (and those it opens at run time, `--dlopen`, with theirs),
a CA bundle, /etc/passwd and /etc/group with the nonroot user 65532, and an empty /tmp: the same
content as the Dockerfile's distroless images.

  scripts/oci-image.py --binary target/release/pms-worker --ref ghcr.io/paimon-mysql-sync/pms-worker:0.1.0 \
      --out pms-worker.tar [--user 65532:65532] [--path /usr/local/bin/pms-worker] \
      [--dlopen libgssapi_krb5.so.2]

Deterministic: the same inputs give the same image digest (mtimes 0, sorted entries).
"""
import argparse
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

PASSWD = "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
GROUP = "root:x:0:\nnonroot:x:65532:\n"
CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"


def shared_libraries(binary):
    """The files the dynamic loader maps for `binary` (none for a static one)."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True)
    if out.returncode != 0 or "not a dynamic executable" in out.stdout + out.stderr:
        return []
    libs = []
    for line in out.stdout.splitlines():
        m = re.search(r"(/\S+) \(0x", line)
        if "not found" in line:
            sys.exit(f"oci-image: {binary} needs a library that is not installed: {line.strip()}")
        if m:
            libs.append(m.group(1))
    return libs


def installed_library(name):
    """The path of library `name` (a soname) as the dynamic loader finds it."""
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = re.match(rf"\s*{re.escape(name)} \(([^)]*)\) => (/\S+)", line)
        if m and ("x86-64" in m.group(1) or "x86_64" in m.group(1)):
            return m.group(2)
    sys.exit(f"oci-image: {name} is not installed (the worker opens it at run time; apt-get install libgssapi-krb5-2)")


def add_file(tar, arcname, data, mode=0o644):
    info = tarfile.TarInfo(arcname.lstrip("/"))
    info.size = len(data)
    info.mode = mode
    info.mtime = 0
    tar.addfile(info, io.BytesIO(data))


def add_dir(tar, arcname, mode=0o755):
    info = tarfile.TarInfo(arcname.lstrip("/"))
    info.type = tarfile.DIRTYPE
    info.mode = mode
    info.mtime = 0
    tar.addfile(info)


def layer(binary, path, stripped, dlopen):
    files = {path: (stripped, 0o755)}
    opened = [installed_library(name) for name in dlopen]
    for lib in shared_libraries(binary) + opened + [l for o in opened for l in shared_libraries(o)]:
        with open(os.path.realpath(lib), "rb") as f:
            files[lib] = (f.read(), 0o755)
    files["/etc/passwd"] = (PASSWD.encode(), 0o644)
    files["/etc/group"] = (GROUP.encode(), 0o644)
    if os.path.exists(CA_BUNDLE):
        with open(CA_BUNDLE, "rb") as f:
            files[CA_BUNDLE] = (f.read(), 0o644)
    dirs = {"/tmp": 0o1777, "/home/nonroot": 0o755}
    for p in files:
        d = os.path.dirname(p)
        while d not in ("", "/"):
            dirs.setdefault(d, 0o755)
            d = os.path.dirname(d)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for d in sorted(dirs):
            add_dir(tar, d, dirs[d])
        for p in sorted(files):
            data, mode = files[p]
            add_file(tar, p, data, mode)
    return buf.getvalue()


def blob(blobs, data):
    digest = hashlib.sha256(data).hexdigest()
    blobs[digest] = data
    return f"sha256:{digest}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--ref", required=True, help="image name:tag, e.g. ghcr.io/paimon-mysql-sync/pms-worker:0.1.0")
    ap.add_argument("--out", required=True)
    ap.add_argument("--path", help="where the binary goes (default /usr/local/bin/<name>)")
    ap.add_argument("--user", default="65532:65532")
    ap.add_argument("--dlopen", action="append", default=[],
                    help="a library the binary opens at run time (soname), added with those it loads")
    args = ap.parse_args()

    path = args.path or f"/usr/local/bin/{os.path.basename(args.binary)}"
    with tempfile.TemporaryDirectory() as tmp:
        stripped_path = os.path.join(tmp, "bin")
        if shutil.which("strip"):
            subprocess.run(["strip", "-o", stripped_path, args.binary], check=True)
        else:
            sys.exit("oci-image: strip is missing (apt-get install binutils)")
        with open(stripped_path, "rb") as f:
            stripped = f.read()

    blobs = {}
    layer_tar = layer(args.binary, path, stripped, args.dlopen)
    layer_digest = blob(blobs, layer_tar)
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {
            "User": args.user,
            "Entrypoint": [path],
            "Env": ["PATH=/usr/local/bin:/usr/bin:/bin"],
            "WorkingDir": "/home/nonroot",
        },
        "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
    }
    config_bytes = json.dumps(config, sort_keys=True).encode()
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": blob(blobs, config_bytes), "size": len(config_bytes)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                    "digest": layer_digest, "size": len(layer_tar)}],
    }
    manifest_bytes = json.dumps(manifest, sort_keys=True).encode()
    name = args.ref if "/" in args.ref.split(":")[0] or "." in args.ref.split("/")[0] else f"library/{args.ref}"
    full = name if name.split("/")[0].count(".") else f"docker.io/{name}"
    index = {
        "schemaVersion": 2,
        "manifests": [{
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "digest": blob(blobs, manifest_bytes), "size": len(manifest_bytes),
            "annotations": {"io.containerd.image.name": full,
                            "org.opencontainers.image.ref.name": full.rsplit(":", 1)[1]},
        }],
    }
    with tarfile.open(args.out, "w") as out:
        add_file(out, "oci-layout", json.dumps({"imageLayoutVersion": "1.0.0"}).encode())
        add_file(out, "index.json", json.dumps(index, sort_keys=True).encode())
        add_dir(out, "blobs")
        add_dir(out, "blobs/sha256")
        for digest in sorted(blobs):
            add_file(out, f"blobs/sha256/{digest}", blobs[digest])
    print(f"oci-image: {full} -> {args.out} ({len(layer_tar) // 1024} KiB layer, manifest {index['manifests'][0]['digest'][:19]})",
          file=sys.stderr)


if __name__ == "__main__":
    main()
