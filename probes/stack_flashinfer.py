# Stack probe adapter: asks the installed FlashInfer whether its paged-KV wrappers run the plan's
# spec-verify shapes on this GPU: BatchPrefillWithPagedKVCacheWrapper with q_len = k+1 per request
# (the verify step) and BatchDecodeWithPagedKVCacheWrapper with one token per request (the drafter's
# step; also q_len = k+1 where this FlashInfer's decode plan takes q_len_per_req), with the plan's
# query / KV heads, head dim and KV dtype, compared with an fp32 reference. Run by specprobe
# (probes/stack_probes.cpp) with the deployment's Python, a private temp dir and a clean environment;
# standard library + torch + flashinfer only. Protocol, result skeleton and the installed / GPU
# checks: stack_common.py. Phase markers ("jit-compile prefill", "run decode", ...) say where a
# run that hit --stack-timeout was.
import inspect
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stack_common as sc  # noqa: E402  (beside this file; see stack_common.py)


def short_error(exc):
    return sc.first_line_with(exc, ("Error", "error", "Unsupported", "not supported"))


class Paged:
    """A tiny paged KV cache: `batch` requests of `context` tokens in shuffled pages (NHD)."""

    def __init__(self, torch, batch, context, page, kv_heads, head_dim, kv_dtype):
        self.pages_per_seq = (context + page - 1) // page
        n_pages = batch * self.pages_per_seq
        k = torch.randn((n_pages, page, kv_heads, head_dim), device="cuda") * 0.5
        v = torch.randn((n_pages, page, kv_heads, head_dim), device="cuda")
        self.k = k.to(kv_dtype)
        self.v = v.to(kv_dtype)
        perm = torch.randperm(n_pages, device="cuda", dtype=torch.int32)
        self.indices = perm
        self.indptr = torch.arange(0, n_pages + 1, self.pages_per_seq, device="cuda", dtype=torch.int32)
        last = context - (self.pages_per_seq - 1) * page
        self.last_page_len = torch.full((batch,), last, device="cuda", dtype=torch.int32)
        self.batch, self.context, self.page = batch, context, page

    def seq(self, b, which):
        t = self.k if which == "k" else self.v
        idx = self.indices[b * self.pages_per_seq:(b + 1) * self.pages_per_seq].long()
        return t[idx].float().reshape(-1, t.shape[2], t.shape[3])[: self.context]  # [ctx, Hkv, D]


def reference(torch, q, paged, q_len, q_heads, kv_heads):
    # q: [batch*q_len, Hq, D]; query i of a request sits at position context - q_len + i (causal).
    out = torch.empty(q.shape, device="cuda", dtype=torch.float32)
    group = q_heads // kv_heads
    scale = 1.0 / math.sqrt(q.shape[-1])
    for b in range(paged.batch):
        k = paged.seq(b, "k").repeat_interleave(group, dim=1)  # [ctx, Hq, D]
        v = paged.seq(b, "v").repeat_interleave(group, dim=1)
        qb = q[b * q_len:(b + 1) * q_len].float()              # [q_len, Hq, D]
        s = torch.einsum("qhd,thd->hqt", qb, k) * scale
        pos = torch.arange(paged.context, device="cuda")
        limit = paged.context - q_len + torch.arange(q_len, device="cuda")
        s = s.masked_fill(pos[None, None, :] > limit[None, :, None], float("-inf"))
        out[b * q_len:(b + 1) * q_len] = torch.einsum("hqt,thd->qhd", s.softmax(-1), v)
    return out


def compare(torch, got, want):
    got = got.float()
    if not torch.isfinite(got).all():
        return "fail", "non-finite output", None
    rel = ((got - want).norm() / want.norm()).item()
    if rel > 3e-2:
        return "fail", "output differs from the fp32 reference: norm rel err %.3g > 3e-2" % rel, rel
    return "pass", "", rel


def parse(p):
    return {"q_heads": int(p.get("q_heads", 8)), "kv_heads": int(p.get("kv_heads", 1)),
            "head_dim": int(p.get("head_dim", 128)), "page": int(p.get("page_size", 16)),
            "q_len": int(p.get("q_len", 2)), "kv_name": str(p.get("kv_dtype", "bf16")),
            "batch": int(p.get("batch", 2)), "context": int(p.get("context", 200))}


def body(result, a, torch, flashinfer):
    q_heads, kv_heads, head_dim, page = a["q_heads"], a["kv_heads"], a["head_dim"], a["page"]
    q_len, kv_name, batch, context = a["q_len"], a["kv_name"], a["batch"], a["context"]
    sc.phase("setup")
    kv_dtype = torch.float8_e4m3fn if kv_name == "fp8" else torch.bfloat16
    torch.manual_seed(7)
    paged = Paged(torch, batch, context, page, kv_heads, head_dim, kv_dtype)
    workspace = torch.empty(128 * 1024 * 1024, dtype=torch.uint8, device="cuda")
    common = {"q_heads": q_heads, "kv_heads": kv_heads, "head_dim": head_dim, "page_size": page,
              "kv_dtype": kv_name, "batch": batch, "context": context}

    # plan() builds (JIT) or loads the kernels for this shape; the first use of a shape on a machine
    # compiles them, which can take minutes. The phase names say which step was in progress.
    def prefill(key):
        w = flashinfer.BatchPrefillWithPagedKVCacheWrapper(workspace, "NHD")
        qo_indptr = torch.arange(0, (batch + 1) * q_len, q_len, device="cuda", dtype=torch.int32)
        sc.phase("jit-compile " + key)
        w.plan(qo_indptr, paged.indptr, paged.indices, paged.last_page_len, q_heads, kv_heads, head_dim, page,
               causal=True, q_data_type=torch.bfloat16, kv_data_type=kv_dtype)
        q = torch.randn((batch * q_len, q_heads, head_dim), device="cuda").to(torch.bfloat16)
        sc.phase("run " + key)
        o = w.run(q, (paged.k, paged.v))
        torch.cuda.synchronize()
        sc.phase("check " + key)
        return compare(torch, o, reference(torch, q, paged, q_len, q_heads, kv_heads))

    def decode(key, rows):
        w = flashinfer.BatchDecodeWithPagedKVCacheWrapper(workspace, "NHD", use_tensor_cores=True)
        kw = {"q_data_type": torch.bfloat16, "kv_data_type": kv_dtype}
        if rows > 1:
            if "q_len_per_req" not in inspect.signature(w.run).parameters:
                return "skip", "this FlashInfer's decode wrapper takes one query token per request", None
            kw_run = {"q_len_per_req": rows}
        else:
            kw_run = {}
        sc.phase("jit-compile " + key)
        w.plan(paged.indptr, paged.indices, paged.last_page_len, q_heads, kv_heads, head_dim, page, **kw)
        q = torch.randn((batch * rows, q_heads, head_dim), device="cuda").to(torch.bfloat16)
        if "out" in inspect.signature(w.run).parameters:  # poisoned: rows the kernel skips stay NaN
            kw_run["out"] = torch.full((batch * rows, q_heads, head_dim), float("nan"), device="cuda", dtype=torch.bfloat16)
        sc.phase("run " + key)
        o = w.run(q, (paged.k, paged.v), **kw_run)
        torch.cuda.synchronize()
        sc.phase("check " + key)
        if rows > 1:
            # FlashInfer 0.5 applies q_len_per_req on its trtllm-gen backend only; elsewhere the plan
            # has one query row per request and the other rows are silently left unwritten.
            written = torch.isfinite(o.reshape(batch * rows, -1).float()).all(-1)  # per query row
            n = int(written.sum())
            if "out" in kw_run and 0 < n < batch * rows and not bool(torch.isfinite(o.float()[~written]).any()):
                # Not a verdict on the plan: where the decode wrapper drops q_len_per_req (every backend but
                # trtllm-gen), vLLM sends spec-verify rows through the prefill wrapper (case "prefill";
                # vllm-project/vllm @9aaf83ef5 vllm/v1/attention/backends/flashinfer.py L660: spec-as-decode
                # only with TRTLLM attention, so elsewhere verify batches take BatchPrefillWithPagedKVCache).
                # Reported as a skip with what was seen, so a caller of the decode path still learns it.
                return "skip", ("q_len_per_req=%d ignored by decode backend %s: %d of %d query rows written, one "
                                "per request; engines verify through the prefill wrapper here" %
                                (rows, getattr(w, "_backend", "unknown"), n, batch * rows)), None
        return compare(torch, o.reshape(batch * rows, q_heads, head_dim), reference(torch, q, paged, rows, q_heads, kv_heads))

    plans = [("prefill", "BatchPrefillWithPagedKVCacheWrapper q_len=%d" % q_len, prefill, q_len),
             ("decode", "BatchDecodeWithPagedKVCacheWrapper q_len=1 (tensor cores)", lambda key: decode(key, 1), 1)]
    if q_len > 1:
        plans.append(("decode_q_len", "BatchDecodeWithPagedKVCacheWrapper q_len=%d (tensor cores)" % q_len,
                      lambda key: decode(key, q_len), q_len))
    broken = None
    for key, what, fn, rows in plans:
        case = {"name": "%s Hq=%d Hkv=%d D=%d %s page %d" % (what, q_heads, kv_heads, head_dim, kv_name, page),
                "key": key, "params": dict(common, q_len=rows), "status": "error", "reason": "", "error_text": None}
        if broken:
            case["reason"] = "not run: " + broken
            result["cases"].append(case)
            continue
        try:
            status, reason, rel = fn(key)
            case.update(status=status, reason=reason)
            if rel is not None:
                case["max_rel_err"] = rel
        except Exception as e:
            text = str(e)
            case["error_text"] = short_error(e)
            if "CUDA error" in text or "illegal" in text.lower():
                case.update(status="fail", reason="the kernel faulted")
                broken = "the CUDA context is unusable after %s faulted" % key
            elif isinstance(e, (NotImplementedError, ValueError)) or "Unsupported" in text or "not supported" in text:
                case.update(status="fail", reason="FlashInfer rejected the shape")
            elif "static assertion failed" in text or "static_assert" in text:
                # The JIT build ran and the library's own compile-time check refused this configuration
                # (e.g. CUTLASS "No eligible GMMA operator" for bf16 Q with an fp8 KV cache on sm_90).
                case["error_text"] = sc.first_line_with(e, ("static assertion failed", "static_assert"))
                case.update(status="fail", reason="FlashInfer's JIT build rejected this configuration (static assertion)")
            else:
                case.update(status="error", reason="%s (JIT build or environment, not a verdict on the shape)" % type(e).__name__)
        result["cases"].append(case)
    sc.summarize(result)


if __name__ == "__main__":
    sc.run_adapter("stack_flashinfer", "flashinfer", parse, body, distributions=("flashinfer-python",),
                   short_error=short_error)
