// The stages of run_check (pipeline/check.hpp), each adding what it learns to the facts document
// and the report. Internal to pipeline/: each stage is one function so that run_check reads as
// the pipeline it is.
#pragma once
#include <string>

#include "common/error.hpp"
#include "common/json.hpp"
#include "inputs/serving.hpp"
#include "pipeline/check.hpp"
#include "pipeline/report.hpp"
#include "pipeline/services.hpp"
#include "resolve/resolver.hpp"

namespace specprobe::stages {

// Every serving plan of the request: the file (or stdin text) or command line, read with the
// request's --env. Usage error for a malformed --env. A file that starts no server is not an
// error here: its plans are empty and its notes say what was read instead.
Expected<ServingFile> read_plans(const CheckRequest& req);

// What the report and the error say of a file that starts no server.
std::string no_server_text();

// One serving plan into plan facts; reader notes and unmodelled options become report notes.
// LOCATIONS receives where each fact was set.
Status use_plan(const CheckRequest& req, ParsedServing plan, Report& report, Json& facts,
                std::map<std::string, SourceLocation>& locations);

// python.*: --python asked once about itself (its path is the fallback, with a warning).
// PYTHON_EXECUTABLE receives what to run adapters with (empty when the interpreter did not answer).
Status add_python(const CheckRequest& req, const Services& services, Report& report, Json& facts,
                  std::string& python_executable);

// lib.*: the distributions in --site-packages dirs and the --python site-packages (python.*),
// then --lib; a library none of them gives takes the version the deploy file states
// (deploy.engine_version for the engine, deploy.lib_pins for kernel libraries).
Status add_libs(const CheckRequest& req, Json& facts);

// The models the plan names, each resolved (src/resolve/resolver.hpp): the served model, the
// draft model, a tokenizer named apart from the model.
struct ResolvedModels {
  resolve::Resolution model, draft, tokenizer;
  bool draft_named = false, tokenizer_named = false;
  // Hub id -> absolute directory of every resolved model named by id (the engine check's model_dirs).
  std::map<std::string, std::string> dirs_by_id() const;
};

// resolve.*: where each model's metadata comes from: --model, --model-dir, a local path, the HF
// cache or the Hub (through specprobe's cache), within --network-timeout. A model that cannot be
// read is a note naming the cause and the fix; its facts stay unknown.
Status resolve_models(const CheckRequest& req, const Services& services, Report& report, Json& facts,
                      ResolvedModels& out);

// model.*, draft.*: config.json of the resolved served model and draft. Sets DIR_OUT to the
// served model's checkpoint directory (empty when none).
Status add_model(const ResolvedModels& models, Report& report, Json& facts, std::string& dir_out);

// checkpoint.*, quant.*: safetensors headers, quantization config, layer-name matching.
Status add_checkpoint(const std::string& dir, const Services& services, Report& report, Json& facts);

// gpu.*, driver.*: the driver's first device, a declared GPU (--gpu NAME), the GPU the deploy
// file asks for (deploy.gpu_product, located by LOCATIONS), or the fallback (with a warning).
Status add_gpu(const CheckRequest& req, const Services& services, Report& report, Json& facts,
               const std::map<std::string, SourceLocation>& locations);

// The evidence sources: each runs on the derived facts of the plan, in the order listed, and
// writes its facts and answer records (facts/answers.hpp) into INPUTS, its results and notes into
// REPORT. A source never fails the check: one that cannot run says so in its facts and a note
// ("not asked: why, how to make it run"); `--require` turns that into an unknown verdict. A new
// source is one function and one line in evidence_sources() (stages.cpp).
struct SourceContext {
  const CheckRequest& req;
  const Services& services;
  const std::string& python_executable;  // the interpreter add_python found ("" without --python)
  const std::string& model_dir;          // the model's directory add_model read ("" when none)
  const ResolvedModels& models;
  // The probe child started with the check (Services::prestart_probes), or null; add_probes takes it.
  std::shared_ptr<PrestartedChild>* probe_child = nullptr;
};

struct EvidenceSource {
  const char* stage;  // the audit's stage name
  const char* phase;  // what --progress says while it runs; null: nothing
  void (*run)(const SourceContext& ctx, Report& report, const Json& facts, Json& inputs);
};

const std::vector<EvidenceSource>& evidence_sources();

// probe.*: specprobe's own kernels with the shapes of the derived plan FACTS (the probe table,
// probes/kinds.hpp), in isolated children.
void add_probes(const SourceContext& ctx, Report& report, const Json& facts, Json& inputs);

// stack.*: the deployment's own libraries with the plan's shapes (the stack table,
// probes/stack_kinds.hpp).
void add_stack_probes(const SourceContext& ctx, Report& report, const Json& facts, Json& inputs);

// engine_check.*: the installed engine (--python) asked about the plan and the matrix cells, in one
// adapter run (probes/engine_check.hpp). Skipped without --python or with --no-engine; an engine
// not installed in that Python is said so (engine_check.outcome not-installed).
void add_engine_check(const SourceContext& ctx, Report& report, const Json& facts, Json& inputs);

// --ignore and .specprobe.yaml: unknown ids are errors with a "did you mean"; suppressed findings
// stay in the report.
Status add_suppressions(const CheckRequest& req, const Services& services, Report& report);

}  // namespace specprobe::stages
