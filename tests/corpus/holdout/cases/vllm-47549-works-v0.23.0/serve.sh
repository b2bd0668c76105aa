#!/usr/bin/env bash
# holdout case vllm-47549-works-v0.23.0
# source: https://github.com/vllm-project/vllm/issues/47549
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
# works-neighbour of vllm-47549-sm75-fp8kv-flashinfer: Reported as a regression in v0.24.0; a commenter points to v0.23.0 as the working version
vllm serve /models/model \
  --kv-cache-dtype fp8 \
  --attention-backend FLASHINFER
