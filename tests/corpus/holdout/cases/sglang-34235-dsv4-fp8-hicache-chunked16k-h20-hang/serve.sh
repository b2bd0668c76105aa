#!/usr/bin/env bash
# holdout case sglang-34235-dsv4-fp8-hicache-chunked16k-h20-hang
# source: https://github.com/sgl-project/sglang/issues/34235
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
python3 -m sglang.launch_server \
  --model-path /models/DeepSeek-V4-FP8 \
  --enable-hierarchical-cache \
  --chunked-prefill-size 16384
