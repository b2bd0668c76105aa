#!/usr/bin/env bash
# holdout case sglang-32893-glm52-w4afp8-eagle-tp8
# source: https://github.com/sgl-project/sglang/issues/32893
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
python3 -m sglang.launch_server \
  --model-path /models/GLM-5.2-W4AFP8 \
  --tp 8 \
  --speculative-algorithm EAGLE
