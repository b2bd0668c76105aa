vllm serve google/gemma-4-E4B-it \
  --max-model-len <n_of_tokens> # up to 131072
