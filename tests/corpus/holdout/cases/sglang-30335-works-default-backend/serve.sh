#!/usr/bin/env bash
# holdout case sglang-30335-works-default-backend
# source: https://github.com/sgl-project/sglang/issues/30335
# provenance: DERIVED from the report's (partly) verbatim command block by applying exactly the change the report describes
# works-neighbour of sglang-30335-qwen3-vl-2b-pp4-triton: Report scopes the CUDA failure to forced --attention-backend triton
sglang serve --model-path Qwen/Qwen3-VL-2B-Thinking --pp-size 4 --device cuda
