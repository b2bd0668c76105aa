SAFETENSORS_FAST_GPU=1 \
vllm serve $model_name \
    --tensor-parallel-size 8 \
    --gpu-memory-utilization 0.9 \
    --disable-log-requests \
    --no-enable-prefix-caching \
    --trust-remote-code
