"""The PEP 517 build backend of the repository's pyproject.toml, for pre-commit.

pre-commit installs a `language: python` hook repository with `pip install .` into its own
environment. This repository is C++; what a hook needs is the `specprobe` wheel (the binary,
tools/release/build_wheel.py) at this repository's version. So `pip install .` here builds a
metadata-only wheel, "specprobe-pre-commit-hooks", whose one requirement is `specprobe==<version>`
(the version of project() in CMakeLists.txt): pip then installs the binary's wheel from the index
(or --find-links). It needs nothing to build (no setuptools download), so the hooks install
offline from a wheel directory.
"""
import base64
import hashlib
import re
import zipfile
from pathlib import Path

NAME = "specprobe_pre_commit_hooks"
ROOT = Path(__file__).resolve().parents[2]


def _version() -> str:
    text = (ROOT / "CMakeLists.txt").read_text()
    m = re.search(r"project\(specprobe VERSION ([0-9]+\.[0-9]+\.[0-9]+)", text)
    if not m:
        raise RuntimeError("CMakeLists.txt: no `project(specprobe VERSION X.Y.Z`")
    return m.group(1)


def _metadata() -> str:
    v = _version()
    return (f"Metadata-Version: 2.1\nName: specprobe-pre-commit-hooks\nVersion: {v}\n"
            f"Summary: pre-commit hooks of specprobe: installs the specprobe binary's wheel\n"
            f"Requires-Dist: specprobe=={v}\n")


def _dist_info() -> str:
    return f"{NAME}-{_version()}.dist-info"


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    d = Path(metadata_directory) / _dist_info()
    d.mkdir(parents=True, exist_ok=True)
    (d / "METADATA").write_text(_metadata())
    (d / "WHEEL").write_text("Wheel-Version: 1.0\nGenerator: hooks_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    return d.name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    di = _dist_info()
    files = {
        f"{di}/METADATA": _metadata().encode(),
        f"{di}/WHEEL": b"Wheel-Version: 1.0\nGenerator: hooks_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{p},{_digest(b)},{len(b)}\n" for p, b in files.items()) + f"{di}/RECORD,,\n"
    files[f"{di}/RECORD"] = record.encode()
    name = f"{NAME}-{_version()}-py3-none-any.whl"
    with zipfile.ZipFile(Path(wheel_directory) / name, "w") as z:
        for p, b in files.items():
            z.writestr(zipfile.ZipInfo(p, date_time=(1980, 1, 1, 0, 0, 0)), b)
    return name


# Editable installs (pip install -e .) get the same wheel: there is nothing to edit.
get_requires_for_build_editable = get_requires_for_build_wheel
prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel
build_editable = build_wheel
