// Host-side helpers shared by the probes (see probe_common.hpp).
#include "probes/probe_common.hpp"

#include "common/parallel.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

namespace specprobe::probes {

namespace {
// The spec's "probe" when it is a string (a hostile spec's may be anything).
std::string probe_kind(const Json& spec, const char* fallback) {
  return spec.is_object() && spec.contains("probe") && spec["probe"].is_string() ? spec["probe"].get<std::string>()
                                                                                 : fallback;
}
}  // namespace

Json make_result(const Json& spec, const std::string& status, const std::string& reason) {
  Json r;
  r["probe"] = probe_kind(spec, "");
  r["name"] = probe_display_name(spec);
  r["spec"] = spec;
  r["status"] = status;
  r["reason"] = reason;
  return r;
}

std::string probe_display_name(const Json& spec) {
  std::string name = probe_kind(spec, "?");
  if (!spec.is_object()) return name;
  for (auto& [k, v] : spec.items()) {
    if (k == "probe" || k == "seed" || k == "bench") continue;
    name += " " + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return name;
}

uint64_t Rng::next() {
  uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
void fill_from_rng(Rng& rng, size_t n, uint64_t draws, const std::function<void(size_t, Rng&)>& gen) {
  constexpr size_t kChunk = 1 << 15;  // below this a thread costs more than it saves
  const size_t chunks = (n + kChunk - 1) / kChunk;
  parallel_for(chunks, [&](size_t c) {
    Rng r = rng;
    r.skip(c * kChunk * draws);
    for (size_t i = c * kChunk, end = std::min(n, i + kChunk); i < end; ++i) gen(i, r);
  });
  rng.skip(n * draws);
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
double Rng::uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
int Rng::range(int lo, int hi) { return lo + static_cast<int>(next() % static_cast<uint64_t>(hi - lo + 1)); }
float Rng::nonzero(double lo, double hi) {
  const double m = uniform(lo, hi);
  return static_cast<float>((next() & 1) ? -m : m);
}

float e4m3_to_float(uint8_t v) {
  const int sign = v >> 7, exp = (v >> 3) & 0xF, man = v & 7;
  if (exp == 0xF && man == 7) return std::numeric_limits<float>::quiet_NaN();
  const float mag = exp == 0 ? std::ldexp(static_cast<float>(man) / 8.f, -6)
                             : std::ldexp(1.f + static_cast<float>(man) / 8.f, exp - 7);
  return sign ? -mag : mag;
}

uint8_t float_to_e4m3(float f) {
  if (std::isnan(f)) return 0x7F;
  const uint8_t sign = std::signbit(f) ? 0x80 : 0;
  const float a = std::fabs(f);
  // Nearest of the 127 finite magnitudes; ties to the even code.
  uint8_t best = 0;
  float best_d = std::numeric_limits<float>::infinity();
  for (int c = 0; c <= 0x7E; ++c) {
    const float d = std::fabs(e4m3_to_float(static_cast<uint8_t>(c)) - a);
    if (d < best_d || (d == best_d && (c & 1) == 0)) {
      best_d = d;
      best = static_cast<uint8_t>(c);
    }
  }
  return sign | best;
}

uint8_t random_e4m3(Rng& rng, int emin, int emax) {
  const uint64_t r = rng.next();  // one draw per value: the bench sizes need ~10^8 of them
  const uint8_t exp = static_cast<uint8_t>(emin + static_cast<int>((r >> 16) % static_cast<uint64_t>(emax - emin + 1)));
  const uint8_t man = static_cast<uint8_t>(r & 7);
  uint8_t v = static_cast<uint8_t>((exp << 3) | man);
  if (v == 0) v = 1;
  if (v == 0x7F) v = 0x7E;
  return static_cast<uint8_t>(v | ((r >> 8) & 1 ? 0x80 : 0));
}

uint16_t float_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return 0x7FC0;
  u += 0x7FFF + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}
float bf16_to_float(uint16_t v) {
  const uint32_t u = static_cast<uint32_t>(v) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

void ErrorStats::add(double out, double ref) {
  ++compared;
  if (!std::isfinite(out)) {
    ++nonfinite;
    max_abs_err = std::numeric_limits<double>::infinity();
    return;
  }
  const double e = std::fabs(out - ref);
  max_abs_err = std::max(max_abs_err, e);
  max_abs_ref = std::max(max_abs_ref, std::fabs(ref));
  sq_err += e * e;
  sq_ref += ref * ref;
}

void ErrorStats::add_bf16(const uint16_t* out, const double* ref, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (out[i] == kPoisonBf16) {
      ++unwritten;
      continue;
    }
    add(bf16_to_float(out[i]), ref[i]);
  }
}

double ErrorStats::norm_rel() const {
  if (nonfinite) return std::numeric_limits<double>::infinity();
  return sq_ref > 0 ? std::sqrt(sq_err / sq_ref) : std::sqrt(sq_err);
}

Json ErrorStats::json() const {
  auto finite_or_null = [](double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); };
  return {{"max_rel_err", finite_or_null(max_rel())},
          {"norm_rel_err", finite_or_null(norm_rel())},
          {"compared", compared},
          {"unwritten", unwritten},
          {"nonfinite", nonfinite},
          {"out_of_range_writes", out_of_range}};
}

std::vector<int> requests_or_all(const std::vector<int>& requests, int batch) {
  std::vector<int> reqs = requests;
  if (reqs.empty())
    for (int b = 0; b < batch; ++b) reqs.push_back(b);
  return reqs;
}

Json comparison_result(const Json& spec, const ErrorStats& e, bool passes, double norm_limit, double max_limit) {
  Json res = make_result(spec, passes ? kPass : kFail);
  res["metrics"] = e.json();
  res["metrics"]["threshold_norm_rel_err"] = norm_limit;
  res["metrics"]["threshold_max_rel_err"] = max_limit;
  if (!passes)
    res["reason"] = fmt::format(
        "norm rel err {:.3g} (limit {:.0e}), max rel err {:.3g} (limit {:.0e}), {} unwritten, {} non-finite",
        e.norm_rel(), norm_limit, e.max_rel(), max_limit, e.unwritten, e.nonfinite);
  return res;
}

std::vector<int> make_block_table(Rng& rng, const std::vector<int>& blocks_per_seq, int stride, int num_blocks) {
  std::vector<int> pool(static_cast<size_t>(num_blocks));
  std::iota(pool.begin(), pool.end(), 0);
  for (size_t i = pool.size(); i > 1; --i) std::swap(pool[i - 1], pool[rng.next() % i]);
  std::vector<int> table(blocks_per_seq.size() * static_cast<size_t>(stride), -1);
  size_t next = 0;
  for (size_t b = 0; b < blocks_per_seq.size(); ++b)
    for (int j = 0; j < blocks_per_seq[b]; ++j)
      table[b * static_cast<size_t>(stride) + static_cast<size_t>(j)] = pool[next++];
  return table;
}

PagedRequests make_paged_requests(Rng& rng, int batch, int min_len, int context, int block_size, bool with_table) {
  PagedRequests r;
  r.seq_lens = draw_request_lengths(rng, batch, min_len, context, false);
  std::vector<int> blocks;
  blocks.reserve(r.seq_lens.size());
  int used = 0;
  for (int L : r.seq_lens) {
    blocks.push_back((L + block_size - 1) / block_size);
    used += blocks.back();
  }
  r.bt_stride = (context + block_size - 1) / block_size + 1;
  r.num_blocks = used + 3;
  if (with_table) r.block_table = make_block_table(rng, blocks, r.bt_stride, r.num_blocks);
  return r;
}

std::vector<int> draw_request_lengths(Rng& rng, int batch, int min_len, int context, bool full) {
  std::vector<int> lens(static_cast<size_t>(std::max(batch, 0)));
  for (int b = 0; b < batch; ++b)
    lens[static_cast<size_t>(b)] = b == batch - 1 || full ? context : rng.range(min_len, context);
  return lens;
}

std::string probe_size_problem(int batch, int context, int rows, const char* rows_name) {
  if (batch < 1) return fmt::format("batch {} < 1", batch);
  if (batch > kMaxProbeBatch) return fmt::format("batch {} > {} (the probes' limit)", batch, kMaxProbeBatch);
  if (context < rows)
    return fmt::format("context {} < {} = {}: a request's context holds all its query rows", context, rows_name, rows);
  if (context > kMaxProbeContext) return fmt::format("context {} > {} (the probes' limit)", context, kMaxProbeContext);
  if (int64_t{batch} * context > kMaxProbeTokens)
    return fmt::format("batch {} x context {} = {} tokens > {} (the probes' limit)", batch, context,
                       int64_t{batch} * context, kMaxProbeTokens);
  return "";
}

std::string format_gib(uint64_t bytes) { return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1ull << 30)); }

uint64_t host_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

std::string memory_problem(uint64_t need, uint64_t have, const std::string& what, const std::string& have_what) {
  if (have == 0 || need <= have) return "";
  return fmt::format("needs {} of {}, {} {}", format_gib(need), what, have_what, format_gib(have));
}

Json host_memory_skip(const Json& spec, uint64_t need, const std::string& what) {
  if (auto why = memory_problem(need, host_memory_bytes(), what, "this machine has"); !why.empty())
    return make_result(spec, kSkip, why);
  return nullptr;
}

namespace {
bool g_phase_markers = false;
}

void enable_probe_phase_markers(bool on) { g_phase_markers = on; }

void probe_phase(PhaseWhere where, const char* name) {
  if (!g_phase_markers) return;
  std::printf("@@specprobe phase %s %s\n", where == PhaseWhere::kHost ? "host" : "device", name);
  std::fflush(stdout);
}

bool clipped_text_or_null(const Json& obj, const char* key, size_t max, Json& out) {
  if (!obj.contains(key) || obj[key].is_null()) {
    out = nullptr;
    return true;
  }
  if (!obj[key].is_string()) return false;
  std::string s = obj[key].get<std::string>();
  if (s.size() > max) s = s.substr(0, max) + "...";
  out = s;
  return true;
}

std::optional<int64_t> int_fact(const Json& facts, const char* dotted) {
  const Json* v = find_fact(facts, dotted);
  if (!v || !v->is_number_integer()) return std::nullopt;
  return v->get<int64_t>();
}

std::string private_dir_template(std::string_view what) {
  const char* t = std::getenv("TMPDIR");
  const std::string base = t && *t ? t : "/tmp";
  return base + "/specprobe-" + std::string(what) + "-XXXXXX";
}

std::string plan_kv_dtype(const Json& facts) {
  if (auto fp8 = fact_bool(facts, "kv.fp8")) return *fp8 ? "fp8" : "bf16";
  const Json* dt = find_fact(facts, "serve.kv_cache_dtype");
  return dt && dt->is_string() && dt->get<std::string>().rfind("fp8", 0) == 0 ? "fp8" : "bf16";
}

std::optional<int64_t> heads_per_rank(const Json& facts) {
  const auto heads = int_fact(facts, "model.num_attention_heads");
  if (!heads || *heads < 1) return std::nullopt;
  int64_t tp = std::max<int64_t>(1, int_fact(facts, "serve.tp").value_or(1));
  const int64_t dp = std::max<int64_t>(1, int_fact(facts, "serve.dp").value_or(1));
  if (fact_string(facts, "engine.name").value_or("") == "sglang" &&
      fact_bool(facts, "serve.dp_attention").value_or(false) && tp % dp == 0)
    tp /= dp;
  return std::max<int64_t>(1, *heads / tp);
}

Status check_probe_size(const ProbeSize& size, int rows, const char* rows_name) {
  if (auto why = probe_size_problem(size.batch, size.context, rows, rows_name); !why.empty())
    return usage_error("--batch / --context: " + why);
  return Ok{};
}

}  // namespace specprobe::probes
