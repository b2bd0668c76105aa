#!/usr/bin/env bash
# holdout case vllm-49694-ngram-gpu-structured-async
# source: https://github.com/vllm-project/vllm/issues/49694
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
vllm serve Qwen/Qwen3.6-35B-A3B-FP8 \
  --served-model-name qwen3.6-35b-a3b-fp8 \
  --async-scheduling \
  --speculative-config '{"method":"ngram_gpu"}'
