vllm serve org/target -tp 2 --max-model-len 4096 --kv-cache-dtype fp8 --enforce-eager \
  --speculative-config.method eagle3 --speculative-config.model org/target-eagle3 \
  --speculative-config.num_speculative_tokens 3 -cc '{"cudagraph_mode": "PIECEWISE"}' \
  --attention-backend FLASH_ATTN --port 8000
