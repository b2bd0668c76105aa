#!/usr/bin/env bash
# holdout case vllm-53320-works-v0.25.0
# source: https://github.com/vllm-project/vllm/issues/53320
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
# works-neighbour of vllm-53320-dsv4-flash-0731-h20-tp8-capture: Report: v0.25.0 starts fine on the same 8x H20 / TP=8 setup; the startup crash appears after upgrading to v0.27.1
vllm serve deepseek-ai/DeepSeek-V4-Flash-0731 \
  --tensor-parallel-size 8
