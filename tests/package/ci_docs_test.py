#!/usr/bin/env python3
"""ctest "ci_docs" (label package): the YAML in docs/ci.md parses, and the NFD DaemonSet runs the
way NVIDIA's GPU Feature Discovery does: no GPU resource requested (a limit would take a whole GPU
from every node), the node's GPUs seen through the NVIDIA runtime with NVIDIA_VISIBLE_DEVICES=all
(or the node's libcuda through a hostPath), a loop that sleeps between runs, the feature file in
nfd-worker's features.d through a hostPath, and a ConfigMap whose items[].path lay out the
<model>/config.json files that --model reads (ConfigMap keys cannot hold '/').

usage: ci_docs_test.py SOURCE_DIR
"""
import re
import sys
from pathlib import Path

import yaml


def yaml_blocks(text):
    """Every ```yaml fence, dedented (list items in the page indent their code)."""
    for m in re.finditer(r"^( *)```yaml\n(.*?)^\1```", text, re.S | re.M):
        indent = len(m.group(1))
        yield "\n".join(line[indent:] for line in m.group(2).splitlines())


def check_daemonset(docs, problems):
    ds = next((d for d in docs if d.get("kind") == "DaemonSet"), None)
    cm = next((d for d in docs if d.get("kind") == "ConfigMap"), None)
    if cm is None:
        problems.append("docs/ci.md: the DaemonSet's YAML block has no ConfigMap for the model configs")
        cm = {"metadata": {"name": None}, "data": {}}
    pod = ds["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    for where in ("limits", "requests"):
        if any("nvidia.com/gpu" in k for k in (c.get("resources", {}).get(where) or {})):
            problems.append(f"DaemonSet: resources.{where} asks for nvidia.com/gpu")
    env = {e["name"]: e.get("value") for e in c.get("env", [])}
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    libcuda = any("libcuda" in (v.get("hostPath") or {}).get("path", "") for v in volumes.values())
    if not ((env.get("NVIDIA_VISIBLE_DEVICES") == "all" and pod.get("runtimeClassName") == "nvidia") or libcuda):
        problems.append("DaemonSet: neither NVIDIA_VISIBLE_DEVICES=all with runtimeClassName nvidia nor a libcuda hostPath")
    script = " ".join(c.get("command", []) + c.get("args", []))
    if not re.search(r"\bsleep\b", script):
        problems.append("DaemonSet: the loop does not sleep between runs")
    if "--format nfd" not in script or "--output /features.d/" not in script:
        problems.append("DaemonSet: does not write an NFD feature file into /features.d")
    mounts = {m["name"]: m["mountPath"] for m in c.get("volumeMounts", [])}
    features = volumes.get("features", {}).get("hostPath", {}).get("path")
    if features != "/etc/kubernetes/node-feature-discovery/features.d" or mounts.get("features") != "/features.d":
        problems.append("DaemonSet: features.d is not nfd-worker's directory")
    models = volumes.get("models", {}).get("configMap", {})
    if models.get("name") != cm["metadata"]["name"]:
        problems.append("DaemonSet: the models volume is not the ConfigMap")
    items = models.get("items") or []
    paths = {i["path"] for i in items}
    if not any(p.endswith("/config.json") for p in paths):
        problems.append("DaemonSet: no items[].path lays out <model>/config.json")
    for i in items:
        if i["key"] not in cm.get("data", {}):
            problems.append(f"DaemonSet: ConfigMap has no key {i['key']!r}")
    for p in paths:
        if p.startswith("/") or ".." in p.split("/"):
            problems.append(f"DaemonSet: items[].path {p!r} must be relative")
    model = re.search(r"--model (\S+)", script).group(1)
    config = re.search(r"--config (\S+)", script)
    mount = mounts.get("models", "")
    if f"{mount}/" + next((p for p in paths if p.endswith("/config.json")), "") != f"{model}/config.json":
        problems.append(f"DaemonSet: --model {model} has no config.json from the ConfigMap")
    if config and config.group(1).removeprefix(mount + "/") not in paths:
        problems.append(f"DaemonSet: --config {config.group(1)} is not in the ConfigMap")
    expiry = re.search(r"--nfd-expiry (\d+)([hmd])", script)
    interval = int(env.get("SLEEP_INTERVAL") or 0)
    if expiry and interval:
        seconds = int(expiry.group(1)) * {"m": 60, "h": 3600, "d": 86400}[expiry.group(2)]
        if seconds <= interval:
            problems.append("DaemonSet: the labels expire before the next rewrite")


def main():
    src = Path(sys.argv[1])
    text = (src / "docs/ci.md").read_text()
    problems, n = [], 0
    for block in yaml_blocks(text):
        n += 1
        try:
            docs = [d for d in yaml.safe_load_all(block) if d is not None]
        except yaml.YAMLError as e:
            problems.append(f"docs/ci.md: YAML block {n} does not parse: {e}")
            continue
        if any(isinstance(d, dict) and d.get("kind") == "DaemonSet" for d in docs):
            check_daemonset(docs, problems)
    if n < 4:
        problems.append(f"docs/ci.md: only {n} YAML blocks found")
    for p in problems:
        print(p, file=sys.stderr)
    print(f"{n} YAML blocks checked" + (f", {len(problems)} problems" if problems else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
