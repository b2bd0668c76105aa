vllm serve x \
  --speculative-config '{"method": "mtp"}
