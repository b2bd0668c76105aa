#!/usr/bin/env bash
# holdout case sglang-36528-eagle3-without-draft-path
# source: https://github.com/sgl-project/sglang/issues/36528
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
python3 -m sglang.launch_server \
  --model-path Qwen/Qwen2.5-0.5B-Instruct \
  --speculative-algorithm EAGLE3
