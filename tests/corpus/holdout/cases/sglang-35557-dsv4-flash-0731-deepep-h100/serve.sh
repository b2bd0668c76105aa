#!/usr/bin/env bash
# holdout case sglang-35557-dsv4-flash-0731-deepep-h100
# source: https://github.com/sgl-project/sglang/issues/35557
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
python3 -m sglang.launch_server \
  --model-path deepseek-ai/DeepSeek-V4-Flash-0731 \
  --data-parallel-size 4 \
  --enable-expert-parallel \
  --kv-cache-dtype fp8
# reporter also names --moe-a2a-backend deepep as the EP path
