#!/usr/bin/env bash
# holdout case vllm-47669-dsr1-tp8-ep-mtp3-eager-h200
# source: https://github.com/vllm-project/vllm/pull/47669
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
vllm serve deepseek-ai/DeepSeek-R1 \
  --tensor-parallel-size 8 \
  --enable-expert-parallel \
  --speculative-config '{"method":"mtp","num_speculative_tokens":3}' \
  --enforce-eager
