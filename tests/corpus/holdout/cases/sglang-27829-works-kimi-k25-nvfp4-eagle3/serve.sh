#!/usr/bin/env bash
# holdout case sglang-27829-works-kimi-k25-nvfp4-eagle3
# source: https://github.com/sgl-project/sglang/issues/27829
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
# works-neighbour of sglang-27829-kimi-k26-nvfp4-eagle3-accept0: Same node, image and prompts: K2.5-NVFP4 + K2.5-Thinking-Eagle3 shows healthy non-zero acceptance
python3 -m sglang.launch_server \
  --model-path nvidia/Kimi-K2.5-NVFP4 \
  --tp 8 \
  --speculative-algorithm EAGLE3 \
  --speculative-draft-model-path nvidia/Kimi-K2.5-Thinking-Eagle3
