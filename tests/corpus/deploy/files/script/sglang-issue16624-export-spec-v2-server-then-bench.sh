export SGLANG_ENABLE_SPEC_V2=1
python3 -m sglang.launch_server   --model-path /models/deepseek-32   --trust-remote-code   --tp-size 8 --dp-size 8 --enable-dp-attention   --tool-call-parser deepseekv32   --reasoning-parser deepseek-v3 --port=8000 --host=0.0.0.0 --speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4

python -m sglang.bench_serving --backend sglang --model deepseek-ai/DeepSeek-V3.2 --num-prompts 10 --sharegpt-output-len 100 --profile --port=8000
