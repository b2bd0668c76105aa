export VLLM_VIDEO_LOADER_BACKEND=opencv
export CHECKPOINT_PATH="nvidia/NVIDIA-Nemotron-Nano-12B-v2-VL-BF16"
export CUDA_VISIBLE_DEVICES=0

python3 -m vllm.entrypoints.openai.api_server \
   --model ${CHECKPOINT_PATH} \
   --trust-remote-code \
   --media-io-kwargs '{"video": {"fps": 2, "num_frames": 128} }' \
   --max-model-len 131072 \
   --data-parallel-size 1 \
   --port 5566 \
   --allowed-local-media-path / \
   --video-pruning-rate 0.75 \
   --served-model-name "nvidia/NVIDIA-Nemotron-Nano-12B-v2-VL-BF16"
