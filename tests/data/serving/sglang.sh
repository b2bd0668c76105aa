SGLANG_ENABLE_SPEC_V2=1 python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 \
  --tp 8 --dp-size 2 --enable-dp-attention \
  --speculative-algorithm NEXTN --speculative-num-steps 3 --speculative-eagle-topk 1 \
  --speculative-num-draft-tokens 4 --attention-backend flashinfer --kv-cache-dtype fp8_e4m3 \
  --page-size 64 --context-length 32768 --max-running-requests 64 --disable-cuda-graph \
  --mem-fraction-static 0.8 --quantization fp8 --host 0.0.0.0
