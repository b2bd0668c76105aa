# Engine adapter for vLLM: asks the installed vLLM itself whether it accepts a serving plan, without
# loading weights or touching a GPU. For the user's exact `vllm serve` arguments it runs vLLM's own
# argument parser (the `serve` subcommand's), EngineArgs -> VllmConfig (create_engine_config():
# ModelConfig, SpeculativeConfig, CompilationConfig, ...), resolves the model class and checks it
# against the speculative method's interface (EAGLE3), asks vLLM's attention-backend selector for
# the target and the drafter, and resolves the CUDA-graph mode against the chosen backends the way
# the GPU model runner does. On a machine without the GPU, the GPU is declared (compute capability,
# name, count) through a vLLM platform object installed as vllm.platforms.current_platform.
# Protocol: engines/README.md; shared machinery: common.py (standard library + vLLM only).
import contextlib
import dataclasses
import enum
import inspect
import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as cm  # noqa: E402

ENGINE = "vllm"

def make_declared_platform(base, gpu):
    """A subclass of vLLM's platform class BASE (CudaPlatformBase, or RocmPlatform for a declared AMD
    GPU) answering device queries from the declaration. On ROCm the capability is left to vLLM,
    which derives it from the gfx arch the declared device properties carry."""
    from vllm.platforms.interface import DeviceCapability

    rocm = cm.is_amd(gpu)
    if rocm:
        name = gpu.get("name") or "declared %s GPU" % gpu["arch"]
    else:
        major, minor = gpu["cc"]
        name = gpu.get("name") or "declared sm_%d%d GPU" % (major, minor)
    count = int(gpu.get("count") or 1)
    mem_bytes = int(cm.declared_memory(gpu)[0] * (1 << 30))
    fully_connected = bool(gpu.get("nvlink", True))

    class DeclaredPlatform(base):
        specprobe_declared = True
        _selector_calls = []

        if not rocm:
            @classmethod
            def get_device_capability(cls, device_id=0):
                return DeviceCapability(major=major, minor=minor)

        @classmethod
        def get_device_name(cls, device_id=0):
            return name

        @classmethod
        def _get_physical_device_name(cls, device_id=0):
            return name

        @classmethod
        def get_device_uuid(cls, device_id=0):
            return "GPU-specprobe-declared-%d" % device_id

        @classmethod
        def get_device_total_memory(cls, device_id=0):
            return mem_bytes

        @classmethod
        def is_fully_connected(cls, physical_device_ids):
            return fully_connected

        @classmethod
        def device_count(cls):
            return count

        @classmethod
        def get_device_numa_node(cls, device_id=0):
            return None

        @classmethod
        def get_all_device_numa_nodes(cls):
            return None

        @classmethod
        def log_warnings(cls):
            pass

        @classmethod
        def get_attn_backend_cls(cls, selected_backend, *args, **kwargs):
            cls._selector_calls.append((selected_backend, args, kwargs))
            return super().get_attn_backend_cls(selected_backend, *args, **kwargs)

    DeclaredPlatform.__name__ = DeclaredPlatform.__qualname__ = "DeclaredRocmPlatform" if rocm else "DeclaredCudaPlatform"
    return DeclaredPlatform


def rocm_skips(plat, skipped):
    """What a declared ROCm platform cannot show when this interpreter's vLLM is a CUDA build."""
    import importlib.util

    import torch

    plat["torch_hip"] = getattr(torch.version, "hip", None)
    if plat["torch_hip"] is None:
        skipped.append({"what": "ROCm kernels (vllm._rocm_C, HIP torch)",
                        "why": "this interpreter's vLLM and torch are CUDA builds: the ROCm platform's own checks, "
                               "defaults and backend selection are vLLM's, but no ROCm kernel library is loaded"})
    plat["aiter"] = importlib.util.find_spec("aiter") is not None
    if not plat["aiter"]:
        skipped.append({"what": "AITER",
                        "why": "the aiter package is not in this environment (the ROCm images ship it): backends "
                               "and defaults vLLM gates on it (ROCM_AITER_*, VLLM_ROCM_USE_AITER) are answered as "
                               "without AITER"})


def setup(req, result):
    gpu = dict(req.get("gpu") or {})
    rocm = cm.is_amd(gpu)
    declared = bool(gpu.get("declared", gpu.get("cc") is not None or rocm))
    plat = result["platform"]
    skipped = result["skipped"]
    os.environ.setdefault("VLLM_NO_USAGE_STATS", "1")
    os.environ["VLLM_DO_NOT_TRACK"] = "1"
    os.environ["VLLM_LOGGING_STREAM"] = "ext://sys.stderr"
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "WARNING")
    priv = cm.private_dir()
    os.environ["VLLM_CACHE_ROOT"] = os.path.join(priv, "cache", "vllm")
    os.environ["VLLM_CONFIG_ROOT"] = os.path.join(priv, "config", "vllm")
    os.environ["VLLM_ASSETS_CACHE"] = os.path.join(priv, "cache", "vllm", "assets")
    os.environ["VLLM_RPC_BASE_PATH"] = os.path.join(priv, "tmp")
    os.environ["HUMMING_DISABLE_PARALLEL_BUILD"] = "1"  # humming-kernels builds helpers in the background at import
    driver = cm.load_cuda_driver(plat, skipped, req.get("cuda_stub"))
    if driver != "real" and not declared:
        raise cm.MissingInput("the GPU: none is visible here and the request declares none "
                              "(gpu: {name, cc: [major, minor], count, declared: true})")
    if rocm and not gpu.get("arch"):
        raise cm.MissingInput("the AMD GPU's gfx target (gpu: {vendor: amd, arch: gfx942, ...})")
    if rocm:
        # Declared before vLLM is imported: vllm.platforms.rocm reads the arch at import, and the
        # CUDA-only kernel packages a ROCm install lacks are hidden before anything imports them.
        cm.declare_amd_device(gpu)
        hidden = cm.hide_packages(cm.CUDA_ONLY_PACKAGES)
        plat["hidden_packages"] = list(hidden.names)

    import vllm
    import vllm.platforms as vp

    result["version"] = getattr(vllm, "__version__", None)
    # vLLM decides HAS_TRITON at import from Triton's active drivers, which need a device; its own
    # leniency for distributed workers (CUDA_VISIBLE_DEVICES set and empty: "drivers may become active
    # later") keeps Triton on, as on the GPU machine. Set only while vLLM's modules are imported.
    # On the ROCm platform vLLM reads HIP_VISIBLE_DEVICES for the same leniency.
    visible_var = "HIP_VISIBLE_DEVICES" if rocm else "CUDA_VISIBLE_DEVICES"
    saved_cvd = os.environ.get(visible_var)
    if driver != "real" or rocm:
        os.environ[visible_var] = ""
    try:
        if declared and rocm:
            from vllm.platforms import rocm as vrocm

            cls = make_declared_platform(vrocm.RocmPlatform, gpu)
            vp.current_platform = cls()
        elif declared:
            from vllm.platforms import cuda as vcuda

            cls = make_declared_platform(vcuda.CudaPlatformBase, gpu)
            vp.current_platform = cls()
        import vllm.triton_utils  # noqa: F401  (HAS_TRITON decided here)
    finally:
        if driver != "real" or rocm:
            if saved_cvd is None:
                os.environ.pop(visible_var, None)
            else:
                os.environ[visible_var] = saved_cvd
    if declared and rocm:
        mem, mem_src = cm.declared_memory(gpu)
        cap = vp.current_platform.get_device_capability()
        plat.update(kind="declared", vendor="amd", mechanism="vllm.platforms.current_platform = DeclaredRocmPlatform "
                    "(a vllm.platforms.rocm.RocmPlatform subclass answering from the request; the gfx arch given "
                    "to vLLM through torch.cuda.get_device_properties().gcnArchName, as without amdsmi)",
                    name=cls.get_device_name(), arch=gpu["arch"], cc=[cap.major, cap.minor] if cap else None,
                    count=int(gpu.get("count") or 1), memory_gib=mem, memory_source=mem_src,
                    fully_connected=bool(gpu.get("nvlink", True)))
        rocm_skips(plat, skipped)
    elif declared:
        mem, mem_src = cm.declared_memory(gpu)
        plat.update(kind="declared", mechanism="vllm.platforms.current_platform = DeclaredCudaPlatform "
                    "(a vllm.platforms.cuda.CudaPlatformBase subclass answering from the request)",
                    name=cls.get_device_name(), cc=list(gpu["cc"]), count=int(gpu.get("count") or 1),
                    memory_gib=mem, memory_source=mem_src, fully_connected=bool(gpu.get("nvlink", True)))
    else:
        p = vp.current_platform
        cap = p.get_device_capability()
        plat.update(kind="queried", mechanism="vLLM's own platform detection",
                    name=p.get_device_name(), cc=[cap.major, cap.minor] if cap else None,
                    count=p.device_count() if hasattr(p, "device_count") else None)
    import torch

    if declared and driver != "real" and not rocm:
        # Kernel packages ask torch itself for the capability (vllm_flash_attn's FA3 check calls
        # torch.cuda.get_device_capability at backend import).
        cm.declare_torch_device_queries(gpu, plat)
    plat["torch"] = torch.__version__
    plat["torch_cuda"] = torch.version.cuda
    if driver == "stub":
        skipped.extend([
            {"what": "device memory / KV-cache capacity",
             "why": "no GPU: profiling free memory, the number of KV blocks and max concurrency need the device"},
            {"what": "weights and kernels",
             "why": "no weights are loaded and no kernel runs (model class resolved by import only); kernel JIT "
                    "and CUDA-graph capture are not attempted"},
            {"what": "attention metadata builders / kernel availability",
             "why": "backend validity is vLLM's validate_configuration for the declared capability; a kernel "
                    "library that needs the driver at import (JIT, device query) may be reported unavailable"},
        ])
    try:
        from vllm.triton_utils import HAS_TRITON
        plat["has_triton"] = bool(HAS_TRITON)
        if not HAS_TRITON:
            skipped.append({"what": "Triton-dependent defaults",
                            "why": "vLLM's Triton check needs an active driver; without a GPU it reports no Triton, "
                                   "so defaults that depend on it (e.g. model runner V2) follow the no-Triton path"})
    except Exception:
        pass

    # vLLM asks whether NVIDIA's cubin artifactory answers (an HTTP request) before it lets FlashInfer
    # use TRTLLM attention kernels. No request is made here: the answer is the request's
    # assume.nvidia_artifactory (default true: a serving host that downloads kernels or has the
    # flashinfer-cubin package), and it is reported.
    assume = dict(req.get("assume") or {})
    try:
        from vllm.utils import flashinfer as vfi

        if hasattr(vfi, "has_nvidia_artifactory"):
            answer = bool(assume.get("nvidia_artifactory", True))
            vfi.has_nvidia_artifactory = lambda: answer
            plat["nvidia_artifactory"] = "%s (assumed: assume.nvidia_artifactory; never asked over the network)" % answer
    except ImportError:
        pass
    # vLLM inspects a model class in a subprocess only so that the parent never initialises CUDA
    # (registry._run_in_subprocess); nothing here initialises CUDA, so it runs in this process, under
    # the declared platform, instead of paying a second vLLM import.
    from vllm.model_executor.models import registry as vreg

    if hasattr(vreg, "_run_in_subprocess"):
        vreg._run_in_subprocess = lambda fn: fn()
        plat["model_inspection"] = "in-process (vLLM's registry subprocess replaced: no CUDA is initialised here)"
    import vllm.entrypoints.cli.serve as serve_mod
    from vllm.engine.arg_utils import AsyncEngineArgs
    from vllm.usage.usage_lib import UsageContext
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    if declared and driver != "real":
        # Older vLLM (0.15) counts GPUs with torch (cuda_device_count_stateless) when it checks the world
        # size; answer with the declared count wherever that function is bound.
        try:
            from vllm.utils import torch_utils as vtu
        except ImportError:
            vtu = None
        orig = getattr(vtu, "cuda_device_count_stateless", None)
        if orig is not None:
            n = int(gpu.get("count") or 1)
            repl = lambda *a, **k: n  # noqa: E731
            plat["device_count_bindings"] = cm.rebind("vllm", "cuda_device_count_stateless", orig, repl)
    host_mem = (req.get("host") or {}).get("memory_gib")
    try:
        from vllm.utils import mem_utils as vmu
    except ImportError:
        vmu = None
    orig_mem = getattr(vmu, "get_cpu_memory", None)
    if host_mem and orig_mem is not None:
        host_bytes = int(float(host_mem) * (1 << 30))
        cm.rebind("vllm", "get_cpu_memory", orig_mem, lambda: host_bytes)
        plat["host_memory_gib"] = "%s (declared: host.memory_gib)" % host_mem
    elif orig_mem is not None:
        plat["host_memory_gib"] = "%.1f (this machine's; declare host.memory_gib for the serving host)" % (
            orig_mem() / (1 << 30))
    parser = FlexibleArgumentParser(prog="vllm")
    subparsers = parser.add_subparsers(required=False, dest="subparser")
    serve_mod.ServeSubcommand().subparser_init(subparsers)
    site = os.path.dirname(os.path.dirname(os.path.abspath(vllm.__file__)))
    ctx = {
        "req": req, "parser": parser, "serve_mod": serve_mod, "AsyncEngineArgs": AsyncEngineArgs,
        "UsageContext": UsageContext, "engine_roots": [site], "allow_remote_code": bool(req.get("allow_remote_code")),
        "model_dirs": dict(req.get("model_dirs") or {}), "declared": declared, "gpu": dict(gpu, declared=declared),
        "host_memory_declared": bool(host_mem),
        "rocm_emulated": rocm and plat.get("torch_hip") is None,
    }
    return ctx


# ------------------------------------------------------------------------------------------------


def getp(obj, path, default=None):
    for part in path.split("."):
        if obj is None:
            return default
        obj = getattr(obj, part, None)
    return default if obj is None else obj


def config_facts(cfg):
    mc, cc, pc, sc = cfg.model_config, cfg.cache_config, cfg.parallel_config, cfg.scheduler_config
    comp = cfg.compilation_config
    spec = cfg.speculative_config
    hf = getp(mc, "hf_text_config") or getp(mc, "hf_config")
    f = {
        "architecture": getp(mc, "architecture") or (getp(mc, "hf_config.architectures") or [None])[0],
        "model_type": getattr(hf, "model_type", None),
        "dtype": str(getp(mc, "dtype")),
        "max_model_len": getp(mc, "max_model_len"),
        "quantization": getp(mc, "quantization"),
        "use_mla": bool(getp(mc, "use_mla", False)),
        "is_hybrid": bool(getp(mc, "is_hybrid", False)),
        "kv_cache_dtype": getp(cc, "cache_dtype"),
        "block_size": getp(cc, "block_size"),
        "enable_prefix_caching": getp(cc, "enable_prefix_caching"),
        "tensor_parallel_size": getp(pc, "tensor_parallel_size"),
        "pipeline_parallel_size": getp(pc, "pipeline_parallel_size"),
        "data_parallel_size": getp(pc, "data_parallel_size"),
        "enable_expert_parallel": getp(pc, "enable_expert_parallel"),
        "max_num_seqs": getp(sc, "max_num_seqs"),
        "max_num_batched_tokens": getp(sc, "max_num_batched_tokens"),
        "enable_chunked_prefill": getp(sc, "enable_chunked_prefill"),
        "compilation_mode": cm.plain(getp(comp, "mode", getp(comp, "level"))),
        "cudagraph_mode_configured": cm.plain(getp(comp, "cudagraph_mode")),
        "cudagraph_capture_sizes_configured": cm.plain(getp(comp, "cudagraph_capture_sizes")),
        "max_cudagraph_capture_size": getp(comp, "max_cudagraph_capture_size"),
        "attention_backend_requested": cm.plain(getp(cfg, "attention_config.backend")),
        "method": None, "num_speculative_tokens": None,
    }
    if spec is not None:
        f.update({
            "method": getp(spec, "method"),
            "num_speculative_tokens": getp(spec, "num_speculative_tokens"),
            "draft_model": getp(spec, "model"),
            "draft_tensor_parallel_size": getp(spec, "draft_tensor_parallel_size"),
            "draft_architecture": (getp(spec, "draft_model_config.hf_config.architectures") or [None])[0],
            "draft_attention_backend_requested": cm.plain(getp(spec, "attention_backend")),
            "draft_kv_cache_dtype_requested": cm.plain(getp(spec, "kv_cache_dtype")),
        })
    return f


def selector_kwargs(fn, mc, cache_dtype, block_size, pc):
    hf = getp(mc, "hf_text_config") or getp(mc, "hf_config")
    mtype = getattr(hf, "model_type", "") or ""
    try:
        num_heads = mc.get_num_attention_heads(pc)
    except Exception:
        num_heads = None
    sliding = getattr(hf, "sliding_window", None)
    layer_types = getattr(hf, "layer_types", None) or []
    all_sliding = bool(sliding) and layer_types and all("sliding" in str(t) for t in layer_types)
    kw = {
        "head_size": mc.get_head_size(),
        "dtype": mc.dtype,
        "kv_cache_dtype": cache_dtype,
        "block_size": block_size,
        "use_mla": bool(getattr(mc, "use_mla", False)),
        "has_sink": mtype in ("gpt_oss",),
        "use_sparse": getattr(hf, "index_topk", None) is not None,
        "num_heads": num_heads,
        "has_sliding_window": bool(all_sliding),
    }
    params = inspect.signature(fn).parameters
    used = {k: v for k, v in kw.items() if k in params}
    return used, {k: cm.plain(v) for k, v in used.items()}


def select_backend(cfg, mc, cache_dtype, ctx):
    """vLLM's selector (vllm.v1.attention.selector.get_attn_backend) for a model config under CFG."""
    from vllm.config import set_current_vllm_config
    from vllm.v1.attention import selector as sel

    fn = sel.get_attn_backend
    kw, shown = selector_kwargs(fn, mc, cache_dtype, getp(cfg, "cache_config.block_size"), cfg.parallel_config)
    cached = getattr(sel, "_cached_get_attn_backend", None)
    if cached is not None and hasattr(cached, "cache_clear"):
        cached.cache_clear()
    import vllm.platforms as vp
    plat_cls = type(vp.current_platform)
    calls = getattr(plat_cls, "_selector_calls", None)
    if calls is not None:
        del calls[:]
    with set_current_vllm_config(cfg):
        backend = fn(**kw)
    rejected = None
    if calls and hasattr(plat_cls, "get_valid_backends"):
        try:
            selected, args, kwargs = calls[-1]
            sel_cfg = kwargs.get("attn_selector_config", args[0] if args else None)
            if sel_cfg is not None and not isinstance(sel_cfg, (int, str)):
                _, invalid = plat_cls.get_valid_backends(
                    device_capability=plat_cls.get_device_capability(), attn_selector_config=sel_cfg,
                    **({"num_heads": kwargs.get("num_heads")} if "num_heads" in inspect.signature(
                        plat_cls.get_valid_backends).parameters else {}))
                rejected = {getattr(b, "name", str(b)): [str(r) for r in v[1]] for b, v in invalid.items()}
        except Exception as e:  # the list of rejected backends is extra information only
            rejected = {"_unavailable": ["%s: %s" % (type(e).__name__, e)]}
    return backend, shown, rejected


def backend_name(backend):
    try:
        return backend.get_name()
    except Exception:
        return getattr(backend, "__name__", str(backend))


def kv_spec_for(mc, cache_dtype_torch, block_size, backend):
    from vllm.v1 import kv_cache_interface as kvi

    use_mla = bool(getattr(mc, "use_mla", False))
    cls = kvi.MLAAttentionSpec if use_mla and hasattr(kvi, "MLAAttentionSpec") else kvi.FullAttentionSpec
    fields = {f.name for f in dataclasses.fields(cls)}
    kw = {"block_size": block_size or 16, "num_kv_heads": 1 if use_mla else max(1, mc.get_total_num_kv_heads()),
          "head_size": mc.get_head_size(), "dtype": cache_dtype_torch}
    return cls(**{k: v for k, v in kw.items() if k in fields})


def resolve_cudagraph(cfg, target_backend, drafter_backend, mc, ctx):
    """The GPU model runner's own _check_and_update_cudagraph_mode on a stand-in runner carrying only
    what the method reads (config, uniform decode query length, a dispatcher that records keys)."""
    from vllm.v1.worker.gpu_model_runner import GPUModelRunner
    from vllm.v1.kv_cache_interface import KVCacheGroupSpec
    import torch

    spec = cfg.speculative_config
    num_spec = int(getp(spec, "num_speculative_tokens", 0) or 0) if spec is not None else 0
    cache_dtype = getp(cfg, "cache_config.cache_dtype")
    try:
        from vllm.utils.torch_utils import kv_cache_dtype_str_to_dtype
        kv_dtype = kv_cache_dtype_str_to_dtype(cache_dtype, mc)
    except Exception:
        kv_dtype = mc.dtype if cache_dtype in (None, "auto") else torch.uint8
    backends = {target_backend} | ({drafter_backend} if drafter_backend is not None else set())
    kv_spec = kv_spec_for(mc, kv_dtype, getp(cfg, "cache_config.block_size"), target_backend)
    groups = [KVCacheGroupSpec(["model.layers.0.self_attn.attn"], kv_spec)]
    keys = {}

    class Dispatcher:
        def initialize_cudagraph_keys(self, mode, uniform_decode_query_len=1, *a, **k):
            keys["mode"] = mode
            keys["uniform_decode_query_len"] = uniform_decode_query_len

    fake = types.SimpleNamespace(
        vllm_config=cfg, compilation_config=cfg.compilation_config, parallel_config=cfg.parallel_config,
        model_config=cfg.model_config, cache_config=cfg.cache_config, scheduler_config=cfg.scheduler_config,
        speculative_config=None, drafter=None, uniform_decode_query_len=1 + num_spec,
        num_spec_tokens=num_spec, cudagraph_dispatcher=Dispatcher(), kv_cache_config=None,
        max_num_reqs=getp(cfg, "scheduler_config.max_num_seqs"), cudagraph_batch_sizes=[],
        is_pooling_model=False, use_cuda_graph=True,
    )
    method = GPUModelRunner._check_and_update_cudagraph_mode
    params = inspect.signature(method).parameters
    kwargs = {"is_profiling": False} if "is_profiling" in params else {}
    from vllm.config import set_current_vllm_config
    with set_current_vllm_config(cfg):
        method(fake, [backends], groups, **kwargs)
    mode = keys.get("mode", getp(cfg, "compilation_config.cudagraph_mode"))
    return cm.plain(mode), cm.plain(getp(cfg, "compilation_config.cudagraph_capture_sizes"))


def group_sizes(pc):
    tp = int(getp(pc, "tensor_parallel_size", 1) or 1)
    pp = int(getp(pc, "pipeline_parallel_size", 1) or 1)
    dp = int(getp(pc, "data_parallel_size", 1) or 1)
    pcp = int(getp(pc, "prefill_context_parallel_size", 1) or 1)
    return {"_WORLD": tp * pp * dp * pcp, "_TP": tp, "_PP": pp, "_DP": dp, "_PCP": pcp,
            "_DCP": int(getp(pc, "decode_context_parallel_size", 1) or 1),
            "_EP": tp * dp * pcp if getp(pc, "enable_expert_parallel", False) else 1,
            "_EPLB": 1, "_ETP": 1}


@contextlib.contextmanager
def rank0_groups(pc):
    """vLLM's parallel-state groups set to rank 0 of the plan's sizes while a model is built, and
    put back afterwards. The last pipeline rank is not built (rank 0 is first: embedding, its layers)."""
    from vllm.distributed import parallel_state as ps

    saved = {}
    for name, size in group_sizes(pc).items():
        if hasattr(ps, name):
            saved[name] = getattr(ps, name)
            setattr(ps, name, cm.GroupStandIn(name.strip("_").lower(), size))
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(ps, name, value)


@contextlib.contextmanager
def meta_device_handles(gpu):
    """While the model is built: the platform's current device is the meta device, CUDA streams and
    events are stand-ins and the model runner's workspace lives on the meta device, so that layers
    which place a tensor on "the current device", make a side stream or reserve scratch space at
    construction build on the meta device instead of initialising CUDA."""
    import torch
    import vllm.platforms as vp

    plat_cls = type(vp.current_platform)
    saved_current = plat_cls.__dict__.get("current_device")
    plat_cls.current_device = classmethod(lambda cls, *a, **k: torch.device("meta"))
    # The GPU model runner sets up its scratch workspace before it builds the model; here on meta.
    try:
        from vllm.v1.worker import workspace as ws
    except ImportError:
        ws = None
    fresh_workspace = ws is not None and hasattr(ws, "init_workspace_manager") and getattr(ws, "_manager", 0) is None
    if fresh_workspace:
        ws.init_workspace_manager(torch.device("meta"))
    try:
        with cm.device_stand_ins(gpu):
            yield
    finally:
        if fresh_workspace:
            ws._manager = None
        if saved_current is None:
            delattr(plat_cls, "current_device")
        else:
            plat_cls.current_device = saved_current


def model_census(model):
    """What vLLM built (cm.model_census): attention layers by their own backend and layer class, MoE
    layers by method."""
    def attention_kind(mod):
        ab = getattr(mod, "attn_backend", None)
        if ab is None or not hasattr(mod, "layer_name"):
            return None
        name = getattr(ab, "name", None) if isinstance(ab, enum.Enum) else backend_name(ab)
        return "%s (%s)" % (name, type(mod).__name__)

    return cm.model_census(model, attention_kind, "local_num_experts")




def construct(cfg, rec, ctx):
    """The target model (and the drafter, for model-based methods) built the way the engine's loader
    builds it (vllm/model_executor/model_loader/base_loader.py: default dtype, target device,
    initialize_model), on the meta device, as rank 0 of the plan's parallel sizes: the layers'
    own checks (quantization block shapes against the TP split, MoE methods, per-layer attention
    backend selection) run; no weight is read and no memory is allocated."""
    from vllm.model_executor.model_loader.utils import initialize_model
    from vllm.utils.torch_utils import set_default_torch_dtype

    facts = rec["facts"]
    spec = cfg.speculative_config
    dmc = getp(spec, "draft_model_config") if spec is not None else None
    draft = dmc is not None and getp(spec, "method") not in ("ngram", "suffix", "ngram_gpu")
    built = []
    try:
        with rank0_groups(cfg.parallel_config), meta_device_handles(ctx.get("gpu")):
            with set_default_torch_dtype(cfg.model_config.dtype), cm.on_meta():
                target = initialize_model(vllm_config=cfg)
            facts["model_construction"] = model_census(target)
            built.append("target")
            del target
            if draft:
                draft_cfg = draft_vllm_config(cfg, spec)
                try:
                    from vllm.compilation.backends import set_model_tag
                    tag = set_model_tag("eagle_head")
                except Exception:
                    tag = contextlib.nullcontext()
                with tag, set_default_torch_dtype(dmc.dtype), cm.on_meta():
                    drafter = initialize_model(vllm_config=draft_cfg, model_config=dmc)
                facts["drafter_construction"] = model_census(drafter)
                built.append("drafter")
    except Exception as e:
        # What this machine lacks (the device, real values, ROCm packages) stops the construction;
        # anything else is the engine's objection.
        if not cm.construction_stopped(e, rec, built, ctx):
            raise


def draft_vllm_config(cfg, spec):
    """The drafter's VllmConfig as the proposer makes it (_create_draft_vllm_config), else CFG."""
    for mod, cls in (("vllm.v1.spec_decode.llm_base_proposer", "LLMBaseProposer"),
                     ("vllm.v1.spec_decode.eagle", "EagleProposer")):
        try:
            P = getattr(__import__(mod, fromlist=[cls]), cls)
        except Exception:
            continue
        make = getattr(P, "_create_draft_vllm_config", None)
        if make is not None:
            return make(types.SimpleNamespace(speculative_config=spec, vllm_config=cfg))
    return cfg


def check(rec, args, ctx):
    facts = rec["facts"]
    ns = None
    with cm.Stage(rec, "argparse", ctx):
        problems = cm.transcription_problems(args)
        if problems:
            raise cm.MissingInput("; ".join(problems))
        ns = cm.parse_with(ctx["parser"], ["serve"] + list(args))
        if getattr(ns, "model_tag", None) is not None:
            ns.model = ns.model_tag
        validate = getattr(ctx["serve_mod"], "validate_parsed_serve_args", None)
        if validate is not None:
            validate(ns)
    req = ctx["req"]
    ctx["mentions"] = {}
    with cm.Stage(rec, "config", ctx):
        asked = getattr(ns, "model", None)
        facts["model_asked"] = asked
        if ctx.get("model_dir"):
            if not os.path.isfile(os.path.join(ctx["model_dir"], "config.json")):
                raise cm.MissingInput("model_dir %s has no config.json (supply the checkpoint's metadata)" % ctx["model_dir"])
            ns.model = ctx["model_dir"]
        else:
            ns.model = cm.local_dir_or_missing(asked or req.get("model_id"), "the target model", ctx, "model")
        if getattr(ns, "tokenizer", None):
            ns.tokenizer = cm.local_dir_or_missing(ns.tokenizer, "the tokenizer", ctx, "tokenizer")
        if getattr(ns, "trust_remote_code", False) and not ctx["allow_remote_code"]:
            ns.trust_remote_code = False
            rec["notes"].append("--trust-remote-code forced off (allow_remote_code is false): the checkpoint's "
                                "code is never run")
        sc = getattr(ns, "speculative_config", None)
        if isinstance(sc, dict) and sc.get("model"):
            draft = sc["model"]
            sc = dict(sc)
            sc["model"] = cm.local_dir_or_missing(draft, "the draft model", ctx, "model")
            ns.speculative_config = sc
            ctx["mentions"][sc["model"]] = "the draft model %r (its config.json at %s)" % (draft, sc["model"])
        ctx["mentions"][ns.model] = "the target checkpoint metadata (config.json) at %s" % ns.model
        ea = ctx["AsyncEngineArgs"].from_cli_args(ns)
        try:
            cfg = ea.create_engine_config(usage_context=ctx["UsageContext"].OPENAI_API_SERVER)
        except Exception as e:
            # The reasoning / tool-call parsers read the model's tokens from its tokenizer at config;
            # without the tokenizer files here, the rest of the plan is asked without them and the
            # parsers' token checks are said not asked (facts.not_asked).
            parsers = [n for n in ("reasoning_parser", "tool_call_parser") if getattr(ns, n, None)]
            if not parsers or not cm.tokenizer_missing(e, ns.model):
                raise
            facts["not_asked"] = ["the model's tokens for %s (the tokenizer files are not in %s)" % (
                " and ".join("--%s %s" % (n.replace("_", "-"), getattr(ns, n)) for n in parsers), ns.model)]
            for n in parsers:
                setattr(ns, n, None)
            if getattr(ns, "enable_auto_tool_choice", False):
                ns.enable_auto_tool_choice = False
            ea = ctx["AsyncEngineArgs"].from_cli_args(ns)
            cfg = ea.create_engine_config(usage_context=ctx["UsageContext"].OPENAI_API_SERVER)
        facts.update(config_facts(cfg))
    model_cls = None
    with cm.Stage(rec, "model-interface", ctx):
        from vllm.model_executor.model_loader.utils import get_model_architecture
        from vllm.model_executor.models import interfaces as itf

        model_cls, arch = get_model_architecture(cfg.model_config)
        facts["model_class"] = "%s.%s" % (model_cls.__module__, model_cls.__name__)
        for name in ("supports_eagle3", "supports_eagle", "is_hybrid", "supports_pp", "has_inner_state",
                     "is_attention_free", "supports_mrope"):
            fn = getattr(itf, name, None)
            if fn is not None:
                try:
                    facts["model_" + name] = bool(fn(model_cls))
                except Exception:
                    pass
        spec = cfg.speculative_config
        if spec is not None and getp(spec, "method") == "eagle3":
            use_aux = True
            econf = getattr(getp(spec, "draft_model_config.hf_config"), "eagle_config", None)
            if isinstance(econf, dict):
                use_aux = econf.get("use_aux_hidden_state", True)
            facts["eagle3_use_aux_hidden_state"] = use_aux
            if use_aux and hasattr(itf, "supports_eagle3") and not itf.supports_eagle3(model_cls):
                # The GPU model runner's check (vllm/v1/worker/gpu_model_runner.py), raised at load time.
                raise RuntimeError("Model does not support EAGLE3 interface but aux_hidden_state_outputs was requested")
    with cm.Stage(rec, "backend-selection", ctx):
        mc = cfg.model_config
        target, shown, rejected = select_backend(cfg, mc, getp(cfg, "cache_config.cache_dtype"), ctx)
        facts["attention_backend"] = backend_name(target)
        facts["selector_inputs"] = shown
        if rejected is not None:
            facts["attention_backends_rejected"] = rejected
        drafter = None
        spec = cfg.speculative_config
        dmc = getp(spec, "draft_model_config") if spec is not None else None
        if dmc is not None and getp(spec, "method") not in ("ngram", "suffix", "ngram_gpu"):
            draft_cfg = draft_vllm_config(cfg, spec)
            drafter, dshown, drejected = select_backend(draft_cfg, dmc, getp(draft_cfg, "cache_config.cache_dtype"), ctx)
            facts["drafter_attention_backend"] = backend_name(drafter)
            facts["drafter_selector_inputs"] = dshown
            if drejected is not None:
                facts["drafter_attention_backends_rejected"] = drejected
        else:
            facts["drafter_attention_backend"] = None
        mode, sizes = resolve_cudagraph(cfg, target, drafter, mc, ctx)
        facts["cudagraph_mode"] = mode
        facts["cudagraph_capture_sizes"] = sizes
    # Whole plans are built; a variant of the plan only when building the plan was refused (the
    # variant may change what refused it, e.g. an attention layer's backend).
    plan = ctx.get("plan_record") or {}
    if ctx.get("whole_plan") or (plan.get("status") == "refused" and plan.get("stage") == "model-construction"):
        with cm.Stage(rec, "model-construction", ctx):
            construct(cfg, rec, ctx)


if __name__ == "__main__":
    cm.run_adapter(ENGINE, setup, check)
