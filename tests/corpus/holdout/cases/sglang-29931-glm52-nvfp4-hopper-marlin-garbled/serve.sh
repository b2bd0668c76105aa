#!/usr/bin/env bash
# holdout case sglang-29931-glm52-nvfp4-hopper-marlin-garbled
# source: https://github.com/sgl-project/sglang/pull/29931
# provenance: command block as written in the report (host paths -> /models/<name>, secrets -> REDACTED)
sglang serve \
  --model-path /models/GLM-5.2-NVFP4 \
  --tp-size 4 \
  --quantization modelopt_fp4 \
  --tool-call-parser glm47 \
  --reasoning-parser glm45 \
  --trust-remote-code \
  --kv-cache-dtype fp8-e4m3 \
  --enable-dp-attention
