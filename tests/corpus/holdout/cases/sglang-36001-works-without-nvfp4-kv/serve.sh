#!/usr/bin/env bash
# holdout case sglang-36001-works-without-nvfp4-kv
# source: https://github.com/sgl-project/sglang/issues/36001
# provenance: DERIVED from the report's (partly) verbatim command block by applying exactly the change the report describes
# works-neighbour of sglang-36001-nextn-nvfp4-kv-qwen38-27b: Report: the crash is specific to the NVFP4 KV dequant workspace and does not occur with bf16/fp8 KV cache using an otherwise-identical config
sglang serve \
  --model-path Qwen/Qwen3.8-27B-FP8 \
  --context-length 262144 \
  --speculative-algorithm NEXTN \
  --speculative-num-steps 1 \
  --speculative-eagle-topk 1 \
  --speculative-num-draft-tokens 2 \
  --decode-attention-backend trtllm_mha \
  --prefill-attention-backend flashinfer \
  --mem-fraction-static 0.85
