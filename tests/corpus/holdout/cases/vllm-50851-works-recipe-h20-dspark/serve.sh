#!/usr/bin/env bash
# holdout case vllm-50851-works-recipe-h20-dspark
# source: https://github.com/vllm-project/recipes/blob/a2b3386100b2120ec65316c3d0064f81bd7858a2/models/zai-org/GLM-5.2.yaml
# provenance: command block as written in the recipe file at the cited commit (host paths -> /models/<name>, secrets -> REDACTED)
# works-neighbour of vllm-50851-glm52-fp8-dspark-h200: vLLM recipe 'FP8 on 8xH20 (dspark with best practices)': command followed by 'tps up to 70+ for single request'
vllm serve zai-org/GLM-5.2-FP8 \
   --tensor-parallel-size 8 \
   --tool-call-parser glm47 \
   --reasoning-parser glm45 \
   --enable-auto-tool-choice \
   --max-model-len 200000 \
   --max-num-seqs 16 \
   --max-num-batched-tokens 32768 \
   --speculative-config '{"model": "RedHatAI/GLM-5.2-speculator.dspark","num_speculative_tokens": 7,"method": "dspark"}' \
   --served-model-name glm-5.2-fp8
# NOT STATED: the vLLM version/image used for the measured run
