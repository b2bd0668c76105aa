docker run -itd --name diffusiongemma \
    --ipc=host \
    --network host \
    --gpus all \
    -v ~/.cache/huggingface:/root/.cache/huggingface \
    vllm/vllm-openai:gemma \
        --model google/diffusiongemma-26B-A4B-it \
        --max-model-len 262144 \
        --max-num-seqs 4 \
        --gpu-memory-utilization 0.85 \
        --generation-config vllm \
        --enable-chunked-prefill \
        --host 0.0.0.0 \
        --port 8000
