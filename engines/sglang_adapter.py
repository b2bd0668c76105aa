# Engine adapter for SGLang: asks the installed SGLang itself whether it accepts a serving plan,
# without loading weights or touching a GPU. For the user's exact `sglang serve` /
# `python -m sglang.launch_server` arguments it runs SGLang's own parser (prepare_server_args), the
# ServerArgs resolution pipeline (resolve_once(): model, attention backend, speculative, CUDA graph,
# memory hooks) and its post-resolution checks (check_server_args()), then reads the resolved values
# (attention backends for target and drafter, speculative steps / top-k / draft tokens, CUDA-graph
# batch sizes, KV dtype). On a machine without the GPU, the GPU is declared through SGLang's own
# platform override (sglang.srt.runtime_context.override_platform: is_cuda, is_sm90 / is_sm100 ...,
# device_sm, device_capability) and its memory through the device-memory probe the resolution hooks
# call. Then (0.5.2x) the model is built the way SGLang's loader builds it, on the meta device as rank 0
# of the plan's parallel widths (construct). Protocol: engines/README.md; shared machinery: common.py
# (standard library + SGLang only).
import contextlib
import importlib
import importlib.util
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as cm  # noqa: E402

ENGINE = "sglang"

FACT_FIELDS = (
    "attention_backend", "prefill_attention_backend", "decode_attention_backend",
    "speculative_algorithm", "speculative_draft_model_path", "speculative_num_steps",
    "speculative_eagle_topk", "speculative_num_draft_tokens", "speculative_draft_attention_backend",
    "speculative_attention_mode", "speculative_moe_runner_backend", "kv_cache_dtype", "page_size", "dtype",
    "quantization", "tp_size", "dp_size", "ep_size", "pp_size", "enable_dp_attention", "mem_fraction_static",
    "chunked_prefill_size", "max_running_requests", "cuda_graph_max_bs", "cuda_graph_bs", "disable_cuda_graph",
    "disable_radix_cache", "context_length", "device", "moe_runner_backend", "mamba_ssm_dtype",
)


# SGLang's platform facts and the utils.common probe answering each (0.5.23's
# runtime_context._PLATFORM_PROBES / _PLATFORM_VALUES): rebound one by one in releases without
# override_platform.
PLATFORM_PROBES = {
    "is_cuda": "is_cuda", "is_hip": "is_hip", "is_npu": "is_npu", "is_xpu": "is_xpu", "is_musa": "is_musa",
    "is_mps": "is_mps", "is_sm90": "is_sm90_supported", "is_sm100": "is_sm100_supported",
    "is_sm100_or_sm110": "is_sm100_or_sm110_supported", "is_sm110": "is_sm110_supported",
    "is_sm120": "is_sm120_supported", "is_blackwell": "is_blackwell_supported",
    "is_hopper_with_cuda_12_3": "is_hopper_with_cuda_12_3", "has_amx": "cpu_has_amx_support",
    "has_flashinfer": "is_flashinfer_available", "device_sm": "get_device_sm",
    "device_capability": "get_device_capability",
}


def platform_facts(gpu, torch_cuda):
    if cm.is_amd(gpu):
        major, minor = cm.amd_capability(gpu["arch"])
        return {
            "is_cuda": False, "is_hip": True, "is_npu": False, "is_xpu": False, "is_musa": False, "is_mps": False,
            "is_sm90": False, "is_sm100": False, "is_sm100_or_sm110": False, "is_sm110": False, "is_sm120": False,
            "is_blackwell": False, "is_hopper_with_cuda_12_3": False, "has_amx": False, "has_flashinfer": False,
            "device_sm": major * 10 + minor, "device_capability": (major, minor),
        }
    major, minor = gpu["cc"]
    cuda = tuple(int(x) for x in (torch_cuda or "0.0").split(".")[:2])
    return {
        "is_cuda": True, "is_hip": False, "is_npu": False, "is_xpu": False, "is_musa": False, "is_mps": False,
        "is_sm90": major == 9, "is_sm100": major == 10, "is_sm100_or_sm110": major in (10, 11),
        "is_sm110": major == 11, "is_sm120": major == 12, "is_blackwell": major in (10, 11, 12),
        "is_hopper_with_cuda_12_3": major == 9 and cuda >= (12, 3), "has_amx": False,
        "has_flashinfer": importlib.util.find_spec("flashinfer") is not None,
        "device_sm": major * 10 + minor, "device_capability": (major, minor),
    }


def rebind_probes(sgc, facts, bound=None):
    """Each utils.common platform probe answering FACTS, wherever a loaded SGLang module bound it;
    the bindings per probe go into BOUND. Returns how many were rebound."""
    bound = {} if bound is None else bound
    for fact, probe in PLATFORM_PROBES.items():
        original = getattr(sgc, probe, None)
        if original is not None and fact in facts:
            value = facts[fact]
            bound[probe] = bound.get(probe, 0) + cm.rebind("sglang", probe, original, lambda *a, _v=value, **k: _v)
    return sum(bound.values())


def declare_amd_arch(gpu, sgc, plat, skipped):
    """The gfx target for SGLang's own arch checks: utils.common.is_gfx95_supported (rebound wherever
    it is bound) and torch.cuda.get_device_properties().gcnArchName for code that reads it directly."""
    import torch

    arch = gpu["arch"]
    gfx95 = arch.startswith("gfx95")
    n = cm.rebind("sglang", "is_gfx95_supported", sgc.is_gfx95_supported, lambda: gfx95)
    plat["arch_bindings"] = "is_gfx95_supported -> %s (%d bindings); torch.cuda.get_device_properties().gcnArchName" \
        " -> %s" % (gfx95, n, arch)
    if getattr(torch.version, "hip", None) is None:
        skipped.append({"what": "ROCm kernels (sgl_kernel for ROCm, aiter, HIP torch)",
                        "why": "this interpreter's SGLang and torch are CUDA builds: SGLang's resolution runs its ROCm "
                               "branches (get_platform().is_hip), but code that asks torch.version.hip or imports "
                               "ROCm kernels at module level still sees a CUDA build"})


def setup(req, result):
    gpu = dict(req.get("gpu") or {})
    amd = cm.is_amd(gpu)
    declared = bool(gpu.get("declared", gpu.get("cc") is not None or amd))
    plat, skipped = result["platform"], result["skipped"]
    priv = cm.private_dir()
    os.environ["SGLANG_CACHE_DIR"] = os.path.join(priv, "cache", "sglang")
    os.environ["HUMMING_DISABLE_PARALLEL_BUILD"] = "1"
    os.environ.setdefault("SGLANG_DISABLE_REQUEST_LOGGING", "1")
    driver = cm.load_cuda_driver(plat, skipped, req.get("cuda_stub"))
    if driver != "real" and not declared:
        raise cm.MissingInput("the GPU: none is visible here and the request declares none "
                              "(gpu: {name, cc: [major, minor], count, declared: true})")
    if amd and not gpu.get("arch"):
        raise cm.MissingInput("the AMD GPU's gfx target (gpu: {vendor: amd, arch: gfx942, ...})")
    if amd:
        # A ROCm install has none of the CUDA-only kernel packages: hidden before SGLang imports them.
        plat["hidden_packages"] = list(cm.hide_packages(cm.CUDA_ONLY_PACKAGES).names)
        cm.declare_amd_device(gpu)  # before SGLang's modules read the arch at import
    import torch

    plat["torch"] = torch.__version__
    plat["torch_cuda"] = torch.version.cuda
    override = None
    if declared:
        facts = platform_facts(gpu, torch.version.cuda)
        from sglang.srt.utils import common as sgc

        if not amd and driver != "real":
            cm.declare_torch_device_queries(gpu, plat)
        if not amd:
            # Before the rest of SGLang loads: modules that keep a probe's answer at import
            # (`_is_cuda = is_cuda()` in the layers, read when a model is built) see the declared
            # NVIDIA GPU, as on the GPU host. (A declared AMD GPU keeps them: a CUDA environment
            # lacks the ROCm kernel packages those branches import.)
            early = rebind_probes(sgc, facts)
            plat["probes_at_import"] = "%d utils.common probes answer the declaration before SGLang's modules load" % (
                early)
        import sglang.srt.server_args  # noqa: F401  (loads the modules that bind the probes)

        try:
            import sglang.srt.arg_groups.pipeline  # noqa: F401  (0.5.2x: the resolution hooks)
        except ImportError:
            pass
        try:
            from sglang.srt.runtime_context import override_platform
        except ImportError:
            override_platform = None
        if override_platform is not None:
            override = override_platform(**facts)
            override.install()
            how = "sglang.srt.runtime_context.override_platform(%s)" % ", ".join("%s=%r" % kv for kv in facts.items())
        else:
            # Releases before the platform context (0.5.17): the same facts through the probe
            # functions themselves, rebound wherever a module bound them.
            bound = {}
            rebind_probes(sgc, facts, bound)
            how = "utils.common platform probes rebound (%s)" % ", ".join(
                "%s -> %r (%d)" % (probe, facts[f], bound[probe]) for f, probe in PLATFORM_PROBES.items() if probe in bound)
        mem_gib, mem_src = cm.declared_memory(gpu)
        mem_mib = mem_gib * 1024.0

        def declared_capacity(device=None):
            return mem_mib

        rebound = cm.rebind("sglang", "get_device_memory_capacity", sgc.get_device_memory_capacity, declared_capacity)
        if amd:
            declare_amd_arch(gpu, sgc, plat, skipped)
        plat.update(kind="declared", mechanism="%s; get_device_memory_capacity -> %.0f MiB (%d bindings)" % (
                        how, mem_mib, rebound),
                    name=gpu.get("name"), cc=list(facts["device_capability"]), count=int(gpu.get("count") or 1),
                    memory_gib=mem_gib, memory_source=mem_src)
        if amd:
            plat.update(vendor="amd", arch=gpu["arch"])
        if driver != "real":
            skipped.extend([
                {"what": "module-level device probes",
                 "why": "SGLang's utils.common probes (is_cuda, is_sm90_supported, ...) and torch.cuda's capability "
                        "and name answer the declared NVIDIA GPU from before SGLang's modules load; code that asks "
                        "torch.cuda.is_available() or the device itself still sees no CUDA (a declared AMD GPU: only "
                        "readers of get_platform() see it)"},
                {"what": "device memory / KV-cache capacity",
                 "why": "no GPU: the KV pool size and max concurrency come from profiling device memory; the "
                        "resolution hooks get the declared total memory only"},
                {"what": "weights, kernels, CUDA-graph capture",
                 "why": "no weights are loaded, no kernel runs or JIT-compiles, no graph is captured"},
            ])
    else:
        from sglang.srt.utils import common as sgc

        cap = sgc.get_device_capability()
        plat.update(kind="queried", mechanism="SGLang's own platform probes",
                    cc=list(cap) if cap and cap[0] is not None else None, name=torch.cuda.get_device_name(0))
    import sglang

    result["version"] = getattr(sglang, "__version__", None)
    from sglang.srt import server_args as sa_mod

    site = os.path.dirname(os.path.dirname(os.path.abspath(sglang.__file__)))
    return {"req": req, "sa_mod": sa_mod, "engine_roots": [site], "allow_remote_code": bool(req.get("allow_remote_code")),
            "model_dirs": dict(req.get("model_dirs") or {}), "declared": declared, "override": override,
            "rocm_emulated": amd and getattr(torch.version, "hip", None) is None}


def local_dir_or_missing(value, what, ctx):
    return cm.local_dir_or_missing(value, what, ctx, "model")


def parse_args(argv, ctx):
    """The argparse stage. SGLang 0.5.2x: prepare_server_args gives a ServerArgs whose resolution
    is a separate step (resolve_once). Earlier releases resolve inside ServerArgs.__post_init__, so
    only their parser runs here (prepare_server_args' own steps before from_cli_args) and the
    Namespace goes on to the config stage."""
    sa_mod = ctx["sa_mod"]
    if hasattr(sa_mod.ServerArgs, "resolve_once"):
        return sa_mod.prepare_server_args(argv)
    import argparse

    parser = argparse.ArgumentParser(prog="sglang serve")
    sa_mod.ServerArgs.add_cli_args(parser)
    if "--config" in argv:
        from sglang.srt.server_args_config_parser import ConfigArgumentMerger

        argv = ConfigArgumentMerger(parser).merge_config_with_args(argv)
    raw = parser.parse_args(argv)
    if hasattr(sa_mod, "_apply_fuseep_mode_env_compat"):
        sa_mod._apply_fuseep_mode_env_compat(raw, argv)
    return raw


def resolve(parsed, ctx):
    """The config stage's resolution and checks; returns (ServerArgs, its resolved values)."""
    sa_mod = ctx["sa_mod"]
    if isinstance(parsed, sa_mod.ServerArgs):
        parsed.resolve_once()
        parsed.check_server_args()
        return parsed, parsed.resolved_dict()
    sa = sa_mod.ServerArgs.from_cli_args(parsed)  # __post_init__ resolves
    sa.check_server_args()
    return sa, dict(vars(sa))


def check(rec, args, ctx):
    facts = rec["facts"]
    req = ctx["req"]
    sa = None
    with cm.Stage(rec, "argparse", ctx):
        problems = cm.transcription_problems(args)
        if problems:
            raise cm.MissingInput("; ".join(problems))
        argv = list(args)
        with cm.capture_stderr() as buf:
            try:
                sa = parse_args(argv, ctx)
            except SystemExit as e:
                if e.code in (0, None):
                    raise cm.ArgparseError("the arguments asked for help/version output")
                raise cm.argparse_failure(e, buf.getvalue()) from None
    ctx["mentions"] = {}
    with cm.Stage(rec, "config", ctx):
        asked = sa.model_path
        facts["model_asked"] = asked
        if ctx.get("model_dir"):
            if not os.path.isfile(os.path.join(ctx["model_dir"], "config.json")):
                raise cm.MissingInput("model_dir %s has no config.json (supply the checkpoint's metadata)" % ctx["model_dir"])
            sa.model_path = ctx["model_dir"]
        else:
            sa.model_path = local_dir_or_missing(asked or req.get("model_id"), "the target model", ctx)
        if getattr(sa, "tokenizer_path", None) and sa.tokenizer_path != asked:
            sa.tokenizer_path = cm_tok(sa.tokenizer_path, ctx)
        elif getattr(sa, "tokenizer_path", None) == asked:
            sa.tokenizer_path = sa.model_path
        draft = getattr(sa, "speculative_draft_model_path", None)
        if draft:
            sa.speculative_draft_model_path = local_dir_or_missing(draft, "the draft model", ctx)
            ctx["mentions"][sa.speculative_draft_model_path] = "the draft model %r (its config.json at %s)" % (
                draft, sa.speculative_draft_model_path)
        ctx["mentions"][sa.model_path] = "the target checkpoint metadata (config.json) at %s" % sa.model_path
        if getattr(sa, "trust_remote_code", False) and not ctx["allow_remote_code"]:
            sa.trust_remote_code = False
            rec["notes"].append("--trust-remote-code forced off (allow_remote_code is false): the checkpoint's "
                                "code is never run")
        if ctx["declared"] and getattr(sa, "device", None) in (None, "auto"):
            sa.device = "cuda"
            rec["notes"].append("--device cuda set (the declared GPU; SGLang would detect it on the GPU machine)")
        sa, resolved = resolve(sa, ctx)
        for k in FACT_FIELDS:
            if k in resolved:
                facts[k] = cm.plain(resolved[k])
    with cm.Stage(rec, "model-interface", ctx):
        try:
            from sglang.srt.arg_groups.overrides import model_config_of
        except ImportError:  # before 0.5.2x
            from sglang.srt.configs.model_config import ModelConfig

            def model_config_of(server_args):
                return ModelConfig.from_server_args(server_args)

        mc = model_config_of(sa)
        hf = getattr(mc, "hf_config", None)
        facts["architecture"] = (getattr(hf, "architectures", None) or [None])[0]
        facts["attention_arch"] = cm.plain(getattr(mc, "attention_arch", None))
        arch = getattr(mc, "attention_arch", None)
        facts["use_mla"] = getattr(arch, "name", str(arch)) == "MLA"
        for k in ("is_hybrid", "is_hybrid_swa", "is_multimodal", "num_nextn_predict_layers"):
            v = getattr(mc, k, None)
            if v is not None and not callable(v):
                facts["model_" + k] = cm.plain(v)
    # Names in the vLLM-shaped fact set the C++ side reads for both engines.
    decode = facts.get("decode_attention_backend") or facts.get("attention_backend")
    facts["attention_backend"] = facts.get("attention_backend")
    facts["drafter_attention_backend"] = (facts.get("speculative_draft_attention_backend") or decode) \
        if facts.get("speculative_algorithm") else None
    facts["method"] = facts.get("speculative_algorithm")
    facts["num_speculative_tokens"] = facts.get("speculative_num_steps")
    if facts.get("disable_cuda_graph") is not None:
        facts["cudagraph_mode"] = "NONE" if facts["disable_cuda_graph"] else "cuda_graph"
    facts["cudagraph_capture_sizes"] = facts.get("cuda_graph_bs")
    # Whole plans are built; a variant of the plan only when building the plan was refused (the
    # variant may change what refused it: the TP split, the quantization, the drafter).
    plan = ctx.get("plan_record") or {}
    if ctx.get("whole_plan") or (plan.get("status") == "refused" and plan.get("stage") == "model-construction"):
        with cm.Stage(rec, "model-construction", ctx):
            construct(sa, mc, resolved, rec, ctx)


# SGLang's parallel groups (runtime_context ParallelContext, 0.5.2x) and the width each has.
GROUP_WIDTHS = {"world_group": "launch_world_size", "tp_group": "tp_size", "pp_group": "pp_size",
                "moe_ep_group": "moe_ep_size", "moe_dp_group": "moe_dp_size", "moe_tp_group": "moe_tp_size",
                "attn_tp_group": "attn_tp_size", "attn_cp_group": "attn_cp_size",
                "shared_experts_tp_group": "tp_size", "dcp_group": "attn_dcp_size"}


def model_census(model):
    """What SGLang built (cm.model_census): its attention layers by class (RadixAttention; the
    backend is the one resolved at config), MoE layers by method."""
    return cm.model_census(model, lambda mod: type(mod).__name__ if hasattr(mod, "layer_id") and hasattr(
        mod, "tp_q_head_num") else None, "num_experts")


def model_modules(archs):
    """Every module of sglang.srt.models (by name) and the modules among them whose EntryClass names
    each of ARCHS, found by reading the sources; the second is None when some architecture is in no
    module's EntryClass."""
    import re
    import sglang.srt.models as models

    names, found = [], {}
    entry = re.compile(r"^EntryClass\s*=\s*(\[[^\]]*\]|[\w.]+)", re.M)
    for d in models.__path__:
        for name in sorted(os.listdir(d)):
            if not name.endswith(".py") or name.startswith("_"):
                continue
            names.append(name[:-3])
            try:
                with open(os.path.join(d, name), encoding="utf-8") as f:
                    text = f.read()
            except OSError:
                continue
            m = entry.search(text)
            if not m:
                continue
            listed = set(re.findall(r"\w+", m.group(1)))
            for arch in archs:
                if arch in listed and arch not in found:
                    found[arch] = name[:-3]
    return names, (sorted(set(found.values())) if all(a in found for a in archs) else None)


def add_to_registry(registry, modules):
    """MODULES' EntryClass in REGISTRY, as SGLang's registry adds them (models/registry.py
    import_model_classes: a list or one class, keyed by class name); a module that does not import is
    left out, as there."""
    for mod in modules:
        try:
            entry = importlib.import_module("sglang.srt.models." + mod).EntryClass
        except Exception:
            continue
        for cls in entry if isinstance(entry, list) else [entry]:
            registry.models.setdefault(cls.__name__, cls)


@contextlib.contextmanager
def registry_of(archs, rec):
    """SGLang's model registry holding the modules that name ARCHS: its registry imports all ~300 model
    modules (about 2 s here; the engine's own start-up pays it when it loads the model), and SGLang's
    own SGLANG_DISABLED_MODEL_ARCHS (module names the registry skips) leaves out the others; the
    classes are the ones the full registry holds, and resolve to the same class (the Transformers
    fallback is only taken for an architecture no module names, and then the registry is the full
    one). A later plan of the same process adds its modules to the registry the first one loaded
    (all of them when an architecture is in no module's EntryClass)."""
    names, modules = model_modules(archs)
    if "sglang.srt.models.registry" in sys.modules:
        from sglang.srt.models.registry import ModelRegistry

        add_to_registry(ModelRegistry, modules if modules else names)
        if modules:
            rec["facts"]["model_modules"] = ["sglang.srt.models." + m for m in modules]
        yield
        return
    saved = os.environ.get("SGLANG_DISABLED_MODEL_ARCHS")
    if modules:
        os.environ["SGLANG_DISABLED_MODEL_ARCHS"] = ",".join(n for n in names if n not in modules)
    try:
        import sglang.srt.models.registry  # noqa: F401  (reads the variable as it registers the models)
    finally:
        if saved is None:
            os.environ.pop("SGLANG_DISABLED_MODEL_ARCHS", None)
        else:
            os.environ["SGLANG_DISABLED_MODEL_ARCHS"] = saved
    if modules:
        rec["facts"]["model_modules"] = ["sglang.srt.models." + m for m in modules]
    yield


@contextlib.contextmanager
def declared_device(sgc):
    """While the model is built: utils.common.get_device (which layers ask for their tensors' device,
    asking torch.cuda.is_available() itself) answers the declared GPU's "cuda", put back afterwards;
    the tensors themselves go on the meta device (cm.on_meta)."""
    original = sgc.get_device
    n = cm.rebind("sglang", "get_device", original, lambda device_id=None: "cuda" if device_id is None else
                  "cuda:%d" % device_id)
    try:
        yield n
    finally:
        replaced = getattr(sgc, "get_device")
        cm.rebind("sglang", "get_device", replaced, original)


@contextlib.contextmanager
def own_context_rank0(sa, rc):
    """0.5.2x: rank 0's parallel state in a runtime context of its own (runtime_context.create_context
    with launcher rank 0: ranks and widths are SGLang's own derivation from the plan), whose groups
    are stand-ins of their widths; the process's context is left as it was."""
    context = rc.create_context(sa, role="scheduler", ranks=rc.SpawnRanks(world_rank=0, dp_rank=None, gpu_id=0))
    with rc.use_context(context):
        par = rc.get_parallel()
        par.override_permanently(**{g: cm.GroupStandIn(g, getattr(par, w)) for g, w in GROUP_WIDTHS.items()})
        yield


@contextlib.contextmanager
def process_rank0(sa, mc, rc):
    """Releases without a runtime context of their own (0.5.17): the process's parallel state set to
    rank 0 of the plan's widths while the model is built, as the scheduler sets it (its ParallelState
    from the server args, distributed/bootstrap.py: the groups parallel_state.initialize_model_parallel
    makes, as stand-ins of their widths; dp_attention.initialize_dp_attention; the server args
    published), and put back afterwards (runtime_context.reset_context: nothing was published before)."""
    from sglang.srt.distributed import parallel_state as ps
    from sglang.srt.layers import dp_attention as dpa

    tp, pp = int(sa.tp_size), int(sa.pp_size)
    attn_cp = int(getattr(sa, "attn_cp_size", 1) or 1)
    _, attn_tp, _, _ = dpa.compute_dp_attention_world_info(sa.enable_dp_attention, 0, tp, sa.dp_size, attn_cp)
    ep, moe_dp = int(sa.ep_size or 1), int(getattr(sa, "moe_dp_size", 1) or 1)
    widths = {"_WORLD": tp * pp, "_TP": tp, "_PP": pp, "_ATTN_TP": attn_tp, "_ATTN_CP": attn_cp,
              "_DCP": int(getattr(sa, "dcp_size", 1) or 1), "_MOE_EP": ep, "_MOE_DP": moe_dp,
              "_MOE_TP": max(1, tp // ep // moe_dp)}
    saved = {name: getattr(ps, name) for name in widths if hasattr(ps, name)}
    saved_dp = (getattr(dpa, "_ATTN_DP_RANK", None), getattr(dpa, "_ATTN_DP_SIZE", None))
    try:
        for name in saved:
            setattr(ps, name, cm.GroupStandIn(name.strip("_").lower(), widths[name]))
        rc.publish(sa, role="scheduler")
        dpa.initialize_dp_attention(sa, mc)
        yield
    finally:
        for name, value in saved.items():
            setattr(ps, name, value)
        dpa._ATTN_DP_RANK, dpa._ATTN_DP_SIZE = saved_dp
        rc.reset_context()


def construct(sa, mc, resolved, rec, ctx):
    """The target model (and the drafter of EAGLE / EAGLE3 / MTP / standalone plans) built the way
    SGLang's loader builds it (model_loader/loader.py DefaultModelLoader.load_model: the model's
    default dtype, the quantization config, _initialize_model), on the meta device, as rank 0 of the
    plan's parallel widths (own_context_rank0, or process_rank0 before 0.5.2x): the layers' own checks
    (quantization block shapes against the TP split, MoE methods) run; no weight is read and no
    memory is allocated."""
    facts = rec["facts"]
    import torch

    # The resolved values (0.5.2x keeps them apart from the fields: an MTP plan's draft path is the
    # target's, filled in by the speculative hook).
    draft_path = resolved.get("speculative_draft_model_path") if resolved.get("speculative_algorithm") else None
    built = []
    try:
        from sglang.srt import runtime_context as rc
        from sglang.srt.configs.load_config import LoadConfig
        from sglang.srt.configs.model_config import ModelConfig
        from sglang.srt.model_loader.loader import _get_quantization_config, _initialize_model
        try:
            from sglang.srt.utils import set_default_torch_dtype
        except ImportError:
            from sglang.srt.model_loader.utils import set_default_torch_dtype

        dmc = ModelConfig.from_server_args(sa, model_path=draft_path, is_draft_model=True) if draft_path else None
        archs = [a for c in (mc, dmc) if c is not None for a in (getattr(c.hf_config, "architectures", None) or [])[:1]]
        rank0 = own_context_rank0(sa, rc) if hasattr(rc, "create_context") else process_rank0(sa, mc, rc)
        from sglang.srt.utils import common as sgc

        with registry_of(archs, rec), rank0, cm.device_stand_ins(ctx["req"].get("gpu")), declared_device(sgc):
            load = LoadConfig()
            # The quantization config resolves the model class, which loads SGLang's model modules:
            # before the meta device, as at the engine's start (their import-time tensors stay real).
            quant = _get_quantization_config(mc, load)
            with set_default_torch_dtype(mc.dtype), torch.device("meta"), cm.on_meta():
                target = _initialize_model(mc, load, quant)
            facts["model_construction"] = model_census(target)
            built.append("target")
            del target
            if dmc is not None:
                dquant = _get_quantization_config(dmc, load)
                with set_default_torch_dtype(dmc.dtype), torch.device("meta"), cm.on_meta():
                    drafter = _initialize_model(dmc, load, dquant)
                facts["drafter_construction"] = model_census(drafter)
                built.append("drafter")
    except Exception as e:
        # What this machine lacks (the device, real values, ROCm packages) stops the construction;
        # anything else is the engine's objection.
        if not cm.construction_stopped(e, rec, built, ctx):
            raise


def cm_tok(path, ctx):
    return cm.local_dir_or_missing(path, "the tokenizer", ctx, "tokenizer")


if __name__ == "__main__":
    cm.run_adapter(ENGINE, setup, check)
