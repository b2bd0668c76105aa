#!/usr/bin/env bash
# holdout case sglang-31249-qwen36-27b-fp8-mtp-warmup
# source: https://github.com/sgl-project/sglang/issues/31249
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
python3 -m sglang.launch_server \
  --model-path Qwen/Qwen3.6-27B-FP8 \
  --speculative-algorithm NEXTN
# NOT STATED: --tp-size (>=2; traceback shows rank TP1) and the speculative step/topk/draft-token values
