#!/usr/bin/env bash
# holdout case sglang-31249-works-cookbook-h200-fp8-eagle
# source: https://github.com/sgl-project/sglang/blob/ec170fd9e5e8872979d6acc0cff93ad0fa54d4a6/docs/src/snippets/configs/Qwen/qwen3.6.jsx
# provenance: flags as listed in the verified cookbook cell at the cited commit; the launcher line (`sglang serve`) is the cookbook engine's, placeholders take the config's defaults
# works-neighbour of sglang-31249-qwen36-27b-fp8-mtp-warmup: SGLang cookbook cell (h200, 27b, fp8, low-latency) marked verified: true: MTP via EAGLE 3-1-4 with the mamba extra_buffer radix cache
sglang serve \
  --model-path Qwen/Qwen3.6-27B-FP8 \
  --speculative-algorithm EAGLE \
  --speculative-num-steps 3 \
  --speculative-eagle-topk 1 \
  --speculative-num-draft-tokens 4 \
  --mamba-radix-cache-strategy extra_buffer \
  --mem-fraction-static 0.8 \
  --host 0.0.0.0 \
  --port 30000
