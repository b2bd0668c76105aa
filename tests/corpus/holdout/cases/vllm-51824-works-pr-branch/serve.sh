#!/usr/bin/env bash
# holdout case vllm-51824-works-pr-branch
# source: https://github.com/vllm-project/vllm/pull/51824
# provenance: command block as written in the report (host paths -> /models/<name>, secrets -> REDACTED)
# works-neighbour of vllm-51824-dsv2-lite-dp2-deepep-v2-eager: Same command on the fix branch serves; lm_eval gsm8k 0.38 (flexible-extract)
vllm serve deepseek-ai/DeepSeek-V2-Lite \
--data-parallel-size 2 \
--enable-expert-parallel \
--all2all-backend deepep_v2 \
--enforce-eager
