#!/usr/bin/env bash
# holdout case vllm-51824-dsv2-lite-dp2-deepep-v2-eager
# source: https://github.com/vllm-project/vllm/pull/51824
# provenance: command block as written in the report (host paths -> /models/<name>, secrets -> REDACTED)
vllm serve deepseek-ai/DeepSeek-V2-Lite \
--data-parallel-size 2 \
--enable-expert-parallel \
--all2all-backend deepep_v2 \
--enforce-eager
