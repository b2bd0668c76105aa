# Times the installed DeepGEMM's paged MQA logits kernel at the shape specprobe's MQA benchmark
# uses, so both can be compared in one run on the same GPU (docs/perf/kernels.md#deepgemm,
# probe_run_device.sh).
# Shape (docs/perf/kernels.md#deepgemm): B requests of context L (every request full),
# H=64, D=128, block_kv 64, fp32 weights and logits, context_lens[b, i] = L - next_n + i + 1;
# median of CUDA-event intervals over queued calls after warm-ups. Roofline bytes: the KV blocks
# read (values + per-token fp32 scales) + logits written + q + weights, over the device-to-device
# copy ceiling measured here (2 GiB, bytes read + written). A next_n the library rejects prints
# its own assertion line. Needs torch and an importable deep_gemm; standard library otherwise.
# Usage: python3 bench/deepgemm_mqa_bench.py [--batch 256] [--context 8192] [--next-n 1,2,3,4]
import argparse
import statistics
import sys


def copy_ceiling(torch, nbytes=2 << 30):
    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda").fill_(1)
    dst = torch.empty_like(src)
    for _ in range(2):
        dst.copy_(src)
    times = []
    for _ in range(10):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        dst.copy_(src)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return 2.0 * nbytes / (statistics.median(times) * 1e-3)


def fused_kv(torch, num_blocks, block_kv, d):
    kv = torch.randn((num_blocks, block_kv, d), device="cuda", dtype=torch.bfloat16)
    sf = kv.abs().float().amax(dim=2, keepdim=True).clamp(1e-4) / 448.0
    vals = (kv * (1.0 / sf)).to(torch.float8_e4m3fn)
    fused = torch.empty((num_blocks, block_kv * (d + 4)), device="cuda", dtype=torch.uint8)
    fused[:, : block_kv * d] = vals.view(num_blocks, block_kv * d).view(torch.uint8)
    fused[:, block_kv * d:] = sf.view(num_blocks, block_kv).view(torch.uint8)
    return fused.view(num_blocks, block_kv, 1, d + 4), vals, sf


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--context", type=int, default=8192)
    ap.add_argument("--heads", type=int, default=64)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--block-kv", type=int, default=64)
    ap.add_argument("--next-n", default="1,2,3,4")
    ap.add_argument("--reps", type=int, default=50)
    a = ap.parse_args()
    import torch
    try:
        import deep_gemm as dg
    except Exception as e:  # noqa: BLE001
        print("deep_gemm not importable: %s" % str(e).splitlines()[-1] if str(e) else type(e).__name__)
        return 2
    B, L, H, D, bkv = a.batch, a.context, a.heads, a.head_dim, a.block_kv
    ceiling = copy_ceiling(torch)
    print("GPU %s, deep_gemm %s, copy ceiling %.2f TB/s" % (torch.cuda.get_device_name(0),
          getattr(dg, "__version__", "?"), ceiling / 1e12))
    blocks_per_seq = (L + bkv - 1) // bkv
    num_blocks = B * blocks_per_seq
    torch.manual_seed(0)
    kv, vals, sf = fused_kv(torch, num_blocks, bkv, D)
    table = torch.randperm(num_blocks, device="cuda", dtype=torch.int32).view(B, blocks_per_seq).contiguous()
    num_sms = torch.cuda.get_device_properties(0).multi_processor_count
    print("%-8s %12s %10s %12s" % ("next_n", "time_us", "%roofline", "max_rel_err"))
    for n in [int(x) for x in a.next_n.split(",")]:
        q = torch.randn((B, n, H, D), device="cuda", dtype=torch.bfloat16).to(torch.float8_e4m3fn)
        w = torch.rand((B * n, H), device="cuda", dtype=torch.float32) * 0.95 + 0.05
        ctx = torch.tensor([[L - n + i + 1 for i in range(n)]] * B, device="cuda", dtype=torch.int32)
        try:
            meta = dg.get_paged_mqa_logits_metadata(ctx, bkv, num_sms)
            if hasattr(dg, "fp8_fp4_paged_mqa_logits"):
                call = lambda: dg.fp8_fp4_paged_mqa_logits((q, None), kv, w, ctx, table, meta, L, False)  # noqa: E731
            else:
                call = lambda: dg.fp8_paged_mqa_logits(q, kv, w, ctx, table, meta, L, False)  # noqa: E731
            out = call()
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001
            lines = [ln for ln in str(e).splitlines() if ln.strip()]
            msg = next((ln for ln in lines if "ssert" in ln), lines[-1] if lines else type(e).__name__)
            print("%-8d %s" % (n, msg.strip()[:300]))
            continue
        # Error on the first request's rows against an fp32 reference of the dequantized inputs.
        k = (vals[table[0].long()].float() * sf[table[0].long()]).reshape(-1, D)
        ref = (torch.einsum("nhd,td->nht", q[0].float(), k).relu() * w[:n, :, None]).sum(1)
        err = max((out[i, : L - n + i + 1].float() - ref[i, : L - n + i + 1]).abs().max().item() for i in range(n))
        rel = err / max(ref.abs().max().item(), 1e-30)
        for _ in range(5):
            call()
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(a.reps)]
        for s, e in ev:
            s.record()
            call()
            e.record()
        torch.cuda.synchronize()
        us = statistics.median(s.elapsed_time(e) for s, e in ev) * 1e3
        nbytes = B * blocks_per_seq * bkv * (D + 4) + 4.0 * B * sum(L - n + i + 1 for i in range(n)) + q.numel() + w.numel() * 4
        print("%-8d %12.1f %9.1f%% %12.2e" % (n, us, 100.0 * nbytes / (us * 1e-6) / ceiling, rel))
    return 0


if __name__ == "__main__":
    sys.exit(main())
