#!/bin/bash
# deploy script
export HF_HOME=/data/hf
MODEL=meta-llama/Llama-3.1-8B-Instruct
VLLM_ATTENTION_BACKEND=FLASH_ATTN CUDA_VISIBLE_DEVICES=0,1 vllm serve $MODEL \
  -tp 2 \
  --speculative-config '{"model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3}' \
  -cc.cudagraph_mode=FULL_DECODE_ONLY \
  --max-model-len=1k \
  --no-enable-prefix-caching \
  --gpu-memory-utilization 0.85 --port 8000 2>&1 | tee serve.log   # trailing comment
