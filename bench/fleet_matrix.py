#!/usr/bin/env python3
"""The fleet-sized matrix (issue 39 item 7): `specprobe matrix` for every bundled and test
checkpoint x every GPU in specprobe's table, one process per model (all GPUs in one call), JSON
written to a temporary file. Prints per model the GPUs, the cells, the wall time and the time per
cell. A benchmark: it reports figures and asserts nothing.

Usage: python3 bench/fleet_matrix.py [SPECPROBE]   (default build/specprobe)
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sp = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build/specprobe")
probe = subprocess.run([sp, "check", os.path.join(root, "docs/examples/seeds/dsv4-mtp.yaml"), "--gpu", "?"],
                       capture_output=True, text=True)
m = re.search(r"known: (.*), or an arch", probe.stderr)
if not m:
    sys.exit("cannot list the GPU table: " + probe.stderr[-300:])
gpus = [g.strip() for g in m.group(1).split(",")]
print(f"GPUs in the table: {len(gpus)}")
models = sorted(d for d in glob.glob(os.path.join(root, "docs/examples/checkpoints/*/")) +
                glob.glob(os.path.join(root, "tests/data/checkpoint/*/")) if os.path.isfile(d + "config.json"))
total_cells, total_s = 0, 0.0
print(f"{'model':<34} {'gpus':>4} {'cells':>6} {'wall s':>7} {'ms/cell':>8}  exit")
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "m.json")
    for d in models:
        t0 = time.monotonic()
        rc = subprocess.run([sp, "matrix", "--model", d, "--gpu", ",".join(gpus), "--probes", "off", "--format", "json",
                             "-o", out, "-q"], capture_output=True, text=True).returncode
        s = time.monotonic() - t0
        doc = json.load(open(out))
        cells = sum(len((g.get("matrix") or {}).get("cells", [])) for g in doc["gpus"])
        total_cells += cells
        total_s += s
        name = os.path.basename(os.path.dirname(d))
        print(f"{name:<34} {len(doc['gpus']):>4} {cells:>6} {s:>7.2f} {1000 * s / max(cells, 1):>8.2f}  {rc}")
print(f"all: {len(models)} models x {len(gpus)} GPUs, {total_cells} cells in {total_s:.2f} s = "
      f"{1000 * total_s / max(total_cells, 1):.2f} ms per cell")
