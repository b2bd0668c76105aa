#!/usr/bin/env python3
"""Checks what XSD 1.0 cannot say about specprobe's JUnit XML (junit.xsd checks the shape):
each suite's tests/failures/errors/skipped equal its testcases' outcomes, the root totals equal
the suites' sums, every testcase has at most one outcome element, and names are unique.

usage: check_junit.py FILE [FILE ...]   exit 0 consistent, 1 not, 2 usage
"""
import sys
import xml.etree.ElementTree as ET

OUTCOMES = ("failure", "error", "skipped")


def check(path):
    problems = []
    root = ET.parse(path).getroot()
    if root.tag != "testsuites":
        return [f"{path}: root element is <{root.tag}>, not <testsuites>"]
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    suite_names = set()
    for suite in root.findall("testsuite"):
        name = suite.get("name")
        if name in suite_names:
            problems.append(f"{path}: duplicate testsuite name {name!r}")
        suite_names.add(name)
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        case_names = set()
        for case in suite.findall("testcase"):
            counts["tests"] += 1
            key = (case.get("classname"), case.get("name"))
            if key in case_names:
                problems.append(f"{path}: {name}: duplicate testcase {key}")
            case_names.add(key)
            found = [c.tag for c in case if c.tag in OUTCOMES]
            if len(found) > 1:
                problems.append(f"{path}: {name}: testcase {key} has outcomes {found}")
            for tag, attr in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
                if tag in found:
                    counts[attr] += 1
        for attr, value in counts.items():
            if int(suite.get(attr, "-1")) != value:
                problems.append(f"{path}: {name}: {attr}={suite.get(attr)} but the testcases say {value}")
            totals[attr] += value
    for attr, value in totals.items():
        if int(root.get(attr, "-1")) != value:
            problems.append(f"{path}: <testsuites> {attr}={root.get(attr)} but the suites sum to {value}")
    return problems


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    problems = []
    for path in argv[1:]:
        problems += check(path)
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
