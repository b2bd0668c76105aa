#!/usr/bin/env bash
# holdout case vllm-51970-dsv4-flash-full-cudagraph-ima
# source: https://github.com/vllm-project/vllm/issues/51970
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
vllm serve deepseek-ai/DeepSeek-V4-Flash
