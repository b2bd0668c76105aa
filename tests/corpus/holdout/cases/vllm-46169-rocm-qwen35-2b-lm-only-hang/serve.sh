#!/usr/bin/env bash
# holdout case vllm-46169-rocm-qwen35-2b-lm-only-hang
# source: https://github.com/vllm-project/vllm/issues/46169
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
vllm serve Qwen/Qwen3.5-2B --port 3456 --language-model-only
