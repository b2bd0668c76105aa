"""One plan through `specprobe check` with an engine environment asked (--engine-env), no probes,
a private cache (nothing answered from an earlier run): the parsed JSON report and the wall time.
Shared by tests/tools/engine_weights.py and bench/engine_bench.py."""
import json
import os
import subprocess
import tempfile
import time


def check_plan(binary, env_dir, model_dir, command, gpu="H100", extra=()):
    """COMMAND (a serve command line) as a one-line script, checked for GPU with MODEL_DIR's metadata
    and the engine in ENV_DIR; returns (wall seconds, report)."""
    with tempfile.TemporaryDirectory() as tmp:
        plan = os.path.join(tmp, "serve.sh")
        with open(plan, "w") as f:
            f.write("#!/bin/sh\n%s\n" % command)
        args = [binary, "check", plan, "--engine-env", env_dir, "--gpu", gpu, "--model", model_dir, "--no-resolve",
                "--no-cache", "--probes", "off", "--stack-probes", "off", "--format", "json", "--exit-zero",
                "--engine-timeout", "600"] + list(extra)
        t0 = time.monotonic()
        p = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, XDG_CACHE_HOME=tmp))
        wall = time.monotonic() - t0
    return wall, json.loads(p.stdout)
