#!/usr/bin/env bash
# holdout case sglang-28659-glm52-pipeline-parallel-b300
# source: https://github.com/sgl-project/sglang/issues/28659
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
sglang serve --model-path /models/glm-5.2 \
  --trust-remote-code
# NOT STATED: --pipeline-parallel-size (>1) and --tp-size values
