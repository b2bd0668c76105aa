#!/usr/bin/env bash
# holdout case vllm-52107-nemotron35-lightning-mtp-xpu
# source: https://github.com/vllm-project/vllm/issues/52107
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
vllm serve SergiiioB/Nemotron-3.5-Lightning-30B-A3B-GPTQ-INT4-G64-sym \
  --speculative-config '{"method":"mtp"}'
