#!/usr/bin/env python3
"""ctest "gitlab_template" (label package): contrib/gitlab/specprobe.gitlab-ci.yml is valid YAML
with what GitLab requires of a job (script, a known stage, string variables, artifacts with a
JUnit report), a user's job that `extends: .specprobe` resolves to a complete job, and the job's
before_script + script, run with sh as a GitLab runner would (CI_PROJECT_DIR set), work: with
specprobe on PATH, with the release tarball fetched from a server on 127.0.0.1 and checked against
the release's SHA256SUMS (a mismatch fails the job; needs curl), and on a config with findings (job
fails, JUnit report still written).

usage: gitlab_template_test.py SPECPROBE_BINARY SOURCE_DIR
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

binary, src = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
path = src / "contrib/gitlab/specprobe.gitlab-ci.yml"
doc = yaml.safe_load(path.read_text())
failures = []


def check(what, ok):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


GLOBAL_KEYS = {"default", "include", "stages", "variables", "workflow", "image", "services", "cache",
               "before_script", "after_script"}
DEFAULT_STAGES = [".pre", "build", "test", "deploy", ".post"]
check("top level is a mapping", isinstance(doc, dict))
jobs = {k: v for k, v in doc.items() if k not in GLOBAL_KEYS}
check("defines the hidden job .specprobe (runs only when extended)", ".specprobe" in jobs)
check("defines no visible job (including it adds nothing by itself)", all(k.startswith(".") for k in jobs))
job = jobs[".specprobe"]
stages = doc.get("stages", DEFAULT_STAGES)
check(f"stage {job.get('stage')!r} is a known stage", job.get("stage") in stages)
check("script is a non-empty list of strings",
      isinstance(job.get("script"), list) and job["script"] and all(isinstance(s, str) for s in job["script"]))
check("before_script is a list of strings", all(isinstance(s, str) for s in job.get("before_script", [])))
check("image is set", isinstance(job.get("image"), (str, dict)))
check("variables are strings", all(isinstance(v, str) for v in job.get("variables", {}).values()))
arts = job.get("artifacts", {})
check("artifacts.reports.junit is set", bool(arts.get("reports", {}).get("junit")))
check("artifacts.when is always (reports of failing jobs are kept)", arts.get("when") == "always")
known = {"stage", "image", "variables", "before_script", "script", "after_script", "artifacts", "rules",
         "needs", "tags", "allow_failure", "parallel", "cache", "services", "timeout", "interruptible",
         "retry", "extends", "when", "dependencies", "environment", "coverage", "only", "except"}
check("only known job keywords", set(job) <= known)


def merge(base, over):  # GitLab's `extends`: deep merge of hashes, everything else replaced
    out = dict(base)
    for k, v in over.items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


user = {"SPECPROBE_CONFIG": "deploy/serve.yaml", "SPECPROBE_MODEL": "deploy/model-config", "SPECPROBE_GPU": "H100",
        "SPECPROBE_ARGS": "--lib vllm=0.25.1"}  # the engine version: the DSA indexer's k=2 depends on it
merged = merge(job, {"variables": user})
check("a job extending .specprobe has script and stage",
      bool(merged.get("script")) and merged.get("stage") in stages)
junit_glob = arts["reports"]["junit"]


def run_job(ws, variables, path_env):
    env = {"PATH": path_env, "HOME": str(ws), "CI_PROJECT_DIR": str(ws), "CI": "true", "GITLAB_CI": "true"}
    env.update({k: str(v) for k, v in merge(job.get("variables", {}), variables).items()})
    body = "\n".join(job.get("before_script", []) + job["script"])
    shell = "bash" if shutil.which("bash") else "sh"
    r = subprocess.run([shell, "-e", "-c", body], cwd=ws, env=env, capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout + r.stderr


def junit_files(ws):
    return [p for p in ws.iterdir() if p.match(junit_glob)]


with tempfile.TemporaryDirectory() as tmp:
    tmp = Path(tmp)
    ws = tmp / "project"
    (ws / "deploy").mkdir(parents=True)
    seeds = src / "docs/examples/seeds"
    shutil.copy(seeds / "dsv4-mtp.yaml", ws / "deploy/serve.yaml")
    shutil.copy(seeds / "turboquant-ngram.yaml", ws / "deploy/ngram.yaml")
    shutil.copytree(src / "docs/examples/checkpoints/deepseek-v4-flash", ws / "deploy/model-config")
    sys_path = "/usr/local/bin:/usr/bin:/bin"

    rc, out = run_job(ws, user, f"{binary.parent}:{sys_path}")
    check(f"job with specprobe on PATH passes (exit {rc})", rc == 0)
    xmls = junit_files(ws)
    check(f"JUnit report matches {junit_glob}: {[p.name for p in xmls]}", len(xmls) == 1)
    if xmls:
        root = ET.parse(xmls[0]).getroot()
        check("JUnit report has testcases", len(root.findall(".//testcase")) > 0)
    check("JSON report written", (ws / "specprobe-H100.json").is_file())
    for p in ws.glob("specprobe-*"):
        p.unlink()

    rc, out = run_job(ws, {**user, "SPECPROBE_CONFIG": "deploy/ngram.yaml", "SPECPROBE_MODEL": ""},
                      f"{binary.parent}:{sys_path}")
    check(f"job fails on findings (exit {rc})", rc == 1)
    check("JUnit report still written for the failed job", len(junit_files(ws)) == 1)
    for p in ws.glob("specprobe-*"):
        p.unlink()

    # SPECPROBE_ENGINE: the engine environment made once (from a wheel directory here), cached
    # under .cache/specprobe/engines (the template's cache path), and the check asks it.
    wheels = tmp / "wheels"
    wheels.mkdir()
    subprocess.run([sys.executable, str(src / "tests/support/fake_wheel.py"), str(wheels), "vllm", "0.29.0"], check=True,
                   capture_output=True)
    engine_vars = {**user, "SPECPROBE_ENGINE": "vllm==0.29.0", "XDG_CACHE_HOME": str(ws / ".cache"),
                   "PIP_FIND_LINKS": str(wheels), "PIP_NO_INDEX": "1", "UV_FIND_LINKS": str(wheels), "UV_NO_INDEX": "1"}
    env_path = f"{binary.parent}:{sys_path}"
    rc, out = run_job(ws, engine_vars, env_path)
    made = (ws / ".cache/specprobe/engines/vllm-0.29.0/bin/python").exists()
    check(f"SPECPROBE_ENGINE makes the environment under the cached path and the job passes (exit {rc})", rc == 0 and made)
    check("the cache path of the template holds it", doc[".specprobe"]["cache"]["paths"] == [".cache/specprobe/engines/"])
    for p in ws.glob("specprobe-*"):
        p.unlink()

    if shutil.which("curl") is None or shutil.which("specprobe", path=sys_path):
        print("skip: download case (needs curl, and no specprobe on the system PATH)")
    else:
        ver = re.search(r"specprobe (\S+)", subprocess.run([binary, "--version"], capture_output=True,
                                                           text=True).stdout).group(1)
        arch = "aarch64" if os.uname().machine in ("aarch64", "arm64") else "x86_64"
        top = f"specprobe-{ver}-linux-{arch}"
        rel = tmp / "releases" / f"v{ver}"
        rel.mkdir(parents=True)
        with tarfile.open(rel / f"{top}.tar.gz", "w:gz") as t:
            t.add(binary, arcname=f"{top}/bin/specprobe")
        digest = hashlib.sha256((rel / f"{top}.tar.gz").read_bytes()).hexdigest()
        (rel / "SHA256SUMS").write_text(f"{digest}  {top}.tar.gz\n")
        port_file = tmp / "port"
        server = subprocess.Popen([sys.executable, str(src / "tests/support/static_server.py"), str(tmp / "releases"),
                                   str(port_file)])
        try:
            for _ in range(100):
                if port_file.exists():
                    break
                time.sleep(0.05)
            url = f"http://127.0.0.1:{port_file.read_text()}"
            rc, out = run_job(ws, {**user, "SPECPROBE_VERSION": ver, "SPECPROBE_RELEASE_URL": url}, sys_path)
            check(f"job downloads the release tarball over http, verifies its sum and passes (exit {rc})",
                  rc == 0 and (ws / ".specprobe/bin/specprobe").is_file() and len(junit_files(ws)) == 1)
            check("the job writes a Code Quality report", any(ws.glob("specprobe-codequality-*.json")))
            shutil.rmtree(ws / ".specprobe")
            (rel / "SHA256SUMS").write_text(f"{'0' * 64}  {top}.tar.gz\n")
            rc, out2 = run_job(ws, {**user, "SPECPROBE_VERSION": ver, "SPECPROBE_RELEASE_URL": url}, sys_path)
            check(f"a tarball whose sum does not match is refused (exit {rc})",
                  rc == 3 and "checksum" in out2 and not (ws / ".specprobe/bin/specprobe").exists())
        finally:
            server.kill()
            server.wait()
    if failures:
        print(out[-2000:])

print("gitlab_template:", "FAILED" if failures else "ok")
sys.exit(1 if failures else 0)
