export VLLM_ROCM_USE_AITER=1
vllm serve /model \
  --served-model-name muse-glimmer \
  --tensor-parallel-size 4 \
  --max-model-len 131072 \
  --enable-auto-tool-choice \
  --tool-call-parser muse_glimmer \
  --reasoning-parser muse_glimmer \
  --generation-config auto \
  --attention-backend ROCM_AITER_FA
