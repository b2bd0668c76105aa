#!/usr/bin/env bash
# holdout case vllm-52339-dsv4-flashmla-sparse-prefill-161k-h20
# source: https://github.com/vllm-project/vllm/issues/52339
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
vllm serve /models/DeepSeek-V4 \
  --tensor-parallel-size 8
