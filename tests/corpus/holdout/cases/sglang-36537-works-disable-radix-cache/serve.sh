#!/usr/bin/env bash
# holdout case sglang-36537-works-disable-radix-cache
# source: https://github.com/sgl-project/sglang/issues/36537
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
# works-neighbour of sglang-36537-qwen38-flash-next-nextn-radix-loop: --disable-radix-cache: 0% broken samples (27% lower single-stream throughput)
sglang serve --model-path /models/Qwen3.8-Flash-Next \
  --tool-call-parser qwen3_coder \
  --speculative-algorithm NEXTN \
  --disable-radix-cache
