#!/bin/sh
vllm serve ./gqa16-mtp --kv-cache-dtype fp8 --attention-backend FLASHINFER \
    --speculative-config.method mtp --speculative-config.num_speculative_tokens 2
