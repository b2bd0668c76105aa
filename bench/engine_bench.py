#!/usr/bin/env python3
"""Time of the engine check against the engine's own start-up work (issue: the first check costs the
engine's import + config + about a second). For each engine environment and plan, runs
`specprobe check FILE --engine-env ENV --gpu H100 --model DIR --no-cache --format json` and prints:
the engine's import, its argparse + config (what `vllm serve` / `sglang serve` does before it builds
anything), the rest of the plan's stages (vLLM: model interface, backend selection, the model built
on the meta device), the matrix cells, the adapter's total and specprobe's wall time. A benchmark: it
reports figures and asserts nothing.

usage: bench/engine_bench.py [BINARY] [--engines BUILD_DIR/engines] [--runs N] [--only NAME,...]
"""
import argparse
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "tools"))
from engine_plan import check_plan  # noqa: E402
MODELS = os.path.join(REPO, "tests", "corpus", "models")
DATA = os.path.join(REPO, "tests", "data", "checkpoint")

PLANS = {
    "vllm": [
        ("Llama-3.1-8B EAGLE3 k=3, TP 1", os.path.join(DATA, "llama-3.1-8b"),
         "vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "
         "'{\"method\": \"eagle3\", \"model\": \"%s\", \"num_speculative_tokens\": 3}'"
         % os.path.join(DATA, "eagle3-llama3.1-8b-draft")),
        ("Qwen3-30B-A3B-FP8, TP 4", os.path.join(MODELS, "Qwen--Qwen3-30B-A3B-FP8"),
         "vllm serve Qwen/Qwen3-30B-A3B-FP8 --tensor-parallel-size 4"),
        ("DeepSeek-V3 MTP k=2, TP 8", os.path.join(MODELS, "deepseek-ai--DeepSeek-V3"),
         "vllm serve deepseek-ai/DeepSeek-V3 --tensor-parallel-size 8 --speculative-config "
         "'{\"method\": \"mtp\", \"num_speculative_tokens\": 2}'"),
    ],
    "sglang": [
        ("Llama-3.1-8B EAGLE3 steps 3, TP 1", os.path.join(DATA, "llama-3.1-8b"),
         "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --speculative-algorithm "
         "EAGLE3 --speculative-draft-model-path %s --speculative-num-steps 3 --speculative-eagle-topk 1 "
         "--speculative-num-draft-tokens 4" % os.path.join(DATA, "eagle3-llama3.1-8b-draft")),
        ("DeepSeek-V3 EAGLE (MTP) steps 2, TP 8", os.path.join(MODELS, "deepseek-ai--DeepSeek-V3"),
         "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 8 --speculative-algorithm "
         "EAGLE --speculative-num-steps 2 --speculative-eagle-topk 1 --speculative-num-draft-tokens 3"),
    ],
}


def one(binary, env_dir, model_dir, command):
    wall, report = check_plan(binary, env_dir, model_dir, command)
    return wall, report["facts"].get("engine_check", {})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary", nargs="?", default=os.path.join(REPO, "build", "specprobe"))
    ap.add_argument("--engines", default=os.path.join(REPO, "build", "engines"))
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    only = set(x for x in a.only.split(",") if x)
    envs = sorted(d for d in os.listdir(a.engines) if os.path.isfile(os.path.join(a.engines, d, "bin", "python"))
                  and d.split("-")[0] in PLANS and (not only or d in only))
    print("| engine | plan | import | argparse + config | other plan stages | cells | adapter total | "
          "specprobe wall | wall - (import + config) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for env in envs:
        for name, model_dir, command in PLANS[env.split("-")[0]]:
            rows = []
            for _ in range(a.runs):
                wall, ec = one(a.binary, os.path.join(a.engines, env), model_dir, command)
                t = ec.get("timing_s") or {}
                stages = t.get("plan_stages") or {}
                if t.get("import") is None:
                    print("| %s | %s | (%s: %s) |" % (env, name, ec.get("outcome"), ec.get("reason")))
                    break
                cfg = stages.get("argparse", 0) + stages.get("config", 0)
                rest = sum(v for k, v in stages.items() if k not in ("argparse", "config"))
                rows.append((t["import"], cfg, rest, t.get("cells") or 0, t["total"], wall,
                             len(ec.get("cells") or {}), ec.get("outcome")))
            if not rows:
                continue
            med = [statistics.median(r[i] for r in rows) for i in range(6)]
            print("| %s | %s (%s) | %.1f s | %.2f s | %.2f s | %.2f s (%d) | %.1f s | %.1f s | +%.1f s |" % (
                env, name, rows[-1][7], med[0], med[1], med[2], med[3], rows[-1][6], med[4], med[5],
                med[5] - med[0] - med[1]))
            sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
