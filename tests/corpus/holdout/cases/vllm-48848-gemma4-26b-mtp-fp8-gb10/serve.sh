#!/usr/bin/env bash
# holdout case vllm-48848-gemma4-26b-mtp-fp8-gb10
# source: https://github.com/vllm-project/vllm/issues/48848
# provenance: command block as written in the report (host paths -> /models/<name>, secrets -> REDACTED)
vllm serve coder3101/gemma-4-26B-A4B-it-heretic \
  --host 0.0.0.0 --port 8001 \
  --max-model-len 131072 --max-num-batched-tokens 2560 --max-num-seqs 2 \
  --gpu-memory-utilization 0.55 --dtype bfloat16 --quantization fp8 \
  --enable-auto-tool-choice --tool-call-parser gemma4 --reasoning-parser gemma4 \
  --chat-template /models/gemma4_chat_template.jinja \
  --speculative-config '{"method":"mtp","model":"google/gemma-4-26B-A4B-it-assistant","num_speculative_tokens":4}'
