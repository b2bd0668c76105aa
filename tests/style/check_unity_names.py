#!/usr/bin/env python3
"""File-local names must be unique within each target, so the unity build means the same code.

The build compiles several .cpp files of one target as one translation unit (CMAKE_UNITY_BUILD,
CMakeLists.txt). Two files that each define a helper of the same name in an anonymous namespace
(or `static`) then either fail to compile (a redefinition, an ambiguous call) or, worse, compile
with a call in one file now resolving to the other file's overload, a better match for its
argument types. Only a clash within one batch shows up as a compile error, and batches shift as
files come and go; this check looks at every pair of files of a target instead.

It reads the sources as formatted here (.clang-format: no indentation inside namespaces): a
name counts when it is declared at column 0 inside `namespace {` or with `static` at file
scope. A shared helper belongs in a header (src/common/ascii.hpp, tests/e2e/run_binary.hpp);
a name that only looks alike gets a name of its own.

Usage: check_unity_names.py [ROOT]     exit 0 clean, 1 clashes (listed), 2 usage
       check_unity_names.py --self-test  the checker on a made-up tree (exit 0 when it finds
                                         exactly the clashes planted there)
"""
import pathlib
import re
import sys
from collections import defaultdict

# The targets whose sources are compiled in unity batches, each a set of globs (CMakeLists.txt,
# tests/CMakeLists.txt). The fuzz harnesses and benchmarks are one file per target.
TARGETS = {
    "specprobe_lib": (["src/**/*.cpp", "probes/**/*.cpp"], ["src/main.cpp", "src/common/glibc_compat.cpp"]),
    "specprobe_testlib": (["tests/support/*.cpp"], []),
    "specprobe_tests": (["tests/**/*.cpp"], ["tests/gpu/", "tests/fuzz/", "tests/support/"]),
    "specprobe_gpu_tests": (["tests/gpu/*.cpp"], []),
}

TYPE_DECL = re.compile(r"^(?:struct|class|union|enum(?:\s+class)?)\s+(\w+)\s*(?:final\s*)?[:{]")
ALIAS = re.compile(r"^using\s+(\w+)\s*=")
# A function definition or declaration at column 0: return type, then NAME(.
FUNC = re.compile(r"^(?:template\s*<[^>]*>\s*)?(?:(?:static|inline|constexpr|consteval|\[\[\w+\]\])\s+)*"
                  r"[A-Za-z_][\w:<>,\s\*&]*?[\s\*&](\w+)\s*\(")
# A variable: [static] [constexpr|const] TYPE NAME = / { / [ / ;
VAR = re.compile(r"^(?:(?:static|inline|constexpr|const|thread_local)\s+)+[A-Za-z_][\w:<>,\s\*&]*?[\s\*&](\w+)\s*(?:=|\{|\[|;)")
KEYWORDS = {"if", "for", "while", "switch", "return", "operator", "sizeof", "main"}


def code_lines(text):
    """(line number, raw line, code) per line; block comments and raw string literals (embedded
    Python, YAML) become empty code, line comments are cut off."""
    raw = text.split("\n")
    out = []
    in_block = False
    raw_end = None  # the delimiter that closes an open raw string literal
    for no, line in enumerate(raw, 1):
        code = line
        if raw_end is not None:
            if raw_end in code:
                code = code[code.index(raw_end) + len(raw_end):]
                raw_end = None
            else:
                out.append((no, line, ""))
                continue
        if in_block:
            if "*/" in code:
                code = code[code.index("*/") + 2:]
                in_block = False
            else:
                out.append((no, line, ""))
                continue
        code = re.sub(r"/\*.*?\*/", "", code)
        if "/*" in code:
            code, in_block = code[:code.index("/*")], True
        m = re.search(r'R"([^(\s]*)\(', code)
        if m and (')' + m.group(1) + '"') not in code[m.end():]:
            raw_end = ')' + m.group(1) + '"'
        code = re.sub(r"//.*", "", code)
        out.append((no, line, code))
    return out


def file_local_names(text):
    """Names declared at column 0 with internal linkage (inside `namespace {`, or `static`),
    each with its enclosing named namespace."""
    names = {}
    stack = []  # one entry per open namespace: "" when anonymous, else its name
    for no, line, code in code_lines(text):
        if re.match(r"^namespace\s*\{", code):
            stack.append("")
            continue
        m = re.match(r"^namespace\s+([\w:]+)\s*\{", code)
        if m:
            stack.append(m.group(1))
            continue
        # clang-format closes every namespace with "}  // namespace [name]"
        if re.match(r"^\}\s*//\s*namespace\b", line) and stack:
            stack.pop()
            continue
        if not code or code[0] in " \t#}{":
            continue
        if not ("" in stack or code.startswith("static ")):
            continue
        for pattern in (TYPE_DECL, ALIAS, VAR, FUNC):
            m = pattern.match(code)
            if m and m.group(1) not in KEYWORDS:
                # Unqualified lookup stops at the innermost scope that has the name, so helpers
                # of files in different named namespaces do not meet: the key is the full scope.
                scope = "::".join(s for s in stack if s)
                names.setdefault(f"{scope}::{m.group(1)}" if scope else m.group(1), no)
                break
    return names


def sources(root, includes, excludes):
    out = set()
    for pattern in includes:
        for p in root.glob(pattern):
            rel = p.relative_to(root).as_posix()
            if any(rel == e or (e.endswith("/") and rel.startswith(e)) for e in excludes):
                continue
            out.add(p)
    return sorted(out)


def self_test():
    """Plants clashes and look-alikes in a temporary tree; the checker must report exactly the
    planted ones."""
    import tempfile
    files = {
        # a clash: the same helper, file-local, in one namespace
        "src/a.cpp": "namespace specprobe {\nnamespace {\n\nint helper(int x) { return x; }\n"
                     "constexpr int kLimit = 1;\n\n}  // namespace\n}  // namespace specprobe\n",
        "src/b.cpp": "namespace specprobe {\nnamespace {\n\nstd::string helper(std::string s) {\n"
                     "  return s;\n}\n\n}  // namespace\n\nint kLimit = 2;  // external: not file-local\n"
                     "}  // namespace specprobe\n",
        # a static function at file scope clashes with an anonymous one in the global namespace
        "src/c.cpp": "static bool ready() { return true; }\n",
        "src/d.cpp": "namespace {\nbool ready() { return false; }\n}  // namespace\n",
        # look-alikes that do not clash: another named namespace, a raw string, a comment
        "src/e.cpp": "namespace specprobe::other {\nnamespace {\nint helper(int x) { return -x; }\n"
                     "}  // namespace\n}  // namespace specprobe::other\n"
                     "const char* kCode = R\"py(\nstatic int ready(): pass\n)py\";\n"
                     "// static int ready() in a comment\n",
    }
    want = {"specprobe::helper", "ready"}
    with tempfile.TemporaryDirectory() as d:
        root = pathlib.Path(d)
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        found = set(clashes_in(root, *TARGETS["specprobe_lib"]))
    if found != want:
        print(f"check_unity_names --self-test: found {sorted(found)}, planted {sorted(want)}")
        return 1
    print("check_unity_names --self-test: the planted clashes and only those")
    return 0


def clashes_in(root, includes, excludes):
    """{name: [file:line, ...]} for the file-local names defined in more than one source."""
    where = defaultdict(list)
    for path in sources(root, includes, excludes):
        for name, line in file_local_names(path.read_text(encoding="utf-8")).items():
            where[name].append(f"{path.relative_to(root).as_posix()}:{line}")
    return {name: places for name, places in sorted(where.items()) if len(places) > 1}


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) > 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    root = pathlib.Path(argv[1] if len(argv) == 2 else pathlib.Path(__file__).resolve().parents[2])
    clashes = 0
    for target, (includes, excludes) in TARGETS.items():
        for name, places in clashes_in(root, includes, excludes).items():
            clashes += 1
            print(f"{target}: '{name}' is file-local in {len(places)} files: {', '.join(places)}")
    if clashes:
        print(f"check_unity_names: {clashes} names defined in more than one file of a target; share "
              "one definition through a header or rename (the unity build compiles them together)")
        return 1
    print("check_unity_names: every file-local name is unique within its target")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
