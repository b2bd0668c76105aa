#!/usr/bin/env bash
# holdout case sglang-30209-glm52-fp4-eagle-trtllm-bgemm
# source: https://github.com/sgl-project/sglang/issues/30209
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
python3 -m sglang.launch_server \
  --model-path /models/GLM-5.2-FP4 \
  --quantization modelopt_fp4 \
  --speculative-algorithm EAGLE
