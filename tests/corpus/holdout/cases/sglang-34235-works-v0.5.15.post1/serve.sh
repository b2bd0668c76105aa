#!/usr/bin/env bash
# holdout case sglang-34235-works-v0.5.15.post1
# source: https://github.com/sgl-project/sglang/issues/34235
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
# works-neighbour of sglang-34235-dsv4-fp8-hicache-chunked16k-h20-hang: Rolling back to 0.5.15.post1 with hicache enabled runs stably (commenter)
python3 -m sglang.launch_server \
  --model-path /models/DeepSeek-V4-FP8 \
  --enable-hierarchical-cache \
  --chunked-prefill-size 16384
