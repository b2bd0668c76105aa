#!/usr/bin/env python3
"""The catalog compiler refuses a bad data file, naming the file (and the line where YAML knows it),
and accepts the catalog as it is (issue 49: the YAML stays the source of truth, checked at build).

usage: compile_catalog_test.py COMPILE_CATALOG SOURCE_ROOT   exit 0 pass, 1 fail
"""
import os
import shutil
import subprocess
import sys
import tempfile


def run(tool, rules, advisories):
    p = subprocess.run([tool, "--check", rules, advisories], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout + p.stderr


def main():
    tool, root = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        rules = os.path.join(tmp, "rules")
        advisories = os.path.join(tmp, "advisories")
        shutil.copytree(os.path.join(root, "rules"), rules)
        shutil.copytree(os.path.join(root, "advisories"), advisories)
        rc, out = run(tool, rules, advisories)
        if rc != 0:
            failures.append(f"the catalog as it is: exit {rc}: {out}")

        rule = os.path.join(rules, "3xxx", "SP3020-" + next(
            n[len("SP3020-"):] for n in os.listdir(os.path.join(rules, "3xxx"))
            if n.startswith("SP3020-") and not n.endswith(".test.yaml")))
        original = open(rule).read()
        cases = [
            # (what, text, what the message must contain)
            ("a YAML syntax error on line 3", "id: SP3020\nslug: x\n  title: y\nseverity: error\n",
             [os.path.basename(rule) + ":3:"]),
            ("an unknown field", original + "\nnot_a_field: 1\n", [os.path.basename(rule), "not_a_field"]),
            ("a fact the registry lacks", original.replace('{"var": "kv.turboquant"}', '{"var": "kv.turbo_quant_typo"}'),
             [os.path.basename(rule), "kv.turbo_quant_typo"]),
        ]
        for what, text, needles in cases:
            with open(rule, "w") as f:
                f.write(text)
            rc, out = run(tool, rules, advisories)
            if rc != 1 or any(n not in out for n in needles):
                failures.append(f"{what}: exit {rc} (want 1), message {out.strip()!r} (want {needles})")
        with open(rule, "w") as f:
            f.write(original)

        adv_dir = os.path.join(advisories, "vllm")
        adv = os.path.join(adv_dir, sorted(n for n in os.listdir(adv_dir)
                                              if n.startswith("SPA-") and not n.endswith(".test.yaml"))[0])
        text = open(adv).read()
        lines = [l for l in text.splitlines() if not l.startswith("published:")]
        with open(adv, "w") as f:
            f.write("\n".join(lines + ["published: 26 May 2025"]) + "\n")
        rc, out = run(tool, rules, advisories)
        if rc != 1 or os.path.basename(adv) not in out or "published" not in out:
            failures.append(f"an advisory with a bad date: exit {rc}, message {out.strip()!r}")

    for f in failures:
        print("FAIL:", f)
    print(f"compile_catalog_test: {5 - len(failures)}/5 cases pass")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
