#!/usr/bin/env bash
# holdout case vllm-44550-glm51-fp8-bf16kv-h200
# source: https://github.com/vllm-project/vllm/issues/44550
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
vllm serve zai-org/GLM-5.1-FP8 \
  --kv-cache-dtype bfloat16
# NOT STATED in the excerpt read: parallel flags (8x H200 used)
