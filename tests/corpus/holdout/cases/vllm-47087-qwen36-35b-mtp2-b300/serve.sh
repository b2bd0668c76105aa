#!/usr/bin/env bash
# holdout case vllm-47087-qwen36-35b-mtp2-b300
# source: https://github.com/vllm-project/vllm/issues/47087
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
vllm serve Qwen/Qwen3.6-35B-A3B \
  --speculative-config '{"method":"mtp","num_speculative_tokens":2}'
