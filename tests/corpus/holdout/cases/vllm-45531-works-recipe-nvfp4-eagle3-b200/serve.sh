#!/usr/bin/env bash
# holdout case vllm-45531-works-recipe-nvfp4-eagle3-b200
# source: https://github.com/vllm-project/recipes/blob/5489e6a9a856eb5f543acb8e4732afa459e7981b/models/MiniMaxAI/MiniMax-M3.yaml
# provenance: command block as written in the recipe file at the cited commit (host paths -> /models/<name>, secrets -> REDACTED)
# works-neighbour of vllm-45531-minimax-m3-mxfp8-eagle3-start: vLLM recipe: 'the validated B200 benchmark runs the NVFP4 target against the Inferact/MiniMax-M3-EAGLE3 draft head (3 speculative tokens)'
VLLM_FLOAT32_MATMUL_PRECISION=high \
  vllm serve nvidia/MiniMax-M3-NVFP4 \
  --tensor-parallel-size 8 \
  --trust-remote-code \
  --block-size 128 \
  --language-model-only \
  --speculative-config '{"method": "eagle3", "model": "Inferact/MiniMax-M3-EAGLE3", "num_speculative_tokens": 3, "attention_backend": "FLASH_ATTN"}'
