#!/usr/bin/env python3
"""ctest "docs_flags" (label package): every flag that `specprobe [SUB...] --help` prints must
appear in the man page and in each shell completion file, and every subcommand name too, so the
docs and completions follow the CLI when flags change. Subcommands are discovered from the help
itself (SUBCOMMANDS section, recursively). Also checks the completion files' syntax with each
shell that is installed (bash always; zsh and fish when present).

usage: check_docs_flags.py SPECPROBE_BINARY SOURCE_DIR
"""
import re
import shutil
import subprocess
import sys
from pathlib import Path


def help_text(binary, path):
    r = subprocess.run([binary, *path, "--help"], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        sys.exit(f"`specprobe {' '.join(path)} --help` exited {r.returncode}: {r.stderr}")
    return r.stdout


def parse_help(text):
    """(flags, subcommands) from CLI11's help: option lines start with '-' after indentation."""
    flags, subs, section = set(), [], None
    for line in text.splitlines():
        head = line.strip()
        if re.fullmatch(r"[A-Za-z][A-Za-z ]*:", head) and not line.startswith(" "):
            section = head[:-1].upper()
            continue
        if not line.startswith(" ") or not head:
            continue
        if section == "SUBCOMMANDS":
            subs.append(head.split()[0])
        elif head.startswith("-"):
            names = re.split(r"\s{2,}", head, maxsplit=1)[0]
            for tok in re.split(r"[,\s]+", names):
                if re.fullmatch(r"--?[A-Za-z][A-Za-z0-9-]*", tok):
                    flags.add(tok)
    return flags, subs


def collect(binary):
    """{subcommand path: flags} for the top level and every (nested) subcommand."""
    out, todo = {}, [()]
    while todo:
        path = todo.pop()
        flags, subs = parse_help(help_text(binary, list(path)))
        out[path] = flags
        todo.extend(path + (s,) for s in subs)
    return out


def present_generic(text, word):
    return re.search(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])", text) is not None


def present_fish(text, word):
    if word.startswith("--"):
        return re.search(r"(?:-l|--long-option)\s+" + re.escape(word[2:]) + r"(?![\w-])", text) is not None
    if word.startswith("-"):
        return re.search(r"(?:-s|--short-option)\s+" + re.escape(word[1:]) + r"(?![\w-])", text) is not None
    return present_generic(text, word)


def main():
    binary, src = sys.argv[1], Path(sys.argv[2])
    man = src / "docs/man/specprobe.1"
    comp = src / "contrib/completions"
    targets = {
        str(man): (man.read_text().replace("\\-", "-").replace("\\&", ""), present_generic),
        str(comp / "specprobe.bash"): ((comp / "specprobe.bash").read_text(), present_generic),
        str(comp / "_specprobe"): ((comp / "_specprobe").read_text(), present_generic),
        str(comp / "specprobe.fish"): ((comp / "specprobe.fish").read_text(), present_fish),
    }
    tree = collect(binary)
    missing = []
    nflags = 0
    for path, flags in sorted(tree.items()):
        words = sorted(flags) + ([path[-1]] if path else [])
        nflags += len(flags)
        for word in words:
            for name, (text, present) in targets.items():
                if not present(text, word):
                    where = "specprobe " + " ".join(path) if path else "specprobe"
                    missing.append(f"{name}: `{word}` (from `{where} --help`) is missing")
    # Syntax of the completion files, with each shell that is installed.
    checks = [("bash", ["bash", "-n", str(comp / "specprobe.bash")]),
              ("zsh", ["zsh", "-n", str(comp / "_specprobe")]),
              ("fish", ["fish", "--no-execute", str(comp / "specprobe.fish")])]
    for shell, cmd in checks:
        if shutil.which(shell) is None:
            print(f"docs_flags: {shell} not installed, syntax of its completion not checked")
            continue
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            missing.append(f"{cmd[-1]}: {shell} syntax error: {r.stderr.strip()}")
    for m in missing:
        print("FAIL", m)
    print(f"docs_flags: {len(tree)} help screens, {nflags} flags, {len(targets)} files: "
          f"{'FAILED' if missing else 'ok'}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
