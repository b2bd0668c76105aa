#!/usr/bin/env bash
# holdout case vllm-46074-glm52-fp8-mtp-maxlen200k-h200
# source: https://github.com/vllm-project/vllm/issues/46074
# provenance: flags as listed in a comment up to a truncation; the truncated flag is completed minimally
vllm serve zai-org/GLM-5.2-FP8 \
  --tensor-parallel-size 8 --kv-cache-dtype fp8 --max-model-len 200000 \
  --speculative-config.method mtp
