#!/usr/bin/env bash
# holdout case sglang-28525-glm52-fp8-tp8-cp8-pp2-h20
# source: https://github.com/sgl-project/sglang/issues/28525
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
python3 -m sglang.launch_server \
  --model-path zai-org/GLM-5.2-FP8 \
  --tp-size 8 \
  --pp-size 2
# NOT STATED: the context-parallel flag (CP8) and multi-node flags
