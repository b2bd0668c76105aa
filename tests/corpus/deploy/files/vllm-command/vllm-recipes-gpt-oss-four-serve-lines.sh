# openai/gpt-oss-20b should run on a single A100
vllm serve openai/gpt-oss-20b

# gpt-oss-120b will fit on a single A100 (80GB), but scaling it to higher TP sizes can help with throughput
vllm serve openai/gpt-oss-120b
vllm serve openai/gpt-oss-120b --tensor-parallel-size 2
vllm serve openai/gpt-oss-120b --tensor-parallel-size 4
