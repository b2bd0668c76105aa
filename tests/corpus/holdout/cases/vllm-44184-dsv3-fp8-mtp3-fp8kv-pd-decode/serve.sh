#!/usr/bin/env bash
# holdout case vllm-44184-dsv3-fp8-mtp3-fp8kv-pd-decode
# source: https://github.com/vllm-project/vllm/issues/44184
# provenance: flags as listed in the report; the launcher line is added
vllm serve /models/deepseek-v3-fp8 \
  --tensor-parallel-size 8 \
  --speculative-config.method mtp \
  --speculative-config.num_speculative_tokens 3 \
  --trust-remote-code \
  --kv-cache-dtype fp8
# NOT STATED: the report ends its flag list with '--kv-transfer-config' (LMCache, Mooncake backend) without the JSON value
