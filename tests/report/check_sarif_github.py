#!/usr/bin/env python3
"""Checks a SARIF file against what GitHub code scanning accepts beyond the 2.1.0 schema (the
schema itself: tests/tools/validate_schema.py). From GitHub's "SARIF support for code scanning"
(github/docs: content/code-security/reference/code-scanning/sarif-files/
sarif-support-for-code-scanning.md) and its upload limits (results-exceed-limit.md):

- runs per file: at most 20; results per run and rules per run: at most 25,000;
  locations per result: at most 1,000; tags per rule: at most 20 (only 10 are shown);
- rules: a unique id, shortDescription.text and fullDescription.text of 1 to 1,024
  characters, help.text, a name of at most 255 characters, defaultConfiguration.level in
  note/warning/error; helpUri, when present, an absolute http(s) URL;
- results: message.text, ruleId naming a rule of the run, at least one location with a
  physicalLocation (a result without one is rejected: "expected a physical location"), its
  artifactLocation.uri not empty and its region's startLine, startColumn, endLine, endColumn
  (endLine >= startLine); partialFingerprints.primaryLocationLineHash;
- a relative URI's uriBaseId is defined in run.originalUriBaseIds;
- automationDetails.id, when present, names a category (text before the last '/'); no two runs of
  one tool share a category (rejected since July 2025).

usage: check_sarif_github.py FILE [FILE ...]   exit 0 accepted, 1 not, 2 usage
"""
import json
import re
import sys

MAX_RUNS, MAX_RESULTS, MAX_RULES, MAX_LOCATIONS, MAX_TAGS = 20, 25_000, 25_000, 1_000, 20
MAX_DESCRIPTION, MAX_NAME = 1024, 255


def text_of(obj, key):
    v = (obj or {}).get(key)
    return v.get("text") if isinstance(v, dict) else None


def check_run(path, i, run):
    problems = []
    where = f"{path}: runs[{i}]"
    driver = run.get("tool", {}).get("driver", {})
    if not driver.get("name"):
        problems.append(f"{where}: tool.driver.name is missing")
    rules = driver.get("rules", [])
    if len(rules) > MAX_RULES:
        problems.append(f"{where}: {len(rules)} rules (at most {MAX_RULES})")
    ids = [r.get("id") for r in rules]
    dupes = sorted({x for x in ids if ids.count(x) > 1})
    if dupes:
        problems.append(f"{where}: rule ids not unique: {dupes}")
    for r in rules:
        rid = r.get("id")
        if not rid:
            problems.append(f"{where}: a rule has no id")
        for key in ("shortDescription", "fullDescription"):
            t = text_of(r, key)
            if not t or len(t) > MAX_DESCRIPTION:
                problems.append(f"{where}: rule {rid}: {key}.text has {len(t or '')} characters (1 to {MAX_DESCRIPTION})")
        if not text_of(r, "help"):
            problems.append(f"{where}: rule {rid}: help.text is missing")
        if len(r.get("name", "")) > MAX_NAME:
            problems.append(f"{where}: rule {rid}: name longer than {MAX_NAME}")
        if "helpUri" in r and not re.match(r"https?://[^\s/]+/\S*$", r["helpUri"]):
            problems.append(f"{where}: rule {rid}: helpUri {r['helpUri']!r} is not an absolute URL")
        level = r.get("defaultConfiguration", {}).get("level", "warning")
        if level not in ("note", "warning", "error"):
            problems.append(f"{where}: rule {rid}: defaultConfiguration.level {level!r}")
        if len(r.get("properties", {}).get("tags", [])) > MAX_TAGS:
            problems.append(f"{where}: rule {rid}: more than {MAX_TAGS} tags")
    bases = run.get("originalUriBaseIds", {})
    results = run.get("results")
    if not isinstance(results, list):
        return problems + [f"{where}: results[] is missing"]
    if len(results) > MAX_RESULTS:
        problems.append(f"{where}: {len(results)} results (at most {MAX_RESULTS})")
    for j, res in enumerate(results):
        rw = f"{where}.results[{j}] ({res.get('ruleId')})"
        if not text_of(res, "message"):
            problems.append(f"{rw}: message.text is missing")
        if res.get("ruleId") not in ids:
            problems.append(f"{rw}: ruleId names no rule of the run")
        if not res.get("partialFingerprints", {}).get("primaryLocationLineHash"):
            problems.append(f"{rw}: partialFingerprints.primaryLocationLineHash is missing")
        locs = res.get("locations") or []
        if not locs:
            problems.append(f"{rw}: no location")
        if len(locs) > MAX_LOCATIONS:
            problems.append(f"{rw}: {len(locs)} locations (at most {MAX_LOCATIONS})")
        if locs:
            phys = locs[0].get("physicalLocation")
            if not phys:
                problems.append(f"{rw}: the first location has no physicalLocation (GitHub rejects the file)")
                continue
            art = phys.get("artifactLocation", {})
            uri = art.get("uri", "")
            if not uri:
                problems.append(f"{rw}: artifactLocation.uri is empty")
            if "%3C" in uri.upper() or "<" in uri:
                problems.append(f"{rw}: artifactLocation.uri {uri!r} is no file")
            if not re.match(r"[a-z][a-z0-9+.-]*:", uri) and art.get("uriBaseId") and art["uriBaseId"] not in bases:
                problems.append(f"{rw}: uriBaseId {art['uriBaseId']!r} is not in originalUriBaseIds")
            region = phys.get("region", {})
            for key in ("startLine", "startColumn", "endLine", "endColumn"):
                if not isinstance(region.get(key), int) or region[key] < 1:
                    problems.append(f"{rw}: region.{key} is {region.get(key)!r}")
            if isinstance(region.get("endLine"), int) and isinstance(region.get("startLine"), int) and region["endLine"] < region["startLine"]:
                problems.append(f"{rw}: region ends before it starts")
    auto = run.get("automationDetails", {}).get("id")
    if auto is not None and "/" not in auto:
        problems.append(f"{where}: automationDetails.id {auto!r} names no category")
    return problems


def check(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    problems = []
    if doc.get("version") != "2.1.0" or not doc.get("$schema"):
        problems.append(f"{path}: version 2.1.0 and $schema are required")
    runs = doc.get("runs") or []
    if not runs or len(runs) > MAX_RUNS:
        problems.append(f"{path}: {len(runs)} runs (1 to {MAX_RUNS})")
    for i, run in enumerate(runs):
        problems += check_run(path, i, run)
    # Since July 2025 code scanning rejects an upload with two runs of one tool and category.
    seen = {}
    for i, run in enumerate(runs):
        key = (run.get("tool", {}).get("driver", {}).get("name"), (run.get("automationDetails", {}).get("id") or "").rsplit("/", 1)[0])
        if key in seen:
            problems.append(f"{path}: runs[{i}] has the tool and category of runs[{seen[key]}] ({key[1]!r}): GitHub rejects the upload")
        seen.setdefault(key, i)
    return problems


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    problems = [p for path in argv[1:] for p in check(path)]
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
