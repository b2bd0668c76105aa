#!/usr/bin/env bash
# holdout case sglang-36569-mxfp4-unsupported-moe-runner-backend
# source: https://github.com/sgl-project/sglang/issues/36569
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
python3 -m sglang.launch_server \
  --model-path /models/mxfp4-moe-model \
  --moe-runner-backend flashinfer_trtllm
