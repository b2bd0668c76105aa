#!/usr/bin/env python3
"""Advisory coverage per release line (issue 37).

For every engine release in tools/advisories/releases.tsv this asks the built binary which advisories
affect it (`specprobe advisories --engine E --lib E=VERSION --format json`: the product's own version
placement), keeps those with an `affected` entry for the engine's own package, and counts them per
release line (vLLM 0.7.x ... 0.33.x, SGLang 0.4.x, 0.5.x). An advisory counts for a line when it
affects at least one release of the line.

Usage (from the repository root):
  python3 tools/advisories/coverage.py [--binary build/specprobe] [--cutoff 2026-08-31] [--markdown] [--check]

--check exits 1 when a line with a release published on or before the cutoff has no advisory.
Only the Python standard library is used.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import OrderedDict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def line_of(version: str) -> str:
    parts = version.split(".")
    return f"{parts[0]}.{parts[1]}.x"


def line_key(line: str):
    a, b, _ = line.split(".")
    return (int(a), int(b))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=str(REPO / "build" / "specprobe"))
    ap.add_argument("--releases", default=str(REPO / "tools" / "advisories" / "releases.tsv"))
    ap.add_argument("--cutoff", default="2026-08-31", help="lines published up to this date must be covered")
    ap.add_argument("--markdown", action="store_true", help="print the README table")
    ap.add_argument("--check", action="store_true", help="exit 1 when a line up to the cutoff has no advisory")
    args = ap.parse_args()

    releases = []
    for raw in Path(args.releases).read_text().splitlines():
        if not raw.strip() or raw.startswith("#"):
            continue
        engine, version, published = raw.split("\t")[:3]
        releases.append((engine, version, published))

    # (engine, line) -> {releases, first, last, ids, ids per release}
    lines: "OrderedDict[tuple[str, str], dict]" = OrderedDict()
    for engine, version, published in releases:
        proc = subprocess.run([args.binary, "advisories", "--engine", engine, "--lib", f"{engine}={version}",
                               "--format", "json"], capture_output=True, text=True)
        if proc.returncode not in (0, 1):
            print(f"coverage: {args.binary} advisories --lib {engine}={version} exited {proc.returncode}: "
                  f"{proc.stderr.strip()}", file=sys.stderr)
            return 2
        ids = {a["id"] for a in json.loads(proc.stdout)
               if any(e.get("package") == engine for e in a.get("affected", []))}
        key = (engine, line_of(version))
        ent = lines.setdefault(key, {"releases": [], "ids": set(), "min": None})
        ent["releases"].append((version, published))
        ent["ids"] |= ids
        ent["min"] = len(ids) if ent["min"] is None else min(ent["min"], len(ids))

    rows = sorted(lines.items(), key=lambda kv: (kv[0][0] != "vllm", line_key(kv[0][1])))
    gaps = []
    out = []
    if args.markdown:
        out.append("| engine | line | releases (first published) | advisories affecting the line | fewest on one release |")
        out.append("|---|---|---|---|---|")
    for (engine, line), ent in rows:
        in_window = [r for r in ent["releases"] if r[1] <= args.cutoff]
        first = min(p for _, p in ent["releases"])
        n = len(ent["ids"])
        note = "" if in_window else " (after the cutoff)"
        if in_window and n == 0:
            gaps.append(f"{engine} {line}")
        if args.markdown:
            out.append(f"| {engine} | {line} | {len(ent['releases'])} ({first}){note} | {n} | {ent['min']} |")
        else:
            out.append(f"{engine:7} {line:8} releases={len(ent['releases']):2} first={first}{note:20} "
                       f"advisories={n:3} fewest-per-release={ent['min']}")
    print("\n".join(out))
    if gaps:
        print(f"coverage: no advisory for {', '.join(gaps)} (published up to {args.cutoff})", file=sys.stderr)
        return 1 if args.check else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
