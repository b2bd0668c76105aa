// The shard phases: where the checkpoint tree is (an HF cache's blobs/ included), which shard files
// are read and whether each is safe to open (no absolute paths, no "..", no symlink out of the
// tree), their safetensors headers read in parallel, the cross-check of the index against them and
// the tensor inventory (checkpoint.shards, .tensors, .bytes, .dtypes, .index.*).
#include <algorithm>
#include <fstream>

#include "common/excerpt.hpp"
#include "common/parallel.hpp"
#include "common/paths.hpp"
#include "inputs/checkpoint/analysis_internal.hpp"

namespace specprobe::checkpoint {
namespace {

// Adds REL (relative to the root) to the jobs once, unless it is unsafe or missing. CHECK_ONLY:
// only the path's safety is checked (a metadata-only checkpoint has no shard to read).
void add_job(Analysis& a, std::set<std::string>& listed, const std::string& rel, bool referenced,
             bool check_only = false) {
  if (!listed.insert(rel).second) return;
  std::error_code ec;
  const fs::path relp(rel);
  if (relp.is_absolute()) {
    a.problem("weight_map_absolute", a.index_path.string(),
              fmt::format("weight_map names the absolute path '{}'", excerpt_name(rel)));
    return;
  }
  for (const auto& part : relp)
    if (part == "..") {
      a.problem("weight_map_escape", a.index_path.string(),
                fmt::format("weight_map path '{}' leaves the checkpoint", excerpt_name(rel)));
      return;
    }
  if (check_only) return;
  const fs::path p = a.root / relp;
  if (auto remote = a.remote_shards.find(rel); remote != a.remote_shards.end()) {
    ShardJob job{rel, p, referenced, {}, {}, 0};
    job.stub = a.root / kRemoteHeadersDir / relp;
    job.remote_size = remote->second;
    a.jobs.push_back(std::move(job));
    return;
  }
  if (!fs::exists(fs::symlink_status(p, ec)) || !fs::exists(p, ec)) {
    a.problem("missing_shard", p.string(), fmt::format("shard '{}' does not exist", excerpt_name(rel)));
    return;
  }
  const fs::path canon = fs::canonical(p, ec);
  if (ec || !(path_under(canon, a.root_canon) || path_under(canon, a.blobs_canon))) {
    a.problem("symlink_escape", p.string(),
              fmt::format("shard '{}' resolves outside the checkpoint tree", excerpt_name(rel)));
    return;
  }
  a.jobs.push_back({rel, p, referenced, {}, {}, 0});
}

// Index entries whose shard does not hold the tensor, and tensors the index does not place in
// their shard: counted, listed (capped) and the first eight of each reported.
void cross_check_index(Analysis& a, Json& missing_in_shards, Json& not_in_index) {
  size_t missing_count = 0, not_in_index_count = 0;
  const std::vector<std::string>& files = a.index.files;
  std::vector<const ShardJob*> job_by_file(files.size(), nullptr);
  std::vector<uint32_t> file_of_job(a.jobs.size(), kNoFile);
  for (size_t k = 0; k < a.jobs.size(); ++k)
    if (auto f = std::find(files.begin(), files.end(), a.jobs[k].rel); f != files.end()) {
      job_by_file[static_cast<size_t>(f - files.begin())] = &a.jobs[k];
      file_of_job[k] = static_cast<uint32_t>(f - files.begin());
    }
  for (const auto& [name, file_id] : a.index.entries) {
    const uint32_t* slot = a.tensors.find(name);
    if (slot) a.refs[*slot].index_file = file_id;  // a repeated name: the last entry counts
    const ShardJob* job = job_by_file[file_id];
    if (!job || !job->result.header) continue;  // shard problem already reported
    if (!slot || a.refs[*slot].job != job) {
      ++missing_count;
      push_capped(missing_in_shards, std::string(name));
      if (missing_count <= 8)
        a.problem(
            "index_tensor_missing", job->path.string(),
            fmt::format("index names tensor '{}' but {} does not hold it", excerpt_name(name), excerpt_name(job->rel)));
    }
  }
  for (const TensorRef& r : a.refs) {
    if (r.index_file == kNoFile || r.index_file != file_of_job[static_cast<size_t>(r.job - a.jobs.data())]) {
      ++not_in_index_count;
      push_capped(not_in_index, std::string(r.t->name));
      if (not_in_index_count <= 8)
        a.problem("tensor_not_in_index", r.job->path.string(),
                  fmt::format("tensor '{}' is stored in {} but the index does not say so", excerpt_name(r.t->name),
                              excerpt_name(r.job->rel)));
    }
  }
  const std::string index_path = a.index_path.string();
  if (missing_count > 8 || not_in_index_count > 8)
    a.out.notes.push_back({"error", "index_drift",
                           fmt::format("{} index entries missing from shards, {} shard tensors not in the index",
                                       missing_count, not_in_index_count),
                           index_path});
  const auto total = a.index_facts.find("total_size");
  if (total != a.index_facts.end() && total->is_number_unsigned() && total->get<uint64_t>() != a.bytes &&
      missing_count == 0 && not_in_index_count == 0)
    a.out.notes.push_back(
        {"info", "index_total_size",
         fmt::format("index total_size {} differs from the {} bytes the shards hold", total->get<uint64_t>(), a.bytes),
         index_path});
  a.index_facts["missing_in_shards_count"] = missing_count;
  a.index_facts["not_in_index_count"] = not_in_index_count;
}

}  // namespace

void locate_tree(Analysis& a) {
  std::error_code ec;
  a.root = a.cfg.dir;
  a.root_canon = fs::canonical(a.root, ec);
  if (!a.cfg.cache_repo.empty()) {
    a.blobs_canon = fs::canonical(fs::path(a.cfg.cache_repo) / "blobs", ec);
  } else if (a.root.has_parent_path() && a.root.parent_path().filename() == "snapshots") {
    a.blobs_canon = fs::canonical(a.root.parent_path().parent_path() / "blobs", ec);
  }
  a.ck["path"] = a.root.string();
  a.ck["hf_cache"] = !a.blobs_canon.empty();
  // A Hub snapshot: its manifest says which shards the repository holds and their sizes there.
  const fs::path manifest = a.root / kRemoteManifest;
  if (!fs::is_regular_file(manifest, ec) || fs::file_size(manifest, ec) > (64u << 20)) return;
  std::ifstream in(manifest, std::ios::binary);
  const Json m = Json::parse(in, nullptr, false);
  if (!m.is_object() || !m.contains("shards") || !m["shards"].is_object()) return;
  a.remote = true;
  for (const auto& [name, v] : m["shards"].items())
    if (v.is_object() && v.value("size", Json()).is_number_unsigned())
      a.remote_shards[name] = v["size"].get<uint64_t>();
  a.ck["hub"] = {{"repo", m.value("repo", Json())},
                 {"commit", m.value("commit", Json())},
                 {"endpoint_host", m.value("endpoint_host", Json())},
                 {"shards", a.remote_shards.size()}};
}

void list_shards(Analysis& a) {
  std::set<std::string> listed;
  std::error_code ec;
  std::vector<std::string> on_disk;
  for (fs::directory_iterator it(a.root, ec), end; !ec && it != end; it.increment(ec))
    if (ends_with(it->path().filename().string(), ".safetensors")) on_disk.push_back(it->path().filename().string());
  std::sort(on_disk.begin(), on_disk.end());
  // A metadata-only checkpoint: config.json and the index but none of the shards it names (what CI
  // keeps of a model, or an HF cache holding only the small files). The header checks have nothing
  // to read: one note, no error. Missing SOME shards while others exist stays an error each.
  for (const auto& [name, _] : a.remote_shards)
    if (name.find('/') == std::string::npos && !std::binary_search(on_disk.begin(), on_disk.end(), name))
      on_disk.push_back(name);
  std::sort(on_disk.begin(), on_disk.end());
  bool any_shard = !on_disk.empty();
  for (const std::string& f : a.index.files) any_shard |= fs::exists(a.root / f, ec);
  a.ck["metadata_only"] = a.has_index && !a.index.files.empty() && !any_shard;
  if (a.ck["metadata_only"].get<bool>()) {
    for (const std::string& f : a.index.files) add_job(a, listed, f, true, true);
    a.out.notes.push_back(
        {"info", "metadata_only",
         fmt::format("{} names {} shard file{} and none is present (a metadata-only checkpoint): "
                     "safetensors header and quantization-layout checks skipped",
                     a.index_path.filename().string(), a.index.files.size(), a.index.files.size() == 1 ? "" : "s"),
         a.index_path.string()});
    return;
  }
  for (const std::string& f : a.index.files) add_job(a, listed, f, true);
  for (const std::string& f : on_disk) {
    if (listed.count(f)) continue;
    if (a.has_index)
      a.problem("unreferenced_shard", (a.root / f).string(),
                fmt::format("shard '{}' is not named by the index", excerpt_name(f)), "warning");
    add_job(a, listed, f, !a.has_index);
  }
}

void read_shard_headers(Analysis& a) {
  std::vector<ShardJob>& jobs = a.jobs;
  parallel_for(jobs.size(), [&](size_t i) {
    jobs[i].result = jobs[i].stub.empty() ? read_safetensors_header(jobs[i].path.string())
                                          : read_safetensors_header_stub(jobs[i].stub.string(), jobs[i].remote_size,
                                                                         jobs[i].path.string());
  });
}

void take_inventory(Analysis& a) {
  size_t tensor_total = 0;
  for (const ShardJob& j : a.jobs)
    if (j.result.header) tensor_total += j.result.header->tensors.size();
  a.refs.reserve(tensor_total);
  a.tensors = NameIndex(tensor_total);
  std::array<size_t, kDtypeCount> dtype_counts{};
  size_t shard_ok = 0;
  for (const ShardJob& j : a.jobs) {
    if (!j.result.header) {
      a.problem(j.result.error.code, j.path.string(), j.result.error.message);
      continue;
    }
    ++shard_ok;
    if (!j.referenced && a.has_index) continue;  // not loaded by the engine
    for (const TensorInfo& t : j.result.header->tensors) {
      auto [slot, fresh] = a.tensors.insert(t.name, static_cast<uint32_t>(a.refs.size()));
      if (!fresh) {
        a.problem("duplicate_tensor", j.path.string(),
                  fmt::format("tensor '{}' is also stored in {}", excerpt_name(t.name),
                              excerpt_name(a.refs[*slot].job->rel)));
        continue;
      }
      a.refs.push_back({&t, &j, kNoFile});
      ++dtype_counts[t.dtype_id];
      a.bytes += t.end - t.begin;
    }
  }
  std::map<std::string, int> dtypes;
  for (size_t i = 0; i < kDtypeCount; ++i)
    if (dtype_counts[i]) dtypes[std::string(dtype_name(i))] = static_cast<int>(dtype_counts[i]);
  Json missing_in_shards = Json::array(), not_in_index = Json::array();
  a.index_facts["missing_in_shards_count"] = 0;
  a.index_facts["not_in_index_count"] = 0;
  if (a.has_index) cross_check_index(a, missing_in_shards, not_in_index);
  std::sort(missing_in_shards.begin(), missing_in_shards.end());
  std::sort(not_in_index.begin(), not_in_index.end());
  a.index_facts["missing_in_shards"] = missing_in_shards;
  a.index_facts["not_in_index"] = not_in_index;
  a.ck["index"] = a.index_facts;
  a.ck["shards"] = a.jobs.size();
  a.ck["shards_valid"] = shard_ok;
  a.ck["tensors"] = a.refs.size();
  a.ck["bytes"] = a.bytes;
  a.ck["dtypes"] = dtypes;
}

}  // namespace specprobe::checkpoint
