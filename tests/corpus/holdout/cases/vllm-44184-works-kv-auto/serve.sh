#!/usr/bin/env bash
# holdout case vllm-44184-works-kv-auto
# source: https://github.com/vllm-project/vllm/issues/44184
# provenance: DERIVED from the report's (partly) verbatim command block by applying exactly the change the report describes
# works-neighbour of vllm-44184-dsv3-fp8-mtp3-fp8kv-pd-decode: Report scopes the decode-node crash to kv_cache_dtype fp8 / fp8_e4m3 (title: 'when set kv_cache_dtype to fp8 or fp8_e4m3 causes the d node to crash')
vllm serve /models/deepseek-v3-fp8 \
  --tensor-parallel-size 8 \
  --speculative-config.method mtp \
  --speculative-config.num_speculative_tokens 3 \
  --trust-remote-code
# NOT STATED: the report ends its flag list with '--kv-transfer-config' (LMCache, Mooncake backend) without the JSON value
