# hand-made: the image name was deleted; the first vLLM flag follows the docker options directly
docker run --runtime nvidia --gpus all \
    -v /models:/models \
    -p 8000:8000 \
    --ipc=host \
    --model /models/Mistral-7B-Instruct-v0.3 \
    --tensor-parallel-size 2
