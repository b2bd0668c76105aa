#!/usr/bin/env bash
# holdout case vllm-49475-glm52-nvfp4-dspark-b200
# source: https://github.com/vllm-project/vllm/issues/49475
# provenance: RECONSTRUCTED from the non-default args logged in the report
vllm serve nvidia/GLM-5.2-NVFP4 \
  --trust-remote-code \
  --tensor-parallel-size 8 \
  --enable-expert-parallel \
  --kv-cache-dtype fp8_e4m3 \
  --enable-auto-tool-choice --tool-call-parser glm47 --reasoning-parser glm45 \
  --host 0.0.0.0 \
  --spec-method dspark --spec-model RedHatAI/GLM-5.2-speculator.dspark --spec-tokens 7
