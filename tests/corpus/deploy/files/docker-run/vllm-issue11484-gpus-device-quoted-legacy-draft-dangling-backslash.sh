docker run --gpus '"device=0,1"' --rm -d --net host \
    --name vllm \
    -v ~/.cache/huggingface:/root/.cache/huggingface \
    -v /data/llm-server/weights:/mnt/weights \
    --env "HUGGING_FACE_HUB_TOKEN=<HF_TOKEN>" \
    --env "TORCH_USE_CUDA_DSA=1" \
    --env "CUDA_LAUNCH_BLOCKING=1" \
    --env "VLLM_RPC_TIMEOUT=100000" \
    --shm-size=15g \
    --ipc host \
    vllm/vllm-openai:latest \
    --model jakiAJK/DeepSeek-R1-Distill-Qwen-7B_GPTQ-int4 \
    --speculative-model Qwen/Qwen2.5-0.5B-Instruct-GPTQ-Int4 \
    --num-speculative-tokens 5 \
    --tensor-parallel-size 1 \
    --pipeline-parallel-size 1 \
    --gpu-memory-utilization 0.98 \
    --max_model_len 1000 \
    --enable-prefix-caching \

docker logs -f vllm
