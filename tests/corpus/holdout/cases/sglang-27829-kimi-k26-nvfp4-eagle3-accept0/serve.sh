#!/usr/bin/env bash
# holdout case sglang-27829-kimi-k26-nvfp4-eagle3-accept0
# source: https://github.com/sgl-project/sglang/issues/27829
# provenance: command block as written in the report, up to where the excerpt read ends
python3 -m sglang.launch_server \
  --model-path nvidia/Kimi-K2.6-NVFP4 \
  --tp 8 \
  --speculative-algorithm EAGLE3 \
  --speculative-draft-model-path nvidia/Kimi-K2.6-Eagle3
