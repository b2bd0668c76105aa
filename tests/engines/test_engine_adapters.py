#!/usr/bin/env python3
# Engine adapter tests (engines/README.md): run engines/vllm_adapter.py and engines/sglang_adapter.py
# with the pinned engines' own Pythons (venvs under $SPECPROBE_ENGINE_VENVS, made by
# tests/engines/setup_engines.sh BUILD_DIR -> BUILD_DIR/engines) on real configurations (the
# checkpoint metadata in docs/examples/checkpoints and shared/fixtures/checkpoints: config.json only)
# and check the engines' verdicts, the classification, and that nothing reached the network or was
# written outside the private dir. Each adapter run is started the way specprobe starts it: the
# adapter and common.py copied into a fresh private dir, `env -i` with HOME/TMPDIR there, `python
# -s -B`, a timeout that kills the process group; here also in a new network namespace (unshare -n)
# when available. One run per engine version answers all of its cells (the import is paid once).
# Runs under pytest or standalone (`python3 tests/engines/test_engine_adapters.py`); prints timings.
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
ENGINES_SRC = os.path.join(REPO, "engines")
VENVS = os.environ.get("SPECPROBE_ENGINE_VENVS", os.path.join(REPO, "build", "engines"))
EX = os.path.join(REPO, "docs", "examples", "checkpoints")
FIX = next((p for p in (os.environ.get("SPECPROBE_FIXTURES_CHECKPOINTS"),
                        os.path.join(REPO, "..", "shared", "fixtures", "checkpoints"),
                        "/work/shared/fixtures/checkpoints") if p and os.path.isdir(p)), None)
H100 = {"name": "NVIDIA H100 80GB HBM3", "cc": [9, 0], "declared": True, "count": 8, "sm_count": 132}
CORPUS_MODELS = os.path.join(REPO, "tests", "corpus", "models")
A100 = {"name": "NVIDIA A100-SXM4-80GB", "cc": [8, 0], "declared": True, "count": 8}
HOST = {"memory_gib": 2048}
TIMINGS = []


def python_of(name):
    return os.path.join(VENVS, name, "bin", "python")


def have(name):
    return os.path.exists(python_of(name))


class Skip(Exception):
    pass


def skip(why):
    try:
        import pytest
        pytest.skip(why)
    except ImportError:
        raise Skip(why)


# ------------------------------------------------------------------------------------------------
# Running an adapter as specprobe does


def snapshot_dirs():
    """Directories where a stray write would show: the checkpoints, the repo's engines dir, the venvs'
    roots and site-packages, /tmp's top level, the real user's caches."""
    dirs = [EX, ENGINES_SRC, "/tmp", os.path.expanduser("~/.cache"), os.path.expanduser("~/.config"),
            os.path.expanduser("~/.triton")]
    if FIX:
        dirs.append(FIX)
    for name in ("vllm-0.33.0", "vllm-0.25.1", "vllm-0.15.1", "sglang-0.5.23", "sglang-0.5.17"):
        if have(name):
            dirs.append(os.path.join(VENVS, name))
    return [d for d in dirs if os.path.isdir(d)]


TMP_NAMES = ("vllm", "sglang", "torch", "triton", "flashinfer", "huggingface", "hf_", "tvm", "cutlass", "cute",
             "humming", "inductor", "deep_gemm", "registry_output", "nvrtc", "numba", "outlines", "xgrammar")


def newer_files(marker, exclude):
    out = []
    for d in snapshot_dirs():
        only = ["-maxdepth", "1"] if d == "/tmp" else ["-not", "-type", "d"]
        r = subprocess.run(["find", d] + only + ["-newer", marker],
                           capture_output=True, text=True)
        found = [l for l in r.stdout.splitlines() if l and not l.startswith(exclude)]
        if d == "/tmp":  # shared with every other process here: only names an engine stack would write
            found = [l for l in found if l != "/tmp" and any(k in l.lower() for k in TMP_NAMES)]
        out += found
    return out


def run_adapter(venv, engine, request, timeout=600, argv_mode="file"):
    """Returns (result or None, info). info: rc, killed, phase, stderr tail, wall, new_files."""
    priv = tempfile.mkdtemp(prefix="specprobe-engine-test-")
    os.makedirs(os.path.join(priv, "tmp"))
    os.makedirs(os.path.join(priv, "cache"))
    for f in ("common.py", "%s_adapter.py" % engine):
        shutil.copy(os.path.join(ENGINES_SRC, f), os.path.join(priv, f))
    req_path = os.path.join(priv, "request.json")
    with open(req_path, "w") as f:
        f.write(request if isinstance(request, str) else json.dumps(request))
    marker = os.path.join(priv, "marker")
    open(marker, "w").close()
    time.sleep(0.01)
    env = ["PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + priv, "TMPDIR=" + priv + "/tmp",
           "XDG_CACHE_HOME=" + priv + "/cache", "PYTHONNOUSERSITE=1", "PYTHONDONTWRITEBYTECODE=1",
           "PYTHONUNBUFFERED=1", "PYTHONIOENCODING=utf-8", "SPECPROBE_ENGINE_PHASE_FILE=" + priv + "/phase"]
    if os.environ.get("CUDA_HOME"):
        env.append("CUDA_HOME=" + os.environ["CUDA_HOME"])
    cmd = ["env", "-i"] + env + [python_of(venv), "-s", "-B", os.path.join(priv, "%s_adapter.py" % engine)]
    cmd += ["--request", req_path] if argv_mode == "file" else []
    if shutil.which("unshare") and os.geteuid() == 0 and subprocess.run(["unshare", "-n", "true"]).returncode == 0:
        cmd = ["unshare", "-n"] + cmd
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                         stdin=subprocess.PIPE if argv_mode == "stdin" else subprocess.DEVNULL)
    killed = False
    try:
        out, err = p.communicate(input=(request if isinstance(request, str) else json.dumps(request)).encode()
                                 if argv_mode == "stdin" else None, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        killed = True
    wall = time.monotonic() - t0
    lines = out.decode("utf-8", "replace").splitlines()
    result = None
    begun = "@@specprobe begin 0" in lines
    results = [l for l in lines if l.startswith("@@specprobe result ")]
    if begun and len(results) == 1:
        try:
            result = json.loads(results[0][len("@@specprobe result "):])
        except ValueError:
            result = None
    phase = None
    if os.path.exists(os.path.join(priv, "phase")):
        phase = open(os.path.join(priv, "phase")).read()
    info = {"rc": p.returncode, "killed": killed, "phase": phase, "wall": wall,
            "stderr": err.decode("utf-8", "replace")[-3000:], "other_stdout": [l for l in lines if not l.startswith("@@")],
            "new_files": newer_files(marker, priv)}
    shutil.rmtree(priv, ignore_errors=True)
    return result, info


def runner_record(result, info):
    """What specprobe's runner makes of a run: the result, or an adapter-error for a kill / no result."""
    if result is not None and result.get("schema") == "specprobe-engine/1":
        return result
    why = "timed out in phase %r" % info["phase"] if info["killed"] else "no valid result line (rc %s)" % info["rc"]
    rec = {"status": "adapter-error", "stage": info["phase"], "message": why, "missing": None}
    return {"schema": "specprobe-engine/1", "plan": rec, "cells": []}


# ------------------------------------------------------------------------------------------------
# Requests

def llama_eagle3_args(k=3, extra=None):
    spec = {"method": "eagle3", "model": os.path.join(FIX, "eagle3-llama3.1-8b-draft"), "num_speculative_tokens": k}
    return ["meta-llama/Llama-3.1-8B-Instruct", "--tensor-parallel-size", "1",
            "--speculative-config", json.dumps(spec)] + (extra or [])


def custom_code_checkpoint():
    """config.json of a model whose configuration exists only as the checkpoint's own code (auto_map):
    what a trust_remote_code checkpoint looks like (the .py file is absent, and never run)."""
    d = os.path.join(tempfile.gettempdir(), "specprobe-engine-test-custom-code")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump({"architectures": ["SpecprobeCustomForCausalLM"], "model_type": "specprobe_custom",
                   "auto_map": {"AutoConfig": "configuration_specprobe_custom.SpecprobeCustomConfig",
                                "AutoModelForCausalLM": "modeling_specprobe_custom.SpecprobeCustomForCausalLM"},
                   "hidden_size": 1024, "num_attention_heads": 8, "num_hidden_layers": 2, "vocab_size": 32000,
                   "torch_dtype": "bfloat16"}, f)
    return d


def vllm_request(gpu=H100):
    llama = os.path.join(FIX, "llama-3.1-8b")
    gqa16 = os.path.join(EX, "gqa16-mtp")
    qwen_next = ["Qwen/Qwen3-Next-80B-A3B-Instruct", "--tensor-parallel-size", "8",
                 "--speculative-config", json.dumps({"method": "mtp", "num_speculative_tokens": 1})]
    cells = [
        # 1. an unknown speculative-config key
        {"id": "spec-key-typo", "args_override": {"--speculative-config": {"num_speculative_tokenz": 2}}},
        # 2. an invalid KV-cache dtype, and the valid one
        {"id": "kv-int8", "args_override": {"--kv-cache-dtype": "int8"}},
        {"id": "kv-fp8", "args_override": {"--kv-cache-dtype": "fp8"}},
        # 3. FLASH_ATTN with an fp8 KV cache and block size 8 (backend selection)
        {"id": "fa-fp8-block8", "args_override": {"--attention-backend": "FLASH_ATTN", "--kv-cache-dtype": "fp8",
                                                  "--block-size": "8"}},
        {"id": "fa-fp8-block16", "args_override": {"--attention-backend": "FLASH_ATTN", "--kv-cache-dtype": "fp8",
                                                   "--block-size": "16"}},
        # 4. an MLA backend for a GQA model (backend selection)
        {"id": "flashmla-llama", "args_override": {"--attention-backend": "FLASHMLA"}},
        # 5. `mtp` on a model without MTP layers, and on one with them
        {"id": "mtp-llama", "args_override": {"--speculative-config": json.dumps({"method": "mtp", "num_speculative_tokens": 1})}},
        {"id": "mtp-gqa16", "model_dir": gqa16, "args": qwen_next},
        # 6. TP 0
        {"id": "tp0", "args_override": {"--tensor-parallel-size": "0"}},
        # 7. a draft TP that is neither 1 nor the target's
        {"id": "draft-tp2", "args_override": {"--tensor-parallel-size": "8",
                                              "--speculative-config": {"draft_tensor_parallel_size": 2}}},
        {"id": "draft-tp1", "args_override": {"--tensor-parallel-size": "8",
                                              "--speculative-config": {"draft_tensor_parallel_size": 1}}},
        # 8. Mamba prefix caching without chunked prefill (hybrid model)
        {"id": "mamba-prefix-no-chunk", "model_dir": gqa16,
         "args": qwen_next + ["--enable-prefix-caching", "--no-enable-chunked-prefill"]},
        # 9. a max_model_len above the model's
        {"id": "max-len", "args_override": {"--max-model-len": "10000000"}},
        # argparse: an unknown flag
        {"id": "unknown-flag", "args_override": {"--speculative-tokens": "3"}},
        # missing inputs
        {"id": "draft-on-hub", "args_override": {"--speculative-config": {"model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"}}},
        {"id": "draft-not-on-disk", "args_override": {"--speculative-config": {"model": "/nonexistent/eagle3-draft"}}},
        {"id": "tokenizer-on-hub", "args_override": {"--tokenizer": "meta-llama/Llama-3.1-8B-Instruct"}},
        {"id": "shell-var", "args_override": {"--port": "$PORT"}},
        {"id": "em-dash", "args": ["meta-llama/Llama-3.1-8B-Instruct", "\u2014tensor-parallel-size", "8"]},
        # a tool/reasoning parser makes vLLM build the tokenizer at config: its files are not in
        # the metadata (the corpus's MiniMax-M2.7 config only): the parsers' checks are not asked
        {"id": "tokenizer-files", "model_dir": os.path.join(REPO, "tests", "corpus", "models", "MiniMaxAI--MiniMax-M2.7"),
         "args": ["MiniMaxAI/MiniMax-M2.7", "--tensor-parallel-size", "2", "--tool-call-parser", "minimax_m2",
                  "--reasoning-parser", "minimax_m2", "--enable-auto-tool-choice"]},
        # model construction (whole plans): a block-FP8 MoE whose expert width 768 splits into
        # 192 per rank at TP 4 (the checkpoint's blocks are 128 wide), with and without EP; DeepSeek-V3
        # with its MTP layer as the drafter
        {"id": "fp8-moe-tp4", "model_dir": os.path.join(CORPUS_MODELS, "Qwen--Qwen3-30B-A3B-FP8"),
         "args": ["Qwen/Qwen3-30B-A3B-FP8", "--tensor-parallel-size", "4"]},
        {"id": "fp8-moe-tp4-ep", "model_dir": os.path.join(CORPUS_MODELS, "Qwen--Qwen3-30B-A3B-FP8"),
         "args": ["Qwen/Qwen3-30B-A3B-FP8", "--tensor-parallel-size", "4", "--enable-expert-parallel"]},
        {"id": "dsv3-mtp", "model_dir": os.path.join(FIX, "deepseek-v3"),
         "args": ["deepseek-ai/DeepSeek-V3", "--tensor-parallel-size", "8",
                  "--speculative-config", json.dumps({"method": "mtp", "num_speculative_tokens": 2})]},
        # --reasoning-parser makes vLLM tokenize the parser's <think> strings at config: without the
        # model's tokenizer files here the tokenizer it builds lacks them (not asked, never a
        # refusal of a plan that starts with the real files)
        {"id": "reasoning-tokens", "model_dir": os.path.join(CORPUS_MODELS, "Qwen--Qwen3.6-35B-A3B"),
         "args": ["Qwen/Qwen3.6-35B-A3B", "--tensor-parallel-size", "2", "--reasoning-parser", "qwen3"]},
        {"id": "remote-code", "model_dir": custom_code_checkpoint(),
         "args": ["example-org/custom-code-model", "--tensor-parallel-size", "1", "--trust-remote-code"]},
    ]
    return {"engine": "vllm", "args": llama_eagle3_args(), "model_dir": llama, "model_id": "meta-llama/Llama-3.1-8B-Instruct",
            "gpu": gpu, "host": HOST, "cells": cells, "allow_remote_code": False}


def sglang_request():
    llama = os.path.join(FIX, "llama-3.1-8b")
    args = ["--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--tp", "8", "--speculative-algorithm", "EAGLE3",
            "--speculative-draft-model-path", os.path.join(FIX, "eagle3-llama3.1-8b-draft"),
            "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]
    cells = [
        {"id": "algo-typo", "args_override": {"--speculative-algorithm": "EAGEL3"}},
        {"id": "trtllm-topk4", "args_override": {"--attention-backend": "trtllm_mha", "--speculative-eagle-topk": "4",
                                                 "--speculative-num-draft-tokens": "8"}},
        {"id": "trtllm-topk1", "args_override": {"--attention-backend": "trtllm_mha"}},
        {"id": "dp-attn-dp3", "args_override": {"--enable-dp-attention": True, "--dp": "3"}},
        {"id": "dp-attn-dp2", "args_override": {"--enable-dp-attention": True, "--dp": "2"}},
        {"id": "fa3-fp8", "args_override": {"--attention-backend": "fa3", "--kv-cache-dtype": "fp8_e4m3"}},
        {"id": "unknown-flag", "args_override": {"--speculative-num-stepz": "3"}},
        {"id": "draft-on-hub", "args_override": {"--speculative-draft-model-path": "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B"}},
        {"id": "draft-not-on-disk", "args_override": {"--speculative-draft-model-path": "/nonexistent/eagle3-draft"}},
        {"id": "shell-var", "args_override": {"--port": "${PORT}"}},
        {"id": "em-dash", "args": ["--model-path", "meta-llama/Llama-3.1-8B-Instruct", "\u2013tp", "8"]},
        {"id": "dsv3-eagle-mtp", "model_dir": os.path.join(FIX, "deepseek-v3"),
         "args": ["--model-path", "deepseek-ai/DeepSeek-V3", "--tp", "8", "--speculative-algorithm", "EAGLE",
                  "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]},
        {"id": "fp8-moe-tp4", "model_dir": os.path.join(CORPUS_MODELS, "Qwen--Qwen3-30B-A3B-FP8"),
         "args": ["--model-path", "Qwen/Qwen3-30B-A3B-FP8", "--tp", "4"]},
        {"id": "fp8-moe-tp2", "model_dir": os.path.join(CORPUS_MODELS, "Qwen--Qwen3-30B-A3B-FP8"),
         "args": ["--model-path", "Qwen/Qwen3-30B-A3B-FP8", "--tp", "2"]},
    ]
    return {"engine": "sglang", "args": args, "model_dir": llama, "gpu": H100, "host": HOST, "cells": cells}


_CACHE = {}


def result_for(key):
    if key in _CACHE:
        return _CACHE[key]
    if FIX is None:
        skip("no shared/fixtures/checkpoints")
    venv, engine, req = {
        "vllm-0.33.0": ("vllm-0.33.0", "vllm", vllm_request),
        "vllm-0.25.1": ("vllm-0.25.1", "vllm", vllm_request),
        "vllm-0.15.1": ("vllm-0.15.1", "vllm", vllm_request),
        "sglang-0.5.23": ("sglang-0.5.23", "sglang", sglang_request),
        "sglang-0.5.17": ("sglang-0.5.17", "sglang", sglang_request),
    }[key]
    if not have(venv):
        skip("%s is not installed (tests/engines/setup_engines.sh BUILD_DIR; SPECPROBE_ENGINE_VENVS)" % venv)
    result, info = run_adapter(venv, engine, req())
    assert result is not None, "no result from %s: %s" % (key, info["stderr"][-2000:])
    _CACHE[key] = (result, info)
    t = result["timing_s"]
    TIMINGS.append("%-14s import %6.1fs  plan %5.2fs  cells %5.2fs (%d, %.3fs each)  adapter total %6.1fs  process wall %6.1fs"
                   % (key, t["import"], t["plan"], t["cells"], len(result["cells"]),
                      t["cells"] / max(1, len(result["cells"])), t["total"], info["wall"]))
    return result, info


def each(*keys):
    """[(key, result)] for the releases among KEYS whose venv is installed; skipped when none is."""
    got = [(k, result_for(k)[0]) for k in keys if have(k)]
    if not got:
        skip("none of %s is installed (tests/engines/setup_engines.sh BUILD_DIR)" % ", ".join(keys))
    return got


def maybe(key):
    """The release's result, or None when its venv is not installed."""
    return result_for(key)[0] if have(key) else None


def cell(result, cid):
    for c in result["cells"]:
        if c["id"] == cid:
            return c
    raise AssertionError("no cell %s" % cid)


def refused(c, stage, *needles):
    assert c["status"] == "refused", (c["id"], c["status"], c["stage"], c["message"], c.get("missing"))
    assert c["stage"] == stage, (c["id"], c["stage"], c["message"])
    for n in needles:
        assert n in c["message"], (c["id"], n, c["message"])


def ok(c):
    assert c["status"] == "ok", (c["id"], c["status"], c["stage"], c["message"], c.get("missing"))


def missing(c, *needles):
    assert c["status"] == "missing-input", (c["id"], c["status"], c["stage"], c["message"])
    for n in needles:
        assert n in (c["missing"] or ""), (c["id"], n, c["missing"])


# ------------------------------------------------------------------------------------------------
# vLLM

def test_vllm_033_plan_facts():
    r, info = result_for("vllm-0.33.0")
    assert r["version"] == "0.33.0" and r["schema"] == "specprobe-engine/1"
    ok(r["plan"])
    f = r["plan"]["facts"]
    assert f["method"] == "eagle3" and f["num_speculative_tokens"] == 3
    assert f["attention_backend"] == "FLASH_ATTN" and f["drafter_attention_backend"] == "FLASH_ATTN"
    assert f["cudagraph_mode"] == "FULL_AND_PIECEWISE" and f["cudagraph_capture_sizes"]
    assert f["model_supports_eagle3"] is True
    assert r["platform"]["kind"] == "declared" and r["platform"]["cc"] == [9, 0]
    assert not info["other_stdout"], info["other_stdout"][:5]


def test_vllm_spec_key_typo_refused_in_033_accepted_in_015():
    for key, r in each("vllm-0.33.0", "vllm-0.25.1"):
        refused(cell(r, "spec-key-typo"), "config", "num_speculative_tokenz", "Unexpected keyword argument")
    r15 = maybe("vllm-0.15.1")
    if r15:
        ok(cell(r15, "spec-key-typo"))  # 0.15.1 ignores the unknown key


def test_vllm_invalid_kv_dtype():
    r33 = maybe("vllm-0.33.0")
    if r33:
        refused(cell(r33, "kv-int8"), "config", "Invalid kv_cache_dtype: 'int8'", "Valid values are")
    # Up to mid-2026 (0.25.1) the parser's choices refuse it.
    for key, r in each("vllm-0.25.1", "vllm-0.15.1"):
        refused(cell(r, "kv-int8"), "argparse", "invalid choice: 'int8'")
    for key, r in each("vllm-0.33.0", "vllm-0.25.1", "vllm-0.15.1"):
        ok(cell(r, "kv-fp8"))


def test_vllm_fa_fp8_block8_refused_from_025():
    for key, r in each("vllm-0.33.0", "vllm-0.25.1"):
        refused(cell(r, "fa-fp8-block8"), "backend-selection", "FLASH_ATTN is not valid", "block_size not supported")
        ok(cell(r, "fa-fp8-block16"))
    r15 = maybe("vllm-0.15.1")
    if r15:
        ok(cell(r15, "fa-fp8-block8"))
        assert cell(r15, "fa-fp8-block8")["facts"]["attention_backend"] == "FLASH_ATTN"


def test_vllm_mla_backend_on_gqa_model():
    for key, r in each("vllm-0.33.0", "vllm-0.25.1", "vllm-0.15.1"):
        refused(cell(r, "flashmla-llama"), "backend-selection", "FLASHMLA is not valid", "non-MLA not supported")


def test_vllm_mtp_needs_mtp_layers():
    for key, r in each("vllm-0.33.0", "vllm-0.25.1", "vllm-0.15.1"):
        refused(cell(r, "mtp-llama"), "config", "Unsupported speculative method: 'mtp'")
        c = cell(r, "mtp-gqa16")
        ok(c)
        assert c["facts"]["method"] == "mtp" and c["facts"]["is_hybrid"] is True


def test_vllm_tp0_and_draft_tp():
    for key, r in each("vllm-0.33.0", "vllm-0.25.1"):
        refused(cell(r, "tp0"), "config", "tensor_parallel_size", "greater than or equal to 1")
    r15 = maybe("vllm-0.15.1")
    if r15:
        refused(cell(r15, "tp0"), "config", "integer modulo by zero")  # 0.15.1: no validation message
    for key, r in each("vllm-0.33.0", "vllm-0.25.1", "vllm-0.15.1"):
        refused(cell(r, "draft-tp2"), "config", "cannot be other value than 1 or target model tensor_parallel_size")
        ok(cell(r, "draft-tp1"))


def test_vllm_mamba_prefix_caching_needs_chunked_prefill():
    r33 = maybe("vllm-0.33.0")
    if r33:
        refused(cell(r33, "mamba-prefix-no-chunk"), "config", "Chunked prefill is required for Mamba prefix caching")
    # The message before 0.33.0.
    for key, r in each("vllm-0.33.0", "vllm-0.25.1", "vllm-0.15.1"):
        if key != "vllm-0.33.0":
            refused(cell(r, "mamba-prefix-no-chunk"), "config",
                    "Chunked prefill is required for mamba cache mode 'align'")


def test_vllm_fp8_flash_attn_needs_sm90():
    # The same plan, two declared GPUs: FLASH_ATTN + fp8 KV is refused on A100 (FA2), taken on H100.
    for key, r in each("vllm-0.33.0", "vllm-0.25.1", "vllm-0.15.1"):
        ok(cell(r, "fa-fp8-block16"))
    if not have("vllm-0.33.0"):
        skip("vllm-0.33.0 missing")
    req = {"engine": "vllm", "args": ["meta-llama/Llama-3.1-8B-Instruct", "--kv-cache-dtype", "fp8",
                                      "--attention-backend", "FLASH_ATTN"],
           "model_dir": os.path.join(FIX, "llama-3.1-8b"), "gpu": A100, "host": HOST,
           "cells": [{"id": "auto", "args_override": {"--attention-backend": None}}]}
    r, info = run_adapter("vllm-0.33.0", "vllm", req)
    refused(r["plan"], "backend-selection", "FLASH_ATTN is not valid", "kv_cache_dtype not supported")
    ok(cell(r, "auto"))
    assert cell(r, "auto")["facts"]["attention_backend"] == "FLASHINFER"
    assert not info["new_files"], info["new_files"]


def test_vllm_max_len_and_unknown_flag():
    for key, r in each("vllm-0.33.0", "vllm-0.25.1", "vllm-0.15.1"):
        refused(cell(r, "max-len"), "config", "User-specified max_model_len (10000000)")
        c = cell(r, "unknown-flag")
        assert c["status"] == "refused" and c["stage"] == "argparse", c
        assert "error: unrecognized arguments: --speculative-tokens 3" in c["message"], c["message"]


def test_vllm_missing_inputs():
    for key, r in each("vllm-0.33.0", "vllm-0.25.1", "vllm-0.15.1"):
        missing(cell(r, "draft-on-hub"), "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "Hugging Face Hub")
        missing(cell(r, "draft-not-on-disk"), "/nonexistent/eagle3-draft", "not on disk")
        missing(cell(r, "tokenizer-on-hub"), "tokenizer")
        missing(cell(r, "shell-var"), "$PORT")
        missing(cell(r, "em-dash"), "EM DASH", "--tensor-parallel-size")
        missing(cell(r, "remote-code"), "trust_remote_code")
        assert cell(r, "remote-code")["stage"] == "config"
    for key, r in each("vllm-0.33.0", "vllm-0.25.1"):
        # Without the tokenizer files the parsers' token checks are not asked and the rest of the
        # plan is (the engine's answer stands for everything else).
        for cid, parsers in (("tokenizer-files", "--reasoning-parser minimax_m2 and --tool-call-parser minimax_m2"),
                             ("reasoning-tokens", "--reasoning-parser qwen3")):
            c = cell(r, cid)
            ok(c)
            assert c["facts"]["not_asked"] == ["the model's tokens for %s (the tokenizer files are not in %s)" % (
                parsers, c["model_dir"])], (key, c["facts"].get("not_asked"))


def test_vllm_flashinfer_spec_decode_cudagraph_downgrade():
    # FlashInfer under spec decode: the runner's own resolution gives PIECEWISE (0.15.1) -- a fact the
    # C++ side reads as cudagraph_mode.
    r15, _ = result_for("vllm-0.15.1")
    c = cell(r15, "kv-fp8")
    ok(c)
    assert c["facts"]["cudagraph_mode"] in ("FULL_AND_PIECEWISE", "PIECEWISE", "FULL_DECODE_ONLY", "NONE")


# ------------------------------------------------------------------------------------------------
# SGLang

def test_vllm_model_construction():
    """The plan's target and drafter are built on the meta device as rank 0: per-layer backends, MoE
    methods and this rank's parameter bytes are the engine's own; flag variants are not built."""
    for key, r in each("vllm-0.33.0", "vllm-0.25.1"):
        plan = r["plan"]
        ok(plan)
        assert "model-construction" in plan["stage_s"], (key, plan["stage_s"])
        built = plan["facts"]["model_construction"]
        assert built["attention_layers"] == {"FLASH_ATTN (Attention)": 32}, (key, built)
        assert built["moe_layers"] == {}, (key, built)
        # Llama-3.1-8B in BF16 at TP 1: 8,030,261,248 parameters x 2 bytes.
        assert built["parameter_bytes"] == 16060522496, (key, built["parameter_bytes"])
        draft = plan["facts"]["drafter_construction"]
        assert sum(draft["attention_layers"].values()) == 1, (key, draft)
        # A variant of the plan (k, KV dtype) is not built again.
        assert "model_construction" not in cell(r, "kv-fp8")["facts"], key
        # DeepSeek-V3 at TP 8 with its MTP layer: MLA layers, FP8 MoE, the drafter built as the
        # proposer builds it.
        ds = cell(r, "dsv3-mtp")
        ok(ds)
        layers = ds["facts"]["model_construction"]["attention_layers"]
        assert sum(layers.values()) == 61 and all("MLAAttention" in k for k in layers), (key, layers)
        assert ds["facts"]["model_construction"]["moe_layers"] == {"Fp8MoEMethod": 58}, key
        assert ds["facts"]["drafter_construction"]["moe_layers"] == {"Fp8MoEMethod": 1}, key
        ok(cell(r, "fp8-moe-tp4-ep"))


def test_vllm_fp8_block_moe_split_refused_in_025_built_in_033():
    """Qwen3-30B-A3B-FP8 at TP 4: 768 / 4 = 192 per rank against 128-wide blocks. vLLM 0.25.1's FP8 MoE
    method raises while the layer is built; 0.29.0 and later refine the scale grid and build it."""
    old, new = maybe("vllm-0.25.1"), maybe("vllm-0.33.0")
    if old is None and new is None:
        skip("neither vLLM 0.25.1 nor 0.33.0 is installed")
    if old is not None:
        c = cell(old, "fp8-moe-tp4")
        refused(c, "model-construction", "The output_size of gate's and up's weight = 192 is not divisible by "
                                         "weight quantization block_n = 128")
        assert c["raised_at"].startswith("vllm/model_executor/layers/quantization/fp8.py"), c["raised_at"]
    if new is not None:
        c = cell(new, "fp8-moe-tp4")
        ok(c)
        assert c["facts"]["model_construction"]["moe_layers"] == {"Fp8MoEMethod": 48}, c["facts"]


def test_vllm_construction_stops_where_the_device_is_needed():
    """A B200 declared without its SM count: vLLM 0.33.0's NVFP4 MoE asks FlashInfer for the SM count
    while the layer is built. The construction stops there with the reason; the plan keeps the
    earlier stages' answer (ok), never a refusal or a missing input."""
    if not have("vllm-0.33.0"):
        skip("vllm-0.33.0 is not installed")
    req = {"engine": "vllm", "args": ["nvidia/Qwen3.6-35B-A3B-NVFP4", "--tensor-parallel-size", "2"],
           "model_dir": os.path.join(CORPUS_MODELS, "nvidia--Qwen3.6-35B-A3B-NVFP4"),
           "gpu": {"name": "NVIDIA B200", "cc": [10, 0], "declared": True, "count": 8}, "host": HOST, "cells": []}
    result, info = run_adapter("vllm-0.33.0", "vllm", req)
    assert result is not None, info["stderr"][-2000:]
    plan = result["plan"]
    ok(plan)
    stopped = plan["facts"]["model_construction_stopped"]
    assert stopped["why"] == "needs the device" and stopped["after"] == [], stopped
    assert any("model construction on the meta device stopped" in n for n in plan["notes"]), plan["notes"]
    assert "model_construction" not in plan["facts"]


def test_sglang_plan_and_refusals():
    r, info = result_for("sglang-0.5.23")
    assert r["version"] == "0.5.23"
    ok(r["plan"])
    f = r["plan"]["facts"]
    assert f["attention_backend"] == "fa3" and f["method"] == "EAGLE3" and f["speculative_num_draft_tokens"] == 4, f
    refused(cell(r, "algo-typo"), "config", "Unknown speculative algorithm name: EAGEL3")
    refused(cell(r, "trtllm-topk4"), "config", "trtllm_mha backend only supports topk = 1 for speculative decoding")
    ok(cell(r, "trtllm-topk1"))
    c = cell(r, "dp-attn-dp3")
    assert c["status"] == "refused" and c["stage"] == "config" and c["exception"] == "AssertionError", c
    ok(cell(r, "dp-attn-dp2"))
    ok(cell(r, "fa3-fp8"))
    c = cell(r, "unknown-flag")
    refused(c, "argparse", "unrecognized arguments: --speculative-num-stepz")
    ok(cell(r, "dsv3-eagle-mtp"))
    assert cell(r, "dsv3-eagle-mtp")["facts"]["use_mla"] is True, cell(r, "dsv3-eagle-mtp")["facts"]
    assert not info["other_stdout"], info["other_stdout"][:5]


def test_sglang_0517_without_the_platform_context():
    # SGLang 0.5.17 (2026-08) predates runtime_context.override_platform and ServerArgs.resolve_once:
    # the declared GPU goes through its utils.common probes, resolution through __post_init__.
    r, info = result_for("sglang-0.5.17")
    assert r["version"] == "0.5.17"
    assert "probes rebound" in r["platform"]["mechanism"] and "is_sm90_supported -> True" in r["platform"]["mechanism"]
    ok(r["plan"])
    f = r["plan"]["facts"]
    assert f["attention_backend"] == "fa3" and f["method"] == "EAGLE3" and f["speculative_num_draft_tokens"] == 4, f
    refused(cell(r, "algo-typo"), "config", "Unknown speculative algorithm name: EAGEL3")
    # trtllm_mha on an H100: 0.5.17 refuses it for any topk ("only supported on Blackwell"); 0.5.23
    # takes topk 1 (test_sglang_plan_and_refusals).
    refused(cell(r, "trtllm-topk1"), "config", "TRTLLM MHA backend for prefill is only supported on Blackwell GPUs")
    c = cell(r, "dp-attn-dp3")
    assert c["status"] == "refused" and c["exception"] == "AssertionError", c
    ok(cell(r, "dp-attn-dp2"))
    refused(cell(r, "unknown-flag"), "argparse", "unrecognized arguments: --speculative-num-stepz")
    ok(cell(r, "dsv3-eagle-mtp"))
    assert cell(r, "dsv3-eagle-mtp")["facts"]["use_mla"] is True
    missing(cell(r, "draft-on-hub"), "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B", "Hugging Face Hub")
    missing(cell(r, "shell-var"), "${PORT}")
    assert not info["other_stdout"], info["other_stdout"][:5]


def test_sglang_model_construction():
    """SGLang builds the plan's target and drafter on the meta device as rank 0 of its parallel widths
    (the model classes SGLang's registry resolves, through its loader's _initialize_model): this
    rank's parameter bytes, attention and MoE layers are the engine's own; the layers' own checks
    refuse what they refuse; flag variants of a plan that built are not built again. 0.5.23 builds in
    a runtime context of its own, 0.5.17 in the process's parallel state, put back afterwards: the
    same figures."""
    for key, r in each("sglang-0.5.23", "sglang-0.5.17"):
        plan = r["plan"]
        ok(plan)
        assert "model-construction" in plan["stage_s"], (key, plan["stage_s"])
        assert plan["facts"]["model_modules"] == ["sglang.srt.models.llama", "sglang.srt.models.llama_eagle3"], (
            key, plan["facts"])
        built = plan["facts"]["model_construction"]
        # Llama-3.1-8B in BF16 at TP 8, per rank: 32 layers x (q 2,097,152 + k, v 1,048,576 + o 2,097,152 +
        # gate, up 14,680,064 + down 7,340,032 + 2 norms 8,192) + embedding and LM head 16,032 x 4,096
        # each + the final norm 4,096 = 1,004,015,616 parameters x 2 bytes.
        assert built["parameter_bytes"] == 2008031232, (key, built)
        assert built["attention_layers"] == {"RadixAttention": 32} and built["moe_layers"] == {}, (key, built)
        drafter = plan["facts"]["drafter_construction"]
        assert drafter["attention_layers"] == {"RadixAttention": 1}, (key, drafter)
        assert "model_construction" not in cell(r, "fa3-fp8")["facts"], key
        # DeepSeek-V3 at TP 8 with EAGLE: the MTP layer is the drafter (DeepseekV3ForCausalLMNextN).
        ds = cell(r, "dsv3-eagle-mtp")
        ok(ds)
        assert ds["facts"]["model_construction"]["moe_layers"] == {"Fp8MoEMethod": 58}, (key, ds["facts"])
        assert ds["facts"]["drafter_construction"]["moe_layers"] == {"Fp8MoEMethod": 1}, (key, ds["facts"])
        # Qwen3-30B-A3B-FP8: 768-wide experts split 192 per rank at TP 4 against 128-wide FP8 blocks.
        c = cell(r, "fp8-moe-tp4")
        refused(c, "model-construction", "The output_size of gate's and up's weight = 192 is not divisible by "
                                         "weight quantization block_n = 128")
        assert c["raised_at"].startswith("sglang/srt/layers/quantization/fp8.py"), (key, c["raised_at"])
        c = cell(r, "fp8-moe-tp2")
        ok(c)
        assert c["facts"]["model_construction"]["moe_layers"] == {"Fp8MoEMethod": 48}, (key, c["facts"])
        assert c["facts"]["model_construction"]["parameter_bytes"] == 15600066560, (key, c["facts"])


def test_sglang_missing_inputs():
    r, _ = result_for("sglang-0.5.23")
    missing(cell(r, "draft-on-hub"), "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B", "Hugging Face Hub")
    missing(cell(r, "draft-not-on-disk"), "/nonexistent/eagle3-draft")
    missing(cell(r, "shell-var"), "${PORT}")
    missing(cell(r, "em-dash"), "EN DASH")


# ------------------------------------------------------------------------------------------------
# AMD GPUs: the engines' own ROCm platforms, declared by gfx target in these CUDA environments

MI300X = {"name": "AMD Instinct MI300X", "vendor": "amd", "arch": "gfx942", "declared": True, "count": 8,
          "memory_gib": 192}


def vllm_rocm_request():
    dsv3, dsv32, gptoss = (os.path.join(FIX, n) for n in ("deepseek-v3", "deepseek-v3.2", "gpt-oss-20b"))
    cells = [
        {"id": "flashinfer", "args_override": {"--attention-backend": "FLASHINFER"}},
        {"id": "triton", "args_override": {"--attention-backend": "TRITON_ATTN"}},
        {"id": "kv-fp8", "args_override": {"--kv-cache-dtype": "fp8"}},
        {"id": "dsv3-flashmla", "model_dir": dsv3,
         "args": ["deepseek-ai/DeepSeek-V3", "--tensor-parallel-size", "8", "--attention-backend", "FLASHMLA"]},
        {"id": "dsv3-mtp", "model_dir": dsv3,
         "args": ["deepseek-ai/DeepSeek-V3", "--tensor-parallel-size", "8",
                  "--speculative-config", json.dumps({"method": "mtp", "num_speculative_tokens": 1})]},
        {"id": "dsv32-mtp", "model_dir": dsv32,
         "args": ["deepseek-ai/DeepSeek-V3.2", "--tensor-parallel-size", "8",
                  "--speculative-config", json.dumps({"method": "mtp", "num_speculative_tokens": 2})]},
        {"id": "gpt-oss", "model_dir": gptoss, "args": ["openai/gpt-oss-20b"]},
    ]
    return {"engine": "vllm", "args": llama_eagle3_args(), "model_dir": os.path.join(FIX, "llama-3.1-8b"),
            "gpu": MI300X, "host": HOST, "cells": cells, "env": {"VLLM_ROCM_USE_AITER_MHA": "0"}}


def test_vllm_rocm_platform_declared():
    if FIX is None:
        skip("no shared/fixtures/checkpoints")
    if not have("vllm-0.33.0"):
        skip("vllm-0.33.0 missing")
    r, info = run_adapter("vllm-0.33.0", "vllm", vllm_rocm_request())
    assert r is not None, info["stderr"][-3000:]
    p = r["platform"]
    assert p["kind"] == "declared" and p["vendor"] == "amd" and p["arch"] == "gfx942", p
    assert p["cc"] == [9, 4], p  # vLLM's own reading of the gfx target
    assert "DeclaredRocmPlatform" in p["mechanism"] and "flashinfer" in p["hidden_packages"], p
    assert p["deploy_env"] == {"VLLM_ROCM_USE_AITER_MHA": "0"}, p
    assert any(s["what"] == "AITER" for s in r["skipped"]) or p["aiter"], r["skipped"]
    ok(r["plan"])
    f = r["plan"]["facts"]
    # vLLM's ROCm priorities, not its CUDA ones (FLASH_ATTN on this H100-class capability).
    assert f["attention_backend"] == "ROCM_ATTN" and f["drafter_attention_backend"] == "ROCM_ATTN", f
    # FlashInfer is a CUDA-only package: as on a ROCm install, it does not import.
    refused(cell(r, "flashinfer"), "backend-selection", "FLASHINFER is not valid", "ImportError")
    ok(cell(r, "triton"))
    assert cell(r, "triton")["facts"]["attention_backend"] == "TRITON_ATTN"
    ok(cell(r, "kv-fp8"))
    refused(cell(r, "dsv3-flashmla"), "backend-selection", "FLASHMLA is not valid")
    ok(cell(r, "dsv3-mtp"))
    assert cell(r, "dsv3-mtp")["facts"]["attention_backend"] == "TRITON_MLA"
    ok(cell(r, "dsv32-mtp"))
    assert cell(r, "dsv32-mtp")["facts"]["attention_backend"] == "ROCM_AITER_MLA_SPARSE"
    ok(cell(r, "gpt-oss"))
    assert cell(r, "gpt-oss")["facts"]["attention_backend"] == "TRITON_ATTN"  # attention sinks
    assert r["guard"]["network_attempts"] == [] and info["new_files"] == [], (r["guard"], info["new_files"][:10])


def sglang_on_mi300x(venv, cells=()):
    """The SGLang request for a declared MI300X with the request's CELLS, run on VENV."""
    if FIX is None:
        skip("no shared/fixtures/checkpoints")
    if not have(venv):
        skip("%s missing" % venv)
    req = sglang_request()
    req["gpu"] = MI300X
    req["cells"] = [c for c in req["cells"] if c["id"] in cells]
    r, info = run_adapter(venv, "sglang", req)
    assert r is not None, info["stderr"][-3000:]
    return r


def test_sglang_rocm_platform_declared():
    r = sglang_on_mi300x("sglang-0.5.23", ("algo-typo", "dsv3-eagle-mtp"))
    p = r["platform"]
    assert p["vendor"] == "amd" and p["arch"] == "gfx942" and p["cc"] == [9, 4], p
    assert "is_hip=True" in p["mechanism"] and "is_gfx95_supported -> False" in p["arch_bindings"], p
    ok(r["plan"])
    # SGLang's ROCm default (get_platform().is_hip), where on an H100 it resolves fa3.
    assert r["plan"]["facts"]["attention_backend"] == "aiter", r["plan"]["facts"]
    refused(cell(r, "algo-typo"), "config", "Unknown speculative algorithm name: EAGEL3")
    ok(cell(r, "dsv3-eagle-mtp"))
    assert cell(r, "dsv3-eagle-mtp")["facts"]["attention_backend"] == "aiter"
    # Building the model stops where a layer's ROCm branch imports what this CUDA environment lacks:
    # said as such, and the plan keeps its config's answer.
    stopped = r["plan"]["facts"]["model_construction_stopped"]
    assert stopped["why"] == "needs the ROCm kernel packages this CUDA environment lacks", stopped
    assert "model_construction" not in r["plan"]["facts"]


def test_sglang_0517_rocm_packages_missing():
    """SGLang 0.5.17 on a declared MI300X: its config imports the quark MXFP4 scheme, which imports aiter
    on ROCm; in this CUDA environment that is a missing input naming the ROCm kernel packages (what
    to supply), never an adapter error."""
    plan = sglang_on_mi300x("sglang-0.5.17")["plan"]
    assert plan["status"] == "missing-input" and plan["stage"] == "config", (plan["status"], plan["stage"], plan["message"])
    assert "the ROCm kernel packages (aiter" in plan["missing"] and "CUDA build" in plan["missing"], plan["missing"]


def test_rocm_request_validation():
    name = next((n for n in ("vllm-0.33.0", "sglang-0.5.23") if have(n)), None)
    if name is None:
        skip("no engine venv")
    engine = name.split("-")[0]
    bad_gpu = {"engine": engine, "args": [], "gpu": {"vendor": "amd", "declared": True, "count": 8}}
    r, _ = run_adapter(name, engine, bad_gpu, timeout=120)
    assert r["plan"]["status"] == "adapter-error" and "gfx target" in r["plan"]["message"], r["plan"]
    bad_env = {"engine": engine, "args": [], "gpu": MI300X,
               "env": {"HF_TOKEN": "hf_x", "VLLM_CACHE_ROOT": "/x", "VLLM_API_KEY": "sekrit"}}
    r, _ = run_adapter(name, engine, bad_env, timeout=120)
    assert r["plan"]["status"] == "adapter-error" and \
        "HF_TOKEN, VLLM_API_KEY, VLLM_CACHE_ROOT are not an engine setting" in r["plan"]["message"], r["plan"]
    assert "hf_x" not in json.dumps(r) and "sekrit" not in json.dumps(r)
    bad_sms = {"engine": engine, "args": [], "gpu": dict(H100, sm_count="132")}
    r, _ = run_adapter(name, engine, bad_sms, timeout=120)
    assert r["plan"]["status"] == "adapter-error" and "gpu.sm_count must be a positive integer" in \
        r["plan"]["message"], r["plan"]


# ------------------------------------------------------------------------------------------------
# Both: guard, adapter errors

def test_no_network_and_no_stray_writes():
    for key in ("vllm-0.33.0", "vllm-0.25.1", "vllm-0.15.1", "sglang-0.5.23", "sglang-0.5.17"):
        if not have(key):
            continue
        r, info = result_for(key)
        assert r["guard"]["network_attempts"] == [], (key, r["guard"]["network_attempts"])
        assert info["new_files"] == [], (key, info["new_files"][:20])


def test_adapter_error_on_garbage_request():
    name = next((n for n in ("vllm-0.33.0", "sglang-0.5.23", "vllm-0.15.1") if have(n)), None)
    if name is None:
        skip("no engine venv")
    engine = name.split("-")[0]
    r, info = run_adapter(name, engine, "{this is not json", timeout=120)
    assert r is not None, info
    assert r["plan"]["status"] == "adapter-error" and r["plan"]["stage"] == "request", r["plan"]
    r, info = run_adapter(name, engine, {"engine": engine, "args": "--tp 8"}, timeout=120)
    assert r["plan"]["status"] == "adapter-error" and "args must be a list" in r["plan"]["message"]
    # the request on stdin (no --request): same answer
    r, info = run_adapter(name, engine, "[1, 2", timeout=120, argv_mode="stdin")
    assert r["plan"]["status"] == "adapter-error"


def test_adapter_error_on_hang():
    # A --config file that is a FIFO nobody writes: the engine's parser blocks reading it. The runner's
    # timeout kills the process group; the record is an adapter-error naming the phase.
    if not have("sglang-0.5.23"):
        skip("sglang-0.5.23 missing")
    d = tempfile.mkdtemp(prefix="specprobe-fifo-")
    fifo = os.path.join(d, "serve.yaml")
    os.mkfifo(fifo)
    try:
        req = {"engine": "sglang", "args": ["--config", fifo], "model_dir": os.path.join(FIX, "llama-3.1-8b"),
               "gpu": H100, "cells": []}
        r, info = run_adapter("sglang-0.5.23", "sglang", req, timeout=75)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    assert info["killed"], info
    rec = runner_record(r, info)
    assert rec["plan"]["status"] == "adapter-error"
    assert info["phase"] == "plan argparse", info["phase"]


# ------------------------------------------------------------------------------------------------

def main():
    tests = [(n, f) for n, f in sorted(globals().items()) if n.startswith("test_") and callable(f)]
    passed = failed = skipped = 0
    for n, f in tests:
        t0 = time.monotonic()
        try:
            f()
            passed += 1
            print("PASS %s (%.1fs)" % (n, time.monotonic() - t0))
        except Skip as e:
            skipped += 1
            print("SKIP %s: %s" % (n, e))
        except Exception as e:
            failed += 1
            print("FAIL %s: %s: %s" % (n, type(e).__name__, str(e)[:3000]))
    print("timings (engine import + config vs the adapter's total):")
    for t in TIMINGS:
        print("  " + t)
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
