#!/usr/bin/env bash
# holdout case vllm-53320-dsv4-flash-0731-h20-tp8-capture
# source: https://github.com/vllm-project/vllm/issues/53320
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
vllm serve deepseek-ai/DeepSeek-V4-Flash-0731 \
  --tensor-parallel-size 8
