#!/usr/bin/env bash
# holdout case vllm-47087-works-no-spec
# source: https://github.com/vllm-project/vllm/issues/47087
# provenance: RECONSTRUCTED from the configuration the report states in prose/bullets/logs (no command block in the excerpt read)
# works-neighbour of vllm-47087-qwen36-35b-mtp2-b300: Without --speculative-config the degeneration does not occur (reporter's workaround)
vllm serve Qwen/Qwen3.6-35B-A3B
