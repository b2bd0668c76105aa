#!/usr/bin/env python3
"""The one name of the GitHub repository that publishes specprobe: CMakeLists.txt's
SPECPROBE_REPOSITORY default. Every other mention (README, docs, action.yml, the action's script,
the GitLab template, the pre-commit hooks' example) must be the same name.

  repository.py --check       exit 1 naming each file:line that mentions another repository
                              (or the OWNER placeholder); ctest "repository_name"
  repository.py --set O/N     rewrite every mention and the CMake default to O/N (a fork)
  repository.py               print the name
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FILES = ["CMakeLists.txt", "README.md", "Dockerfile", "action.yml", ".pre-commit-hooks.yaml", "contrib/github/run-check.sh",
         "contrib/gitlab/specprobe.gitlab-ci.yml", "docs/install.md", "docs/ci.md", "tools/release/build_wheel.py"]
CMAKE_DEFAULT = re.compile(r'(set\(SPECPROBE_REPOSITORY ")([^"]+)(")')
# Mentions of "OWNER/specprobe" as a repository: URLs, `uses:` lines, the variables that hold it.
MENTION = re.compile(r"(github\.com/|githubusercontent\.com/|uses: |SPECPROBE_REPOSITORY: \"?)"
                     r"([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)(?=[@/\"\s)`]|$)")


def current() -> str:
    m = CMAKE_DEFAULT.search((ROOT / "CMakeLists.txt").read_text())
    if not m:
        sys.exit("CMakeLists.txt: no set(SPECPROBE_REPOSITORY \"OWNER/NAME\" ...)")
    return m.group(2)


def mentions(text: str):
    for m in MENTION.finditer(text):
        name = m.group(2)
        if name.split("/")[1] in ("specprobe",) or name.startswith("OWNER"):
            yield m, name


def main() -> int:
    name = current()
    if len(sys.argv) == 1:
        print(name)
        return 0
    if sys.argv[1] == "--check":
        bad = 0
        for f in FILES:
            text = (ROOT / f).read_text()
            for i, line in enumerate(text.splitlines(), 1):
                if "OWNER/specprobe" in line:
                    print(f"{f}:{i}: the OWNER placeholder: name the repository ({name})")
                    bad += 1
                for _, other in mentions(line):
                    if other != name and not other.startswith("OWNER/NAME"):
                        print(f"{f}:{i}: names {other}, not {name}")
                        bad += 1
        print(f"repository_name: {'ok' if not bad else f'{bad} mention(s) differ'} ({name})")
        return 1 if bad else 0
    if sys.argv[1] == "--set" and len(sys.argv) == 3 and re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", sys.argv[2]):
        new = sys.argv[2]
        for f in FILES:
            p = ROOT / f
            text = p.read_text()
            text = text.replace(f"{name}", new) if f != "CMakeLists.txt" else CMAKE_DEFAULT.sub(rf"\g<1>{new}\g<3>", text)
            p.write_text(text)
        print(f"repository: {name} -> {new} in {len(FILES)} files")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
