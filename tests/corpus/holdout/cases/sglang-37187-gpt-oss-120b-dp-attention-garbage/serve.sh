#!/usr/bin/env bash
# holdout case sglang-37187-gpt-oss-120b-dp-attention-garbage
# source: https://github.com/sgl-project/sglang/issues/37187
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
python3 -m sglang.launch_server \
  --model-path openai/gpt-oss-120b \
  --tp 4 --dp 4 --ep 4 \
  --moe-a2a-backend none \
  --enable-dp-attention
