vllm serve poolside/Laguna-S-2.1 \
  --trust-remote-code \
  --tensor-parallel-size 8 \
  --max-model-len 16384 \
  --enable-auto-tool-choice \
  --tool-call-parser poolside_v1 \
  --reasoning-parser poolside_v1 \
  --speculative-config '{"model":"poolside/Laguna-S-2.1-DFlash","num_speculative_tokens":15,"method":"dflash"}' \
  --moe-backend triton
