#!/usr/bin/env bash
# holdout case vllm-50851-glm52-fp8-dspark-h200
# source: https://github.com/vllm-project/vllm/issues/50851
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
vllm serve zai-org/GLM-5.2-FP8 \
  --speculative-config '{"method":"dspark","model":"RedHatAI/GLM-5.2-speculator.dspark"}'
