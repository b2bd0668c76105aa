vllm serve stepfun-ai/Step-3.7-Flash \
  --served-model-name step3p7-flash-bf16 \
  --tensor-parallel-size 8 \
  --enable-expert-parallel \
  --disable-cascade-attn \
  --reasoning-parser step3p5 \
  --enable-auto-tool-choice \
  --tool-call-parser step3p5 \
  --speculative-config '{"method": "mtp", "num_speculative_tokens": 3}' \
  --trust-remote-code
