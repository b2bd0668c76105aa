#!/usr/bin/env bash
# holdout case vllm-52069-mtp-pp4-3090
# source: https://github.com/vllm-project/vllm/issues/52069
# provenance: command block as written in the report (host paths -> /models/<name>, secrets -> REDACTED)
VLLM_USE_V2_MODEL_RUNNER=1 \
vllm serve /models/model-with-mtp-head --pipeline-parallel-size 4 \
  --speculative-config '{"method":"mtp","num_speculative_tokens":3}'
