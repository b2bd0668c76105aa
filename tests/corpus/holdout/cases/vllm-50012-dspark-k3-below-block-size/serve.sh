#!/usr/bin/env bash
# holdout case vllm-50012-dspark-k3-below-block-size
# source: https://github.com/vllm-project/vllm/issues/50012
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
vllm serve /models/DeepSeek-V4-Flash-DSpark \
  --speculative-config '{"method":"dspark","num_speculative_tokens":3}'
