#!/usr/bin/env bash
# holdout case sglang-32426-ornith-35b-nvfp4-garbled
# source: https://github.com/sgl-project/sglang/issues/32426
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
python3 -m sglang.launch_server \
  --model-path sakamakismile/Ornith-1.0-35B-NVFP4
