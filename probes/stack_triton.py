# Stack probe adapter: asks the installed Triton whether it compiles and runs the tl.dot tile a
# spec-verify kernel needs (M = (k+1) * heads_per_kv query rows x head_dim, against a 64-token KV
# tile), as is and padded to the next power of two, and checks the product against torch. Triton's
# own compile error text is reported (e.g. "arange's range must be a power of 2"). Run by specprobe
# (probes/stack_probes.cpp) with the deployment's Python, a private temp dir and a clean environment;
# standard library + torch + triton only. Protocol, result skeleton and the installed / GPU checks:
# stack_common.py.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stack_common as sc  # noqa: E402  (beside this file; see stack_common.py)

KV_TILE = 64


def short_error(exc):
    # Triton's CompilationError carries the message apart from the source excerpt.
    msg = getattr(exc, "error_message", None)
    if msg:
        return str(msg).strip().splitlines()[-1][:2000]
    return sc.last_line(exc)


def next_pow2(n):
    p = 1
    while p < n:
        p *= 2
    return p


def make_kernel(triton, tl):
    @triton.jit
    def spec_verify_tile(q_ptr, k_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr, D: tl.constexpr):
        rm = tl.arange(0, M)
        rn = tl.arange(0, N)
        rd = tl.arange(0, D)
        q = tl.load(q_ptr + rm[:, None] * D + rd[None, :])
        k = tl.load(k_ptr + rn[:, None] * D + rd[None, :])
        s = tl.dot(q, tl.trans(k))
        tl.store(o_ptr + rm[:, None] * N + rn[None, :], s)
    return spec_verify_tile


def run_case(torch, kernel, m, head_dim, dtype):
    torch.manual_seed(m)
    q = torch.randn((m, head_dim), device="cuda", dtype=torch.float32).to(dtype)
    k = torch.randn((KV_TILE, head_dim), device="cuda", dtype=torch.float32).to(dtype)
    o = torch.empty((m, KV_TILE), device="cuda", dtype=torch.float32)
    kernel[(1,)](q, k, o, M=m, N=KV_TILE, D=head_dim)
    torch.cuda.synchronize()
    ref = q.float() @ k.float().t()
    err = (o - ref).abs().max().item()
    scale = ref.abs().max().item()
    rel = err / scale if scale > 0 else err
    if not torch.isfinite(o).all() or rel > 2e-2:
        return "fail", "tile product differs from torch: max rel err %.3g" % rel, rel
    return "pass", "", rel


def parse(p):
    return {"k": int(p.get("k", 1)), "gqa": int(p.get("gqa", 1)), "head_dim": int(p.get("head_dim", 128)),
            "dtype_name": str(p.get("dtype", "bf16"))}


def body(result, a, torch, triton):
    import triton.language as tl
    k, gqa, head_dim, dtype_name = a["k"], a["gqa"], a["head_dim"], a["dtype_name"]
    dtype = torch.float8_e4m3fn if dtype_name == "fp8" else torch.bfloat16
    kernel = make_kernel(triton, tl)
    m = (k + 1) * gqa
    shapes = [("unpadded", m)]
    if next_pow2(max(16, m)) != m:
        shapes.append(("padded", next_pow2(max(16, m))))
    for key, rows in shapes:
        case = {"name": "tl.dot tile %s M=%d ((k+1)=%d x gqa %d) x D=%d vs %d-token KV tile, %s" % (
                    key, rows, k + 1, gqa, head_dim, KV_TILE, dtype_name),
                "key": key, "params": {"m": rows, "k": k, "gqa": gqa, "head_dim": head_dim, "dtype": dtype_name},
                "status": "error", "reason": "", "error_text": None}
        sc.phase("jit-compile + run " + key)
        try:
            status, reason, rel = run_case(torch, kernel, rows, head_dim, dtype)
            case.update(status=status, reason=reason, max_rel_err=rel)
        except Exception as e:
            name = type(e).__name__
            case["error_text"] = short_error(e)
            if "Compilation" in name or "CompileError" in name or "compile" in str(e).lower():
                case.update(status="fail", reason="Triton refused to compile the tile")
            else:
                case.update(status="error", reason="%s while running the tile" % name)
        result["cases"].append(case)
    # The plan's own shape decides; the padded case says whether padding is a way out.
    first = result["cases"][0]
    result["status"] = first["status"]
    result["reason"], result["error_text"] = first["reason"], first["error_text"]
    if len(result["cases"]) == 1 and first["status"] == "pass":
        result["reason"] = "M=%d is already a power of two" % m


if __name__ == "__main__":
    sc.run_adapter("stack_triton", "triton", parse, body, also_import=("triton.language",), short_error=short_error)
