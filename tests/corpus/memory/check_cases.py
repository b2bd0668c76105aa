#!/usr/bin/env python3
"""Checks every case of the memory corpus (tests/corpus/memory/cases/*.yaml) against README.md's
schema: the keys, id = file name, engine, dates (issue reports opened up to 2026-08-31 only), the
model config path, outcome values and numeric figures. Exit 1 with one line per problem."""
import datetime
import os
import re
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
KEYS = ["id", "source", "source_kind", "date", "retrieved", "engine", "engine_version", "gpu", "model",
        "model_config", "draft_model", "speculative", "command", "log", "logged", "outcome", "outcome_text", "notes"]
KINDS = {"issue", "pr", "discussion", "docs", "recipe", "blog", "repo-file"}
OUTCOMES = {"started", "oom-load", "oom-kv", "refused-kv", "oom-capture", "oom-other"}
FIGURES = ["weights_gib", "kv_available_gib", "kv_tokens", "graph_gib", "max_concurrency", "avail_after_gib"]
ISSUE_CUTOFF = datetime.date(2026, 8, 31)


def as_date(v):
    if isinstance(v, datetime.date):
        return v
    if isinstance(v, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", v):
        return datetime.date.fromisoformat(v)
    return None


def main():
    problems, n = [], 0
    cdir = os.path.join(HERE, "cases")
    for name in sorted(os.listdir(cdir)):
        if not name.endswith(".yaml"):
            continue
        n += 1
        path = os.path.join("tests/corpus/memory/cases", name)
        try:
            with open(os.path.join(cdir, name), encoding="utf-8") as f:
                c = yaml.safe_load(f)
        except yaml.YAMLError as e:
            problems.append("{}: not YAML: {}".format(path, str(e).splitlines()[0]))
            continue
        if not isinstance(c, dict):
            problems.append("{}: not a mapping".format(path))
            continue
        for k in KEYS:
            if k not in c:
                problems.append("{}: missing key '{}'".format(path, k))
        if c.get("id") != name[:-5]:
            problems.append("{}: id '{}' is not the file name".format(path, c.get("id")))
        if c.get("engine") not in ("vllm", "sglang"):
            problems.append("{}: engine '{}'".format(path, c.get("engine")))
        if c.get("source_kind") not in KINDS:
            problems.append("{}: source_kind '{}'".format(path, c.get("source_kind")))
        d = as_date(c.get("date"))
        if c.get("date") is not None and d is None:
            problems.append("{}: date '{}' is not YYYY-MM-DD".format(path, c.get("date")))
        if c.get("source_kind") in ("issue", "pr", "discussion") and (d is None or d > ISSUE_CUTOFF):
            problems.append("{}: an issue report must be dated up to {}".format(path, ISSUE_CUTOFF))
        mc = c.get("model_config")
        if mc and not os.path.isfile(os.path.join(ROOT, mc)):
            problems.append("{}: model_config {} does not exist".format(path, mc))
        if c.get("outcome") not in OUTCOMES:
            problems.append("{}: outcome '{}'".format(path, c.get("outcome")))
        logged = c.get("logged") or {}
        for k in FIGURES:
            v = logged.get(k)
            if v is not None and not isinstance(v, (int, float)):
                problems.append("{}: logged.{} is not a number".format(path, k))
    for p in problems:
        print(p)
    print("memory corpus: {} cases, {} problems".format(n, len(problems)))
    return 1 if problems or n == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
