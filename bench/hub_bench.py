#!/usr/bin/env python3
"""Time, requests and bytes to read a 163-shard checkpoint's metadata from the Hub, specprobe next to
the reference client, both against the Hub stand-in (tests/support/hub_standin.py) on 127.0.0.1.

  specprobe   `check -- vllm serve bench/DeepSeek-V3-163 --gpu H100 --probes off --no-matrix
              --format json` with HF_ENDPOINT at the stand-in: resolve (revision, metadata files,
              index, 163 shard headers by Range) and the whole check on the fetched headers
  reference   huggingface_hub's get_safetensors_metadata() (PyPI), which also reads the headers by
              Range (the first 100,000 bytes of each shard, in threads), in the interpreter given

Each is run cold (empty caches) and warm (again, with the caches of the first run). The checkpoint
is checkpoint_bench's synthetic DeepSeek-V3 (163 shards, ~92k tensors, sparse data). A benchmark:
it prints figures and asserts nothing.

usage: hub_bench.py SPECPROBE CHECKPOINT_BENCH [--hf-python PY] [--runs N]
  PY: a Python with huggingface_hub installed (e.g. a venv: python3 -m venv build/bench-venv &&
  build/bench-venv/bin/pip install huggingface_hub)
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
STANDIN = os.path.join(ROOT, "tests", "support", "hub_standin.py")
REPO = "bench/DeepSeek-V3-163"

HF_SCRIPT = """
import sys, time
from huggingface_hub import get_safetensors_metadata
t0 = time.monotonic()
m = get_safetensors_metadata(sys.argv[1])
n = sum(len(f.tensors) for f in m.files_metadata.values())
print(f"{len(m.files_metadata)} {n} {time.monotonic() - t0:.3f}")
"""


def stats(endpoint):
    with urllib.request.urlopen(endpoint + "/_standin/stats") as r:
        return json.load(r)


def reset(endpoint):
    urllib.request.urlopen(urllib.request.Request(endpoint + "/_standin/reset", data=b"", method="POST")).read()


def timed(cmd, env):
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    return time.monotonic() - t0, p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("specprobe")
    ap.add_argument("checkpoint_bench")
    ap.add_argument("--hf-python")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="specprobe-hubbench-")
    server = None
    try:
        ckpt = os.path.join(tmp, "ckpt")
        os.makedirs(ckpt)
        subprocess.run([args.checkpoint_bench, "1", ckpt], check=True, capture_output=True)
        root = os.path.join(tmp, "hub")
        os.makedirs(os.path.join(root, "bench"))
        os.symlink(ckpt, os.path.join(root, REPO))
        port_file = os.path.join(tmp, "port")
        server = subprocess.Popen([sys.executable, STANDIN, "--root", root, "--port-file", port_file],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while not os.path.exists(port_file):
            time.sleep(0.05)
        endpoint = "http://127.0.0.1:" + open(port_file).read().strip()
        header_bytes = 0
        for f in os.listdir(ckpt):
            if f.endswith(".safetensors"):
                with open(os.path.join(ckpt, f), "rb") as fh:
                    header_bytes += 8 + int.from_bytes(fh.read(8), "little")
        print(f"checkpoint: 163 shards, headers {header_bytes / 1e6:.2f} MB in all (8 + N bytes each); "
              f"stand-in at {endpoint}")
        rows = []

        def measure(name, make_cmd, make_env, parse=None):
            cold, warm = [], []
            for _ in range(args.runs):
                cache = tempfile.mkdtemp(dir=tmp)
                env = make_env(cache)
                for which in ("cold", "warm"):
                    reset(endpoint)
                    took, p = timed(make_cmd(), env)
                    if p.returncode not in (0, 1, 4):
                        print(f"{name} {which} failed ({p.returncode}): {p.stderr[-2000:]}")
                        return
                    st = stats(endpoint)
                    (cold if which == "cold" else warm).append((took, st["requests"], st["bytes_sent"],
                                                                parse(p.stdout) if parse else ""))
                shutil.rmtree(cache, ignore_errors=True)
            for which, runs in (("cold", cold), ("warm", warm)):
                t = statistics.median(r[0] for r in runs)
                rows.append((name, which, t, runs[0][1], runs[0][2], runs[0][3]))

        base_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HF_ENDPOINT": endpoint}
        measure("specprobe check", lambda: [args.specprobe, "check", "--gpu", "H100", "--probes", "off", "--no-matrix",
                                            "--format", "json", "--", "vllm", "serve", REPO],
                lambda cache: dict(base_env, HOME=cache, XDG_CACHE_HOME=cache),
                lambda out: "{} tensors".format(json.loads(out)["facts"]["checkpoint"]["tensors"]))
        if args.hf_python:
            script = os.path.join(tmp, "hf.py")
            open(script, "w").write(HF_SCRIPT)
            measure("huggingface_hub get_safetensors_metadata", lambda: [args.hf_python, script, REPO],
                    lambda cache: dict(base_env, HOME=cache, HF_HOME=os.path.join(cache, "hf"),
                                       HF_HUB_DISABLE_TELEMETRY="1"),
                    lambda out: "{} tensors".format(out.split()[1]))
        print(f"{'client':44} {'run':5} {'median s':>9} {'requests':>9} {'bytes':>12}  read")
        for name, which, t, req, nbytes, what in rows:
            print(f"{name:44} {which:5} {t:9.3f} {req:9d} {nbytes:12,d}  {what}")
    finally:
        if server:
            server.terminate()
            server.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
