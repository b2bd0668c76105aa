#!/usr/bin/env bash
# holdout case vllm-48082-works-triton-attn
# source: https://github.com/vllm-project/vllm/issues/48082
# provenance: command block as written in the report (host paths -> /models/<name>, secrets -> REDACTED)
# works-neighbour of vllm-48082-gemma4-31b-nvfp4-mtp6-b200: Forcing TRITON_ATTN initializes and serves; coherent output at ISL 5000/OSL 500, GSM8K 0.657/0.666
vllm serve nvidia/Gemma-4-31B-IT-NVFP4 \
  --quantization modelopt \
  --tensor-parallel-size 1 \
  --attention-backend TRITON_ATTN \
  --speculative-config \
    '{"model":"google/gemma-4-31B-it-assistant","num_speculative_tokens":6}'
