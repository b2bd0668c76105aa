# Stack probe adapter: asks the deployment's PyTorch whether it can drive the plan's GPU at all.
# Every engine runs on it, and a build that cannot is a start-up failure on every run whatever the
# plan ("CUDA error: no kernel image is available for execution on the device", "The NVIDIA
# driver on your system is too old"). Cases, each answered from torch itself:
#   build   CUDA, ROCm or CPU-only build (torch.version.cuda / .hip) against the GPU's vendor;
#   arch    the architectures it carries kernels for (torch._C._cuda_getArchFlags, readable with no
#           GPU) against the GPU's compute capability or gfx target, by the CUDA rules: a cubin
#           sm_XY runs on the same major with a minor >= Y, PTX compute_XY on any later GPU, an
#           arch-specific sm_XYa / compute_XYa on X.Y only (ROCm: the gfx target itself);
#   driver  the CUDA release it was built with against the driver's (cuDriverGetVersion, when the
#           GPU was queried): a newer major fails, a newer minor runs (minor version compatibility);
#   run     on the GPU it sees: a bf16 matmul against the CPU's product. run = true: the plan's GPU
#           is this machine's (specprobe's driver query found it), so torch must see it too;
#           "if-visible" (`specprobe probe --stack`): when torch sees one; false: not asked.
# Without a GPU the first three still answer for the GPU the plan declares. Run by specprobe
# (probes/stack_probes.cpp) with the deployment's Python, a private temp dir and a clean
# environment; standard library + torch only. Protocol and result skeleton: stack_common.py.
import os
import re
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stack_common as sc  # noqa: E402  (beside this file; see stack_common.py)


def parse(p):
    def opt_int(key):
        v = p.get(key)
        return None if v is None else int(v)
    run = p.get("run", "if-visible")
    if run not in (True, False, "if-visible"):
        raise ValueError("run is not true, false or if-visible: %r" % (run,))
    return {"sm": opt_int("gpu_sm"), "arch": str(p.get("gpu_arch") or ""),
            "vendor": str(p.get("gpu_vendor") or ""), "name": str(p.get("gpu_name") or ""),
            "driver": opt_int("driver_cuda"), "run": run}


def case(key, name, status, reason="", error_text=None, params=None):
    c = {"key": key, "name": name, "status": status, "reason": reason, "error_text": error_text}
    if params is not None:
        c["params"] = params
    return c


def build_kind(torch):
    if getattr(torch.version, "hip", None):
        return "rocm"
    if getattr(torch.version, "cuda", None):
        return "cuda"
    return "cpu"


def arch_entries(torch):
    flags = getattr(torch._C, "_cuda_getArchFlags", None)
    text = flags() if flags is not None else ""
    return [a for a in re.split(r"[\s;,]+", text or "") if a]


def covering_entry(sm, entries):
    """The entry of ENTRIES whose code runs on compute capability SM (major*10+minor), or None."""
    major, minor = divmod(sm, 10)
    for e in entries:
        m = re.fullmatch(r"(sm|compute)_(\d+)([af]?)", e)
        if not m:
            continue
        v = int(m.group(2))
        e_major, e_minor = divmod(v, 10)
        if m.group(3) == "a":
            if v == sm:
                return e
        elif m.group(1) == "compute":
            if v <= sm:
                return e
        elif e_major == major and e_minor <= minor:
            return e
    return None


def cuda_pair(text):
    m = re.match(r"(\d+)\.(\d+)", str(text or ""))
    return (int(m.group(1)), int(m.group(2))) if m else None


def visible_device(torch):
    """(available, warning text): torch's own view, with the warning it gives when it cannot."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        available = torch.cuda.is_available()
    said = [str(w.message) for w in caught]
    text = sc.first_line_with("\n".join(said), ("driver", "CUDA", "capability")) if said else None
    return available, text


def body(result, a, torch, _lib):
    kind = build_kind(torch)
    version = result["version"] or "?"
    vendor = a["vendor"] or ("amd" if a["arch"] else "nvidia")
    cases = result["cases"]

    want = "rocm" if vendor == "amd" else "cuda"
    build_words = {"cuda": "a CUDA %s build" % getattr(torch.version, "cuda", None),
                   "rocm": "a ROCm %s build" % getattr(torch.version, "hip", None),
                   "cpu": "a CPU-only build"}[kind]
    if kind == want:
        cases.append(case("build", "build against the GPU's vendor", "pass", params={"build": kind}))
    else:
        cases.append(case("build", "build against the GPU's vendor", "fail",
                          "PyTorch %s is %s; the engine needs a %s build for this %s GPU"
                          % (version, build_words, "ROCm" if want == "rocm" else "CUDA",
                             "AMD" if vendor == "amd" else "NVIDIA"),
                          params={"build": kind}))

    available, warned = (False, None)
    if a["run"] and kind != "cpu":
        sc.phase("ask torch for the GPU")
        available, warned = visible_device(torch)
        if available:
            prop = torch.cuda.get_device_properties(0)
            result["device"] = {"name": prop.name, "sm": prop.major * 10 + prop.minor}

    entries = arch_entries(torch) if kind != "cpu" else []
    listed = " ".join(entries) if entries else "(none)"
    gpu = a["name"] or (result["device"] or {}).get("name") or "the GPU"
    if kind != want:
        cases.append(case("arch", "kernels for the GPU's architecture", "skip", "the build is not for this vendor"))
    elif kind == "rocm":
        target = a["arch"]
        if not target:
            cases.append(case("arch", "kernels for the GPU's architecture", "skip", "the GPU's gfx target is unknown"))
        else:
            bases = [e.split(":")[0] for e in entries]
            ok = target in bases
            cases.append(case("arch", "kernels for the GPU's architecture", "pass" if ok else "fail",
                              "" if ok else "PyTorch %s carries kernels for %s; %s is %s: no code object for it"
                              % (version, listed, gpu, target),
                              params={"arch_list": listed, "gpu": target}))
    else:
        sm = a["sm"] if a["sm"] is not None else (result["device"] or {}).get("sm")
        if sm is None:
            cases.append(case("arch", "kernels for the GPU's architecture", "skip",
                              "the GPU's compute capability is unknown"))
        elif not entries:
            cases.append(case("arch", "kernels for the GPU's architecture", "skip",
                              "PyTorch %s does not list the architectures it was built for" % version))
        else:
            hit = covering_entry(sm, entries)
            target = "sm_%d" % sm
            cases.append(case("arch", "kernels for the GPU's architecture", "pass" if hit else "fail",
                              "" if hit else "PyTorch %s carries kernels for %s; %s is %s (compute capability "
                              "%d.%d): no kernel image for it" % (version, listed, gpu, target, sm // 10, sm % 10),
                              params={"arch_list": listed, "gpu": target, "covered_by": hit}))

    built = cuda_pair(torch.version.cuda) if kind == "cuda" else None
    if kind != "cuda" or want != "cuda":
        cases.append(case("driver", "CUDA release against the driver's", "skip", "not a CUDA build for an NVIDIA GPU"))
    elif a["driver"] is None or built is None:
        cases.append(case("driver", "CUDA release against the driver's", "skip",
                          "the driver's CUDA version is not known here (no GPU was queried)"))
    else:
        drv = divmod(a["driver"], 1000)
        drv = (drv[0], drv[1] // 10)
        params = {"cuda": "%d.%d" % built, "driver_cuda": "%d.%d" % drv}
        if built[0] > drv[0]:
            cases.append(case("driver", "CUDA release against the driver's", "fail",
                              "PyTorch %s was built with CUDA %d.%d; the driver supports CUDA %d.%d (a newer major "
                              "needs a newer driver)" % (version, built[0], built[1], drv[0], drv[1]),
                              warned, params))
        else:
            note = "" if built <= drv else "CUDA %d.%d on a %d.%d driver: minor version compatibility" % (
                built + drv)
            cases.append(case("driver", "CUDA release against the driver's", "pass", note, params=params))

    if not a["run"]:
        cases.append(case("run", "a bf16 matmul on the GPU", "skip", "the plan's GPU is not this machine's"))
    elif kind == "cpu" or kind != want:
        cases.append(case("run", "a bf16 matmul on the GPU", "skip", "the build cannot use this GPU"))
    elif not available and a["run"] == "if-visible":
        cases.append(case("run", "a bf16 matmul on the GPU", "skip", "torch sees no GPU here", warned))
    elif not available:
        cases.append(case("run", "a bf16 matmul on the GPU", "fail",
                          "torch sees no GPU, though the driver reports one here", warned))
    else:
        sc.phase("bf16 matmul")
        cases.append(run_matmul(torch))

    sc.summarize(result)
    if result["status"] == "pass" and not any(c["status"] == "pass" for c in cases):
        first = next(c for c in cases if c["status"] == "skip")
        result.update(status="skip", reason=first["key"] + ": " + first["reason"])


def run_matmul(torch):
    name = "a bf16 matmul on the GPU"
    try:
        g = torch.Generator().manual_seed(7)
        a = torch.randn((64, 64), generator=g).to(torch.bfloat16)
        b = torch.randn((64, 64), generator=g).to(torch.bfloat16)
        out = (a.cuda() @ b.cuda()).float().cpu()
        torch.cuda.synchronize()
        ref = a.float() @ b.float()
        rel = ((out - ref).abs().max() / ref.abs().max()).item()
    except Exception as e:
        text = sc.first_line_with(e, ("CUDA error", "no kernel image", "driver"))
        if "out of memory" in text:
            return case("run", name, "error", "the GPU has no memory free for the test", text)
        return case("run", name, "fail", "torch failed on the GPU", text)
    if not rel == rel or rel > 2e-2:
        return case("run", name, "fail", "the product differs from the CPU's: max rel err %.3g" % rel)
    c = case("run", name, "pass")
    c["max_rel_err"] = rel
    return c


if __name__ == "__main__":
    sc.run_adapter("stack_torch", "torch", parse, body, modules=(), needs_gpu=False)
