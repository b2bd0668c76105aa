#!/usr/bin/env bash
# holdout case sglang-28312-qwen35-9b-nextn-triton-b300
# source: https://github.com/sgl-project/sglang/issues/28312
# provenance: command block as written in a comment of the report thread (host paths -> /models/<name>)
export SGLANG_ENABLE_SPEC_V2=1
export SGLANG_ENABLE_DFLASH_SPEC_V2=1
export SGLANG_ENABLE_OVERLAP_PLAN_STREAM=1
export CUDA_VISIBLE_DEVICES=3

sglang serve --model-path Qwen/Qwen3.5-9B --trust-remote-code --speculative-algorithm NEXTN --speculative-num-steps 1 --speculative-eagle-topk 1 --speculative-num-draft-tokens 1 --attention-backend triton --linear-attn-prefill-backend triton --linear-attn-decode-backend flashinfer --mamba-scheduler-strategy extra_buffer --mamba-ssm-dtype bfloat16 --tp-size 1 --max-running-requests 64 --mem-fraction-static 0.8 --host 0.0.0.0 --enable-metrics --port 30000
