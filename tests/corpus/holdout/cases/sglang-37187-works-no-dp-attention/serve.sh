#!/usr/bin/env bash
# holdout case sglang-37187-works-no-dp-attention
# source: https://github.com/sgl-project/sglang/issues/37187
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
# works-neighbour of sglang-37187-gpt-oss-120b-dp-attention-garbage: Identical command without --enable-dp-attention: GSM8K 124/128, MMLU 110/128
python3 -m sglang.launch_server \
  --model-path openai/gpt-oss-120b \
  --tp 4 --dp 4 --ep 4 \
  --moe-a2a-backend none
