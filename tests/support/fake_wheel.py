#!/usr/bin/env python3
"""A wheel of NAME at VERSION holding its dist-info only: a stand-in for an engine's distribution
in tests of the engine environment manager (`specprobe engines install --find-links DIR`), which
installs and checks versions but never imports the engine.

usage: fake_wheel.py OUT_DIR NAME VERSION      prints the wheel's path
"""
import base64
import hashlib
import sys
import zipfile


def record(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}\n"


def main():
    out, name, version = sys.argv[1:4]
    di = f"{name}-{version}.dist-info"
    files = {f"{di}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
             f"{di}/WHEEL": b"Wheel-Version: 1.0\nGenerator: fake_wheel\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    files[f"{di}/RECORD"] = ("".join(record(p, b) for p, b in files.items()) + f"{di}/RECORD,,\n").encode()
    path = f"{out}/{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for p, b in files.items():
            z.writestr(zipfile.ZipInfo(p, date_time=(1980, 1, 1, 0, 0, 0)), b)
    print(path)


if __name__ == "__main__":
    main()
