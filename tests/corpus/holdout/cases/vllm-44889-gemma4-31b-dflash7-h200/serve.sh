#!/usr/bin/env bash
# holdout case vllm-44889-gemma4-31b-dflash7-h200
# source: https://github.com/vllm-project/vllm/issues/44889
# provenance: flags as listed in the report; the launcher line is added
vllm serve google/gemma-4-31B-it \
  --no-async-scheduling \
  --speculative-config='{"model":"RedHatAI/gemma-4-31B-it-speculator.dflash","num_speculative_tokens":7,"method":"dflash"}' \
  --gpu-memory-utilization=0.92 \
  --tensor-parallel-size=1 \
  --enable-chunked-prefill
