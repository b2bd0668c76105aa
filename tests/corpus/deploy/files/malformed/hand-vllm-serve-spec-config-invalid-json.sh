# hand-made: JSON with an unquoted key and a trailing comma
vllm serve deepseek-ai/DeepSeek-V3.2 \
  --tensor-parallel-size 8 \
  --speculative-config '{method: "mtp", "num_speculative_tokens": 2,}'
