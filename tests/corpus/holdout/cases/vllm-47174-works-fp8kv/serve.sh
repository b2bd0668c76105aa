#!/usr/bin/env bash
# holdout case vllm-47174-works-fp8kv
# source: https://github.com/vllm-project/vllm/issues/47174
# provenance: command block as written in the report (host paths -> /models/<name>, secrets -> REDACTED)
# works-neighbour of vllm-47174-dsv4-flash-sm120-kv-auto: Workaround in the report: explicit --kv-cache-dtype fp8
vllm serve deepseek-ai/DeepSeek-V4-Flash --kv-cache-dtype fp8
