vllm serve RedHatAI/Qwen3-32B-speculator.eagle3 \
    --dtype auto \
    -tp 2 \
    --max_model_len 36000 \
    --gpu-memory-utilization 0.7 \
    --enable-prefix-caching \
    --dtype bfloat16 \
    --port 30000
