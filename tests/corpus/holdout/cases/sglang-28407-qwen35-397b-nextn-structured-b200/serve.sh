#!/usr/bin/env bash
# holdout case sglang-28407-qwen35-397b-nextn-structured-b200
# source: https://github.com/sgl-project/sglang/issues/28407
# provenance: command block as written in the report, up to where the excerpt read ends
python -m sglang.launch_server \
  --model-path Qwen/Qwen3.5-397B-A17B-FP8 --tp 8 \
  --reasoning-parser qwen3 --tool-call-parser qwen3_coder \
  --speculative-algorithm NEXTN --speculative-num-steps 3
# (remaining flags not visible in the excerpt read)
