#!/usr/bin/env bash
# holdout case sglang-32226-gpt-oss-120b-eagle3-v3
# source: https://github.com/sgl-project/sglang/issues/32226
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
python3 -m sglang.launch_server \
  --model-path openai/gpt-oss-120b \
  --speculative-algorithm EAGLE3 \
  --speculative-draft-model-path nvidia/gpt-oss-120b-Eagle3-v3
