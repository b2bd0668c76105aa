#!/usr/bin/env bash
# holdout case sglang-27951-qwen3-30b-fp8-flashinfer-cutlass-moe
# source: https://github.com/sgl-project/sglang/issues/27951
# provenance: command block as written in the report, up to where the excerpt read ends
python -m sglang.launch_server \
    --model-path Qwen/Qwen3-30B-A3B-Instruct-2507-FP8 \
    --moe-runner-backend flashinfer_cutlass \
    --tensor-parallel-size 1
