#!/usr/bin/env bash
# holdout case sglang-30763-qwen36-eagle3-accept-collapse-32k
# source: https://github.com/sgl-project/sglang/issues/30763
# provenance: command block as written in the report, up to where the excerpt read ends
python3 -m sglang.launch_server \
    --port 8099 \
    --random-seed 42 \
    --model-path qwen3.6-35b-a3b \
    --speculative-algorithm EAGLE3
# (--speculative-draft-model-path and the remaining flags are cut off in the excerpt read)
