#!/usr/bin/env python3
"""Builds the Python wheel that carries the specprobe binary, as ruff, cmake and ninja ship theirs:
no Python code runs; the binary is installed into the environment's bin/ (the wheel's
<name>.data/scripts/), so `pip install specprobe`, `uv tool install specprobe`, `pipx install
specprobe` and pre-commit's `language: python` hooks put `specprobe` on PATH.

The platform tag is manylinux_2_28_<arch>: the binary needs glibc 2.28 and nothing else (libstdc++
and libgcc are linked statically; ctest glibc_symbols checks it with limit 2.28). The wheel is
built from the files alone (zip, RECORD with sha256 digests), with no build backend, so a release
needs nothing from PyPI to make it.

usage: build_wheel.py --binary PATH --version X.Y.Z --out DIR [--license FILE] [--readme FILE]
prints the wheel's path.
"""
import argparse
import base64
import hashlib
import os
import platform
import sys
import time
import zipfile
from pathlib import Path

GLIBC_FLOOR = "2_28"
SUMMARY = "Pre-flight checker for speculative-decoding LLM serving configurations (vLLM, SGLang)"


def digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", required=True, type=Path)
    ap.add_argument("--version", required=True)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--arch", default=platform.machine())
    ap.add_argument("--license", type=Path, default=Path(__file__).resolve().parents[2] / "LICENSE")
    ap.add_argument("--readme", type=Path, default=Path(__file__).resolve().parents[2] / "README.md")
    ap.add_argument("--project-url", default="https://github.com/specprobe/specprobe")
    args = ap.parse_args()

    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(args.arch.lower(), args.arch.lower())
    if arch not in ("x86_64", "aarch64"):
        print(f"build_wheel: no manylinux tag for architecture {args.arch}", file=sys.stderr)
        return 2
    if not args.binary.is_file():
        print(f"build_wheel: {args.binary}: no such file", file=sys.stderr)
        return 2
    name, version = "specprobe", args.version
    tag = f"py3-none-manylinux_{GLIBC_FLOOR}_{arch}"
    dist_info, data = f"{name}-{version}.dist-info", f"{name}-{version}.data"
    readme = args.readme.read_text() if args.readme.is_file() else SUMMARY
    metadata = "\n".join([
        "Metadata-Version: 2.4",
        f"Name: {name}",
        f"Version: {version}",
        f"Summary: {SUMMARY}",
        f"Home-page: {args.project_url}",
        f"Project-URL: Source, {args.project_url}",
        f"Project-URL: Documentation, {args.project_url}/blob/v{version}/docs/install.md",
        "License-Expression: Apache-2.0",
        "License-File: LICENSE",
        "Requires-Python: >=3.8",
        "Classifier: Environment :: Console",
        "Classifier: Operating System :: POSIX :: Linux",
        "Classifier: Programming Language :: C++",
        "Classifier: Topic :: Software Development :: Quality Assurance",
        "Description-Content-Type: text/markdown",
        "",
        readme,
    ])
    wheel_meta = f"Wheel-Version: 1.0\nGenerator: specprobe build_wheel.py\nRoot-Is-Purelib: false\nTag: {tag}\n"
    files = [
        (f"{data}/scripts/specprobe", args.binary.read_bytes(), 0o755),
        (f"{dist_info}/METADATA", metadata.encode(), 0o644),
        (f"{dist_info}/WHEEL", wheel_meta.encode(), 0o644),
        (f"{dist_info}/licenses/LICENSE", args.license.read_bytes(), 0o644),
    ]
    record = "".join(f"{p},{digest(b)},{len(b)}\n" for p, b, _ in files) + f"{dist_info}/RECORD,,\n"
    files.append((f"{dist_info}/RECORD", record.encode(), 0o644))

    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{name}-{version}-{tag}.whl"
    tmp = path.with_suffix(".whl.part")
    # A fixed time stamp: the same inputs give the same wheel (SOURCE_DATE_EPOCH when set).
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
    stamp = max(epoch, 315532800)
    date_time = time.gmtime(stamp)[:6]
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for p, b, mode in files:
            info = zipfile.ZipInfo(p, date_time=date_time)
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, b)
    tmp.replace(path)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
