// GPU-independent parts of the probes: conversions, input generation, layouts, references,
// checks (poison, out-of-range writes), launch configuration, plan-derived specs and facts.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <set>

#include "gpu/cuda_session.hpp"
#include "probes/mqa_logits.hpp"
#include "probes/plan_probes.hpp"
#include "probes/probe_common.hpp"
#include "probes/spec_verify.hpp"

using namespace specprobe;
using namespace specprobe::probes;

TEST_CASE("e4m3 conversions are exact and round-trip", "[probes]") {
  CHECK(e4m3_to_float(0x38) == 1.0f);
  CHECK(e4m3_to_float(0x7E) == 448.0f);
  CHECK(e4m3_to_float(0x01) == std::ldexp(1.f, -9));
  CHECK(e4m3_to_float(0xB8) == -1.0f);
  CHECK(std::isnan(e4m3_to_float(0x7F)));
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7F) == 0x7F) continue;
    const float f = e4m3_to_float(static_cast<uint8_t>(c));
    if (f == 0) continue;
    CHECK(float_to_e4m3(f) == c);
  }
  CHECK(float_to_e4m3(1000.f) == 0x7E);  // saturates
}

TEST_CASE("bf16 rounds to nearest even", "[probes]") {
  CHECK(bf16_to_float(float_to_bf16(1.0f)) == 1.0f);
  CHECK(float_to_bf16(1.00390625f) == 0x3F80);  // halfway -> even
  CHECK(float_to_bf16(1.01171875f) == 0x3F82);
}

TEST_CASE("random inputs are never zero and reproducible from the seed", "[probes]") {
  Rng a(7), b(7);
  for (int i = 0; i < 10000; ++i) {
    const uint8_t v = random_e4m3(a);
    CHECK(v == random_e4m3(b));
    CHECK((v & 0x7F) != 0);
    CHECK((v & 0x7F) != 0x7F);
  }
}

TEST_CASE("mqa inputs follow DeepGEMM's fused layout and vLLM's 2-D context lens", "[probes]") {
  const auto in = make_mqa_inputs(3, 4, 16, 64, 32, 100, 5);
  CHECK(in.block_bytes() == 32u * 68u);
  CHECK(in.kv.size() == in.num_blocks * in.block_bytes());
  CHECK(in.context_lens[2 * 4 + 3] == 100);  // the last request has the full context
  for (int b = 0; b < 3; ++b)
    for (int i = 1; i < 4; ++i) CHECK(in.context_lens[b * 4 + i] == in.context_lens[b * 4 + i - 1] + 1);
  std::set<int> used;
  for (int v : in.block_table)
    if (v >= 0) CHECK(used.insert(v).second);  // every physical block belongs to one request
}

TEST_CASE("mqa reference matches a direct evaluation and the check sees poison", "[probes]") {
  const auto in = make_mqa_inputs(2, 2, 16, 64, 32, 40, 3);
  const int row = 3;  // b = 1, i = 1
  const auto ref = mqa_reference_row(in, row);
  REQUIRE(static_cast<int>(ref.size()) == in.context_lens[row]);
  const int t = 17;
  const int blk = in.block_table[1 * in.bt_stride + t / 32];
  const uint8_t* base = in.kv.data() + blk * in.block_bytes();
  float scale;
  std::memcpy(&scale, base + 32 * 64 + (t % 32) * 4, 4);
  double expect = 0;
  for (int h = 0; h < 16; ++h) {
    double dot = 0;
    for (int d = 0; d < 64; ++d)
      dot += e4m3_to_float(in.q[(row * 16 + h) * 64 + d]) * e4m3_to_float(base[(t % 32) * 64 + d]);
    expect += std::max(dot, 0.0) * in.weights[row * 16 + h];
  }
  CHECK(ref[t] == Approx(expect * scale).epsilon(1e-12));

  std::vector<float> out(static_cast<size_t>(4) * in.logits_stride);
  float poison;
  const uint32_t pb = kPoisonF32;
  std::memcpy(&poison, &pb, 4);
  std::fill(out.begin(), out.end(), poison);
  for (int r = 0; r < 4; ++r) {
    const auto rr = mqa_reference_row(in, r);
    for (size_t c = 0; c < rr.size(); ++c) out[r * in.logits_stride + c] = static_cast<float>(rr[c]);
  }
  auto ok = check_mqa_logits(in, out, {});
  CHECK(ok.unwritten == 0);
  CHECK(ok.out_of_range == 0);
  CHECK(ok.max_rel() < 1e-6);
  out[1 * in.logits_stride + 2] = poison;                 // unwritten element
  out[0 * in.logits_stride + in.context_lens[0]] = 1.0f;  // write past the context
  auto bad = check_mqa_logits(in, out, {});
  CHECK(bad.unwritten == 1);
  CHECK(bad.out_of_range == 1);
}

TEST_CASE("mqa launch configuration covers every row, head chunk and token", "[probes]") {
  for (int n = 1; n <= 8; ++n)
    for (int h : {16, 32, 64, 128}) {
      const auto l = mqa_launch_config(256, n, h, 128, 8192);
      CHECK(l.tasks * l.token_splits * 32 == static_cast<int>(l.threads));
      CHECK(l.threads <= 256);
      CHECK(l.grid_z * l.rows_per_cta >= static_cast<unsigned>(n));
      CHECK(128 % (16 * l.token_splits) == 0);
      CHECK(l.grid_x * 128 * l.tiles_per_cta >= 8192u);
      CHECK(l.smem <= 99u * 1024u);  // fits every target arch, sm_86 / sm_120 included
    }
  CHECK(mqa_launch_config(1, 1, 64, 128, 10).kernel == "mqa_logits_d128_hc64");
  CHECK(mqa_launch_config(1, 1, 128, 64, 10).kernel == "mqa_logits_d64_hc64");
}

TEST_CASE("mqa sm_90a launch configuration: N = rows x heads <= 256, two CTAs per SM where they fit", "[probes]") {
  constexpr int64_t kSmemPerSm = 228 * 1024, kSmemPerBlock = 227 * 1024;  // sm_90
  for (int n = 1; n <= 8; ++n)
    for (int h : {16, 32, 64, 128})
      for (int d : {64, 128}) {
        const auto l = mqa_tma_launch_config(256, n, h, d, kSmemPerSm, kSmemPerBlock);
        INFO("next_n " << n << " heads " << h << " head_dim " << d);
        CHECK(l.rows_per_cta * h <= 256);
        CHECK(l.rows_per_cta == mqa_rows_per_chunk(n, h));
        CHECK(l.threads == 160u);
        CHECK(l.stages >= 2);
        CHECK(l.stages <= specprobe_kernels::kMqaTmaMaxStages);
        CHECK(l.smem <= kSmemPerBlock);
        // q of every row stays resident; when it is at most 64 KB two CTAs share an SM.
        const int chunks = (n + l.rows_per_cta - 1) / l.rows_per_cta;
        if (chunks * l.rows_per_cta * h * d <= 64 * 1024) CHECK(2 * (l.smem + 1024) <= kSmemPerSm);
        CHECK(l.kernel == "mqa_logits_tma_d" + std::to_string(d) + "_h" + std::to_string(h) + "_r" +
                              std::to_string(l.rows_per_cta));
      }
  CHECK(mqa_rows_per_chunk(1, 64) == 1);
  CHECK(mqa_rows_per_chunk(2, 64) == 2);
  CHECK(mqa_rows_per_chunk(3, 64) == 3);  // N = 192, no padded row
  CHECK(mqa_rows_per_chunk(4, 64) == 4);
  CHECK(mqa_tma_supported(9, 0, 64, 128, 64));
  CHECK(mqa_tma_supported(9, 0, 64, 128, 256));
  CHECK(mqa_tma_supported(9, 0, 64, 128, 32));
  CHECK_FALSE(mqa_tma_supported(9, 0, 64, 128, 48));  // a tile would straddle blocks mid-way
  CHECK_FALSE(mqa_tma_supported(9, 0, 64, 64, 4));    // smem offsets off the swizzle atom
  CHECK_FALSE(mqa_tma_supported(8, 9, 64, 128, 64));
  CHECK_FALSE(mqa_tma_supported(10, 0, 64, 128, 64));
  CHECK_FALSE(mqa_tma_supported(12, 0, 64, 128, 64));
  CHECK(mqa_threshold("mqa_logits_tma_d128_h64_r1") == kMqaLogitsMaxRelFp8Tc);
  CHECK(mqa_threshold("mqa_logits_ws4_d128_h64_r1") == kMqaLogitsMaxRelFp8Tc);
  CHECK(mqa_threshold("mqa_logits_d128_hc64") == kMqaLogitsMaxRel);
}

TEST_CASE("mqa warp-specialized variant: the measured winner per next_n, only where it fits", "[probes]") {
  constexpr int64_t kSmemPerSm = 228 * 1024, kSmemPerBlock = 227 * 1024;  // sm_90
  struct Want {
    int next_n, math_wgs, rpc, held = 0;
  };
  // docs/perf/kernels.md#mqa-warp-specialized and #mqa-held-weights (H100, B = 256, L = 8192, full
  // lengths): the fastest kernel per next_n (next_n 2: a tie on the H100, r2 the faster where
  // memory is faster; next_n 3 and 4: the held-weights 3 x r3 and 3 x r2).
  for (const Want w : {Want{1, 4, 1}, Want{2, 4, 2}, Want{3, 3, 3, 1}, Want{4, 3, 2, 2}, Want{5, 3, 3}, Want{6, 3, 3},
                       Want{7, 0, 0}, Want{8, 0, 0}})
    for (int batch : {2, 48, 256}) {
      INFO("next_n " << w.next_n << " batch " << batch);
      const MqaWsVariant v = mqa_ws_variant(batch, w.next_n, 64, 128, kSmemPerBlock);
      CHECK(v.math_wgs == w.math_wgs);
      CHECK(v.rpc == w.rpc);
      CHECK(v.held == w.held);
      if (v.math_wgs == 0) continue;
      // a held-weights kernel serves exactly its own chunk count
      if (v.held > 0) CHECK((w.next_n + v.rpc - 1) / v.rpc == v.held);
      const auto l = mqa_tma_launch_config(batch, w.next_n, 64, 128, kSmemPerSm, kSmemPerBlock, v);
      CHECK(l.kernel == "mqa_logits_ws" + std::to_string(w.math_wgs) + "_d128_h64_r" + std::to_string(w.rpc) +
                            (w.held > 0 ? "_c" + std::to_string(w.held) : ""));
      CHECK(l.threads == 128u * (w.math_wgs + 1));
      CHECK(l.rows_per_cta == w.rpc);
      CHECK(l.stages >= 2);
      CHECK(l.stages <= specprobe_kernels::kMqaWsMaxStages);
      CHECK(l.smem <= kSmemPerBlock);
      // the deepest ring up to the cap that fits: one stage more would be past the cap or not fit
      if (l.stages < specprobe_kernels::kMqaWsMaxStages)
        CHECK(specprobe_kernels::mqa_tma_smem_bytes(128, 64, w.rpc, w.next_n, batch, l.stages + 1, w.math_wgs) >
              kSmemPerBlock);
    }
  // Other shapes have no warp-specialized kernel; a part with less shared memory gets none.
  for (int h : {16, 32, 128}) CHECK(mqa_ws_variant(256, 2, h, 128, kSmemPerBlock).math_wgs == 0);
  CHECK(mqa_ws_variant(256, 2, 64, 64, kSmemPerBlock).math_wgs == 0);
  CHECK(mqa_ws_variant(256, 2, 64, 128, 99 * 1024).math_wgs == 0);
  // Registers after setmaxnreg: the producer's 40 handed to the math warpgroups, within 64 K.
  for (int nw : {2, 3, 4}) {
    INFO("math warpgroups " << nw);
    CHECK(specprobe_kernels::mqa_ws_math_regs(nw) % 8 == 0);
    CHECK(128 * nw * specprobe_kernels::mqa_ws_math_regs(nw) + 128 * specprobe_kernels::kMqaWsProducerRegs <= 65536);
  }
  CHECK(specprobe_kernels::mqa_ws_math_regs(4) == 104);  // DeepGEMM's split for the same layout
  CHECK(specprobe_kernels::mqa_ws_math_regs(3) == 152);
  CHECK(specprobe_kernels::mqa_ws_math_regs(3, 24) == 160);  // the held 3 x r3 kernel's producer at 24
  CHECK(128 * 3 * specprobe_kernels::mqa_ws_math_regs(3, 24) + 128 * 24 <= 65536);
}

TEST_CASE("mqa q tensor map puts each (row, head) in the B column the kernel's weights expect", "[probes]") {
  // Walks the box of one chunk as the TMA unit fills shared memory (dim 0 fastest) and checks
  // that box element e, B column e / D, reads q[row, head, e % D] of the row and head that
  // mqa_q_col_row / mqa_q_col_head name for that column: the kernel stages its weights by those
  // two functions, so a map and a mapping that disagree pair heads with the wrong weights.
  constexpr int64_t kSmemPerSm = 228 * 1024, kSmemPerBlock = 227 * 1024;  // sm_90
  const int batch = 5, heads = 64, head_dim = 128;
  for (int n : {1, 2, 3, 4, 5})
    for (bool ws : {false, true}) {
      const MqaWsVariant v = ws ? mqa_ws_variant(batch, n, heads, head_dim, kSmemPerBlock) : MqaWsVariant{};
      const MqaLaunch l = mqa_tma_launch_config(batch, n, heads, head_dim, kSmemPerSm, kSmemPerBlock, v);
      const bool paired = specprobe_kernels::mqa_ws_paired_rows(l.math_wgs, l.rows_per_cta);
      INFO("next_n " << n << " kernel " << l.kernel);
      if (ws) CHECK(paired == (v.rpc == 2));  // 4 x r2 at next_n 2, 3 x r2 held 2 at next_n 4
      MqaInputs in;
      in.batch = batch, in.next_n = n, in.heads = heads, in.head_dim = head_dim;
      const MqaQMapGeometry g = mqa_q_map_geometry(in, l);
      REQUIRE(g.rank == (paired ? 4 : 2));
      uint64_t box_elems = 1;
      for (int k = 0; k < g.rank; ++k) box_elems *= g.box[k];
      const int N = l.rows_per_cta * heads;
      REQUIRE(box_elems == static_cast<uint64_t>(N) * head_dim);
      for (int b : {0, batch - 1})
        for (int c = 0; c * l.rows_per_cta < n; ++c) {
          const int row0 = b * n + c * l.rows_per_cta;  // the kernel's chunk origin
          // the kernel's box coordinates: {0, 0, row0, 0} paired, {0, row0 * heads} otherwise
          uint64_t origin[4] = {0, 0, 0, 0};
          origin[paired ? 2 : 1] = paired ? static_cast<uint64_t>(row0) : static_cast<uint64_t>(row0) * heads;
          std::set<std::pair<int, int>> seen;
          bool all_match = true;
          for (uint64_t e = 0; e < box_elems; ++e) {
            uint64_t rest = e, offset = 0;
            bool in_bounds = true;
            for (int k = 0; k < g.rank; ++k) {
              const uint64_t coord = origin[k] + rest % g.box[k];
              rest /= g.box[k];
              in_bounds = in_bounds && coord < g.dims[k];
              offset += k == 0 ? coord : coord * g.strides[k - 1];
            }
            const int col = static_cast<int>(e / head_dim), d = static_cast<int>(e % head_dim);
            const int row = row0 + specprobe_kernels::mqa_q_col_row(paired, col, heads);
            const int head = specprobe_kernels::mqa_q_col_head(paired, col, heads);
            if (d == 0) seen.insert({row - row0, head});
            // rows past the last request fall outside the map (the TMA unit fills zeros there)
            const bool want_in = row < batch * n;
            const uint64_t want = (static_cast<uint64_t>(row) * heads + head) * head_dim + d;
            if (in_bounds != want_in || (in_bounds && offset != want)) all_match = false;
          }
          CHECK(all_match);
          CHECK(seen.size() == static_cast<size_t>(N));  // every (row, head) of the chunk once
          for (const auto& [r, h] : seen) CHECK((r >= 0 && r < l.rows_per_cta && h >= 0 && h < heads));
        }
    }
}

TEST_CASE("mqa inputs with full lengths give every request the whole context", "[probes]") {
  const auto in = make_mqa_inputs(4, 3, 16, 64, 32, 100, 7, true);
  for (int b = 0; b < 4; ++b)
    for (int i = 0; i < 3; ++i) CHECK(in.context_lens[static_cast<size_t>(b) * 3 + i] == 100 - 3 + i + 1);
}

TEST_CASE("spec verify splits cover every token and the ring fits the block limit", "[probes]") {
  auto in = make_spec_verify_inputs(8, 3, 8, 2, 128, false, 16, 3000, 4);
  const auto big = spec_verify_launch_config(in, 0, 132, 227 * 1024);
  CHECK(big.stages == 3);
  CHECK(big.smem <= 227u * 1024u);
  const auto small = spec_verify_launch_config(in, 0, 132, 99 * 1024);  // sm_86 / sm_120: 32-token tiles fit 3 stages
  CHECK(small.stages == 3);
  CHECK(small.smem <= 99u * 1024u);
  const auto tight = spec_verify_launch_config(in, 0, 132, 56 * 1024);
  CHECK(tight.stages == 2);
  CHECK(tight.smem <= 56u * 1024u);
  for (const auto& l : {big, small, tight, spec_verify_launch_config(in, 3, 132, 227 * 1024)}) {
    CHECK(l.grid_x == static_cast<unsigned>(l.num_splits));
    const int tn = specprobe_kernels::spec_verify_tile_tokens(in.head_dim, l.rows_per_cta);
    CHECK(l.num_splits * l.tiles_per_split * tn >= in.bt_stride * in.block_size);  // any replayed length
  }
  for (bool fp8 : {false, true})
    for (int d : {64, 128, 256}) {
      auto x = make_spec_verify_inputs(1, 7, 16, 1, d, fp8, 16, 50, 1);
      CHECK(spec_verify_launch_config(x, 0, 132).smem <= 99u * 1024u);  // sm_86 / sm_120 keep a path
    }
}

TEST_CASE("spec verify takes the copy-engine variant only for bf16 with boxes of 8 or more tokens", "[probes]") {
  struct Case {
    bool fp8;
    int block_size, head_dim, gqa;
    bool copy_engine;
    int box;  // expected box_tokens; 0 = the cp.async kernel
  };
  for (const Case c :
       {Case{false, 16, 128, 8, true, 16}, Case{false, 32, 128, 8, true, 32}, Case{false, 128, 128, 8, true, 32},
        Case{false, 24, 128, 8, true, 8},   // gcd(32, 24): boxes of 8 tokens
        Case{false, 16, 128, 2, true, 16},  // 8 rows: 64-token tiles, boxes of one block
        Case{false, 64, 256, 8, true, 32}, Case{false, 4, 128, 8, true, 0}, Case{false, 1, 128, 8, true, 0},
        Case{true, 16, 128, 8, true, 0}, Case{false, 16, 128, 8, false, 0}}) {
    const auto in = make_spec_verify_inputs(3, 3, c.gqa, 2, c.head_dim, c.fp8, c.block_size, 500, 2);
    const auto l = spec_verify_launch_config(in, 0, 132, 227 * 1024, c.copy_engine);
    INFO("fp8 " << c.fp8 << " block " << c.block_size << " head_dim " << c.head_dim << ": " << l.kernel);
    CHECK(l.box_tokens == c.box);
    const bool tma = l.kernel.size() > 4 && l.kernel.compare(l.kernel.size() - 4, 4, "_tma") == 0;
    CHECK(tma == (c.box > 0));
    if (c.box > 0) {
      CHECK(l.stages == specprobe_kernels::kSpecVerifyTmaStages);
      CHECK(l.smem ==
            static_cast<unsigned>(specprobe_kernels::spec_verify_tma_smem_bytes(c.head_dim, l.rows_per_cta, l.stages)));
    }
  }
  // 99 KB parts (sm_120) keep the variant at every head_dim; a limit below its ring falls back.
  for (int d : {64, 128, 256}) {
    const auto in = make_spec_verify_inputs(1, 7, 16, 1, d, false, 16, 50, 1);
    const auto l = spec_verify_launch_config(in, 0, 132, 99 * 1024, true);
    CHECK(l.box_tokens == 16);
    CHECK(l.smem <= 99u * 1024u);
    const int need =
        specprobe_kernels::spec_verify_tma_smem_bytes(d, l.rows_per_cta, specprobe_kernels::kSpecVerifyTmaStages);
    const auto below = spec_verify_launch_config(in, 0, 132, need - 1, true);
    CHECK(below.box_tokens == 0);
    CHECK(below.kernel.find("_tma") == std::string::npos);
  }
}

TEST_CASE("spec verify copy-engine tiles: the swizzled offsets fill the tile once each", "[probes]") {
  // Every 16-byte chunk (token, 8 elements) of a K or V tile lands on its own chunk of the
  // tile's tn x head_dim x 2 bytes, and within its token's 128-byte row of its half: what the
  // kernel's ldmatrix reads back is what the copy engine wrote.
  for (int tn : {32, 64})
    for (int d : {64, 128, 256}) {
      std::vector<int> seen(static_cast<size_t>(tn) * d * 2 / 16, 0);
      for (int tok = 0; tok < tn; ++tok)
        for (int e = 0; e < d; e += 8) {
          const int off = specprobe_kernels::spec_verify_tma_offset(tn, tok, e);
          REQUIRE(off % 16 == 0);
          REQUIRE(off >= 0);
          REQUIRE(off < tn * d * 2);
          CHECK((off - (e / 64) * tn * 128) / 128 == tok);  // its own row of its own half
          ++seen[static_cast<size_t>(off / 16)];
        }
      for (int n : seen) CHECK(n == 1);
    }
}

TEST_CASE("spec verify automatic splits share the longest context equally", "[probes]") {
  // The benchmark's shape scaled to a small GPU: 256 tiles of 32 tokens per request (32 rows); the
  // split size first chosen (about 12 CTAs per SM) is evened out so that no split is left a sliver.
  auto in = make_spec_verify_inputs(4, 3, 8, 2, 128, false, 64, 8192, 5);
  for (int sms : {4, 8, 11, 16, 33}) {
    const auto l = spec_verify_launch_config(in, 0, sms, 227 * 1024);
    const int max_tiles = 8192 / specprobe_kernels::spec_verify_tile_tokens(128, l.rows_per_cta);
    INFO(sms << " SMs: " << l.num_splits << " splits of " << l.tiles_per_split << " tiles");
    CHECK(l.num_splits * l.tiles_per_split >= max_tiles);
    CHECK(l.num_splits * l.tiles_per_split - max_tiles < l.num_splits);  // under one tile short per split
  }
}

TEST_CASE("spec verify scores: one per visible token, read through the block table's cache offsets", "[probes]") {
  auto in = make_spec_verify_inputs(2, 3, 2, 2, 64, false, 16, 100, 4);
  // Offsets of every (request, token, kv head) are distinct and inside the cache.
  std::set<size_t> seen;
  for (int b = 0; b < in.batch; ++b)
    for (int t = 0; t < in.seq_lens[b]; ++t)
      for (int h = 0; h < in.heads_kv; ++h) {
        const size_t off = spec_verify_cache_offset(in, b, t, h);
        CHECK(off % in.head_dim == 0);
        CHECK((off + in.head_dim) * 2 <= in.k_cache.size());
        CHECK(seen.insert(off).second);
      }
  const int b = 1, j = 2, hq = 3, t = 37;  // q head 3 reads kv head 1
  const auto before = spec_verify_scores(in, b, j, hq);
  REQUIRE(before.size() == static_cast<size_t>(in.seq_lens[b] - in.num_q + j + 1));
  // Doubling token t's key (exact in bf16) doubles its score and no other.
  uint16_t* k = reinterpret_cast<uint16_t*>(in.k_cache.data()) + spec_verify_cache_offset(in, b, t, 1);
  for (int d = 0; d < in.head_dim; ++d) k[d] = float_to_bf16(2.f * bf16_to_float(k[d]));
  const auto after = spec_verify_scores(in, b, j, hq);
  for (size_t i = 0; i < before.size(); ++i) CHECK(after[i] == (static_cast<int>(i) == t ? 2 * before[i] : before[i]));
}

TEST_CASE("spec verify reference: causal window and a uniform-key sanity check", "[probes]") {
  auto in = make_spec_verify_inputs(1, 2, 3, 1, 64, false, 16, 20, 9);
  // Make every key equal: attention is then the mean of the visible values.
  for (size_t i = 0; i < in.k_cache.size(); i += 2) {
    in.k_cache[i] = 0x80;
    in.k_cache[i + 1] = 0x3F;
  }
  const int L = in.seq_lens[0];
  for (int j = 0; j < 3; ++j) {
    const auto out = spec_verify_reference(in, 0, j, 1);
    const int pos = L - 3 + j;
    double mean = 0;
    for (int t = 0; t <= pos; ++t) {
      const int blk = in.block_table[t / 16];
      uint16_t v;
      std::memcpy(&v, in.v_cache.data() + 2 * ((static_cast<size_t>(blk) * 16 + t % 16) * 64 + 5), 2);
      mean += bf16_to_float(v);
    }
    CHECK(out[5] == Approx(mean / (pos + 1)).epsilon(1e-9));
  }
}

TEST_CASE("spec verify launch configuration: rows padded to 16/32, never to a power of two", "[probes]") {
  auto in = make_spec_verify_inputs(2, 3, 6, 2, 128, true, 16, 50, 1);
  auto l = spec_verify_launch_config(in, 1, 132);
  CHECK(l.rows_per_cta == 32);  // 4 * 6 = 24 rows
  CHECK(l.grid_z == 1);
  CHECK(l.kernel == "spec_verify_d128_fp8_r32");
  auto in16 = make_spec_verify_inputs(1, 7, 16, 1, 256, false, 128, 50, 1);
  auto l16 = spec_verify_launch_config(in16, 0, 132);
  CHECK(l16.grid_z == 4);  // 128 rows
  CHECK(l16.smem <= 99u * 1024u);
  CHECK(l16.num_splits >= 1);
}

TEST_CASE("spec verify check flags unwritten and wrong outputs", "[probes]") {
  auto in = make_spec_verify_inputs(1, 1, 2, 1, 64, false, 16, 10, 2);
  std::vector<uint16_t> out(in.out_elems());
  for (int j = 0; j < in.num_q; ++j)
    for (int h = 0; h < in.heads_q; ++h) {
      auto ref = spec_verify_reference(in, 0, j, h);
      for (int d = 0; d < 64; ++d) out[(j * in.heads_q + h) * 64 + d] = float_to_bf16(static_cast<float>(ref[d]));
    }
  CHECK(spec_verify_passes(check_spec_verify(in, out, {})));
  out[3] = kPoisonBf16;
  CHECK_FALSE(spec_verify_passes(check_spec_verify(in, out, {})));
}

TEST_CASE("plan probes derive shapes from facts and fold results back", "[probes]") {
  Json facts = Json::parse(R"({"spec":{"next_n":3},"model":{"dsa":{"index_n_heads":64,"index_head_dim":128},
    "num_attention_heads":48,"num_kv_heads":8,"head_dim":128},"serve":{"kv_cache_dtype":"fp8_e4m3","block_size":64}})");
  auto specs = plan_probe_specs(facts, "auto");
  REQUIRE(specs.size() == 3);
  CHECK(specs[0]["probe"] == "mqa_logits");
  CHECK(specs[0]["next_n"] == 3);
  CHECK(specs[1]["probe"] == "spec_verify");
  CHECK(specs[1]["gqa"] == 6);
  CHECK(specs[1]["k"] == 2);
  CHECK(specs[1]["kv_dtype"] == "fp8");
  CHECK(specs[1]["block_size"] == 64);
  CHECK(specs[2]["probe"] == "graph_replay");
  CHECK(plan_probe_specs(facts, "all").size() == 10);
  CHECK(plan_probe_specs(facts, "off").empty());

  std::vector<Json> results = {
      make_result({{"probe", "mqa_logits"}, {"next_n", 1}}, kPass),
      make_result({{"probe", "mqa_logits"}, {"next_n", 2}}, kPass),
      make_result({{"probe", "mqa_logits"}, {"next_n", 3}}, kCrash, "CUDA_ERROR_ILLEGAL_ADDRESS"),
      make_result({{"probe", "spec_verify"}}, kFail, "bad"), make_result({{"probe", "graph_replay"}}, kPass)};
  Json patch = probe_facts_patch(results);
  CHECK(*find_fact(patch, "probe.ran") == true);
  CHECK(*find_fact(patch, "probe.mqa_logits.next_n.3.status") == "crash");
  CHECK(*find_fact(patch, "probe.mqa_logits.max_native_next_n") == 2);
  CHECK(*find_fact(patch, "probe.spec_verify.status") == "fail");
  CHECK(*find_fact(patch, "probe.graph_replay.status") == "pass");

  PlanProbeOptions off;
  off.gpu_present = false;
  auto run = run_plan_probes(facts, off);
  CHECK(*find_fact(run.facts_patch, "probe.ran") == false);
  CHECK(run.results.empty());

  // --probes all with no GPU visible (a CPU runner checking a declared --gpu): every shape is a
  // skip that says why, not an error that would leave the plan undecided (rules/plan_path.cpp);
  // no child is started (the child command below does not exist).
  PlanProbeOptions all_no_gpu;
  all_no_gpu.mode = "all";
  all_no_gpu.gpu_present = false;
  all_no_gpu.no_gpu_reason = "cannot load libcuda.so.1";
  all_no_gpu.child_command = {"/nonexistent/specprobe-child"};
  auto skipped = run_plan_probes(facts, all_no_gpu);
  CHECK(skipped.results.size() == plan_probe_specs(facts, "all").size());
  for (const auto& r : skipped.results) {
    CHECK(r["status"] == "skip");
    if (specprobe::probe_kernels_fatbin().empty())
      CHECK(r["reason"] == specprobe::kNoKernelsReason);
    else
      CHECK(r["reason"].get<std::string>().find("cannot load libcuda.so.1") != std::string::npos);
  }
  CHECK(*find_fact(skipped.facts_patch, "probe.spec_verify.status") == "skip");
  CHECK(*find_fact(skipped.facts_patch, "probe.mqa_logits.next_n.3.status") == "skip");
}

TEST_CASE("inputs filled on several cores are the values one Rng gives in order", "[probes]") {
  for (const uint64_t draws : {uint64_t{1}, uint64_t{2}}) {
    const size_t n = 100003;  // several chunks and a partial one
    Rng seq(42), par(42);
    std::vector<uint64_t> a(n), b(n);
    for (size_t i = 0; i < n; ++i) {
      a[i] = seq.next();
      if (draws == 2) a[i] ^= seq.next() << 1;
    }
    fill_from_rng(par, n, draws, [&](size_t i, Rng& r) {
      b[i] = r.next();
      if (draws == 2) b[i] ^= r.next() << 1;
    });
    CHECK(a == b);
    CHECK(seq.next() == par.next());  // both continue from the same place
  }
}
