docker run --gpus all -e VLLM_USE_V1=1 --env=HF_TOKEN=x -p 8000:8000 vllm/vllm-openai:latest \
    vllm serve "Qwen/Qwen3-30B-A3B" --speculative-config.method mtp \
    --speculative-config.num_speculative_tokens 2 -ac.backend flashinfer -O3 --trust-remote-code
