              vllm serve /models/gpt-oss-120b
              --gpu-memory-utilization 0.92  --trust-remote-code --max-model-len 65536
              --served-model-name gpt-oss-120b --enable-auto-tool-choice --tensor-parallel 2
              --tool-call-parser openai --reasoning-parser openai_gptoss
              --speculative-config '{"model": "nvidia/gpt-oss-120b-Eagle3", "num_speculative_tokens": 3, "method":"eagle3", "draft_tensor_parallel_size":1}'
