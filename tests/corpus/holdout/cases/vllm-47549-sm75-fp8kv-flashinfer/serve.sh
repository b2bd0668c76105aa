#!/usr/bin/env bash
# holdout case vllm-47549-sm75-fp8kv-flashinfer
# source: https://github.com/vllm-project/vllm/issues/47549
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
vllm serve /models/model \
  --kv-cache-dtype fp8 \
  --attention-backend FLASHINFER
