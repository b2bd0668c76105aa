# Stack probe adapter: asks the installed DeepGEMM itself whether its paged MQA logits kernel (the
# DSA indexer's decode / MTP-verify call) takes the plan's next_n on this GPU, at tiny sizes, and
# checks the numbers against an fp32 reference. Run by specprobe (probes/stack_probes.cpp) with the
# deployment's Python in a private temp dir and a clean environment; standard library + torch +
# deep_gemm only. Protocol, result skeleton and the installed / GPU checks: stack_common.py. A
# rejection is reported with the library's own assertion text.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stack_common as sc  # noqa: E402  (beside this file; see stack_common.py)


def short_error(exc):
    # DeepGEMM raises "Assertion error (file:line): condition" (DG_HOST_ASSERT); keep that line.
    for line in sc.nonempty_lines(exc):
        if "Assertion" in line or "assert" in line.lower():
            return line[:2000]
    return sc.last_line(exc)


def fused_fp8_kv(torch, kv):
    # [blocks, block_kv, 1, D] bf16 -> uint8 [blocks, block_kv, 1, D+4]: block_kv*D e4m3 values, then
    # block_kv fp32 per-token scales (DeepGEMM's tests/test_attention.py kv_cache_cast_to_fp8).
    nb, bkv, nh, d = kv.shape
    amax = kv.abs().float().amax(dim=3, keepdim=True).clamp(1e-4)
    sf = amax / 448.0
    scaled = (kv * (1.0 / sf)).to(torch.float8_e4m3fn)
    back = scaled.float() * sf
    fused = torch.empty((nb, bkv * (d + 4)), device=kv.device, dtype=torch.uint8)
    fused[:, : bkv * d] = scaled.view(nb, bkv * d).view(torch.uint8)
    fused[:, bkv * d :] = sf.view(nb, bkv).view(torch.uint8)
    return fused.view(nb, bkv, nh, d + 4), back


def run_case(torch, dg, next_n, heads, head_dim, block_kv, batch, context):
    torch.manual_seed(1000 + next_n)
    blocks_per_seq = (context + block_kv - 1) // block_kv
    num_blocks = batch * blocks_per_seq
    max_context_len = blocks_per_seq * block_kv
    q = torch.randn((batch, next_n, heads, head_dim), device="cuda", dtype=torch.bfloat16)
    q_fp8 = q.to(torch.float8_e4m3fn)
    kv = torch.randn((num_blocks, block_kv, 1, head_dim), device="cuda", dtype=torch.bfloat16)
    kv_fused, kv_back = fused_fp8_kv(torch, kv)
    weights = torch.randn((batch * next_n, heads), device="cuda", dtype=torch.float32)
    # Request b has context L_b; its row i sees L_b - next_n + i + 1 tokens (what vLLM fills).
    lens = [max(next_n, context - 37 * b) for b in range(batch)]
    ctx = torch.tensor([[lens[b] - next_n + i + 1 for i in range(next_n)] for b in range(batch)],
                       device="cuda", dtype=torch.int32)
    table = torch.randperm(num_blocks, device="cuda", dtype=torch.int32).view(batch, blocks_per_seq).contiguous()
    num_sms = dg.get_num_sms() if hasattr(dg, "get_num_sms") else torch.cuda.get_device_properties(0).multi_processor_count
    meta = dg.get_paged_mqa_logits_metadata(ctx, block_kv, num_sms)
    if hasattr(dg, "fp8_fp4_paged_mqa_logits"):
        api = "fp8_fp4_paged_mqa_logits"
        out = dg.fp8_fp4_paged_mqa_logits((q_fp8, None), kv_fused, weights, ctx, table, meta, max_context_len, False)
    else:
        api = "fp8_paged_mqa_logits"
        out = dg.fp8_paged_mqa_logits(q_fp8, kv_fused, weights, ctx, table, meta, max_context_len, False)
    torch.cuda.synchronize()
    # fp32 reference on the dequantized inputs: sum_h relu(q . k_t) * w, row valid on [0, ctx[b, i]).
    qf = q_fp8.float()
    kvf = kv_back.float()
    max_err, max_ref = 0.0, 0.0
    for b in range(batch):
        k = kvf[table[b].long()].reshape(-1, head_dim)                    # [blocks*block_kv, D]
        s = torch.einsum("nhd,td->nht", qf[b], k).relu()                 # [next_n, H, T]
        ref = (s * weights[b * next_n:(b + 1) * next_n, :, None]).sum(1)  # [next_n, T]
        for i in range(next_n):
            n_valid = int(ctx[b, i])
            got = out[b * next_n + i, :n_valid].float()
            want = ref[i, :n_valid]
            if not torch.isfinite(got).all():
                return api, "fail", "non-finite logits in valid columns", None
            max_err = max(max_err, (got - want).abs().max().item())
            max_ref = max(max_ref, want.abs().max().item())
    rel = max_err / max_ref if max_ref > 0 else max_err
    if rel > 2e-3:
        return api, "fail", "logits differ from the fp32 reference: max rel err %.3g > 2e-3" % rel, rel
    return api, "pass", "", rel


def parse(p):
    return {"next_ns": [int(n) for n in p.get("next_n", [1])],
            "heads": int(p.get("heads", 64)), "head_dim": int(p.get("head_dim", 128)),
            "block_kv": int(p.get("block_kv", 64)), "batch": int(p.get("batch", 2)), "context": int(p.get("context", 200))}


def body(result, a, torch, dg):
    heads, head_dim, block_kv, batch, context = a["heads"], a["head_dim"], a["block_kv"], a["batch"], a["context"]
    broken = None
    for n in a["next_ns"]:
        case = {"name": "paged MQA logits next_n=%d H=%d D=%d block_kv=%d" % (n, heads, head_dim, block_kv),
                "key": "next_n.%d" % n, "params": {"next_n": n, "heads": heads, "head_dim": head_dim,
                                                    "block_kv": block_kv, "batch": batch, "context": context},
                "status": "error", "reason": "", "error_text": None}
        if broken:
            case["reason"] = "not run: " + broken
            result["cases"].append(case)
            continue
        sc.phase("jit-compile + run next_n=%d" % n)  # DeepGEMM builds the kernel on its first call
        try:
            api, status, reason, rel = run_case(torch, dg, n, heads, head_dim, block_kv, batch, context)
            case.update(status=status, reason=reason, api=api)
            if rel is not None:
                case["max_rel_err"] = rel
        except Exception as e:
            text = short_error(e)
            case["error_text"] = text
            if "Assertion" in text or "assert" in text.lower():
                case.update(status="fail", reason="DeepGEMM rejected the call")
            elif "CUDA error" in str(e) or "illegal" in str(e).lower():
                case.update(status="fail", reason="the kernel faulted")
                broken = "the CUDA context is unusable after next_n=%d faulted" % n
            else:
                case.update(status="error", reason="the call failed for a reason that is not the library's own check")
        result["cases"].append(case)
    if not result["cases"]:
        result.update(status="skip", reason="no next_n requested")
        return
    sc.summarize(result, fail_reason=lambda bad: "DeepGEMM rejects next_n %s" % ",".join(
        str(c["params"]["next_n"]) for c in bad))
    if result["status"] == "fail" and not result["error_text"]:
        result["error_text"] = next(c for c in result["cases"] if c["status"] == "fail")["reason"]
    elif result["status"] == "error":
        first = next(c for c in result["cases"] if c["status"] == "error")
        result["reason"] = first["reason"]


if __name__ == "__main__":
    sc.run_adapter("stack_deep_gemm", "deep_gemm", parse, body, short_error=short_error)
