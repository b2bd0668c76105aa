#!/usr/bin/env bash
# holdout case sglang-31093-works-dev-glm52-nvfp4-image
# source: https://github.com/sgl-project/sglang/issues/31093
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
# works-neighbour of sglang-31093-glm52-nvfp4-eagle-b200-tp8: Same model and flags work correctly on the older feature-branch image
python3 -m sglang.launch_server \
  --model-path /models/GLM-5.2-NVFP4 \
  --tp 8 \
  --quantization modelopt_fp4 \
  --speculative-algorithm EAGLE \
  --speculative-num-steps 6 \
  --speculative-eagle-topk 1 \
  --speculative-num-draft-tokens 7
