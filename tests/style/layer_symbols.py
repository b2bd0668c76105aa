#!/usr/bin/env python3
"""Every symbol a layer's code uses is defined in that layer or in a layer it links.

The build makes one object library per layer (cmake/layers.cmake) and writes what each links
(BUILD/generated/layers.txt, "layer: dep dep ...") and its object files
(BUILD/generated/layer_objects.txt, "layer:a.o;b.o"). tests/layering_test.cpp checks the
#includes; this checks the link: `nm` lists each object's undefined and defined symbols, and a
symbol undefined in layer L but defined in the product only in layers L does not reach (through
what it links, transitively) is a call across the layering that the includes did not show (a
declaration copied into a lower layer, an `extern`). Symbols the product does not define (the C++
runtime, fmt, yaml-cpp, the compiled catalog) are not the product's layers' business.

Usage: layer_symbols.py BUILD_DIR    exit 0 clean, 1 violations (listed), 2 usage / missing input
"""
import os
import subprocess
import sys


def read_map(path):
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            name, _, rest = line.partition(":")
            out[name] = rest
    return out


def closure(deps, layer):
    seen, todo = set(), list(deps[layer])
    while todo:
        d = todo.pop()
        if d not in seen:
            seen.add(d)
            todo.extend(deps[d])
    return seen


def symbols(objects):
    """(defined, undefined) mangled names over OBJECTS."""
    defined, undefined = set(), set()
    for i in range(0, len(objects), 200):
        out = subprocess.run(["nm", "--format=posix"] + objects[i:i + 200], capture_output=True, text=True,
                             check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) < 2 or line.endswith(":"):
                continue
            name, kind = parts[0], parts[1]
            if kind == "U":
                undefined.add(name)
            elif kind not in ("N", "n"):
                defined.add(name)
    return defined, undefined


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    gen = os.path.join(argv[1], "generated")
    try:
        deps = {k: v.split() for k, v in read_map(os.path.join(gen, "layers.txt")).items()}
        objs = {k: [o for o in v.split(";") if o.endswith((".o", ".obj"))] for k, v in read_map(os.path.join(gen, "layer_objects.txt")).items()}
    except OSError as e:
        print(f"layer_symbols: {e} (configure and build first)", file=sys.stderr)
        return 2
    missing = [o for v in objs.values() for o in v if not os.path.exists(o)]
    if missing:
        print(f"layer_symbols: {len(missing)} object files not built, e.g. {missing[0]}", file=sys.stderr)
        return 2
    table = {layer: symbols(o) for layer, o in objs.items()}
    where = {}
    for layer, (defined, _) in table.items():
        for s in defined:
            where.setdefault(s, set()).add(layer)
    bad = []
    for layer, (defined, undefined) in table.items():
        reach = closure(deps, layer) | {layer}
        for s in sorted(undefined):
            owners = where.get(s)
            if owners and not owners & reach:
                bad.append((layer, s, sorted(owners)))
    for layer, s, owners in bad:
        name = subprocess.run(["c++filt", s], capture_output=True, text=True).stdout.strip() or s
        print(f"{layer} uses {name}, defined in {', '.join(owners)}, which {layer} does not link")
    n_objs = sum(len(v) for v in objs.values())
    print(f"layer_symbols: {len(table)} layers, {n_objs} objects, {len(bad)} symbols used across the layering")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
