AITER_ONLINE_TUNE=1 SGLANG_AITER_MLA_PERSIST=1 SGLANG_USE_AITER=1 SAFETENSORS_FAST_GPU=1 \
python3 -m sglang.launch_server \
    --model zai-org/GLM-4.7-FP8 \
    --tp 8 \
    --enable-metrics \
    --model-loader-extra-config '{"enable_multithread_load": true, "num_threads": 8}' \
    --trust-remote-code \
    --speculative-algorithm SUFFIX \
    --speculative-num-draft-tokens 4 \
    --speculative-suffix-max-spec-factor 2.0 \
    --speculative-suffix-min-token-prob 0.2
