#!/usr/bin/env bash
# holdout case sglang-26916-gpt-oss-120b-mi355x-aiter
# source: https://github.com/sgl-project/sglang/pull/26916
# provenance: command block as written in the report (host paths -> /models/<name>, secrets -> REDACTED)
export SGLANG_USE_AITER=1
export CUDA_VISIBLE_DEVICES="0,1,2,3,4,5,6,7"
export SAFETENSORS_FAST_GPU="1"
python -m sglang.launch_server \
  --model openai/gpt-oss-120b \
  --host 0.0.0.0 \
  --port 5060 \
  --tp 8 \
  --trust-remote-code \
  --watchdog-timeout 1200 \
  --attention-backend aiter \
  2>&1 | tee lmsysorg_05.12_aiter1_atten_aiter_tp_8_noparsers.log
