# Shared part of the engine adapters (engines/<engine>_adapter.py): the runner protocol, the
# specprobe-engine/1 result skeleton, request reading and validation, argument rewriting (cells,
# model paths, trust_remote_code), the private-dir environment, the network / write guard, the
# CUDA driver stub, and the classification of exceptions into refused / missing-input /
# adapter-error. Standard library only. specprobe writes this file next to the adapter in the
# private dir; each adapter puts its own directory on sys.path before importing it (the import then
# works under `python -I` too). Protocol and classification: engines/README.md.
import contextlib
import ctypes
import io
import json
import os
import re
import sys
import time
import traceback
import types

SCHEMA = "specprobe-engine/1"
STATUSES = ("ok", "refused", "missing-input", "adapter-error")
STAGES = ("request", "import", "argparse", "config", "model-interface", "backend-selection")
MAX_TEXT = 4000
MAX_CELLS = 256

ADAPTER_DIR = os.path.dirname(os.path.abspath(__file__))


# --------------------------------------------------------------------------------------------------
# Protocol


_PROTO = None  # the real stdout, kept for the protocol lines (see protect_stdout)


def protect_stdout():
    """Keeps the protocol channel clean: the real stdout is duplicated for the protocol lines and
    fd 1 (and sys.stdout) then point at stderr, so whatever the engine or a native library prints
    lands on stderr."""
    global _PROTO
    if _PROTO is None:
        _PROTO = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
        sys.stdout.flush()
        os.dup2(2, 1)
        sys.stdout = sys.stderr
    return _PROTO


def proto_write(line):
    out = _PROTO or sys.stdout
    out.write(line)
    out.flush()


def emit(result):
    proto_write("@@specprobe result " + json.dumps(result, default=str) + "\n")


def phase(name):
    sys.stderr.write("@@specprobe phase %s\n" % name)
    sys.stderr.flush()
    path = os.environ.get("SPECPROBE_ENGINE_PHASE_FILE") or os.environ.get("SPECPROBE_STACK_PHASE_FILE")
    if not path:
        return
    try:
        with open(path + ".tmp", "w") as f:
            f.write(name)
        os.replace(path + ".tmp", path)
    except OSError:
        pass


def clip(text, n=MAX_TEXT):
    text = str(text)
    return text if len(text) <= n else text[:n] + "..."


class RequestError(Exception):
    """The request itself is malformed (an adapter-error at stage "request")."""


def read_request(argv, stdin=None):
    """The request: --request FILE, --request-json TEXT, --specs JSON (what probes/runner appends:
    a list whose first element is the request or has it under "params"), else stdin."""
    text = None
    if "--request" in argv:
        i = argv.index("--request")
        if i + 1 >= len(argv):
            raise RequestError("--request needs a file name")
        with open(argv[i + 1], encoding="utf-8") as f:
            text = f.read()
    elif "--request-json" in argv:
        i = argv.index("--request-json")
        if i + 1 >= len(argv):
            raise RequestError("--request-json needs a JSON text")
        text = argv[i + 1]
    elif "--specs" in argv:
        i = argv.index("--specs")
        if i + 1 >= len(argv):
            raise RequestError("--specs needs a JSON text")
        specs = json.loads(argv[i + 1])
        if isinstance(specs, list):
            if not specs:
                raise RequestError("--specs is an empty list")
            specs = specs[0]
        if isinstance(specs, dict) and isinstance(specs.get("params"), dict):
            specs = specs["params"]
        return validate_request(specs)
    else:
        text = (stdin or sys.stdin).read()
    try:
        req = json.loads(text)
    except ValueError as e:
        raise RequestError("the request is not JSON: %s" % e)
    return validate_request(req)


def _is_str_list(v):
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


_ENV_SETTING = re.compile(r"(VLLM|SGLANG|SGL)_[A-Z0-9_]+|FLASH_ATTENTION_TRITON_AMD_ENABLE")
_ENV_OWN = re.compile(r".*_(PATH|DIR|ROOT|HOME|FILE|PREFIX)|(VLLM|SGLANG)_(LOGGING|CONFIGURE_LOGGING|HOST_IP|PORT|RPC|"
                      r"CACHE|CONFIG|ASSETS|USAGE|NO_USAGE|DO_NOT_TRACK|PLUGINS).*")


_ENV_SECRET = re.compile(r".*(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH).*")


def engine_setting_env(name):
    """An environment variable the engine reads as a setting, which the deploy sets (the same rule as
    specprobe's engine_setting_env): applied before the engine is imported. Never a credential."""
    return bool(_ENV_SETTING.fullmatch(name)) and not _ENV_OWN.fullmatch(name) and not _ENV_SECRET.fullmatch(name)


def validate_request(req):
    if not isinstance(req, dict):
        raise RequestError("the request is not a JSON object")
    if not _is_str_list(req.get("args", [])):
        raise RequestError("args must be a list of strings")
    for key in ("model_dir", "model_id"):
        if req.get(key) is not None and not isinstance(req[key], str):
            raise RequestError("%s must be a string or null" % key)
    if req.get("model_dir") is not None and not os.path.isabs(req["model_dir"]):
        raise RequestError("model_dir must be an absolute path")
    gpu = req.get("gpu")
    if gpu is not None:
        if not isinstance(gpu, dict):
            raise RequestError("gpu must be an object")
        cc = gpu.get("cc")
        amd = str(gpu.get("vendor") or "").lower() == "amd" or gpu.get("arch") is not None
        if amd:
            if not (isinstance(gpu.get("arch"), str) and re.fullmatch(r"gfx[0-9]{2,4}[0-9a-z]?", gpu["arch"])):
                raise RequestError("a declared AMD gpu needs arch: a gfx target such as gfx942")
        elif gpu.get("declared", cc is not None):
            if not (isinstance(cc, list) and len(cc) == 2 and all(isinstance(x, int) and 0 <= x < 100 for x in cc)):
                raise RequestError("a declared gpu needs cc: [major, minor]")
        if gpu.get("count") is not None and not (isinstance(gpu["count"], int) and 1 <= gpu["count"] <= 4096):
            raise RequestError("gpu.count must be a positive integer")
        for key in ("sm_count", "compute_units"):
            if gpu.get(key) is not None and not (isinstance(gpu[key], int) and 1 <= gpu[key] <= 100000):
                raise RequestError("gpu.%s must be a positive integer" % key)
    cells = req.get("cells", [])
    if not isinstance(cells, list) or len(cells) > MAX_CELLS:
        raise RequestError("cells must be a list of at most %d objects" % MAX_CELLS)
    seen = set()
    for c in cells:
        if not isinstance(c, dict) or not isinstance(c.get("id"), str) or not c["id"]:
            raise RequestError("each cell needs a non-empty string id")
        if c["id"] in seen:
            raise RequestError("duplicate cell id %r" % c["id"])
        seen.add(c["id"])
        if "args" in c and not _is_str_list(c["args"]):
            raise RequestError("cell %r: args must be a list of strings" % c["id"])
        if c.get("model_dir") is not None and not (isinstance(c["model_dir"], str) and os.path.isabs(c["model_dir"])):
            raise RequestError("cell %r: model_dir must be an absolute path" % c["id"])
        if not isinstance(c.get("args_override", {}), dict):
            raise RequestError("cell %r: args_override must be an object" % c["id"])
    env = req.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise RequestError("env must map variable names to strings")
    bad = sorted(k for k in env if not engine_setting_env(k))
    if bad:
        raise RequestError("env: %s %s not an engine setting the adapter passes on (VLLM_*, SGLANG_*, SGL_* "
                           "settings; not paths, caches, logging, networking or credentials)" % (", ".join(bad),
                                                                                    "is" if len(bad) == 1 else "are"))
    md = req.get("model_dirs", {})
    if not isinstance(md, dict) or not all(isinstance(k, str) and isinstance(v, str) and os.path.isabs(v) for k, v in md.items()):
        raise RequestError("model_dirs must map model ids to absolute directories")
    if not isinstance(req.get("allow_remote_code", False), bool):
        raise RequestError("allow_remote_code must be true or false")
    return req


# --------------------------------------------------------------------------------------------------
# Arguments


def _flag_key(tok):
    """'--tensor_parallel_size=8' -> '--tensor-parallel-size' (argparse spellings compare equal)."""
    name = tok.split("=", 1)[0]
    if name.startswith("--"):
        return "--" + name[2:].replace("_", "-")
    return name


def _takes_value(args, i):
    """Whether args[i] (a flag without '=') is followed by its value."""
    if i + 1 >= len(args):
        return False
    nxt = args[i + 1]
    if not nxt.startswith("-"):
        return True
    return bool(re.match(r"^-\d", nxt))  # a negative number


def find_flag(args, flag):
    """(index, value, has_inline_value) of the last occurrence of FLAG, else None."""
    key = _flag_key(flag)
    found = None
    for i, tok in enumerate(args):
        if _flag_key(tok) == key and tok.startswith("-"):
            if "=" in tok:
                found = (i, tok.split("=", 1)[1], True)
            elif _takes_value(args, i):
                found = (i, args[i + 1], False)
            else:
                found = (i, None, False)
    return found


def remove_flag(args, flag):
    key = _flag_key(flag)
    out, i = [], 0
    while i < len(args):
        tok = args[i]
        if tok.startswith("-") and _flag_key(tok) == key:
            i += 1 if ("=" in tok or not _takes_value(args, i)) else 2
            continue
        out.append(tok)
        i += 1
    return out


def apply_overrides(args, overrides):
    """A cell's args_override on top of ARGS. A value replaces the flag's value (appended when the
    flag is absent); null removes the flag; true makes it a bare flag; false removes it; an object
    for a flag whose current value is a JSON object is merged into it (top-level keys); other
    objects and lists are written as JSON."""
    args = list(args)
    for flag, value in overrides.items():
        if not isinstance(flag, str) or not flag.startswith("-"):
            raise RequestError("args_override key %r is not a flag" % (flag,))
        cur = find_flag(args, flag)
        if value is None or value is False:
            args = remove_flag(args, flag)
            continue
        if value is True:
            if cur is None:
                args.append(flag)
            continue
        if isinstance(value, dict) and cur is not None and cur[1] is not None:
            try:
                base = json.loads(cur[1])
            except ValueError:
                base = None
            if isinstance(base, dict):
                base.update(value)
                value = base
        text = json.dumps(value) if isinstance(value, (dict, list)) else str(value)
        if cur is None:
            args += [flag, text]
        else:
            i, old, inline = cur
            if inline:
                args[i] = args[i].split("=", 1)[0] + "=" + text
            elif old is not None:
                args[i + 1] = text
            else:
                args.insert(i + 1, text)
    return args


def cell_args(base_args, cell):
    if "args" in cell:
        return list(cell["args"])
    return apply_overrides(base_args, cell.get("args_override", {}))


_SHELL_VAR = re.compile(r"\$(\{[A-Za-z_][A-Za-z0-9_]*[^}]*\}|[A-Za-z_][A-Za-z0-9_]*|\()")
_DASHES = {"\u2014": "EM DASH", "\u2013": "EN DASH", "\u2012": "FIGURE DASH", "\u2010": "HYPHEN",
           "\u2011": "NON-BREAKING HYPHEN", "\u2212": "MINUS SIGN", "\ufe63": "SMALL HYPHEN-MINUS",
           "\uff0d": "FULLWIDTH HYPHEN-MINUS"}
_QUOTES = {"\u201c": "LEFT DOUBLE QUOTATION MARK", "\u201d": "RIGHT DOUBLE QUOTATION MARK",
           "\u2018": "LEFT SINGLE QUOTATION MARK", "\u2019": "RIGHT SINGLE QUOTATION MARK"}


def transcription_problems(args):
    """Inputs the shell or a copy-paste left unfinished: an unexpanded $VAR / ${VAR} / $(...),
    a Unicode dash where '--' belongs, typographic quotes around a JSON value. Each is a
    missing input (the value meant), not the engine's objection."""
    out = []
    for tok in args:
        m = _SHELL_VAR.search(tok)
        if m:
            out.append("the value of shell expression '%s' in argument %r (left unexpanded: supply the "
                       "value the shell would have substituted)" % (m.group(0) if m.group(1) != "(" else "$(...)", tok))
            continue
        if tok and tok[0] in _DASHES:
            out.append("argument %r starts with U+%04X %s instead of ASCII '-' (a copy-paste artifact: supply "
                       "it as %r)" % (tok, ord(tok[0]), _DASHES[tok[0]], "--" + tok.lstrip("".join(_DASHES) + "-")))
            continue
        q = [c for c in tok if c in _QUOTES]
        if q and (tok.lstrip().startswith(("{", "\u201c", "\u2018")) or ":" in tok):
            out.append("argument %r contains U+%04X %s where JSON needs an ASCII quote (a copy-paste "
                       "artifact: supply the ASCII form)" % (tok, ord(q[0]), _QUOTES[q[0]]))
    return out


# --------------------------------------------------------------------------------------------------
# Environment: private dir, offline switches, CUDA driver stub


def private_dir():
    """The only directory the adapter and the engine may write: SPECPROBE_ENGINE_PRIVATE_DIR, else
    HOME (specprobe points HOME, TMPDIR and the caches into its private dir)."""
    d = os.environ.get("SPECPROBE_ENGINE_PRIVATE_DIR") or os.environ.get("HOME")
    if not d or d == "/" or not os.path.isdir(d):
        raise RequestError("no private dir: set SPECPROBE_ENGINE_PRIVATE_DIR (or HOME) to an existing directory")
    return os.path.realpath(d)


def offline_environment(priv, extra=None):
    """Environment set before the engine is imported: every cache into PRIV, Hub and telemetry off."""
    cache = os.path.join(priv, "cache")
    env = {
        "HOME": priv,
        "TMPDIR": os.path.join(priv, "tmp"),
        "XDG_CACHE_HOME": cache,
        "XDG_CONFIG_HOME": os.path.join(priv, "config"),
        "XDG_DATA_HOME": os.path.join(priv, "data"),
        "HF_HOME": os.path.join(cache, "huggingface"),
        "HF_HUB_CACHE": os.path.join(cache, "huggingface", "hub"),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1",
        "DO_NOT_TRACK": "1",
        "TRITON_CACHE_DIR": os.path.join(cache, "triton"),
        "TORCHINDUCTOR_CACHE_DIR": os.path.join(cache, "inductor"),
        "TORCH_HOME": os.path.join(cache, "torch"),
        "TORCH_EXTENSIONS_DIR": os.path.join(cache, "torch_extensions"),
        "CUDA_CACHE_PATH": os.path.join(cache, "nv"),
        "NUMBA_CACHE_DIR": os.path.join(cache, "numba"),
        "MPLCONFIGDIR": os.path.join(cache, "matplotlib"),
        "TIKTOKEN_CACHE_DIR": os.path.join(cache, "tiktoken"),
        "OUTLINES_CACHE_DIR": os.path.join(cache, "outlines"),
        "MODELSCOPE_CACHE": os.path.join(cache, "modelscope"),
        "FLASHINFER_WORKSPACE_BASE": os.path.join(cache, "flashinfer"),
        "CUTE_DSL_CACHE_DIR": os.path.join(cache, "cute_dsl"),
        "TVM_FFI_CACHE_DIR": os.path.join(cache, "tvm_ffi"),
        "PYTHONDONTWRITEBYTECODE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "TVM_FFI_DISABLE_TORCH_C_DLPACK": "1",  # else tvm-ffi compiles an optional torch addon (~60 s)
        "HUMMING_DISABLE_PARALLEL_BUILD": "1",  # else humming-kernels builds helpers in the background
    }
    env.update(extra or {})
    for k, v in env.items():
        os.environ[k] = v
    for d in (env["TMPDIR"], cache, env["XDG_CONFIG_HOME"]):
        os.makedirs(d, exist_ok=True)
    import tempfile
    tempfile.tempdir = env["TMPDIR"]
    return env


STUB_CANDIDATES = (
    "{cuda}/lib64/stubs/libcuda.so",
    "{cuda}/targets/x86_64-linux/lib/stubs/libcuda.so",
    "{cuda}/targets/sbsa-linux/lib/stubs/libcuda.so",
    "{cuda}/lib/stubs/libcuda.so",
)


def find_cuda_stub(explicit=None):
    if explicit:
        return explicit if os.path.isfile(explicit) else None
    roots = []
    for var in ("SPECPROBE_CUDA_STUB",):
        if os.environ.get(var) and os.path.isfile(os.environ[var]):
            return os.environ[var]
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            roots.append(os.environ[var])
    roots += ["/usr/local/cuda"] + sorted(
        (os.path.join("/usr/local", d) for d in os.listdir("/usr/local") if d.startswith("cuda-")), reverse=True)
    for r in roots:
        for pat in STUB_CANDIDATES:
            p = pat.format(cuda=r)
            if os.path.isfile(p):
                return p
    return None


def load_cuda_driver(platform_info, skipped, stub_path=None):
    """Makes libcuda.so.1 loadable. A real driver with a device wins (nothing to declare); else the
    toolkit's driver stub is loaded RTLD_GLOBAL under its soname libcuda.so.1, so that later
    dlopen("libcuda.so.1") calls (torch, the engine's kernels) find it without LD_LIBRARY_PATH.
    Returns "real", "stub" or None (neither)."""
    try:
        lib = ctypes.CDLL("libcuda.so.1", mode=ctypes.RTLD_GLOBAL)
        count = ctypes.c_int(0)
        if lib.cuInit(0) == 0 and lib.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0:
            platform_info["driver"] = "real"
            platform_info["visible_devices"] = count.value
            return "real"
        path = _loaded_path("libcuda.so.1")
        if path and "stubs" in path:
            platform_info["driver"] = "stub"
            platform_info["stub"] = path
            return "stub"
        platform_info["driver_present_without_device"] = path or True
    except OSError:
        pass
    stub = find_cuda_stub(stub_path)
    if stub is None:
        platform_info["driver"] = None
        skipped.append({"what": "CUDA driver", "why": "no libcuda.so.1 and no toolkit driver stub found "
                        "(set SPECPROBE_CUDA_STUB or CUDA_HOME); engines that link the driver may fail to import"})
        return None
    ctypes.CDLL(stub, mode=ctypes.RTLD_GLOBAL)
    platform_info["driver"] = "stub"
    platform_info["stub"] = stub
    return "stub"


def _loaded_path(soname):
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                if soname.split(".so")[0] + ".so" in line:
                    return line.split()[-1]
    except OSError:
        pass
    return None


# --------------------------------------------------------------------------------------------------
# Guard: no network, no writes outside the private dir (audit hooks; Python-level operations)


class NetworkBlocked(ConnectionRefusedError):
    """specprobe's adapters never reach the network."""


class WriteBlocked(PermissionError):
    """specprobe's adapters never write outside their private dir."""


_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_GUARD = {"installed": False, "allowed": (), "network": [], "writes": [], "subprocesses": [], "armed": True}
_LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0", "::", "", None}


def _under(path, roots):
    try:
        p = os.path.realpath(os.fsdecode(path)) if not isinstance(path, int) else None
    except Exception:
        return True
    if p is None:
        return True
    return any(p == r or p.startswith(r.rstrip("/") + "/") for r in roots)


def _audit(event, args):
    g = _GUARD
    if not g["armed"]:
        return
    try:
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            if isinstance(path, int) or path is None:
                return
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
                (isinstance(flags, int) and flags & _WRITE_FLAGS)
            if writing and not _under(path, g["allowed"]):
                g["writes"].append(clip("open(%r, %r)" % (os.fsdecode(path), mode or flags), 300))
                raise WriteBlocked("specprobe: writing %s is outside the private dir" % os.fsdecode(path))
        elif event in ("os.mkdir", "os.remove", "os.rmdir", "os.truncate", "os.chmod", "os.utime", "shutil.rmtree"):
            path = args[0]
            if isinstance(path, int):
                return
            if not _under(path, g["allowed"]):
                g["writes"].append(clip("%s(%r)" % (event, os.fsdecode(path)), 300))
                raise WriteBlocked("specprobe: %s %s is outside the private dir" % (event, os.fsdecode(path)))
        elif event in ("os.rename", "os.link", "os.symlink"):
            dst = args[1]
            if not isinstance(dst, int) and not _under(dst, g["allowed"]):
                g["writes"].append(clip("%s(-> %r)" % (event, os.fsdecode(dst)), 300))
                raise WriteBlocked("specprobe: %s to %s is outside the private dir" % (event, os.fsdecode(dst)))
        elif event == "socket.connect":
            addr = args[1]
            if isinstance(addr, (str, bytes)):  # AF_UNIX
                return
            host = addr[0] if isinstance(addr, tuple) and addr else None
            g["network"].append(clip("connect %r" % (addr,), 200))
            if host not in _LOCAL_HOSTS:
                raise NetworkBlocked("specprobe: network access to %r is disabled" % (addr,))
        elif event == "socket.getaddrinfo":
            host = args[0]
            if isinstance(host, bytes):
                host = host.decode("ascii", "replace")
            if host not in _LOCAL_HOSTS:
                g["network"].append(clip("getaddrinfo %r" % (host,), 200))
                raise NetworkBlocked("specprobe: name lookup of %r is disabled (no network)" % (host,))
        elif event == "socket.gethostbyname":
            host = args[0]
            if host not in _LOCAL_HOSTS:
                g["network"].append(clip("gethostbyname %r" % (host,), 200))
                raise NetworkBlocked("specprobe: name lookup of %r is disabled (no network)" % (host,))
        elif event in ("subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn"):
            exe, argv = args[0], (args[1] if len(args) > 1 else None)
            shown = " ".join(os.fsdecode(a) for a in argv) if isinstance(argv, (list, tuple)) else exe
            entry = clip("%s %s" % (event, shown), 300)
            if os.environ.get("SPECPROBE_ENGINE_DEBUG"):
                entry += " <- " + " / ".join("%s:%d" % (f.filename.split("site-packages/")[-1], f.lineno)
                                             for f in traceback.extract_stack()[-8:-2])
            g["subprocesses"].append(entry)
    except (NetworkBlocked, WriteBlocked):
        raise
    except Exception:
        pass


def install_guard(allowed_roots):
    g = _GUARD
    g["allowed"] = tuple(os.path.realpath(r) for r in allowed_roots) + ("/dev/null", "/dev/shm", "/proc/self")
    if not g["installed"]:
        sys.addaudithook(_audit)
        g["installed"] = True


def guard_report():
    return {"network_attempts": list(_GUARD["network"]), "blocked_writes": list(_GUARD["writes"]),
            "subprocesses": list(_GUARD["subprocesses"])}


# --------------------------------------------------------------------------------------------------
# Classification


class MissingInput(Exception):
    """Raised by an adapter when it knows an input is missing before asking the engine."""

    def __init__(self, missing, message=None):
        super().__init__(message or missing)
        self.missing = missing


class AdapterFault(Exception):
    """Raised by an adapter for its own failures (never a verdict)."""


_HUB_EXC_NAMES = {"LocalEntryNotFoundError", "OfflineModeIsEnabled", "RepositoryNotFoundError",
                  "GatedRepoError", "HFValidationError", "EntryNotFoundError", "RevisionNotFoundError"}
_HUB_PATTERNS = (
    "couldn't connect to", "could not connect to", "offline mode", "hf_hub_offline", "is not a local folder",
    "cannot find the requested files in the local cache", "we couldn't connect", "local_files_only",
    "repo id must be", "repo_id must be", "is not a valid model identifier", "not found in the local cache",
    "outgoing traffic has been disabled", "connection error, and we cannot find", "network access",
    "does not appear to have a file named", "no such file or directory", "not a valid json file",
    "can't load the configuration", "can't load tokenizer", "can't find", "cannot find",
    "neither a local path nor", "is not a directory", "does not exist",
)
_REMOTE_CODE_PATTERNS = ("trust_remote_code", "trust-remote-code", "custom code", "remote code", "auto_map")
GPU_PATTERNS = ("cuda driver is a stub", "no cuda gpus are available", "found no nvidia driver",
                 "cudagetdevicecount", "cuda error", "cuinit", "nvml", "no cuda device",
                 "torch not compiled with cuda", "cuda initialization", "invalid device ordinal",
                 "no cuda runtime", "libcuda.so", "no accelerator")
# What the engine's ROCm code paths raise in a CUDA environment (a declared AMD GPU): the ROCm kernel
# packages (aiter, the ROCm sgl_kernel; SGLang falls back to vLLM's ops) are not installed there.
ROCM_PACKAGE_PATTERNS = ("no module named 'aiter'", "aiter is not installed", "required dependencies not available",
                         "no module named 'vllm'")
ROCM_PACKAGES_MISSING = ("the ROCm kernel packages (aiter, the ROCm builds of sgl_kernel and vLLM's ops) that the "
                         "declared AMD GPU's code paths import: this environment is a CUDA build without them; ask "
                         "an environment of the engine's ROCm build")
ADAPTER_EXCEPTIONS = (NameError, AttributeError, ImportError, KeyError, IndexError, UnboundLocalError,
                RecursionError, MemoryError, SyntaxError)


def exc_chain(exc):
    seen, out = set(), []
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        out.append(exc)
        exc = exc.__cause__ or exc.__context__
    return out


def raised_in(exc, prefixes):
    """Whether the innermost frame of EXC's traceback is in a file under one of PREFIXES."""
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return last is not None and any(last.startswith(p) for p in prefixes), last


def raised_at(exc):
    """'pkg/module.py:LINE' of the innermost frame (site-packages prefix dropped)."""
    tb, last = exc.__traceback__, None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    if last is None:
        return None
    f = last.tb_frame.f_code.co_filename
    f = f.split("site-packages/", 1)[-1] if "site-packages/" in f else f
    return "%s:%d" % (f, last.tb_lineno)


def exception_message(exc):
    msg = str(exc)
    if not msg and exc.args:
        msg = repr(exc.args)
    return clip(msg if msg else type(exc).__name__)


# transformers' words when a tokenizer cannot be built from the files in the model directory.
_TOKENIZER_FILE_PATTERNS = ("couldn't instantiate the backend tokenizer", "can't load tokenizer",
                            "unable to load vocabulary from file", "tokenizer.model file not found")


# The engine built a tokenizer without the model's vocabulary and then could not find the model's
# own tokens in it (vLLM's ReasoningConfig for --reasoning-parser): with the model's tokenizer files
# missing here, an input to supply; with them present, the engine's objection.
_TOKENIZER_VOCAB_PATTERNS = ("failed to tokenize reasoning strings",)
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "tiktoken.model", "vocab.json", "spiece.model")


def has_tokenizer_files(model_dir):
    if not model_dir or not os.path.isdir(model_dir):
        return False
    try:
        names = os.listdir(model_dir)
    except OSError:
        return False
    return any(n in _TOKENIZER_FILES or n.endswith(".tiktoken") for n in names)


def tokenizer_missing(exc, model_dir):
    """Whether EXC says the engine could not build the model's tokenizer, or built one without the
    model's own tokens, because the model's tokenizer files are not in MODEL_DIR."""
    text = " | ".join(str(e) for e in exc_chain(exc)).lower()
    return any(p in text for p in _TOKENIZER_FILE_PATTERNS) or (
        any(p in text for p in _TOKENIZER_VOCAB_PATTERNS) and not has_tokenizer_files(model_dir))


def classify(exc, stage, ctx):
    """The record fields for EXC raised at STAGE. CTX: {"engine_roots": [...], "mentions": {text:
    what-to-supply}, "remote_code_needed": bool}. Order: missing input (the adapter said so, the Hub
    or a file was needed, remote code, the GPU itself) > adapter error (our guard, our frames, Python
    programming errors) > refused (the engine's objection)."""
    chain = exc_chain(exc)
    top = chain[0]
    rec = {"status": None, "stage": stage, "exception": type(top).__name__, "message": exception_message(top),
           "missing": None}
    names = {type(e).__name__ for e in chain}
    text = " | ".join(str(e) for e in chain).lower()
    for e in chain:
        if isinstance(e, MissingInput):
            rec.update(status="missing-input", missing=e.missing)
            return rec
        if isinstance(e, AdapterFault):
            rec.update(status="adapter-error")
            return rec
    if ctx.get("rocm_emulated") and any(p in text for p in ROCM_PACKAGE_PATTERNS):
        rec.update(status="missing-input", missing=ROCM_PACKAGES_MISSING)
        return rec
    if any(isinstance(e, NetworkBlocked) for e in chain) or names & _HUB_EXC_NAMES or \
            (isinstance(top, (OSError, ValueError, EnvironmentError)) and any(p in text for p in _HUB_PATTERNS)
             and stage in ("config", "model-interface") and _mentions_path_or_hub(text, ctx)):
        rec.update(status="missing-input", missing=_what_files(text, ctx))
        return rec
    if any(p in text for p in _REMOTE_CODE_PATTERNS) and not ctx.get("allow_remote_code") and stage != "argparse":
        rec.update(status="missing-input", missing=(
            "the checkpoint's own code (trust_remote_code): specprobe never runs it; pass "
            "allow_remote_code: true in the request (with the checkpoint's *.py files in model_dir) to let the "
            "engine run it"))
        return rec
    if stage in ("config", "model-interface") and tokenizer_missing(exc, ctx.get("model_dir")):
        # transformers could not build the tokenizer from the model directory: its tokenizer files
        # (tokenizer.json, tokenizer.model, tiktoken vocabularies) are not in the metadata here,
        # while the deployment downloads them with the weights.
        rec.update(status="missing-input", missing=(
            "the tokenizer files of the model (tokenizer.json, tokenizer.model or its tiktoken vocabulary): "
            "the model directory here holds its metadata only; supply a directory with them"))
        return rec
    if "cpu memory" in text and not ctx.get("host_memory_declared") and stage == "config":
        rec.update(status="missing-input", missing=(
            "the serving host's CPU memory: the engine compared against this machine's RAM; declare "
            "host.memory_gib in the request"))
        return rec
    if any(isinstance(e, WriteBlocked) for e in chain):
        rec.update(status="adapter-error", missing=None)
        rec["message"] = clip("the engine tried to write outside the private dir: " + rec["message"])
        return rec
    if stage in ("config", "model-interface", "backend-selection") and any(p in text for p in GPU_PATTERNS) and \
            isinstance(top, (RuntimeError, AssertionError, OSError, AttributeError, TypeError, ValueError)):
        rec.update(status="missing-input", missing=(
            "a real GPU: the engine queries the device itself at this stage, which the declared GPU "
            "cannot answer; run specprobe on a machine with the GPU for this check"))
        return rec
    if isinstance(top, ArgparseError):  # the engine's parser, its message verbatim
        rec.update(status="refused")
        return rec
    in_engine, where = raised_in(top, ctx.get("engine_roots", ()))
    if where is not None and where.startswith(ADAPTER_DIR):
        rec.update(status="adapter-error")
        return rec
    if isinstance(top, ADAPTER_EXCEPTIONS) and not (stage == "argparse"):
        rec.update(status="adapter-error")
        return rec
    if stage in ("request", "import"):
        rec.update(status="adapter-error")
        return rec
    rec.update(status="refused")
    return rec


def _mentions_path_or_hub(text, ctx):
    if "huggingface" in text or "hub" in text or "offline" in text or "local cache" in text or "repo id" in text:
        return True
    return any(m.lower() in text for m in ctx.get("mentions", {}))


def _what_files(text, ctx):
    for m, what in ctx.get("mentions", {}).items():
        if m and m.lower() in text:
            return what
    return ("files the engine reads from the Hugging Face Hub or from disk (the Hub is never asked: "
            "HF_HUB_OFFLINE=1); supply them as local directories (model_dir, model_dirs)")


def argparse_failure(exc, stderr_text):
    """A SystemExit from an argparse parser, as an exception carrying the parser's message."""
    lines = [l for l in stderr_text.strip().splitlines() if l.strip()]
    err = [l for l in lines if ": error:" in l or l.startswith("error:")]
    msg = "\n".join(err) if err else ("\n".join(lines[-3:]) if lines else "argparse exited with status %r" % exc.code)
    return ArgparseError(msg)


class ArgparseError(Exception):
    """The engine's own argument parser refused the arguments (its message verbatim)."""


@contextlib.contextmanager
def capture_stderr():
    buf = io.StringIO()
    old = sys.stderr
    sys.stderr = buf
    try:
        yield buf
    finally:
        sys.stderr = old


def parse_with(parser, argv):
    """parser.parse_args(argv), an argparse exit turned into ArgparseError with its message."""
    with capture_stderr() as buf:
        try:
            return parser.parse_args(argv)
        except SystemExit as e:
            err = buf.getvalue()
            if e.code in (0, None):
                raise ArgparseError("the arguments asked for help/version output (%s)" % err.strip()[:200])
            raise argparse_failure(e, err) from None


# --------------------------------------------------------------------------------------------------
# Helpers both adapters use

# Memory the declared platform reports when the request gives none (GiB), by name.
KNOWN_MEMORY_GIB = (("H200", 141), ("H100 NVL", 94), ("H100", 80), ("H20", 96), ("GH200", 96), ("B200", 180),
                    ("B300", 270), ("GB200", 186), ("GB300", 279), ("A100-SXM4-40GB", 40), ("A100", 80),
                    ("L40", 48), ("RTX PRO 6000", 96), ("L4", 24), ("MI300X", 192), ("MI300A", 128),
                    ("MI325X", 256), ("MI350X", 288), ("MI355X", 288), ("MI250", 128), ("MI210", 64))


def declared_memory(gpu):
    if gpu.get("memory_gib"):
        return float(gpu["memory_gib"]), "request"
    name = gpu.get("name") or ""
    for key, gib in KNOWN_MEMORY_GIB:
        if key.lower() in name.lower():
            return float(gib), "by name"
    return 80.0, "assumed (not given)"


class HiddenPackages:
    """Makes NAMES (and their submodules) not found, as on an install that does not have them: a
    ROCm install has no CUDA-only kernel packages, so a ROCm platform declared in a CUDA environment
    must not find them either. Every meta-path finder is wrapped so that it answers None for them
    (an import raises ModuleNotFoundError, importlib.util.find_spec returns None)."""

    def __init__(self, names):
        self.names = tuple(names)
        self.refused = set()

    def hides(self, fullname):
        for n in self.names:
            if fullname == n or fullname.startswith(n + "."):
                self.refused.add(n)
                return True
        return False


class _HidingFinder:
    def __init__(self, inner, hidden):
        self._inner, self._hidden = inner, hidden

    def find_spec(self, fullname, path=None, target=None):
        if self._hidden.hides(fullname):
            return None
        return self._inner.find_spec(fullname, path, target)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def hide_packages(names):
    """Wraps every finder in sys.meta_path with a HiddenPackages filter; returns it. Modules already
    imported under those names are dropped from sys.modules so that a later import looks again."""
    hidden = HiddenPackages(names)
    for mod in list(sys.modules):
        if any(mod == n or mod.startswith(n + ".") for n in hidden.names):
            del sys.modules[mod]
    sys.meta_path[:] = [_HidingFinder(f, hidden) if hasattr(f, "find_spec") else f for f in sys.meta_path]
    return hidden


def is_amd(gpu):
    """A declared AMD GPU: vendor amd, or a gfx target as its arch."""
    return str(gpu.get("vendor") or "").lower() == "amd" or str(gpu.get("arch") or "").startswith("gfx")


def amd_capability(arch):
    """(major, minor) of a gfx target as HIP reports it: gfx942 -> (9, 4), gfx1201 -> (12, 0)."""
    digits = re.match(r"gfx(\d+)", arch).group(1)
    return (int(digits[0]), int(digits[1])) if len(digits) <= 3 else (int(digits[:2]), int(digits[2]))


def declare_amd_device(gpu):
    """torch.cuda.get_device_properties / _capability / _name answering for the declared AMD GPU
    (engines read the gfx target from gcnArchName; torch.cuda.is_available() stays False)."""
    import torch

    arch = gpu["arch"]
    major, minor = amd_capability(arch)
    props = types.SimpleNamespace(
        name=gpu.get("name") or "declared %s GPU" % arch, gcnArchName=arch, major=major, minor=minor,
        total_memory=int(declared_memory(gpu)[0] * (1 << 30)),
        multi_processor_count=int(gpu.get("compute_units") or 304), is_integrated=False)
    torch.cuda.get_device_properties = lambda device=None: props
    torch.cuda.get_device_capability = lambda device=None: (major, minor)
    torch.cuda.get_device_name = lambda device=None: props.name
    return props


# Kernel packages built for CUDA only, which ROCm installs of vLLM and SGLang do not have (their
# ROCm code paths import flash_attn / aiter instead); hidden when a ROCm platform is declared.
CUDA_ONLY_PACKAGES = ("flashinfer", "flashinfer_cubin", "flashinfer_jit_cache", "vllm.vllm_flash_attn",
                      "vllm._flashmla_C", "vllm._flashmla_extension_C", "deep_gemm", "flash_mla", "cutlass",
                      "nvidia_cutlass_dsl", "quack", "b12x", "tokenspeed_mla")


def local_dir_or_missing(value, what, ctx, kind):
    """VALUE mapped through model_dirs; an existing directory is returned, anything else (a Hub id, a
    missing path) is a missing input naming what to supply."""
    if value is None:
        return None
    mapped = ctx["model_dirs"].get(value, value)
    if os.path.isdir(mapped):
        if kind == "model" and not os.path.isfile(os.path.join(mapped, "config.json")):
            raise MissingInput("%s %r: %s has no config.json (supply the checkpoint's metadata)" % (what, value, mapped))
        return mapped
    if os.path.isabs(mapped) or mapped.startswith("."):
        raise MissingInput("%s %r is not on disk: supply the directory (with its config.json)" % (what, value))
    raise MissingInput("%s %r would be fetched from the Hugging Face Hub, which specprobe never asks: "
                          "supply it as a local directory (request model_dirs: {%r: \"/abs/dir\"})" % (what, value, value))


def rebind(module_prefix, name, original, replacement):
    """Replace ORIGINAL (bound as NAME) in every loaded module under MODULE_PREFIX."""
    n = 0
    for mname, mod in list(sys.modules.items()):
        if mod is None or not mname.startswith(module_prefix):
            continue
        if getattr(mod, name, None) is original:
            setattr(mod, name, replacement)
            n += 1
    return n


def plain(v):
    import enum

    if isinstance(v, enum.Enum):
        return v.name
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple, set)):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    name = getattr(v, "name", None)
    if isinstance(name, str) and type(v).__module__.startswith(("vllm", "sglang", "enum")):
        return name
    return str(v)



# --------------------------------------------------------------------------------------------------
# Records and the run loop


def new_record(args):
    return {"status": "ok", "stage": None, "exception": None, "message": None, "missing": None,
            "args": list(args), "facts": {}, "notes": []}


class Stage:
    """with Stage(rec, "config", ctx): ...  -- an exception fills REC (classified) and stops the check."""

    def __init__(self, rec, name, ctx):
        self.rec, self.name, self.ctx = rec, name, ctx

    def __enter__(self):
        self.t0 = time.monotonic()
        phase("%s %s" % (self.ctx.get("what", "plan"), self.name))
        return self

    def __exit__(self, et, ev, tb):
        self.rec.setdefault("stage_s", {})[self.name] = round(time.monotonic() - self.t0, 3)
        if ev is None:
            return False
        if isinstance(ev, (KeyboardInterrupt,)):
            return False
        if isinstance(ev, SystemExit):
            ev = ArgparseError("the engine called sys.exit(%r) at this stage" % (ev.code,))
        fields = classify(ev, self.name, self.ctx)
        fields["raised_at"] = raised_at(ev)
        self.rec.update(fields)
        if fields["status"] == "adapter-error" or os.environ.get("SPECPROBE_ENGINE_DEBUG"):
            self.rec["traceback"] = clip("".join(traceback.format_exception(type(ev), ev, ev.__traceback__))[-3000:])
        raise StopCheck()


class StopCheck(Exception):
    pass


def run_check(check, args, ctx):
    rec = new_record(args)
    t0 = time.monotonic()
    try:
        check(rec, args, ctx)
    except StopCheck:
        pass
    except Exception as e:  # outside any stage: the adapter's own failure
        rec.update(status="adapter-error", stage=rec.get("stage") or "adapter", exception=type(e).__name__,
                   message=exception_message(e),
                   traceback=clip("".join(traceback.format_exception(type(e), e, e.__traceback__))[-3000:]))
    rec["timing_s"] = round(time.monotonic() - t0, 3)
    return rec


def skeleton(engine):
    return {"schema": SCHEMA, "engine": engine, "version": None, "python": sys.executable,
            "platform": {}, "skipped": [], "plan": None, "cells": [], "guard": None,
            "timing_s": {"import": None, "plan": None, "cells": None, "total": None}}


def run_adapter(engine, setup, check):
    """SETUP(req, result) -> ctx (imports the engine, declares the platform; fills result["version"],
    ["platform"], ["skipped"]); CHECK(rec, args, ctx) runs the stages for one argument list.
    Always prints exactly one result line."""
    t_start = time.monotonic()
    protect_stdout()
    proto_write("@@specprobe begin 0\n")
    result = skeleton(engine)

    def fail_all(status, stage, exc_name, message, missing=None, cells=()):
        rec = {"status": status, "stage": stage, "exception": exc_name, "message": clip(message),
               "missing": missing, "facts": {}, "notes": []}
        result["plan"] = dict(rec, args=None)
        result["cells"] = [dict(rec, id=c.get("id"), args=None) for c in cells if isinstance(c, dict)]

    phase("request")
    try:
        req = read_request(sys.argv[1:])
        if req.get("engine") not in (None, engine):
            raise RequestError("the request is for engine %r, this adapter is %r" % (req.get("engine"), engine))
        priv = private_dir()
        # The deploy's engine settings first: the adapter's own (offline, private dirs) win.
        for name, value in sorted(req.get("env", {}).items()):
            os.environ[name] = value
        if req.get("env"):
            result["platform"]["deploy_env"] = dict(sorted(req["env"].items()))
        offline_environment(priv)
        install_guard([priv])
    except Exception as e:
        fail_all("adapter-error", "request", type(e).__name__, "bad request from specprobe: %s" % e)
        result["timing_s"]["total"] = round(time.monotonic() - t_start, 3)
        emit(result)
        return
    result["request_id"] = req.get("id")
    phase("import " + engine)
    t0 = time.monotonic()
    try:
        ctx = setup(req, result)
    except MissingInput as e:
        fail_all("missing-input", "import", type(e).__name__, str(e), e.missing, req.get("cells", []))
        ctx = None
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        fail_all("adapter-error", "import", type(e).__name__, "importing %s failed: %s" % (engine, exception_message(e)),
                 cells=req.get("cells", []))
        result["plan"]["traceback"] = clip("".join(traceback.format_exception(type(e), e, e.__traceback__))[-3000:])
        ctx = None
    result["timing_s"]["import"] = round(time.monotonic() - t0, 3)
    if ctx is not None:
        base = list(req.get("args", []))
        phase("plan")
        ctx["what"] = "plan"
        ctx["whole_plan"] = True
        ctx["model_dir"] = req.get("model_dir")
        result["plan"] = run_check(check, base, ctx)
        ctx["plan_record"] = result["plan"]
        result["timing_s"]["plan"] = result["plan"]["timing_s"]
        t1 = time.monotonic()
        for cell in req.get("cells", []):
            ctx["what"] = "cell " + cell["id"]
            phase("cell " + cell["id"])
            try:
                args = cell_args(base, cell)
            except RequestError as e:
                rec = new_record([])
                rec.update(status="adapter-error", stage="request", exception="RequestError", message=str(e), args=None)
            else:
                # A cell with its own arguments or model is a plan of its own; one that overrides a
                # few flags is a variant of the plan (stages that only whole plans run are left out).
                ctx["whole_plan"] = "args" in cell or "model_dir" in cell
                ctx["model_dir"] = cell.get("model_dir", req.get("model_dir"))
                rec = run_check(check, args, ctx)
                if "model_dir" in cell:
                    rec["model_dir"] = cell["model_dir"]
            rec["id"] = cell["id"]
            result["cells"].append(rec)
        result["timing_s"]["cells"] = round(time.monotonic() - t1, 3)
    result["guard"] = guard_report()
    result["timing_s"]["total"] = round(time.monotonic() - t_start, 3)
    phase("done")
    _GUARD["armed"] = False
    emit(result)
    # The answer is out: skip the interpreter's teardown (the engine's atexit hooks, thread joins and
    # module finalizers took 2.6 s of vLLM 0.33.0's 14 s run on a 2-core machine); nothing here needs
    # it, and specprobe removes the private dir. SPECPROBE_ENGINE_NO_FAST_EXIT=1 keeps the teardown.
    if not os.environ.get("SPECPROBE_ENGINE_NO_FAST_EXIT"):
        for stream in (_PROTO, sys.stdout, sys.stderr):
            try:
                if stream is not None:
                    stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(0)


# --------------------------------------------------------------------------------------------------
# Model construction on the meta device (both engines): rank 0's parallel groups, the declared
# device's handles and properties, every tensor on the meta device, and what a stop there means.

class GroupStandIn:
    """Rank 0 of a parallel group of WORLD_SIZE ranks, for model construction only: what the layers
    read while they are built (sizes and ranks; the process group's size() and rank()). No
    collective can run on it: nothing here runs a forward pass."""

    def __init__(self, name, world_size):
        self.unique_name = "%s:0" % name
        self.world_size = int(world_size)
        self.rank = self.rank_in_group = self.local_rank = 0
        self.ranks = list(range(self.world_size))
        self.is_first_rank = True
        self.is_last_rank = self.world_size == 1
        self.use_device_communicator = False
        self.device_communicator = None
        self.device_group = self.cpu_group = types.SimpleNamespace(size=lambda: self.world_size, rank=lambda: 0)

    def size(self):
        return self.world_size


def declare_torch_device_queries(gpu, plat):
    """For a declared NVIDIA GPU on a machine without one: torch.cuda.get_device_capability and
    get_device_name answer the declaration rather than initialising CUDA on the stub driver (kernel
    packages and engine modules ask torch itself, some at import). torch.cuda.is_available() stays
    False."""
    import torch

    cap = tuple(gpu["cc"])
    dname = gpu.get("name") or "declared sm_%d%d GPU" % cap
    torch.cuda.get_device_capability = lambda device=None: cap
    torch.cuda.get_device_name = lambda device=None: dname
    plat["torch_cuda_queries"] = ("torch.cuda.get_device_capability / get_device_name answer the declaration; "
                                  "torch.cuda.is_available() stays False")


def declared_properties(gpu):
    """torch.cuda.get_device_properties() for a declared NVIDIA GPU whose SM count is declared (kernel
    libraries size their grids by it while layers are built), else None (the device is asked)."""
    if not gpu or not gpu.get("declared") or is_amd(gpu) or not gpu.get("sm_count") or not gpu.get("cc"):
        return None
    major, minor = gpu["cc"]
    return types.SimpleNamespace(
        name=gpu.get("name") or "declared sm_%d%d GPU" % (major, minor), major=major, minor=minor,
        multi_processor_count=int(gpu["sm_count"]), total_memory=int(declared_memory(gpu)[0] * (1 << 30)),
        is_integrated=False, is_multi_gpu_board=False, warp_size=32)


class DeviceHandleStandIn:
    """A CUDA stream or event made while a layer is built (overlap streams for shared experts, ...):
    kept for the forward pass, which never runs here."""

    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        return lambda *a, **k: None


@contextlib.contextmanager
def device_stand_ins(gpu):
    """While a model is built: CUDA streams and events are stand-ins (layers make side streams at
    construction), and torch.cuda.get_device_properties answers from the declared GPU (kernel
    libraries size their grids by its SM count); both put back afterwards."""
    import torch

    saved = [(torch.cuda, "Stream", torch.cuda.Stream), (torch.cuda, "Event", torch.cuda.Event),
             (torch.cuda, "get_device_properties", torch.cuda.get_device_properties)]
    torch.cuda.Stream = torch.cuda.Event = DeviceHandleStandIn
    props = declared_properties(gpu)
    if props is not None:
        torch.cuda.get_device_properties = lambda device=None: props
    try:
        yield
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)


def on_meta():
    """A torch function mode that puts every tensor a layer makes on the meta device, also those made
    with an explicit device ("cuda", the platform's current device) and those moved there; pinned
    host memory becomes plain meta memory. torch.device("meta") alone leaves explicit devices be."""
    import torch
    from torch.overrides import TorchFunctionMode
    from torch.utils._device import _device_constructors

    constructors = _device_constructors()
    meta = torch.device("meta")

    def off_host(d):
        return d is not None and not (isinstance(d, torch.device) and d.type in ("cpu", "meta")) and \
            not (isinstance(d, str) and d.split(":")[0] in ("cpu", "meta"))

    class AllOnMeta(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if func in constructors:
                kwargs["device"] = meta
                kwargs.pop("pin_memory", None)
            elif func is torch.Tensor.cuda or func is torch.Tensor.pin_memory:
                return args[0]
            elif func is torch.Tensor.to:
                if off_host(kwargs.get("device")):
                    kwargs.pop("device")
                args = tuple(a for i, a in enumerate(args) if i == 0 or not (
                    isinstance(a, (str, int, torch.device)) and off_host(a if not isinstance(a, int) else "cuda")))
                if len(args) == 1 and not kwargs:
                    return args[0]
            return func(*args, **kwargs)

    return AllOnMeta()


# Exceptions raised while building on the meta device that say "this needs the device", not "the
# engine objects": the construction then stops there and the plan keeps its earlier answer.
META_LIMITS = ("meta tensor", "meta device", "is not implemented for 'meta'", "on the 'meta' device",
                "cannot copy out of meta", "tensor.item() cannot be called on meta", "register_meta",
                "data-dependent", "data dependent")


def construction_limit(exc, extra=()):
    """Why EXC, raised while a model was being built on the meta device, says what this machine
    lacks rather than an objection to the plan: "needs the device", "needs real tensor values", a
    reason from EXTRA ((patterns, why) pairs, matched in the exception chain's text), or the
    adapter's own limit; None for an objection (the engine refused the plan there)."""
    text = " | ".join(str(x) for x in exc_chain(exc)).lower()
    in_torch = "torch/" in (raised_at(exc) or "")
    if any(p in text for p in GPU_PATTERNS):
        return "needs the device"
    if any(p in text for p in META_LIMITS) or (in_torch and "meta" in text):
        return "needs real tensor values"
    for patterns, why in extra:
        if any(p in text for p in patterns):
            return why
    if isinstance(exc, ADAPTER_EXCEPTIONS):
        return "reads more of the parallel state than rank 0's sizes, or more of the device than declared"
    return None


def construction_stopped(exc, rec, built, ctx):
    """Whether EXC, raised while a model was being built, says what this machine lacks (construction_limit;
    for a declared AMD GPU in a CUDA environment also the ROCm kernel packages, which a layer on the
    ROCm host would find): then recorded (record_construction_stop) and the plan keeps its earlier
    stages' answer. False for an objection to the plan, which the caller raises."""
    extra = [(ROCM_PACKAGE_PATTERNS, "needs the ROCm kernel packages this CUDA environment lacks")] \
        if ctx.get("rocm_emulated") else []
    why = construction_limit(exc, extra)
    if why is None:
        return False
    record_construction_stop(exc, rec, built, why)
    return True


def record_construction_stop(exc, rec, built, why):
    """The plan keeps its earlier stages' answer; facts.model_construction_stopped and a note say
    where the construction stopped and why (engines/README.md)."""
    stop = {"after": built, "why": why, "exception": type(exc).__name__, "message": exception_message(exc)[:500],
            "raised_at": raised_at(exc)}
    if os.environ.get("SPECPROBE_ENGINE_DEBUG"):
        stop["traceback"] = clip("".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-3000:])
    rec["facts"]["model_construction_stopped"] = stop
    rec["notes"].append("model construction on the meta device stopped (%s) at %s: %s" % (
        why, raised_at(exc), exception_message(exc)[:300]))


def model_census(model, attention_kind, experts_attr):
    """What the engine built: this rank's parameter bytes, its attention layers by ATTENTION_KIND(module)
    (None for a module that is not one) and its MoE layers (modules with a quant_method and
    EXPERTS_ATTR) by quantization method class, each counted."""
    attention, moe = {}, {}
    nbytes = sum(p.numel() * p.element_size() for p in model.parameters())
    for mod in model.modules():
        kind = attention_kind(mod)
        if kind is not None:
            attention[kind] = attention.get(kind, 0) + 1
        qm = getattr(mod, "quant_method", None)
        if qm is not None and hasattr(mod, experts_attr):
            key = type(qm).__name__
            moe[key] = moe.get(key, 0) + 1
    return {"parameter_bytes": nbytes, "attention_layers": attention, "moe_layers": moe}
