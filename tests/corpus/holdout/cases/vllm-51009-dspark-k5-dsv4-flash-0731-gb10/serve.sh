#!/usr/bin/env bash
# holdout case vllm-51009-dspark-k5-dsv4-flash-0731-gb10
# source: https://github.com/vllm-project/vllm/issues/51009
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
vllm serve deepseek-ai/DeepSeek-V4-Flash-0731 \
  --tensor-parallel-size 2 \
  --speculative-config '{"method":"dspark","num_speculative_tokens":5}'
