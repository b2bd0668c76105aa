// GPU tests (ctest label gpu): real kernels against the fp64 references (and, for MLA verify,
// wrong arguments that must fail), graph replay, check's plan probes, driver query, and the
// runner's isolation of a faulting and a hanging kernel (re-exec of this binary,
// which carries the test-only probes: tests/support/test_faults.hpp).
#include <catch2/catch.hpp>

#include <algorithm>

#include "gpu/cuda_session.hpp"
#include "gpu/driver.hpp"
#include "inputs/checkpoint/model_config.hpp"
#include "probes/mla_verify.hpp"
#include "probes/mqa_logits.hpp"
#include "probes/plan_probes.hpp"
#include "probes/probe_common.hpp"
#include "probes/probe_gpu.hpp"
#include "probes/runner.hpp"
#include "probes/spec_verify.hpp"

using namespace specprobe;
using specprobe::probes::run_probe_in_process;

TEST_CASE("driver query sees a GPU", "[gpu]") {
  DriverReport r = query_system_gpus();
  REQUIRE_FALSE(r.problem.has_value());
  REQUIRE(!r.gpus.empty());
  CHECK(r.gpus[0].sm_count > 0);
  CHECK(r.gpus[0].smem_per_block_optin >= 48 * 1024);
  CHECK(r.gpus[0].uuid_hash.rfind("fnv1a64:", 0) == 0);
}

TEST_CASE("mqa logits matches the reference for next_n 1-8", "[gpu]") {
  // Every heads x head_dim x rows-per-chunk kernel of the sm_90a family on Hopper (head_dim 64
  // next_n 3 once failed to launch: 49,128 dynamic + 1,024 static bytes crossed 48 KB without
  // the opt-in attribute).
  for (int d : {64, 128})
    for (int h : {16, 32, 64, 128})
      for (int n = 1; n <= 8; ++n) {
        Json spec = {{"probe", "mqa_logits"},       {"next_n", n}, {"heads", h}, {"head_dim", d},
                     {"block_kv", n % 2 ? 64 : 32}, {"seed", n}};
        Json r = run_probe_in_process(spec);
        INFO(r.dump());
        CHECK(r["status"] == "pass");
      }
}

TEST_CASE("mqa logits: warp-specialized and two-CTA sm_90a kernels agree with the reference", "[gpu]") {
  // 64 heads of 128 (the indexer's shape) picks a warp-specialized kernel for next_n 1-6 on
  // Hopper (the held-weights ones at next_n 3 and 4); "tma" forces the two-CTA one. 48 requests
  // of up to 1,500 tokens put share and request boundaries inside every math warpgroup's run of
  // tiles; block_kv 32 and 256 take the multi-block and in-block tile paths.
  DriverReport gpus = query_system_gpus();
  REQUIRE_FALSE(gpus.problem.has_value());
  const bool hopper = !gpus.gpus.empty() && gpus.gpus[0].cc_major == 9 && gpus.gpus[0].cc_minor == 0;
  for (const char* kernel : {"auto", "tma"})
    for (int n = 1; n <= 8; ++n)
      for (int bkv : {32, 64, 256}) {
        Json spec = {{"probe", "mqa_logits"}, {"next_n", n},     {"heads", 64},
                     {"head_dim", 128},       {"block_kv", bkv}, {"batch", 48},
                     {"context", 1500},       {"seed", n + bkv}, {"kernel", kernel}};
        Json r = run_probe_in_process(spec);
        INFO(r.dump());
        CHECK(r["status"] == "pass");
        const std::string k = r["evidence"].value("kernel", std::string());
        if (hopper && std::string(kernel) == "auto" && n <= 6) CHECK(k.rfind("mqa_logits_ws", 0) == 0);
        // next_n 3 and 4: the held-weights kernels (weights of every chunk in registers)
        if (hopper && std::string(kernel) == "auto" && n == 3) CHECK(k == "mqa_logits_ws3_d128_h64_r3_c1");
        if (hopper && std::string(kernel) == "auto" && n == 4) CHECK(k == "mqa_logits_ws3_d128_h64_r2_c2");
        if (hopper && std::string(kernel) == "tma") CHECK(k.rfind("mqa_logits_tma_", 0) == 0);
      }
}

TEST_CASE("spec verify matches the reference for GQA 1-16, bf16 and fp8", "[gpu]") {
  for (const char* dt : {"bf16", "fp8"})
    for (int g : {1, 6, 12, 16})
      for (int d : {64, 256}) {
        Json spec = {{"probe", "spec_verify"}, {"k", g % 2 ? 2 : 3}, {"gqa", g}, {"head_dim", d},
                     {"kv_dtype", dt},         {"block_size", 32},   {"seed", g}};
        Json r = run_probe_in_process(spec);
        INFO(r.dump());
        CHECK(r["status"] == "pass");
      }
  Json split = {{"probe", "spec_verify"}, {"k", 3},           {"gqa", 8},    {"head_dim", 128},
                {"kv_dtype", "bf16"},     {"block_size", 16}, {"splits", 3}, {"context", 700}};
  Json r = run_probe_in_process(split);
  INFO(r.dump());
  CHECK(r["status"] == "pass");
}

TEST_CASE("spec verify's copy-engine and cp.async kernels both match the reference", "[gpu]") {
  auto sess = GpuSession::open(probe_kernels_fatbin());
  REQUIRE(sess.has_value());
  const bool hopper_up = (*sess)->gpu().cc_major >= 9;
  // Block sizes 16 / 24 / 64 give boxes of 16 / 8 / 32 tokens; context 700 leaves most requests a
  // partial last tile, whose rows past the context the variant zeroes itself.
  for (const char* family : {"auto", "cp_async"})
    for (int bs : {16, 24, 64})
      for (int g : {6, 8}) {
        Json spec = {{"probe", "spec_verify"}, {"k", 3},         {"gqa", g},   {"head_dim", 128},  {"kv_dtype", "bf16"},
                     {"block_size", bs},       {"context", 700}, {"batch", 5}, {"kernel", family}, {"seed", bs + g}};
        Json r = run_probe_in_process(spec);
        INFO(r.dump());
        CHECK(r["status"] == "pass");
        const std::string k = r["evidence"].value("kernel", std::string());
        const bool tma = k.size() > 4 && k.compare(k.size() - 4, 4, "_tma") == 0;
        CHECK(tma == (hopper_up && std::string(family) == "auto"));
      }
  Json bad = {{"probe", "spec_verify"}, {"k", 3},           {"gqa", 8},         {"head_dim", 128},
              {"kv_dtype", "bf16"},     {"block_size", 16}, {"kernel", "wgmma"}};
  Json r = run_probe_in_process(bad);
  CHECK(r["status"] == "error");
  CHECK(r["reason"].get<std::string>().find("'wgmma'") != std::string::npos);
}

// Keys scaled up along each request, so the running max of the online softmax climbs: by less
// than the lazy-rescale slack per tile (P grows up to 2^slack before O is rescaled) and by more
// (a rescale on that tile). The host checks that the inputs hit both cases before the kernels run.
TEST_CASE("spec verify matches the reference while the softmax max climbs by less and by more than the lazy slack",
          "[gpu]") {
  auto sess = GpuSession::open(probe_kernels_fatbin());
  REQUIRE(sess.has_value());
  using probes::bf16_to_float;
  using probes::float_to_bf16;
  for (double ramp : {16.0, 256.0, 2048.0}) {
    probes::SpecVerifyInputs in = probes::make_spec_verify_inputs(3, 3, 8, 2, 128, false, 16, 3000, 7);
    for (int b = 0; b < in.batch; ++b)
      for (int t = 0; t < in.seq_lens[b]; ++t) {
        const float f = static_cast<float>(1.0 + ramp * t / in.seq_lens[b]);
        for (int h = 0; h < in.heads_kv; ++h) {
          uint16_t* e = reinterpret_cast<uint16_t*>(in.k_cache.data()) + probes::spec_verify_cache_offset(in, b, t, h);
          for (int d = 0; d < in.head_dim; ++d) e[d] = float_to_bf16(bf16_to_float(e[d]) * f);
        }
      }
    // Tile maxima (log2 units, as the kernel scales them) of request 0, row 0, q head 0.
    const int tn = specprobe_kernels::spec_verify_tile_tokens(in.head_dim, 32);
    const std::vector<double> s = probes::spec_verify_scores(in, 0, 0, 0);
    double run = -1e300;
    int small = 0, large = 0;
    for (size_t t0 = 0; t0 + tn <= s.size(); t0 += tn) {
      const double mx = *std::max_element(s.begin() + t0, s.begin() + t0 + tn) * 1.4426950408889634;
      if (t0 > 0 && mx > run) (mx - run > specprobe_kernels::kSpecVerifyLazySlack ? large : small) += 1;
      run = std::max(run, mx);
    }
    INFO("ramp " << ramp << ": tiles moving the max by <= slack " << small << ", by more " << large);
    if (ramp == 16.0) CHECK(small > 0);
    if (ramp == 2048.0) CHECK(large > 0);
    for (bool copy_engine : {true, false}) {
      auto dev = probes::upload_spec_verify(**sess, in, 0, copy_engine);
      REQUIRE(dev.has_value());
      INFO("kernel " << dev->launch.kernel);
      REQUIRE(probes::launch_spec_verify(**sess, *dev).has_value());
      REQUIRE((*sess)->sync().has_value());
      std::vector<uint16_t> out(in.out_elems());
      REQUIRE((*sess)->download(out.data(), dev->d_out, out.size() * 2).has_value());
      const probes::ErrorStats e = probes::check_spec_verify(in, out, {});
      INFO("max rel " << e.max_rel() << ", norm rel " << e.norm_rel());
      CHECK(probes::spec_verify_passes(e));
    }
  }
}

// MLA verify at the shapes the MLA backends run: DeepSeek V3/R1/V3.2 (and Kimi K2: the same
// row) 512 latent + 64 rope, output the latent, sparse over V3.2's index_topk 2048; DeepSeek-V4
// one 512-value row (448 + 64), output the whole row, sparse over index_topk 512. Heads per rank
// cycle through 16 / 64 / 128 (20: a partial second group of 16); V3's sparse runs keep 16 heads
// but at k 1 (128), so the fp64 reference stays a few seconds in all.
TEST_CASE(
    "mla verify matches the reference at DeepSeek-V3 and V4 shapes, k 1-7, bf16 and fp8, dense and sparse, blocks "
    "1/16/64",
    "[gpu]") {
  struct Model {
    const char* name;
    int latent, rope, v_dim, topk;
  };
  for (const Model m : {Model{"DeepSeek-V3", 512, 64, 512, 2048}, Model{"DeepSeek-V4", 448, 64, 512, 512}})
    for (const bool sparse : {false, true})
      for (const char* dt : {"bf16", "fp8"})
        for (int bs : {1, 16, 64})
          for (int k = 1; k <= 7; ++k) {
            const int cycle[] = {16, 64, 128, 20};
            int heads = cycle[(k + bs) % 4];
            if (sparse && m.topk == 2048) heads = k == 1 ? 128 : 16;
            Json spec = {{"probe", "mla_verify"},
                         {"k", k},
                         {"heads", heads},
                         {"latent_dim", m.latent},
                         {"rope_dim", m.rope},
                         {"v_dim", m.v_dim},
                         {"topk", sparse ? m.topk : 0},
                         {"kv_dtype", dt},
                         {"block_size", bs},
                         {"seed", k * 7 + bs}};
            Json r = run_probe_in_process(spec);
            INFO(m.name << ": " << r.dump());
            CHECK(r["status"] == "pass");
            CHECK(r["evidence"].value("kernel", std::string()) == std::string("mla_verify_") + dt);
          }
}

// The probe can fail: the same launch with one argument wrong (a block table one block on, top-k
// positions one on, the fp8 scale left out) fails the comparison with every element written.
TEST_CASE("mla verify fails the comparison when a kernel argument is wrong", "[gpu]") {
  auto sess = GpuSession::open(probe_kernels_fatbin());
  REQUIRE(sess.has_value());
  GpuSession& s = **sess;
  for (const int topk : {0, 512}) {
    const probes::MlaVerifyShape shape{.k = 3,
                                       .heads = 16,
                                       .latent_dim = 448,
                                       .rope_dim = 64,
                                       .v_dim = 512,
                                       .topk = topk,
                                       .block_size = 16,
                                       .fp8 = true};
    const probes::MlaVerifyInputs in = probes::make_mla_verify_inputs(shape, 3, topk + 300, 21);
    auto dev = probes::upload_mla_verify(s, in);
    REQUIRE(dev.has_value());
    auto run = [&](const probes::MlaVerifyDevice& d) {
      REQUIRE(probes::poison_bf16(s, d.params.out, in.out_elems()).has_value());
      REQUIRE(probes::launch_mla_verify(s, d).has_value());
      REQUIRE(s.sync().has_value());
      std::vector<uint16_t> out(in.out_elems());
      REQUIRE(s.download(out.data(), d.params.out, out.size() * 2).has_value());
      return probes::check_mla_verify(in, out, {});
    };
    const probes::ErrorStats good = run(*dev);
    INFO("topk " << topk << ": correct arguments: norm rel " << good.norm_rel());
    CHECK(probes::mla_verify_passes(good));
    auto expect_fail = [&](const char* what, const probes::ErrorStats& e) {
      INFO(what << ": norm rel " << e.norm_rel() << ", max rel " << e.max_rel() << ", unwritten " << e.unwritten);
      CHECK_FALSE(probes::mla_verify_passes(e));
      CHECK(e.unwritten == 0);
      CHECK(e.norm_rel() > 10 * probes::kMlaVerifyNormRel);
    };
    std::vector<int> table = in.block_table;
    for (int& blk : table)
      if (blk >= 0) blk = (blk + 1) % in.num_blocks;  // still a block of the pool: wrong data, no fault
    REQUIRE(s.upload(dev->params.block_table, table.data(), table.size() * 4).has_value());
    expect_fail("block table one block on", run(*dev));
    REQUIRE(s.upload(dev->params.block_table, in.block_table.data(), in.block_table.size() * 4).has_value());
    if (topk > 0) {
      std::vector<int> idx = in.topk_indices;
      for (int& t : idx)
        if (t > 0) t -= 1;
      REQUIRE(s.upload(dev->params.topk_indices, idx.data(), idx.size() * 4).has_value());
      expect_fail("top-k positions one back", run(*dev));
      REQUIRE(s.upload(dev->params.topk_indices, in.topk_indices.data(), in.topk_indices.size() * 4).has_value());
    }
    probes::MlaVerifyDevice no_scale = *dev;
    no_scale.params.kv_scale = 1.f;
    expect_fail("fp8 scale left out", run(no_scale));
    CHECK(probes::mla_verify_passes(run(*dev)));  // restored: passes again
  }
}

TEST_CASE("check's plan probes run mla_verify for DeepSeek-V4-Flash at every k of the sweep in isolated children",
          "[gpu]") {
  auto cfg = read_model_config(std::string(SPECPROBE_SOURCE_DIR) + "/docs/examples/checkpoints/deepseek-v4-flash");
  REQUIRE(cfg.has_value());
  Json facts = model_facts(*cfg, 4);
  facts["engine"] = {{"name", "vllm"}};
  facts["serve"] = {{"tp", 4}, {"kv_cache_dtype", "fp8"}, {"block_size", 256}};
  facts["spec"] = {{"next_n", 3}};
  probes::PlanProbeOptions po;
  po.child_command = probes::self_child_command();
  po.timeout_s = 120;
  const probes::ProbeRun run = probes::run_plan_probes(facts, po);
  INFO(run.results.dump());
  for (int k = 1; k <= probes::kMlaVerifySweepMaxK; ++k) {
    INFO("k " << k);
    const Json* st = find_fact(run.facts_patch, "probe.mla_verify.k." + std::to_string(k) + ".status");
    REQUIRE(st != nullptr);
    CHECK(*st == "pass");
  }
  CHECK(*find_fact(run.facts_patch, "probe.mla_verify.variant") == "sparse");
  CHECK(*find_fact(run.facts_patch, "probe.mla_verify.kv_dtype") == "fp8");
  CHECK(*find_fact(run.facts_patch, "probe.mqa_logits.next_n.3.status") == "pass");
  CHECK(find_fact(run.facts_patch, "probe.spec_verify.status") == nullptr);
  // The evidence names the kernel that ran at the plan's shape: 16 heads per rank, 3 verify rows.
  for (const auto& r : run.results)
    if (r["probe"] == "mla_verify" && r["spec"]["k"] == 2) {
      CHECK(r["evidence"]["kernel"] == "mla_verify_fp8");
      CHECK(r["metrics"]["kv_dim"] == 512);
      CHECK(r["metrics"]["v_dim"] == 512);
    }
}

TEST_CASE("graph replay is bit-identical to eager after new seq lens and block tables", "[gpu]") {
  Json spec = {{"probe", "graph_replay"}, {"k", 3},          {"gqa", 6}, {"head_dim", 128},
               {"kv_dtype", "fp8"},       {"block_size", 16}};
  Json r = run_probe_in_process(spec);
  INFO(r.dump());
  CHECK(r["status"] == "pass");
  CHECK(r["metrics"]["bit_identical_after_update"] == true);
  CHECK(r["metrics"]["replayed_output_changed"] == true);
  // bf16: the copy-engine variant on sm_90+, its tensor maps captured with the launch.
  spec["kv_dtype"] = "bf16";
  r = run_probe_in_process(spec);
  INFO(r.dump());
  CHECK(r["status"] == "pass");
  CHECK(r["metrics"]["bit_identical_after_update"] == true);
}

TEST_CASE("a faulting and a hanging kernel are isolated by the runner", "[gpu]") {
  // The child is this test binary (tests/main_gpu.cxx): it knows test_fault and test_hang, whose
  // kernels are in the test fatbin; the product binary does not.
  probes::RunnerOptions o;
  o.child_command = probes::self_child_command();
  o.timeout_s = 5;
  std::vector<Json> specs = {
      {{"probe", "test_fault"}},
      {{"probe", "test_hang"}},
      {{"probe", "mqa_logits"}, {"next_n", 3}, {"heads", 64}, {"head_dim", 128}, {"block_kv", 64}}};
  auto rs = probes::run_probes_isolated(specs, o);
  REQUIRE(rs.size() == 3);
  INFO(Json(rs).dump());
  CHECK(rs[0]["status"] == "crash");
  CHECK(rs[0]["cuda_error"] == "CUDA_ERROR_ILLEGAL_ADDRESS");
  CHECK(rs[1]["status"] == "crash");
  CHECK(rs[1].contains("timeout_s"));
  CHECK(rs[1]["phase"] == "run kernel");  // the child's marker: device work, so a hung kernel
  CHECK(rs[2]["status"] == "pass");
}

TEST_CASE("a probe larger than the device's free memory is a GPU-busy error that says how much it needs", "[gpu]") {
  // Another user of the GPU (a serving engine in production) holds all but 256 MiB; the probe
  // needs ~570 MiB of device memory for these inputs, checked before it allocates any.
  auto sess = GpuSession::open(probe_kernels_fatbin());
  REQUIRE(sess.has_value());
  const uint64_t free_before = (*sess)->device_free_bytes();
  REQUIRE(free_before > (uint64_t{1} << 30));
  auto hold = (*sess)->alloc(free_before - (uint64_t{256} << 20));
  REQUIRE(hold.has_value());
  Json spec = {{"probe", "mqa_logits"}, {"next_n", 1},  {"heads", 64},     {"head_dim", 128},
               {"block_kv", 64},        {"batch", 256}, {"context", 16384}};
  Json r = run_probe_in_process(spec);
  INFO(r.dump());
  // Fits the GPU, not what is free: the evidence is missing (error), not a shape this GPU
  // cannot hold (skip); the plan is then unknown (tests/probes/cuda_fake_test.cpp).
  CHECK(r["status"] == "error");
  CHECK(r["gpu_busy"] == true);
  CHECK(r["reason"].get<std::string>().find("GPU busy: ") != std::string::npos);
  CHECK(r["reason"].get<std::string>().find("MiB free, the probe needs") != std::string::npos);
  CHECK(r["reason"].get<std::string>().find("--probes off") != std::string::npos);
  CHECK_FALSE(r.contains("cuda_error"));
}
