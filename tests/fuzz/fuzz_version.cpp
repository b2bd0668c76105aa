// libFuzzer harness: PEP 440 version strings and specifier sets. Input: a version on the first
// line, a specifier set on the rest. Properties: a parsed version's normalized text parses back
// to an equal version, ordering is antisymmetric, and satisfies() never crashes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/version.hpp"
#include "fuzz_common.hpp"

SPECPROBE_FUZZ_ENTRY(fuzz_version_one) {
  using namespace specprobe;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const size_t nl = text.find('\n');
  const std::string_view vtext = text.substr(0, nl);
  const std::string_view stext = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);

  const auto v = parse_version(vtext);
  if (v) {
    const auto again = parse_version(v->str());
    if (!again || !(*again == *v) || again->str() != v->str()) SPECPROBE_FUZZ_FAIL("property violated");  // round-trip
    const Version pub = v->public_version();
    if ((*v <=> pub) == std::strong_ordering::less) SPECPROBE_FUZZ_FAIL("property violated");  // local sorts after
    (void)v->git_hash();
    (void)v->local_segments();
  }
  const auto w = parse_version(stext);
  if (v && w) {  // antisymmetry
    const auto a = *v <=> *w, b = *w <=> *v;
    if ((a < 0) != (b > 0) || (a == 0) != (b == 0)) SPECPROBE_FUZZ_FAIL("property violated");
  }
  auto set = parse_specifiers(stext);
  if (set && v) {
    (void)satisfies(*v, *set);
    for (const Specifier& s : set->specifiers) (void)satisfies(*v, s);
  }
  (void)version_satisfies(vtext, stext);
  return 0;
}
