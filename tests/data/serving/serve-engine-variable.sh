#!/usr/bin/env bash
# The engine's executable in a variable the script is given (a public launcher's form:
# github.com/sridhar1804/local-ai, scripts at d4412cc): "$VLLM" serve ...
MODEL=microsoft/Phi-3-mini-4k-instruct
"$VLLM" serve "$MODEL" \
  --dtype float16 \
  --max-model-len 4096 \
  --gpu-memory-utilization 0.85 >> "$LOG" 2>&1 &
"$RUNNER" serve other-model
