#!/bin/bash
# hand-made: the --speculative-config JSON opens a single quote that is never closed
vllm serve Qwen/Qwen3-8B \
  --tensor-parallel-size 2 \
  --max-model-len 32768 \
  --speculative-config '{"method": "eagle3", "model": "AngelSlim/Qwen3-8B_eagle3", "num_speculative_tokens": 3} \
  --port 8000
