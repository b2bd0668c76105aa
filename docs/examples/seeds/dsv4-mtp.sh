#!/usr/bin/env bash
# Deploy script: DeepSeek-V4-Flash with MTP on 8 GPUs.
export VLLM_LOGGING_LEVEL=INFO
vllm serve deepseek-ai/DeepSeek-V4-Flash \
  --tensor-parallel-size 8 \
  --kv-cache-dtype fp8 \
  --block-size 256 \
  --max-model-len 65536 \
  --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}'
