MOONCAKE_GLOBAL_SEGMENT_SIZE=550gb \
MOONCAKE_MASTER=master:50051 \
MOONCAKE_TE_META_DATA_SERVER=master:8080/metadata \
python3 -m sglang.launch_server \
    --enable-metrics --log-level-http=warning --enable-cache-report \
    --model=/models/Qwen3.5-397B-A17B-FP8 --served-model-name=Qwen3.5-397B-A17B-FP8 \
    --host=0.0.0.0 --port=8000  \
    --tp=8 --tool-call-parser=qwen3_coder \
    --speculative-algorithm=EAGLE --speculative-num-steps=3 --speculative-eagle-topk=1 --speculative-num-draft-tokens=4 \
    --mem-fraction-static=0.8 --mamba-full-memory-ratio=0.3 \
    --mamba-scheduler-strategy=extra_buffer --page-size=64 --attention-backend=fa3 \
    --enable-hierarchical-cache --hicache-storage-prefetch-policy=timeout --hicache-storage-backend=mooncake \
    --hicache-io-backend=direct --hicache-mem-layout=page_first_direct --hicache-write-policy=write_through \
    --kv-cache-dtype=fp8_e4m3 --enable-flashinfer-allreduce-fusion --enable-tokenizer-batch-encode \
    --model-loader-extra-config="{\"enable_multithread_load\":\"true\",\"num_threads\":64}" --weight-loader-prefetch-checkpoints --weight-loader-prefetch-num-threads=8
