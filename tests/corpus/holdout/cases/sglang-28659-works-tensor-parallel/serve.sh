#!/usr/bin/env bash
# holdout case sglang-28659-works-tensor-parallel
# source: https://github.com/sgl-project/sglang/issues/28659
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
# works-neighbour of sglang-28659-glm52-pipeline-parallel-b300: 'With tensor-parallel, it works ok'
sglang serve --model-path /models/glm-5.2 \
  --trust-remote-code
# tensor parallel only (TP size not stated)
