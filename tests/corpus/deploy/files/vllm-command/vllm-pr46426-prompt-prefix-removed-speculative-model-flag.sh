(yewentao256) [yewentao256@ip-172-31-44-248 ~]$ python -m vllm.entrypoints.openai.api_server \
    --model google/gemma-4-31b-it \
    --speculative-model melcheikh/gemma-4-31B-it-qat-assistant-NVFP4-Blackwell \
    --num-speculative-tokens 4 \
    --tensor-parallel-size 2
