// Shared host-side pieces of every probe: the result record, seeded never-zero input generation,
// exact e4m3 / bf16 conversions, output poisoning and the error metrics the thresholds use.
// GPU-independent (unit-tested in tests/probes/).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/json.hpp"

namespace specprobe::probes {

// Result states of one probe run; "crash" = the kernel faulted, the child died or hung.
inline constexpr const char* kPass = "pass";
inline constexpr const char* kFail = "fail";
inline constexpr const char* kCrash = "crash";
inline constexpr const char* kSkip = "skip";
inline constexpr const char* kError = "error";

// {"probe", "name", "spec", "status", "reason", ...}; metrics/evidence are added by each probe.
Json make_result(const Json& spec, const std::string& status, const std::string& reason = "");
std::string probe_display_name(const Json& spec);

// splitmix64: small, seedable, identical on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull) {}
  uint64_t next();
  double uniform();                      // [0, 1)
  double uniform(double lo, double hi);  // [lo, hi)
  int range(int lo, int hi);             // [lo, hi] inclusive
  float nonzero(double lo, double hi);   // random sign, magnitude in [lo, hi)
 private:
  uint64_t s_;
};

// e4m3fn: exact decode; encode rounds to nearest even, saturating at +-448.
float e4m3_to_float(uint8_t v);
uint8_t float_to_e4m3(float f);
// A random never-zero, finite e4m3 with magnitude in [2^(emin-7), 2^(emax-7) * 1.875].
uint8_t random_e4m3(Rng& rng, int emin = 4, int emax = 9);

uint16_t float_to_bf16(float f);  // round to nearest even
float bf16_to_float(uint16_t v);

// A NaN bit pattern that no kernel produces: an output element still holding it was not written.
inline constexpr uint32_t kPoisonF32 = 0x7FC0DEADu;
inline constexpr uint16_t kPoisonBf16 = 0x7FA5u;

struct ErrorStats {
  double max_abs_err = 0;
  double max_abs_ref = 0;
  double sq_err = 0;
  double sq_ref = 0;
  long long compared = 0;
  long long unwritten = 0;     // still poisoned
  long long nonfinite = 0;     // NaN/inf that is not the poison
  long long out_of_range = 0;  // written where the contract says "not written"
  void add(double out, double ref);
  // n bf16 outputs against their references; a value still holding kPoisonBf16 counts as unwritten.
  void add_bf16(const uint16_t* out, const double* ref, size_t n);
  double max_rel() const { return max_abs_ref > 0 ? max_abs_err / max_abs_ref : max_abs_err; }
  double norm_rel() const;
  Json json() const;
};

// The record of a comparison against a reference with a norm and a max relative-error limit:
// pass when `passes`, else fail with both errors, their limits and the unwritten and non-finite
// counts as the reason; metrics = e.json() plus threshold_norm_rel_err / threshold_max_rel_err.
Json comparison_result(const Json& spec, const ErrorStats& e, bool passes, double norm_limit, double max_limit);

// The requests a check covers: `requests`, or every one of `batch` when it is empty.
std::vector<int> requests_or_all(const std::vector<int>& requests, int batch);

// Request lengths: L_b in [min_len, context] from `rng` (one draw per request but the last), the
// last request (every request when `full`) exactly `context`. The probes' inputs and their memory
// estimates both take lengths from here, so an estimate sees the lengths the run will use.
std::vector<int> draw_request_lengths(Rng& rng, int batch, int min_len, int context, bool full);

// Size limits of every probe's request set. Past them int arithmetic (block counts, strides)
// would overflow, and they lie beyond any one GPU's memory anyway (2^30 tokens of the smallest
// KV row, 64 bytes, are 64 GiB before q, outputs and the other half of the cache).
inline constexpr int kMaxProbeBatch = 1 << 16;
inline constexpr int kMaxProbeContext = 1 << 22;
inline constexpr int64_t kMaxProbeTokens = int64_t{1} << 30;  // batch x context

// A probe's request count and longest context, as its spec (or its defaults) gives them.
struct ProbeSize {
  int batch = 0, context = 0;
};

// "" when `batch` requests of up to `context` tokens, each with `rows` query rows (next_n, or
// k + 1), are a request set the probes can build; otherwise what is wrong, naming the field
// ("batch 0 < 1", "context 3 < next_n = 4: ...", ...). `rows_name` names `rows` in that message.
std::string probe_size_problem(int batch, int context, int rows, const char* rows_name);

// Memory checks made before a probe allocates, so that a shape too large for this machine is a
// skip that says how much it needs, not a std::bad_alloc or CUDA_ERROR_OUT_OF_MEMORY halfway.
std::string format_gib(uint64_t bytes);  // "35.20 GiB"
uint64_t host_memory_bytes();            // physical memory of this machine; 0 when unknown
// "" when need <= have or have == 0 (unknown: nothing to say); else
// "needs 35.20 GiB of <what>, <have_what> 7.75 GiB".
std::string memory_problem(uint64_t need, uint64_t have, const std::string& what, const std::string& have_what);

// A `skip` result naming both figures when `need` bytes of host memory (described by `what`:
// "host memory for the inputs and the downloaded outputs") exceed this machine's; null otherwise.
Json host_memory_skip(const Json& spec, uint64_t need, const std::string& what);

// Phase markers of the runner protocol (probes/runner.hpp): inside a probe child, each probe marks
// the step it starts, "@@specprobe phase host <name>" or "@@specprobe phase device <name>", so
// that a timeout can tell a hung kernel (device) from host work that needs a longer --timeout
// (input generation or the CPU reference at a large shape). Off (no output) unless the child
// turned it on; not thread-safe (a child runs one probe at a time).
enum class PhaseWhere { kHost, kDevice };
void enable_probe_phase_markers(bool on);
void probe_phase(PhaseWhere where, const char* name);

// A shuffled block table: `blocks_per_seq[b]` distinct physical blocks for request b, taken
// from a pool of `num_blocks` (>= the sum); unused entries of the [batch, stride] table are -1.
std::vector<int> make_block_table(Rng& rng, const std::vector<int>& blocks_per_seq, int stride, int num_blocks);

// The paged request set of the KV-cache probes: lengths from draw_request_lengths(rng, batch,
// min_len, context, false), a block table of stride ceil(context / block_size) + 1 over a pool of
// the blocks in use plus 3 spare ones (make_block_table, drawn after the lengths). with_table
// false draws only the lengths (memory estimates: the same counts, block_table left empty).
struct PagedRequests {
  std::vector<int> seq_lens;     // [batch]
  std::vector<int> block_table;  // [batch, bt_stride]
  int bt_stride = 0, num_blocks = 0;
};
PagedRequests make_paged_requests(Rng& rng, int batch, int min_len, int context, int block_size,
                                  bool with_table = true);

// Reading a child's JSON record (stack probes, the engine check): OBJ[KEY] as a string cut to
// MAX characters (+ "..."), or null when absent or null; false when it is anything else.
bool clipped_text_or_null(const Json& obj, const char* key, size_t max, Json& out);

// FACTS at the dotted path as an integer, nullopt when absent or not a JSON integer (a float is
// not a shape: the probes take no 4.0 for 4).
std::optional<int64_t> int_fact(const Json& facts, const char* dotted);

// A mkdtemp template for a child's private directory under $TMPDIR (else /tmp):
// ".../specprobe-WHAT-XXXXXX".
std::string private_dir_template(std::string_view what);

}  // namespace specprobe::probes
