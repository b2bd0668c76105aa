// The stages of run_check (pipeline/check.hpp), each adding what it learns to the facts document
// and the report. Internal to pipeline/: each stage is one function so that run_check reads as
// the pipeline it is.
#pragma once
#include <string>

#include "common/error.hpp"
#include "common/json.hpp"
#include "pipeline/check.hpp"
#include "pipeline/report.hpp"
#include "pipeline/services.hpp"

namespace specprobe::stages {

// The serving plan: the file or command line read into plan facts; reader notes and unmodelled
// options become report notes. LOCATIONS receives where each fact was set.
Status read_plan(const CheckRequest& req, Report& report, Json& facts,
                 std::map<std::string, SourceLocation>& locations);

// lib.* (and python.*): --site-packages, --python (asked once; its path is the fallback), --lib.
Status add_libs(const CheckRequest& req, const Services& services, Report& report, Json& facts,
                std::string& python_executable);

// model.*: config.json of --model, or of the plan's model when it is a local directory. Sets
// DIR_OUT to the checkpoint directory read (empty when none).
Status add_model(const CheckRequest& req, Report& report, Json& facts, std::string& dir_out);

// checkpoint.*, quant.*: safetensors headers, quantization config, layer-name matching.
Status add_checkpoint(const std::string& dir, Report& report, Json& facts);

// gpu.*, driver.*: the driver's first device, a declared GPU, or the fallback (with a warning).
Status add_gpu(const CheckRequest& req, const Services& services, Report& report, Json& facts);

// probe.*: specprobe's own kernels with the plan's shapes, in isolated children.
void add_probes(const CheckRequest& req, const Services& services, Report& report, Json& facts);

// stack.*: the deployment's DeepGEMM / FlashInfer / Triton with the plan's shapes.
void add_stack_probes(const CheckRequest& req, const Services& services, const std::string& python_executable,
                      Report& report, Json& facts);

// --ignore and .specprobe.yaml: unknown ids are errors with a "did you mean"; suppressed findings
// stay in the report.
Status add_suppressions(const CheckRequest& req, const Services& services, Report& report);

}  // namespace specprobe::stages
