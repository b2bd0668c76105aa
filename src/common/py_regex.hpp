// Python `re.match` for the patterns checkpoint configs carry (compressed-tensors `re:` ignore
// entries, GPTQ `dynamic` keys), in time linear in the name's length.
//
// Why not std::regex: it backtracks and recurses without bound, so one downloaded pattern such as
// `.+*mtp.*` (a fuzz finding: libstdc++ reads it as a nested repetition that Python refuses as
// "multiple repeat") or `.*a.*a.*a.*aX` against a long tensor name runs for seconds to hours.
// This is a Thompson-NFA simulation (a Pike VM without captures, as in RE2): every position of the
// name is visited once with at most one thread per instruction, so the cost is
// O(len(name) x program size), and the program size is capped.
//
// Supported: literals and escapes (\. \t \n ...), `.` (not newline), classes [a-z], [^...],
// \d \w \s and their negations (ASCII meanings), groups (...), (?:...), (?P<name>...), `|`,
// * + ? {m} {m,} {,n} {m,n} and their lazy forms (laziness cannot change whether re.match
// matches), anchors ^ $ \A \Z \b \B. Refused with a reason (the pattern then matches nothing, and
// the caller reports it): backreferences, lookaround, inline flags, possessive quantifiers,
// repeats over 1000, patterns over 512 bytes or compiling to over 4096 instructions, nesting
// deeper than 16, and what Python itself rejects (a repeat of a repeat, unbalanced parentheses).
// Names are matched as UTF-8 bytes: a non-ASCII literal is one atom, but `.` and classes take one
// byte, so `.{3}` counts a two-byte character as two (tensor names are ASCII in practice).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace specprobe {

class PyRegex {
 public:
  // The compiled pattern, or why it is refused (one line, names the position).
  static std::variant<PyRegex, std::string> compile(std::string_view pattern);

  // re.match(pattern, value) is not None: anchored at the start, not at the end.
  bool match(std::string_view value) const;

  struct Inst {
    enum Op : uint8_t { ch, any, cls, split, jmp, assert_, done } op;
    uint8_t c = 0;          // ch: the byte; assert_: one of '^', '$', 'A', 'Z', 'b', 'B'
    uint32_t x = 0, y = 0;  // split: both targets; jmp: x; cls: index into classes_
  };

 private:
  std::vector<Inst> prog_;
  std::vector<std::vector<bool>> classes_;  // 256 entries each
};

}  // namespace specprobe
