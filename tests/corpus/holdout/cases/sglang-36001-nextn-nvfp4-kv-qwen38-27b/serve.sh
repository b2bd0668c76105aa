#!/usr/bin/env bash
# holdout case sglang-36001-nextn-nvfp4-kv-qwen38-27b
# source: https://github.com/sgl-project/sglang/issues/36001
# provenance: command block as written in a comment of the report thread (host paths -> /models/<name>)
sglang serve \
  --model-path Qwen/Qwen3.8-27B-FP8 \
  --context-length 262144 \
  --kv-cache-dtype nvfp4 \
  --speculative-algorithm NEXTN \
  --speculative-num-steps 1 \
  --speculative-eagle-topk 1 \
  --speculative-num-draft-tokens 2 \
  --decode-attention-backend trtllm_mha \
  --prefill-attention-backend flashinfer \
  --mem-fraction-static 0.85
