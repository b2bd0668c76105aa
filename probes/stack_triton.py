# Stack probe adapter: asks the installed Triton whether it compiles and runs the tl.dot tile a
# spec-verify kernel needs (M = (k+1) * heads_per_kv query rows x head_dim, against a 64-token KV
# tile), as is and padded to the next power of two, and checks the product against torch. Triton's
# own compile error text is reported (e.g. "arange's range must be a power of 2"). Run by specprobe
# (probes/stack_probes.cpp) with the deployment's Python, a private temp dir and a clean environment.
# Protocol: "@@specprobe begin 0", then one "@@specprobe result <json>" line (specprobe-stack/1).
import json
import sys

SCHEMA = "specprobe-stack/1"
ADAPTER = "stack_triton"
LIBRARY = "triton"
KV_TILE = 64


def emit(result):
    sys.stdout.write("@@specprobe result " + json.dumps(result) + "\n")
    sys.stdout.flush()


def read_params(argv):
    if "--specs" in argv:
        specs = json.loads(argv[argv.index("--specs") + 1])
        if isinstance(specs, list) and specs and isinstance(specs[0], dict):
            return specs[0].get("params", {})
    return {}


def short_error(exc):
    # Triton's CompilationError carries the message apart from the source excerpt.
    msg = getattr(exc, "error_message", None)
    if msg:
        return str(msg).strip().splitlines()[-1][:2000]
    text = str(exc).strip()
    for line in reversed(text.splitlines()):
        if line.strip():
            return line.strip()[:2000]
    return type(exc).__name__


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


def main():
    sys.stdout.write("@@specprobe begin 0\n")
    sys.stdout.flush()
    result = {"schema": SCHEMA, "adapter": ADAPTER, "library": LIBRARY, "version": None, "status": "error",
              "reason": "", "error_text": None, "device": None, "cases": []}
    try:
        p = read_params(sys.argv)
        k, gqa, head_dim = int(p.get("k", 1)), int(p.get("gqa", 1)), int(p.get("head_dim", 128))
        dtype_name = str(p.get("dtype", "bf16"))
    except Exception as e:
        result["reason"] = "bad parameters from specprobe: %s" % e
        return emit(result)
    import importlib.util
    for mod in ("torch", "triton"):
        if importlib.util.find_spec(mod) is None:
            result["status"] = "skip"
            result["reason"] = "%s is not installed in this Python (%s)" % (mod, sys.prefix)
            return emit(result)
    try:
        import torch
        import triton
        import triton.language as tl
    except Exception as e:
        result["reason"] = "triton is installed but importing it failed"
        result["error_text"] = short_error(e)
        return emit(result)
    result["version"] = getattr(triton, "__version__", None)
    if not torch.cuda.is_available():
        result["status"] = "skip"
        result["reason"] = "torch sees no CUDA device"
        return emit(result)
    prop = torch.cuda.get_device_properties(0)
    result["device"] = {"name": prop.name, "sm": prop.major * 10 + prop.minor}
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
    emit(result)


if __name__ == "__main__":
    main()
