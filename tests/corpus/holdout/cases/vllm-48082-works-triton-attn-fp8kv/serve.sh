#!/usr/bin/env bash
# holdout case vllm-48082-works-triton-attn-fp8kv
# source: https://github.com/vllm-project/vllm/issues/48082
# provenance: DERIVED from the report's (partly) verbatim command block by applying exactly the change the report describes
# works-neighbour of vllm-48082-gemma4-31b-nvfp4-mtp6-b200: Report: forcing Triton 'allows the model to initialize and serve with FP8 or BF16 KV cache'
vllm serve nvidia/Gemma-4-31B-IT-NVFP4 \
  --quantization modelopt \
  --tensor-parallel-size 1 \
  --attention-backend TRITON_ATTN \
  --kv-cache-dtype fp8 \
  --speculative-config \
    '{"model":"google/gemma-4-31B-it-assistant","num_speculative_tokens":6}'
