#!/usr/bin/env bash
# holdout case vllm-50331-qwen36-35b-fp8-gb10-fp8kv
# source: https://github.com/vllm-project/vllm/issues/50331
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
vllm serve Qwen/Qwen3.6-35B-A3B-FP8 \
  --kv-cache-dtype fp8 \
  --enforce-eager \
  --tensor-parallel-size 1
