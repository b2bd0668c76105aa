#!/usr/bin/env bash
# holdout case vllm-54180-minimax-m3-eagle3-rocm-aiter-fa
# source: https://github.com/vllm-project/vllm/pull/54180
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
VLLM_ROCM_USE_AITER=1 \
vllm serve /models/MiniMax-M3 \
  --attention-backend ROCM_AITER_FA \
  --speculative-config '{"method":"eagle3","model":"/models/MiniMax-M3-EAGLE3"}'
