python -m sglang.launch_server --model-path <DeepSeek-V4-Flash> --tp 2 \
  --speculative-algorithm NEXTN --speculative-num-steps 2 \
  --speculative-eagle-topk 1 --speculative-num-draft-tokens 3
