// Library versions from site-packages metadata and --lib, without running Python.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "inputs/versions/installed_libs.hpp"
#include "inputs/versions/python_env.hpp"

namespace fs = std::filesystem;
using namespace specprobe;

namespace {

fs::path make_venv() {
  std::string tmpl = (fs::temp_directory_path() / "specprobe-venv-XXXXXX").string();
  const fs::path root = mkdtemp(tmpl.data());
  const fs::path sp = root / "lib" / "python3.12" / "site-packages";
  fs::create_directories(sp);
  fs::create_directories(root / "bin");
  std::ofstream(root / "bin" / "python3") << "#!/bin/sh\nexit 99\n";  // never run
  auto dist = [&](const std::string& dir, const std::string& name, const std::string& version) {
    fs::create_directories(sp / dir);
    std::ofstream(sp / dir / "METADATA") << "Metadata-Version: 2.1\nName: " << name << "\nVersion: " << version
                                         << "\nSummary: x\n\nVersion: 9.9.9 (body, not a header)\n";
  };
  dist("vllm-0.25.1.dist-info", "vllm", "0.25.1");
  dist("flashinfer_python-0.6.14.dist-info", "flashinfer-python", "0.6.14");
  dist("deep_gemm-2.5.0+a6b593d.dist-info", "deep_gemm", "2.5.0+a6b593d");
  dist("requests-2.31.0.dist-info", "requests", "2.31.0");
  fs::create_directories(sp / "triton-3.6.0.egg-info");
  std::ofstream(sp / "triton-3.6.0.egg-info" / "PKG-INFO") << "Name: triton\nVersion: 3.6.0\n";
  return root;
}

}  // namespace

TEST_CASE("python option: finds the venv's site-packages and reads tracked versions", "[facts][libs]") {
  const fs::path venv = make_venv();
  auto sp = site_packages_of_python((venv / "bin" / "python3").string());
  REQUIRE(sp.has_value());
  REQUIRE(sp->size() == 1);
  auto libs = read_site_packages(sp->front());
  REQUIRE(libs.has_value());
  std::map<std::string, std::string> got;
  for (const auto& l : *libs) got[l.key] = l.version;
  CHECK(got.at("vllm") == "0.25.1");
  CHECK(got.at("flashinfer") == "0.6.14");
  CHECK(got.at("deep_gemm") == "2.5.0+a6b593d");
  CHECK(got.at("triton") == "3.6.0");
  CHECK(got.count("requests") == 0);

  Json facts = Json::object();
  add_lib_facts(facts, *libs);
  CHECK(facts["lib"]["deep_gemm"]["git_hash"] == "a6b593d");
  CHECK(facts["lib"]["deep_gemm"]["public_version"] == "2.5.0");
  CHECK(facts["lib"]["vllm"]["source"].get<std::string>().rfind("site-packages:", 0) == 0);
  fs::remove_all(venv);
}

TEST_CASE("python option: errors name the path", "[facts][libs]") {
  auto missing = site_packages_of_python("/nonexistent/bin/python3");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().message.find("/nonexistent/bin/python3") != std::string::npos);
  CHECK(exit_code(missing.error().kind) == 2);
  std::string tmpl = (fs::temp_directory_path() / "specprobe-empty-XXXXXX").string();
  const fs::path empty = mkdtemp(tmpl.data());
  CHECK_FALSE(site_packages_of_python(empty.string()).has_value());
  fs::remove_all(empty);
}

TEST_CASE("lib option: NAME=VERSION", "[facts][libs]") {
  auto ok = parse_lib_arg("deep-gemm=2.6.1+54e2261");
  REQUIRE(ok.has_value());
  CHECK(ok->key == "deep_gemm");
  CHECK(ok->source == "--lib");
  CHECK(parse_lib_arg("flashinfer-python=0.6.18")->key == "flashinfer");
  for (const char* bad : {"vllm", "=1.0", "vllm=", "numpy=1.0", "vllm=abc!"}) {
    INFO(bad);
    auto e = parse_lib_arg(bad);
    REQUIRE_FALSE(e.has_value());
    CHECK(e.error().kind == ErrorKind::usage);
  }
}
