#!/usr/bin/env bash
# holdout case sglang-30335-qwen3-vl-2b-pp4-triton
# source: https://github.com/sgl-project/sglang/issues/30335
# provenance: command block as written in the report (host paths -> /models/<name>, secrets -> REDACTED)
sglang serve --model-path Qwen/Qwen3-VL-2B-Thinking --pp-size 4 --attention-backend triton --device cuda
