#!/usr/bin/env bash
# holdout case sglang-28407-works-no-spec
# source: https://github.com/sgl-project/sglang/issues/28407
# provenance: DERIVED from the report's (partly) verbatim command block by applying exactly the change the report describes
# works-neighbour of sglang-28407-qwen35-397b-nextn-structured-b200: Without speculative decoding, structured output works fine
python -m sglang.launch_server \
  --model-path Qwen/Qwen3.5-397B-A17B-FP8 --tp 8 \
  --reasoning-parser qwen3 --tool-call-parser qwen3_coder
