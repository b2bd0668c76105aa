VLLM_USE_V1=1 vllm serve meta-llama/Llama-3.1-8B-Instruct \
  --kv-cache-dtype turboquant_k8v4 \
  --speculative-config '{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}'
