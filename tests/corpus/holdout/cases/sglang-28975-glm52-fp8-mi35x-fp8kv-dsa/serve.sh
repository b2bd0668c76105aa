#!/usr/bin/env bash
# holdout case sglang-28975-glm52-fp8-mi35x-fp8kv-dsa
# source: https://github.com/sgl-project/sglang/pull/28975
# provenance: command block as written in a comment of the report thread (host paths -> /models/<name>)
export SGLANG_USE_AITER="1"
export CUDA_VISIBLE_DEVICES="0,1,2,3,4,5,6,7"
export SAFETENSORS_FAST_GPU="1"
export SGLANG_DSA_TRITON_PREFILL="1"
python -m sglang.launch_server \
  --model zai-org/GLM-5.2-FP8 \
  --host 0.0.0.0 \
  --port 5060 \
  --tp-size 8 \
  --served-model-name "glm-5.2-fp8" \
  --trust-remote-code \
  --watchdog-timeout 12000 \
  --attention-backend dsa \
  --dsa-prefill-backend aiter \
  --dsa-decode-backend tilelang \
  --reasoning-parser glm45 \
  --tool-call-parser glm47 \
  --disable-radix-cache \
  --kv-cache-dtype fp8_e4m3 \
    2>&1 | tee serve.log
