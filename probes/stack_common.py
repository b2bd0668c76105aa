# Shared part of the stack probe adapters (probes/stack_<library>.py): the runner protocol, the
# specprobe-stack/1 result skeleton, parameter reading, the installed / importable / GPU checks
# every adapter makes first, phase markers, and the catch-all that turns an unexpected exception
# into an "error" result instead of a traceback. Standard library only. specprobe writes this file
# next to the adapter in the private dir; each adapter puts its own directory on sys.path before
# importing it, so the import works under `python -I` too (which leaves the script's directory out).
#
# Protocol (probes/runner.hpp): "@@specprobe begin 0" on stdout, then one
# "@@specprobe result <json>" line. Phase markers ("@@specprobe phase <name>") go to stderr for
# people and, when SPECPROBE_STACK_PHASE_FILE is set, into that file, so that specprobe can say
# which phase was in progress when it killed an adapter at --stack-timeout.
import importlib
import importlib.util
import json
import os
import sys

SCHEMA = "specprobe-stack/1"


def emit(result):
    sys.stdout.write("@@specprobe result " + json.dumps(result) + "\n")
    sys.stdout.flush()


def phase(name):
    sys.stderr.write("@@specprobe phase %s\n" % name)
    sys.stderr.flush()
    path = os.environ.get("SPECPROBE_STACK_PHASE_FILE")
    if not path:
        return
    try:
        with open(path + ".tmp", "w") as f:
            f.write(name)
        os.replace(path + ".tmp", path)
    except OSError:
        pass  # the marker on stderr still says it


def read_params(argv):
    if "--specs" in argv:
        specs = json.loads(argv[argv.index("--specs") + 1])
        if isinstance(specs, list) and specs and isinstance(specs[0], dict):
            return specs[0].get("params", {})
    return {}


def nonempty_lines(text):
    return [l.strip() for l in str(text).strip().splitlines() if l.strip()]


def last_line(exc):
    lines = nonempty_lines(exc)
    return (lines[-1] if lines else type(exc).__name__)[:2000]


def first_line_with(exc, needles):
    """The first line of str(exc) that contains one of NEEDLES, else its last line (2000 chars)."""
    for l in nonempty_lines(exc):
        if any(n in l for n in needles):
            return l[:2000]
    return last_line(exc)


def library_version(module, library, distributions=()):
    v = getattr(module, "__version__", None)
    if v is not None:
        return str(v)
    try:
        import importlib.metadata as md
    except ImportError:
        return None
    for dist in tuple(distributions) + (library,):
        try:
            return md.version(dist)
        except Exception:
            pass
    return None


def summarize(result, fail_reason=None):
    """Overall status from the cases: the first failing case, else the first error, else pass.
    FAIL_REASON(failing_cases) replaces the default "<key>: <reason>" of a failure."""
    cases = result["cases"]
    for state in ("fail", "error"):
        bad = [c for c in cases if c["status"] == state]
        if bad:
            first = bad[0]
            reason = first["key"] + ": " + first["reason"]
            if state == "fail" and fail_reason:
                reason = fail_reason(bad)
            result.update(status=state, reason=reason, error_text=first["error_text"])
            return
    if cases:
        result["status"] = "pass"
    else:
        result.update(status="skip", reason="no case was requested")


def run_adapter(adapter, library, parse, body, modules=("torch",), also_import=(), distributions=(),
                short_error=last_line, needs_gpu=True):
    """Runs one adapter: PARSE(params) -> args (an exception is "bad parameters"); skip when a
    module of MODULES + (LIBRARY,) is not installed or (NEEDS_GPU) torch sees no GPU; error when
    importing fails; then BODY(result, args, torch, lib) fills result["cases"] and the overall
    status (without NEEDS_GPU, result["device"] too, when it ran on one). Always prints exactly
    one result."""
    sys.stdout.write("@@specprobe begin 0\n")
    sys.stdout.flush()
    result = {"schema": SCHEMA, "adapter": adapter, "library": library, "version": None, "status": "error",
              "reason": "", "error_text": None, "device": None, "cases": []}
    try:
        args = parse(read_params(sys.argv))
    except Exception as e:
        result["reason"] = "bad parameters from specprobe: %s" % e
        return emit(result)
    phase("import " + library)
    for mod in tuple(modules) + (library,):
        if importlib.util.find_spec(mod) is None:
            result["status"] = "skip"
            result["reason"] = "%s is not installed in this Python (%s)" % (mod, sys.prefix)
            return emit(result)
    try:
        imported = [importlib.import_module(m) for m in tuple(modules) + (library,) + tuple(also_import)]
    except Exception as e:
        result["reason"] = "%s is installed but importing it failed" % library
        result["error_text"] = short_error(e)
        return emit(result)
    torch, lib = imported[0], imported[len(modules)]
    result["version"] = library_version(lib, library, distributions)
    if needs_gpu:
        if not torch.cuda.is_available():
            result["status"] = "skip"
            result["reason"] = "torch sees no CUDA device"
            return emit(result)
        prop = torch.cuda.get_device_properties(0)
        result["device"] = {"name": prop.name, "sm": prop.major * 10 + prop.minor}
    try:
        body(result, args, torch, lib)
    except Exception as e:
        # A bug in the adapter or an environment problem outside any case: never a verdict.
        result.update(status="error", reason="the adapter failed outside a case (%s)" % type(e).__name__,
                      error_text=short_error(e))
    phase("done")
    emit(result)
