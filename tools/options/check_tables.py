#!/usr/bin/env python3
"""Sanity checks for rules/data/options/{vllm,sglang}.yaml.

Every fact asserted below was read directly in the engines' sources (the wheels named in the YAML
`releases:` list), independently of extract_options.py; the comment next to each says where.
Also checks the table's own consistency: every range names releases that were read, every listed
release appears once, aliases do not collide with other options.

Usage: tools/options/check_tables.py [--dir rules/data/options]
Stdlib only; PyYAML is used as a cross-check of the built-in loader when it is installed.
"""
import argparse
import json
import re
import sys
from pathlib import Path

# --------------------------------------------------------------------------------------------
# A loader for the YAML subset the generator writes: block mappings (2-space indents), "- " list
# items, flow mappings / lists, double-quoted (JSON) and plain scalars, full-line comments.
# --------------------------------------------------------------------------------------------


def _scalar(tok):
    if tok.startswith('"'):
        return json.loads(tok)
    low = tok.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    if low in ("null", "~", ""):
        return None
    if re.fullmatch(r"[-+]?\d+", tok):
        return int(tok)
    if re.fullmatch(r"[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?", tok):
        return float(tok)
    return tok


def _flow(s, i):
    """Parse a flow value starting at s[i]; return (value, next index)."""
    while s[i] == " ":
        i += 1
    c = s[i]
    if c in "{[":
        close = "}" if c == "{" else "]"
        out = {} if c == "{" else []
        i += 1
        while True:
            while s[i] == " ":
                i += 1
            if s[i] == close:
                return out, i + 1
            if c == "{":
                k, i = _flow(s, i)
                while s[i] == " ":
                    i += 1
                assert s[i] == ":", f"expected ':' at {s[i:i + 20]!r}"
                v, i = _flow(s, i + 1)
                out[k] = v
            else:
                v, i = _flow(s, i)
                out.append(v)
            while s[i] == " ":
                i += 1
            if s[i] == ",":
                i += 1
            elif s[i] != close:
                raise ValueError(f"bad flow collection near {s[i:i + 30]!r}")
    if c == '"':
        j = i + 1
        while s[j] != '"':
            j += 2 if s[j] == "\\" else 1
        return json.loads(s[i:j + 1]), j + 1
    j = i
    while j < len(s) and s[j] not in ",}]\n" and not (s[j] == ":" and (j + 1 == len(s) or s[j + 1] in " \n")):
        j += 1
    return _scalar(s[i:j].strip()), j


def load_yaml(text):
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    pos = 0

    def block(indent):
        nonlocal pos
        out = None
        while pos < len(lines):
            ln = lines[pos]
            ind = len(ln) - len(ln.lstrip())
            if ind < indent:
                break
            body = ln.strip()
            if body.startswith("- "):
                out = [] if out is None else out
                v, _ = _flow(body + "\n", 2)
                out.append(v)
                pos += 1
                continue
            out = {} if out is None else out
            key, i = _flow(body + "\n", 0)
            rest = body[i + 1:].strip()
            pos += 1
            if rest:
                out[key], _ = _flow(rest + "\n", 0)
            else:
                out[key] = block(indent + 2) if pos < len(lines) and \
                    len(lines[pos]) - len(lines[pos].lstrip()) > ind else None
        return out
    return block(0)


# --------------------------------------------------------------------------------------------
# Range helpers
# --------------------------------------------------------------------------------------------

class Table:
    def __init__(self, path):
        self.path = path
        text = Path(path).read_text()
        self.data = load_yaml(text)
        try:
            import yaml  # noqa: F401  (cross-check only)
            ref = yaml.safe_load(text)
            assert ref == self.data, f"{path}: built-in loader and PyYAML disagree"
        except ImportError:
            pass
        self.versions = [r["version"] for r in self.data["releases"]]
        self.index = {v: i for i, v in enumerate(self.versions)}
        self.opts = self.data["options"]

    def idx(self, v):
        assert v in self.index, f"{self.path}: release {v} not read"
        return self.index[v]

    def in_range(self, rng, v):
        if rng is True:
            return True
        i = self.idx(v)
        for part in str(rng).split(", "):
            a, _, b = part.partition("-")
            lo = self.idx(a)
            hi = len(self.versions) - 1 if b == "" else self.idx(b)
            if lo <= i <= hi:
                return True
        return False

    def first(self, rng):
        return str(rng).split(", ")[0].partition("-")[0]

    def has(self, name, v, section="options"):
        e = self.data[section].get(name)
        return e is not None and self.in_range(e["releases"], v)

    def accepts(self, flag, v):
        """Is --flag (long or short spelling without dashes) accepted by release v?"""
        for key, e in self.opts.items():
            if not self.in_range(e["releases"], v):
                continue
            if key == flag and self.in_range(e.get("name_releases", e["releases"]), v):
                return True
            al = e.get("aliases", [])
            if isinstance(al, list) and flag in al:
                return True
            if isinstance(al, dict) and flag in al and self.in_range(al[flag], v):
                return True
        return False

    def values(self, name, v, kind="choices", section="options"):
        e = self.data[section][name]
        return {c for c, r in (e.get(kind) or {}).items() if self.in_range(r, v)}

    def enum(self, key, v):
        return {c for c, r in self.data["enums"][key].items() if self.in_range(r, v)}


FAILS = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)


def consistency(t):
    name = Path(t.path).name
    check(len(set(t.versions)) == len(t.versions), f"{name}: a release is listed twice")
    for r in t.data["releases"]:
        check(re.fullmatch(r"[0-9a-f]{64}", r["sha256"] or "") is not None, f"{name}: bad sha256 for {r['version']}")
        check(r["files"], f"{name}: no files recorded for {r['version']}")

    def walk(x):
        if isinstance(x, dict):
            for k, v in x.items():
                if k in ("releases", "name_releases", "deprecated", "hidden", "choices_releases",
                         "choices_dynamic", "negatable", "optional_value", "repeatable") and isinstance(v, str):
                    for part in v.split(", "):
                        a, _, b = part.partition("-")
                        check(a in t.index and (b == "" or b in t.index), f"{name}: bad range {v!r}")
                walk(v)
    for sec in ("options", "speculative_config", "compilation_config", "enums"):
        if sec in t.data:
            walk(t.data[sec])
    for sec in ("speculative_config", "compilation_config", "enums"):
        for k, e in (t.data.get(sec) or {}).items():
            for c, rng in (e.items() if sec == "enums" else (e.get("choices") or {}).items()):
                for part in str(rng).split(", "):
                    a, _, b = part.partition("-")
                    check(a in t.index and (b == "" or b in t.index), f"{name}: bad range {rng!r} ({sec}.{k})")
    # no spelling is accepted by two options in one release
    for v in t.versions:
        seen = {}
        for key, e in t.opts.items():
            if not t.in_range(e["releases"], v):
                continue
            names = [key] if t.in_range(e.get("name_releases", e["releases"]), v) else []
            al = e.get("aliases", [])
            names += [a for a in al if isinstance(al, list) or t.in_range(al[a], v)]
            for n in names:
                check(n not in seen, f"{name}: --{n} belongs to both {seen.get(n)} and {key} in {v}")
                seen[n] = key
    # every option of the newest release has a type
    for key, e in t.opts.items():
        check("type" in e, f"{name}: {key} has no type")


# --------------------------------------------------------------------------------------------
# Facts read in the sources
# --------------------------------------------------------------------------------------------

def check_vllm(t):
    V = t.versions
    # the release lines the brief asks for (each minor's last patch, plus 0.7.0 and newest .0s)
    for v in ["0.7.0", "0.7.3", "0.8.5.post1", "0.9.2", "0.10.2", "0.11.2", "0.12.0", "0.13.0", "0.14.1",
              "0.15.1", "0.16.0", "0.17.1", "0.18.1", "0.19.1", "0.20.2", "0.21.0", "0.22.1", "0.23.0",
              "0.24.0", "0.25.1", "0.26.0", "0.27.1", "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0",
              "0.33.0"]:
        check(v in t.index, f"vllm: release {v} missing")
    check(V[-1] == "0.33.0", "vllm: newest release is not 0.33.0")
    # --speculative-config: absent in 0.8.1 arg_utils.py, added in 0.8.2 (arg_utils.py:783), kept since
    sc = t.opts.get("speculative-config")
    check(sc is not None and sc["releases"] == "0.8.2-", f"vllm: speculative-config releases {sc and sc['releases']}")
    check(not t.accepts("speculative-config", "0.8.1"), "vllm: speculative-config in 0.8.1")
    # 0.7.0-0.8.2 had the per-flag speculative options (--speculative-model ...)
    check(t.has("speculative-model", "0.7.0") and not t.has("speculative-model", "0.8.3"),
          "vllm: --speculative-model should be 0.7.0-0.8.2")
    # -tp: arg_utils.py:397 in 0.7.0, arg_utils.py:1209 in 0.33.0
    for v in V:
        check(t.accepts("tp", v) and t.accepts("tensor-parallel-size", v), f"vllm: -tp missing in {v}")
    # --kv-cache-dtype: choices=['auto','fp8','fp8_e5m2','fp8_e4m3'] (0.7.0 arg_utils.py:348);
    # CacheDType Literal | str from 0.33.0 (config/cache.py:235) -> listed values, still contains fp8
    for v in V:
        vals = t.values("kv-cache-dtype", v) | t.values("kv-cache-dtype", v, "known_values")
        check("fp8" in vals and "auto" in vals, f"vllm: kv-cache-dtype lacks fp8 in {v}")
        check("fp8" in t.enum("kv_cache_dtype", v), f"vllm: enum kv_cache_dtype lacks fp8 in {v}")
    check(t.values("kv-cache-dtype", "0.7.0") == {"auto", "fp8", "fp8_e5m2", "fp8_e4m3"},
          "vllm: 0.7.0 kv-cache-dtype choices")
    # --attention-backend: not in 0.12.0 arg_utils.py, added in 0.13.0 (AttentionConfig.backend)
    ab = t.opts.get("attention-backend")
    check(ab is not None and ab["releases"] == "0.13.0-", f"vllm: attention-backend releases {ab and ab['releases']}")
    check(ab is not None and ab.get("enum") == "attention_backend", "vllm: attention-backend not tied to the enum")
    # --enable-prefix-caching is BooleanOptionalAction in every release (0.7.0 arg_utils.py)
    ep = t.opts["enable-prefix-caching"]
    check(ep["releases"] == "0.7.0-" and ep["type"] == "bool" and ep.get("negatable") is True,
          "vllm: enable-prefix-caching")
    # -O was an alias of --compilation-config up to 0.11.2 (arg_utils.py:1149), -cc from 0.12.0 (:1128);
    # from 0.12.0 FlexibleArgumentParser rewrites -O<n> into --optimization-level
    cc = t.opts["compilation-config"]
    check(cc["aliases"] == {"O": "0.7.0-0.11.2", "cc": "0.12.0-"}, f"vllm: compilation-config aliases {cc['aliases']}")
    check(t.accepts("O", "0.12.0") and "O" in t.opts["optimization-level"]["aliases"], "vllm: -O in 0.12.0")
    # --guided-decoding-backend: present in 0.11.2, gone in 0.12.0
    check(t.opts["guided-decoding-backend"]["releases"].endswith("-0.11.2"), "vllm: guided-decoding-backend end")
    # enums
    for v in V:
        check("FLASH_ATTN" in t.enum("attention_backend", v), f"vllm: FLASH_ATTN missing in {v}")
        check("fp8" in t.enum("quantization", v), f"vllm: fp8 quantization missing in {v}")
    # CUDAGraphMode appears in 0.10.1 (config/compilation.py:35), not in 0.10.0 config.py
    check(t.data["enums"]["cudagraph_mode"] == {m: "0.10.1-" for m in
                                                ("NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY",
                                                 "FULL_AND_PIECEWISE")}, "vllm: cudagraph_mode enum")
    check(t.data["compilation_config"]["cudagraph_mode"]["releases"] == "0.10.1-", "vllm: cudagraph_mode key")
    # CompilationConfig.level up to 0.17.1 (compilation.py:385), mode from 0.11.1 (compilation.py:246)
    check(t.data["compilation_config"]["level"]["releases"] == "0.7.0-0.17.1", "vllm: compilation level range")
    check(t.data["compilation_config"]["mode"]["releases"] == "0.11.1-", "vllm: compilation mode range")
    # 0.8.5: SpeculativeMethod lacks eagle3 but __post_init__ tests `self.method in ('eagle', 'eagle3')`
    # (plain dataclass, Literal not enforced); 0.9.2 Literal has eagle3 and is enforced by pydantic
    sm = t.data["enums"]["speculative_method"]
    check(t.in_range(sm["eagle3"], "0.8.5") and t.in_range(sm["eagle3"], "0.33.0"), "vllm: eagle3 method")
    check(t.in_range(sm["ngram"], "0.8.2"), "vllm: ngram method")
    for k in ("method", "num_speculative_tokens", "model"):
        check(t.data["speculative_config"][k]["releases"] == "0.8.2-", f"vllm: speculative_config.{k}")
    check(len([k for k in t.opts if t.has(k, V[-1])]) > 300, "vllm: suspiciously few options in the newest release")


def check_sglang(t):
    V = t.versions
    check(len(V) >= 20, "sglang: fewer than 20 releases")
    check(V[0] == "0.4.0" and V[-1] == "0.5.23", "sglang: range should be 0.4.0 .. 0.5.23")
    for v in ["0.4.10.post2"] + [f"0.5.{i}" for i in range(1, 24) if i not in (0,)]:
        if v in ("0.5.0",):
            continue
        check(v in t.index, f"sglang: release {v} missing")
    # --tensor-parallel-size / --tp-size in every release (0.4.0 server_args.py:409-410;
    # 0.5.23 arg_groups/fields/parallel.py:49 aliases=["--tensor-parallel-size"])
    for v in V:
        check(t.accepts("tp-size", v) and t.accepts("tensor-parallel-size", v), f"sglang: tp-size in {v}")
    # --speculative-algorithm: absent in 0.4.1.post3, choices=["EAGLE"] in 0.4.1.post4;
    # "EAGLE3" first in 0.4.4.post2 (server_args.py:816 choices=["EAGLE", "EAGLE3", "NEXTN"]), not in .post1;
    # from 0.5.12 no argparse choices (SpeculativeAlgorithm enum / registry, NEXTN rewritten to EAGLE)
    sa = t.opts["speculative-algorithm"]
    check(sa["releases"] == "0.4.1.post4-", f"sglang: speculative-algorithm releases {sa['releases']}")
    for v in V[t.idx("0.4.1.post4"):]:
        vals = t.values("speculative-algorithm", v) or t.enum("speculative_algorithm", v)
        check("EAGLE" in vals, f"sglang: EAGLE missing in {v}")
        check(("EAGLE3" in vals) == (t.idx(v) >= t.idx("0.4.4.post2")), f"sglang: EAGLE3 presence wrong in {v}")
        check("NEXTN" in t.enum("speculative_algorithm", v) or t.idx(v) < t.idx("0.4.3.post1"),
              f"sglang: NEXTN missing in {v}")
    check(sa["choices"]["EAGLE3"] == "0.4.4.post2-0.5.11", "sglang: EAGLE3 choice range")
    # --kv-cache-dtype: ["auto", "fp8_e5m2"] in 0.4.0 (server_args.py:296), fp8_e4m3 added in 0.4.1.post6
    check(t.values("kv-cache-dtype", "0.4.0") == {"auto", "fp8_e5m2"}, "sglang: 0.4.0 kv-cache-dtype")
    check("fp8_e4m3" in t.values("kv-cache-dtype", "0.4.1.post6")
          and "fp8_e4m3" not in t.values("kv-cache-dtype", "0.4.1.post5"), "sglang: fp8_e4m3 start")
    # --attention-backend "fa3": not in 0.4.4.post1, present from 0.4.4.post2
    check(t.opts["attention-backend"]["choices"]["fa3"] == "0.4.4.post2-", "sglang: fa3 range")
    # --cuda-graph-max-bs: deprecated alias of --cuda-graph-max-bs-decode (field from 0.5.14),
    # removed in 0.5.20 (no "--cuda-graph-max-bs" in 0.5.20 server_args.py)
    cg = t.opts["cuda-graph-max-bs"]
    check(cg["releases"] == "0.4.0-0.5.19" and cg["deprecated"] == "0.5.14-0.5.19", "sglang: cuda-graph-max-bs")
    check(t.opts["cuda-graph-max-bs-decode"]["releases"] == "0.5.14-", "sglang: cuda-graph-max-bs-decode")
    # --enable-dp-attention: DeprecatedStoreTrueAction in 0.5.22 server_args.py:418
    check(t.opts["enable-dp-attention"]["deprecated"] == "0.5.22-", "sglang: enable-dp-attention deprecation")
    for v in V:
        check("fp8" in t.enum("quantization", v), f"sglang: fp8 quantization missing in {v}")
        check("flashinfer" in t.enum("attention_backend", v), f"sglang: flashinfer backend missing in {v}")
    check(len([k for k in t.opts if t.has(k, V[-1])]) > 500, "sglang: suspiciously few options in the newest release")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default=str(Path(__file__).resolve().parents[2] / "rules/data/options"))
    a = ap.parse_args()
    for eng, fn in (("vllm", check_vllm), ("sglang", check_sglang)):
        t = Table(Path(a.dir) / f"{eng}.yaml")
        consistency(t)
        fn(t)
        newest = t.versions[-1]
        n = len([k for k, e in t.opts.items() if t.in_range(e["releases"], newest)])
        print(f"{eng}: {len(t.versions)} releases ({t.versions[0]} .. {newest}), {len(t.opts)} options in all, "
              f"{n} in {newest}")
    if FAILS:
        print(f"{len(FAILS)} check(s) failed:", file=sys.stderr)
        for f in FAILS:
            print("  " + f, file=sys.stderr)
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
