vllm serve meta-llama/Llama-3.1-8B-Instruct \
  --dtype bfloat16 \
  --no-enable-prefix-caching \
  --trust-remote-code \
  --speculative-config '{"method": "eagle3", "model": "RedHatAI/Llama-3.1-8B-Instruct-speculator.eagle3", "num_speculative_tokens": 2}'
