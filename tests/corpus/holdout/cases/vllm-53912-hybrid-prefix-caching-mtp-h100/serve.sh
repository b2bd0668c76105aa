#!/usr/bin/env bash
# holdout case vllm-53912-hybrid-prefix-caching-mtp-h100
# source: https://github.com/vllm-project/vllm/issues/53912
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
vllm serve /models/hybrid-gdn-model-with-mtp \
  --enable-prefix-caching \
  --speculative-config '{"method":"mtp"}'
