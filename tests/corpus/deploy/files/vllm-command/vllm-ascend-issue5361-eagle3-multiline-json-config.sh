vllm serve /models/Meta-Llama-3-1-8B-Instruct \
  --tensor-parallel-size 1 \
  --max_model_len 2048 \
  --max-num-batched-tokens 2048 \
  --dtype bfloat16 \
  --speculative-config '{
    "model": "/models/EAGLE3-LLaMA3_1-Instruct-8B",
    "num_speculative_tokens": 2,
    "method": "eagle3",
    "draft_tensor_parallel_size": 1
  }'
