#!/usr/bin/env python3
"""Validates JSON documents against a JSON Schema (its declared draft, else 2020-12) with Debian's python3-jsonschema.

usage: validate_schema.py SCHEMA DOC [DOC ...]   exit 0 valid, 1 invalid, 2 usage/missing module
"""
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed (apt-get install python3-jsonschema)", file=sys.stderr)
    sys.exit(2)


def make_validator(cls, schema, directory):
    """A validator that resolves $ref to the schemas beside SCHEMA by their $id (reports-1.json
    refers to report-1.json), offline."""
    store = {}
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".json"):
            continue
        try:
            with open(os.path.join(directory, name)) as f:
                other = json.load(f)
        except (OSError, ValueError):
            continue
        if isinstance(other, dict) and isinstance(other.get("$id"), str):
            store[other["$id"]] = other
    if not store:
        return cls(schema)
    try:
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT202012
        registry = Registry().with_resources(
            (uri, Resource.from_contents(doc, default_specification=DRAFT202012)) for uri, doc in store.items())
        return cls(schema, registry=registry)
    except ImportError:
        resolver = jsonschema.RefResolver.from_schema(schema, store=store)
        return cls(schema, resolver=resolver)


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        schema = json.load(f)
    # The schema's own "$schema" picks the draft (SARIF 2.1.0 is draft-04); 2020-12 otherwise.
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    validator = make_validator(cls, schema, os.path.dirname(os.path.abspath(argv[1])))
    bad = 0
    for path in argv[2:]:
        with open(path) as f:
            doc = json.load(f)
        for err in sorted(validator.iter_errors(doc), key=lambda e: list(e.path)):
            print(f"{path}: /{'/'.join(map(str, err.path))}: {err.message}", file=sys.stderr)
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
