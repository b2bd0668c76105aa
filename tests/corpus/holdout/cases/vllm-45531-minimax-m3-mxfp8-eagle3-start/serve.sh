#!/usr/bin/env bash
# holdout case vllm-45531-minimax-m3-mxfp8-eagle3-start
# source: https://github.com/vllm-project/vllm/issues/45531
# provenance: command block as written in the report (host paths -> /models/<name>, secrets -> REDACTED)
docker run --gpus all \
  --privileged --ipc=host -p 8000:8000 \
  -v /models/hf-cache:/root/.cache/huggingface \
  vllm/vllm-openai:minimax-m3 MiniMaxAI/MiniMax-M3-MXFP8 \
  --block-size 128 \
  --enable-expert-parallel \
  --tensor-parallel-size 8 \
  --tool-call-parser minimax_m3 \
  --enable-auto-tool-choice \
  --reasoning-parser minimax_m3 \
  --speculative-config '{"method": "eagle3", "model": "Inferact/MiniMax-M3-EAGLE3", "num_speculative_tokens": 3, "attention_backend": "FLASH_ATTN"}' \
  --mm-encoder-attn-backend FLASHINFER \
  --mm-processor-cache-type shm \
  --mm-encoder-tp-mode data
