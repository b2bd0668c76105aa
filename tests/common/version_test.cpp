// PEP 440 parsing, ordering, local labels (git hashes) and specifier sets.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "common/version.hpp"

namespace {

using specprobe::parse_version;
using specprobe::Version;

Version v(const std::string& text) {
  auto parsed = parse_version(text);
  INFO(text);
  REQUIRE(parsed.has_value());
  return *parsed;
}

bool in(const std::string& version, const std::string& spec) { return specprobe::version_satisfies(version, spec); }

}  // namespace

TEST_CASE("version parses PEP 440 parts", "[version]") {
  const Version a = v("0.21.1rc1.dev208+g15332b582");
  CHECK(a.epoch == 0);
  CHECK(a.release == std::vector<std::uint64_t>{0, 21, 1});
  REQUIRE(a.pre);
  CHECK(a.pre->kind == Version::PreKind::rc);
  CHECK(a.pre->number == 1);
  CHECK_FALSE(a.post);
  CHECK(a.dev == 208u);
  CHECK(a.local == "g15332b582");
  CHECK(a.str() == "0.21.1rc1.dev208+g15332b582");

  const Version b = v("1!2.0.post3");
  CHECK(b.epoch == 1);
  CHECK(b.post == 3u);
  CHECK(b.str() == "1!2.0.post3");

  const Version c = v("  V2.9.0+NV_Dev.A6B593D\n");
  CHECK(c.release == std::vector<std::uint64_t>{2, 9, 0});
  CHECK(c.local == "nv_dev.a6b593d");
  CHECK(c.str() == "2.9.0+nv.dev.a6b593d");

  CHECK(v("1.2.3.4.5.6").release.size() == 6);
  CHECK(v("20240101").release == std::vector<std::uint64_t>{20240101});
}

TEST_CASE("version normalizes alternative spellings", "[version]") {
  CHECK(v("1.0alpha1").str() == "1.0a1");
  CHECK(v("1.0-beta.2").str() == "1.0b2");
  CHECK(v("1.0.c3").str() == "1.0rc3");
  CHECK(v("1.0pre4").str() == "1.0rc4");
  CHECK(v("1.0preview5").str() == "1.0rc5");
  CHECK(v("1.0a").str() == "1.0a0");
  CHECK(v("1.0-1").str() == "1.0.post1");
  CHECK(v("1.0.rev2").str() == "1.0.post2");
  CHECK(v("1.0r3").str() == "1.0.post3");
  CHECK(v("1.0_post").str() == "1.0.post0");
  CHECK(v("1.0-dev7").str() == "1.0.dev7");
  CHECK(v("1.0dev").str() == "1.0.dev0");
  CHECK(v("1.0a1.post2.dev3").str() == "1.0a1.post2.dev3");
}

TEST_CASE("version rejects what is not PEP 440", "[version]") {
  for (const char* bad : {"",
                          "   ",
                          "v",
                          "abc",
                          "1.",
                          ".1",
                          "1..2",
                          "1.0+",
                          "1.0+a..b",
                          "1.0+a_",
                          "1.0+_a",
                          "1.0 1",
                          "1.0a1b2",
                          "1.0-",
                          "1.0.post.dev.x",
                          "1!",
                          "!1",
                          "1.0+a+b",
                          "1.0$",
                          "1234567890123456789",
                          "1.0.dev1234567890123456789",
                          "0.21.1rc1.dev208+g1533 2b582"}) {
    INFO(bad);
    CHECK_FALSE(parse_version(bad).has_value());
  }
}

TEST_CASE("version local label and git hash", "[version]") {
  CHECK(v("0.21.1rc1.dev208+g15332b582").git_hash() == std::string("15332b582"));
  CHECK(v("0.21.1rc1.dev202+g3424fba5").git_hash() == std::string("3424fba5"));
  CHECK(v("2.9.0+nv_dev.a6b593d").git_hash() == std::string("a6b593d"));
  CHECK(v("2.9.0+nv_dev.a6b593d").local_segments() == std::vector<std::string>{"nv", "dev", "a6b593d"});
  CHECK_FALSE(v("2.9.0+cu128").git_hash());
  CHECK_FALSE(v("2.9.0+1234567").git_hash());  // digits alone could be a build number
  CHECK_FALSE(v("2.9.0").git_hash());
  CHECK(v("2.9.0").local.empty());
  CHECK(v("2.9.0").local_segments().empty());
  CHECK(v("2.9.0+cu128").public_version().str() == "2.9.0");
}

TEST_CASE("version ordering", "[version]") {
  CHECK(v("0.21.1rc1.dev208+g15332b582") < v("0.21.1"));
  CHECK(v("0.20.0") >= v("0.20.0rc1"));
  CHECK(v("1.0") == v("1.0.0"));
  CHECK(v("1.0") == v("v1.0.0.0"));
  CHECK(v("1.10") > v("1.9"));
  CHECK(v("1!0.1") > v("99.0"));
  CHECK(v("1.0+local") > v("1.0"));
  CHECK(v("1.0+abc.5") > v("1.0+abc.foo"));  // numbers sort after strings
  CHECK(v("1.0+abc.10") > v("1.0+abc.9"));
  CHECK(v("1.0+abc") < v("1.0+abc.1"));
  CHECK(v("1.0+abc") != v("1.0+abd"));

  // The full PEP 440 sequence for one release, in order.
  const std::vector<std::string> ordered = {
      "1.0.dev0",
      "1.0.dev456",
      "1.0a1",
      "1.0a2.dev456",
      "1.0a12.dev456",
      "1.0a12",
      "1.0b1.dev456",
      "1.0b2",
      "1.0b2.post345.dev456",
      "1.0b2.post345",
      "1.0rc1.dev456",
      "1.0rc1",
      "1.0",
      "1.0+abc.5",
      "1.0+abc.7",
      "1.0+5",
      "1.0.post456.dev34",
      "1.0.post456",
      "1.0.15",
      "1.1.dev1",
  };
  for (std::size_t i = 0; i + 1 < ordered.size(); ++i) {
    INFO(ordered[i] << " < " << ordered[i + 1]);
    CHECK(v(ordered[i]) < v(ordered[i + 1]));
    CHECK(v(ordered[i + 1]) > v(ordered[i]));
    CHECK(v(ordered[i]) != v(ordered[i + 1]));
  }

  // Sorting a shuffled copy gives the sequence back (the order is total and consistent).
  std::vector<Version> shuffled;
  for (const auto& s : ordered) shuffled.push_back(v(s));
  std::mt19937 rng(440);
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  std::sort(shuffled.begin(), shuffled.end());
  for (std::size_t i = 0; i < ordered.size(); ++i) CHECK(shuffled[i].str() == v(ordered[i]).str());
}

TEST_CASE("version str round-trips", "[version]") {
  for (const char* text : {"0.21.1rc1.dev208+g15332b582", "1!2.0a1.post2.dev3+x.y.1", "0", "1.0.0.0.0", "3.1b7.post0",
                           "2.9.0+nv.dev.a6b593d"}) {
    INFO(text);
    const Version a = v(text);
    CHECK(a.str() == text);
    CHECK(v(a.str()) == a);
  }
}

TEST_CASE("version specifier sets", "[version]") {
  CHECK(in("0.25.1", ">=0.20.0,<0.28"));
  CHECK(in("0.20.0", ">=0.20.0,<0.28"));
  CHECK_FALSE(in("0.28.0", ">=0.20.0,<0.28"));
  CHECK_FALSE(in("0.19.2", ">=0.20.0,<0.28"));
  CHECK_FALSE(in("0.20.0rc1", ">=0.20.0,<0.28"));
  CHECK(in("0.21.1rc1.dev208+g15332b582", ">=0.20.0,<0.28"));
  // Documented simplification: "<0.28" admits 0.28's pre-releases (PEP 440 would not).
  CHECK(in("0.28.0rc1", "<0.28"));
  CHECK(in("0.28.0.dev3", "<0.28"));
  // Local labels are ignored by ordered comparisons.
  CHECK_FALSE(in("0.28.0+g1234567", "<0.28"));
  CHECK(in("0.28.0+g1234567", "<=0.28"));
  CHECK_FALSE(in("1.0+x", ">1.0"));

  CHECK(in("0.25.0", "==0.25.*"));
  CHECK(in("0.25.7", "==0.25.*"));
  CHECK(in("0.25", "==0.25.*"));
  CHECK(in("0.25.1rc1", "==0.25.*"));
  CHECK_FALSE(in("0.250.0", "==0.25.*"));
  CHECK_FALSE(in("0.26.0", "==0.25.*"));
  CHECK_FALSE(in("1!0.25.0", "==0.25.*"));
  CHECK(in("0.26.0", "!=0.25.*"));
  CHECK_FALSE(in("0.25.2", "!=0.25.*"));

  CHECK(in("1.0", "==1.0.0"));
  CHECK(in("1.0+cu128", "==1.0"));
  CHECK_FALSE(in("1.0+cu128", "==1.0+cu126"));
  CHECK(in("1.0+cu126", "==1.0+cu126"));
  CHECK_FALSE(in("1.0", "!=1.0"));
  CHECK(in("1.0.1", "!=1.0"));
  CHECK(in("1.1", ">1.0"));
  CHECK(in("1.0", ">=1.0"));
  CHECK_FALSE(in("1.0", ">1.0"));
  CHECK(in("0.9", "<1.0"));
  CHECK(in("1.0", "<=1.0"));

  CHECK(in("2.2", "~=2.2"));
  CHECK(in("2.9.1", "~=2.2"));
  CHECK_FALSE(in("3.0", "~=2.2"));
  CHECK_FALSE(in("2.1", "~=2.2"));
  CHECK(in("1.4.9", "~=1.4.5"));
  CHECK_FALSE(in("1.5.0", "~=1.4.5"));
  CHECK_FALSE(in("1.4.4", "~=1.4.5"));

  CHECK(in("1.0+local", "===1.0+LOCAL"));
  CHECK_FALSE(in("1.0", "===1.0.0"));

  CHECK(in("1.0", ""));
  CHECK(in("1.0", "  "));
  CHECK(in("0.25.1", " >= 0.20.0 ,  < 0.28 "));
  CHECK_FALSE(in("not a version", ">=0"));
  CHECK_FALSE(in("1.0", ">>1.0"));
}

TEST_CASE("version specifier errors name the clause", "[version]") {
  for (const char* bad : {"1.0", ">=0.20,", ",<1", ">=0.20,,<1", ">=", "<1.*", ">=1.0.*", "==1.0a1.*", "~=1", "~=1.0+x",
                          ">=abc", "=<1.0", "===", "==1.0+"}) {
    INFO(bad);
    auto r = specprobe::parse_specifiers(bad);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().kind == specprobe::ErrorKind::input);
    CHECK_FALSE(r.error().message.empty());
  }
  auto r = specprobe::parse_specifiers(">=0.20,<<0.28");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message.find("<<0.28") != std::string::npos);

  auto ok = specprobe::parse_specifiers(">=0.20.0, <0.28, !=0.25.*");
  REQUIRE(ok.has_value());
  REQUIRE(ok->specifiers.size() == 3);
  CHECK(ok->specifiers[2].op == specprobe::Specifier::Op::ne);
  CHECK(ok->specifiers[2].wildcard);
  CHECK(ok->specifiers[1].text == "<0.28");
}

// Property check: random strings never crash the parser, and whatever parses round-trips.
TEST_CASE("version parser survives random input", "[version]") {
  std::mt19937 rng(20240);
  const std::string alphabet = "0123456789.!+-_abcdefgprvV ";
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    const int len = static_cast<int>(rng() % 24);
    for (int j = 0; j < len; ++j) s.push_back(alphabet[rng() % alphabet.size()]);
    auto parsed = parse_version(s);
    if (parsed) {
      INFO(s << " -> " << parsed->str());
      auto again = parse_version(parsed->str());
      REQUIRE(again.has_value());
      CHECK(*again == *parsed);
      CHECK(again->str() == parsed->str());
    }
    (void)specprobe::parse_specifiers(s);
  }
}
