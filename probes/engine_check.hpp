// The engine check: ask the deployment's own vLLM or SGLang (through --python) whether it accepts
// the plan, with its own argument parser, config objects, model interfaces and attention-backend
// selector, before any weight is loaded (issue 40; the adapters and their protocol
// "specprobe-engine/1" are in engines/, see engines/README.md). specprobe writes engines/common.py
// and engines/<engine>_adapter.py (embedded in the binary) into a private temp dir and runs them
// with that Python in an isolated child (common/isolated_runner.hpp through probes/runner.hpp:
// timeout, process-group kill, phases), with a clean environment (the stack probes' allow-list).
//
// The request carries the user's engine arguments as specprobe read them (options.given: every
// input form, variables resolved; an option whose value is still a shell variable is left out and
// listed, the engine is not asked about it), the checkpoint dir (--model), the GPU (queried or
// declared) and the matrix cells (one adapter run answers the plan and every cell).
//
// The result is validated strictly (schema, engine, the status and stage vocabularies, every
// requested cell answered once); anything else is an adapter error, never a verdict. States:
// ok / refused (the engine objects, its message verbatim, the stage and raised_at) / missing-input
// (the check lacked an input; `missing` names it) / adapter-error (the adapter failed, timed out,
// printed garbage). Results become facts under "engine_check." (src/facts/registry.yaml).
//
// Cache: an answer is stored under $XDG_CACHE_HOME/specprobe/engine (else ~/.cache/specprobe/engine),
// keyed by the engine's version and build (its dist-info RECORD: size, mtime, content hash), the
// interpreter, the adapter scripts, the request (arguments, cells, GPU) and the checkpoint metadata
// it names (config.json and friends of every local dir in the request). Written atomically; an entry
// that does not parse or validate is ignored. Adapter errors are never cached.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "facts/engine_cells.hpp"

namespace specprobe::probes {

inline constexpr const char* kEngineSchema = "specprobe-engine/1";

struct EngineCheckOptions {
  std::string python;                      // the interpreter (sys.executable of --python)
  std::vector<std::string> site_packages;  // where the engine's dist-info is (build identity)
  double timeout_s = 180;                  // the whole adapter run (import + plan + cells)
  bool use_cache = true;                   // --no-cache: false (neither read nor written)
  std::string cache_dir;                   // "" = $XDG_CACHE_HOME/specprobe/engine, ~/.cache/...
  std::string adapter_dir;                 // tests: read the scripts from here, not the binary
  std::string env_program = "/usr/bin/env";
  std::function<void(const std::string&)> progress;  // "engine check vllm: import vllm"; may be empty
};

// The request for FACTS (the plan's derived facts): engine, args from options.given (and the
// model), model_dir, gpu {name, cc, count, declared}, cells. UNRESOLVED receives the options left
// out because their value is a shell variable ("--port $PORT").
Json engine_request(const Json& facts, const std::string& model_dir, const Json& cells,
                    std::vector<std::string>& unresolved);

// A matrix cell for k, backend and KV dtype: {"id": engine_cell_id(...), "args_override"}
// (backend "" = the engine's choice). vLLM: --speculative-config's
// num_speculative_tokens, --attention-backend, --kv-cache-dtype; SGLang: --speculative-num-steps,
// --speculative-num-draft-tokens, --attention-backend, --kv-cache-dtype. k = 0 is not sent.
Json engine_cell(const std::string& engine, int k, const std::string& backend, const std::string& kv);

// Checks RAW (the adapter's printed result, or a runner record for a crash / timeout / no result)
// against the schema and REQUEST. Returns {"status": ok|refused|missing-input|adapter-error,
// "reason" (adapter-error: why), "engine", "version", "platform", "skipped", "plan": {...},
// "cells": [{...}], "timing_s"}; plan and cells: {status, stage, exception, message, missing,
// raised_at, facts}.
Json validate_engine_result(const Json& raw, const Json& request);

// Runs the adapter for REQUEST (or answers from the cache), validated. The record has "cached"
// (bool), "python", "cache_key" and, for adapter errors, "phase".
Json run_engine_check(const Json& request, const EngineCheckOptions& opts);

// The cache key of REQUEST under OPTS (hex), "" when the engine's dist-info cannot be found (then
// nothing is cached: the build is unknown).
std::string engine_cache_key(const Json& request, const EngineCheckOptions& opts);
std::string engine_cache_dir(const EngineCheckOptions& opts);

// engine_check.* facts from a validated record (see src/facts/registry.yaml).
Json engine_facts_patch(const Json& record, const std::vector<std::string>& unresolved);

}  // namespace specprobe::probes
