#!/usr/bin/env bash
# holdout case sglang-30209-works-spec-moe-triton
# source: https://github.com/sgl-project/sglang/pull/30210
# provenance: DERIVED from the report's (partly) verbatim command block by applying exactly the change the report describes
# works-neighbour of sglang-30209-glm52-fp4-eagle-trtllm-bgemm: Fix PR production A/B (GLM-5.2-NVFP4, 8xB200): flashinfer_trtllm draft-MoE arm crashed 5 times in 5h, triton draft-MoE arm 0 restarts and 24h+ crash-free
python3 -m sglang.launch_server \
  --model-path /models/GLM-5.2-FP4 \
  --quantization modelopt_fp4 \
  --speculative-algorithm EAGLE \
  --speculative-moe-runner-backend triton
# NOT STATED: sglang version, --tp (8x B200 per the PR) and the EAGLE step/topk/draft-token values
