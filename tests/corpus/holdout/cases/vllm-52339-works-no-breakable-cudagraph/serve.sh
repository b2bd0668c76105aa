#!/usr/bin/env bash
# holdout case vllm-52339-works-no-breakable-cudagraph
# source: https://github.com/vllm-project/vllm/issues/52339
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
# works-neighbour of vllm-52339-dsv4-flashmla-sparse-prefill-161k-h20: With VLLM_USE_BREAKABLE_CUDAGRAPH=0: 52K/105K/210K-token prompts pass, 0 restarts, 0 CUDA errors
VLLM_USE_BREAKABLE_CUDAGRAPH=0 \
vllm serve /models/DeepSeek-V4 \
  --tensor-parallel-size 8
