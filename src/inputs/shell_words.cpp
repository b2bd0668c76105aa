// POSIX-shell word splitting for deploy scripts (see shell_words.hpp).
#include "inputs/shell_words.hpp"

#include <algorithm>
#include <cctype>

namespace specprobe::serving {
namespace {

bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

Expected<std::vector<ShellWord>> split_shell_words(std::string_view text, const LineIndex& index) {
  std::vector<ShellWord> out;
  ShellWord cur;
  bool active = false;
  const size_t n = text.size();

  auto begin_word = [&](size_t at) {
    if (!active) {
      cur = ShellWord{};
      cur.start = at;
      active = true;
    }
  };
  auto put = [&](char c, size_t at, bool quoted) {
    if (quoted && !cur.quoted) {
      cur.quoted = true;
      cur.unquoted_prefix = cur.text.size();
    }
    cur.text += c;
    cur.offsets.push_back(static_cast<uint32_t>(at));
  };
  auto flush = [&] {
    if (active) {
      if (!cur.quoted) cur.unquoted_prefix = cur.text.size();
      out.push_back(std::move(cur));
    }
    active = false;
  };
  auto push_op = [&](ShellWord::Kind kind, std::string op, size_t at) {
    ShellWord w;
    w.kind = kind;
    w.text = std::move(op);
    w.start = at;
    for (size_t k = 0; k < w.text.size(); ++k) w.offsets.push_back(static_cast<uint32_t>(at + k));
    out.push_back(std::move(w));
  };
  auto is_continuation = [&](size_t i) {
    return text[i] == '\\' && ((i + 1 < n && text[i + 1] == '\n') ||
                               (i + 2 < n && text[i + 1] == '\r' && text[i + 2] == '\n'));
  };
  // `$NAME`, `${...}`, `$(...)`: copies the text and records NAME expansions.
  auto dollar = [&](size_t i, bool quoted) -> size_t {
    const size_t pos = cur.text.size();
    if (i + 1 < n && text[i + 1] == '{') {
      size_t j = i + 2;
      while (j < n && text[j] != '}' && text[j] != '\n') ++j;
      const size_t end = (j < n && text[j] == '}') ? j + 1 : j;
      for (size_t k = i; k < end; ++k) put(text[k], k, quoted);
      std::string name(text.substr(i + 2, j - (i + 2)));
      if (!name.empty() && name_start(name[0]) &&
          std::all_of(name.begin(), name.end(), [](char c) { return name_char(c); }))
        cur.expansions.push_back({pos, end - i, name});
      return end;
    }
    if (i + 1 < n && text[i + 1] == '(') {
      int depth = 0;
      size_t j = i + 1;
      for (; j < n; ++j) {
        if (text[j] == '(') ++depth;
        else if (text[j] == ')' && --depth == 0) break;
      }
      const size_t end = j < n ? j + 1 : n;
      for (size_t k = i; k < end; ++k) put(text[k], k, quoted);
      return end;
    }
    size_t j = i + 1;
    if (j < n && name_start(text[j])) {
      while (j < n && name_char(text[j])) ++j;
      for (size_t k = i; k < j; ++k) put(text[k], k, quoted);
      cur.expansions.push_back({pos, j - i, std::string(text.substr(i + 1, j - i - 1))});
      return j;
    }
    put('$', i, quoted);
    return i + 1;
  };

  size_t i = 0;
  while (i < n) {
    const char c = text[i];
    if (is_continuation(i)) {
      i += text[i + 1] == '\r' ? 3 : 2;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      flush();
      ++i;
      continue;
    }
    if (c == '\n') {
      flush();
      push_op(ShellWord::separator, "\n", i);
      ++i;
      continue;
    }
    if (c == '#' && !active) {
      while (i < n && text[i] != '\n') ++i;
      continue;
    }
    if (c == '&' && i + 1 < n && text[i + 1] == '>') {  // &> file
      flush();
      push_op(ShellWord::redirection, "&>", i);
      i += 2;
      continue;
    }
    if (c == ';' || c == '&' || c == '|' || c == '(' || c == ')') {
      flush();
      std::string op(1, c);
      if (i + 1 < n && (c == '&' || c == '|' || c == ';') && text[i + 1] == c) op += c;
      push_op(ShellWord::separator, op, i);
      i += op.size();
      continue;
    }
    if (c == '>' || c == '<') {
      // "2>&1": a word made only of digits right before the operator is its file descriptor.
      if (active && !cur.quoted && !cur.text.empty() &&
          std::all_of(cur.text.begin(), cur.text.end(), [](char d) { return std::isdigit(static_cast<unsigned char>(d)); }))
        active = false;
      flush();
      const size_t at = i;
      std::string op;
      while (i < n && (text[i] == '>' || text[i] == '<') && op.size() < 3) op += text[i++];
      if (i < n && (text[i] == '&' || text[i] == '|')) op += text[i++];
      push_op(ShellWord::redirection, op, at);
      continue;
    }
    if (c == '\'') {
      begin_word(i);
      size_t j = i + 1;
      while (j < n && text[j] != '\'') ++j;
      if (j >= n) return input_error("unterminated single quote", index.at(i));
      if (j == i + 1 && !cur.quoted) {
        cur.quoted = true;
        cur.unquoted_prefix = cur.text.size();
      }
      for (size_t k = i + 1; k < j; ++k) put(text[k], k, true);
      i = j + 1;
      continue;
    }
    if (c == '"') {
      begin_word(i);
      if (!cur.quoted) {
        cur.quoted = true;
        cur.unquoted_prefix = cur.text.size();
      }
      size_t j = i + 1;
      bool closed = false;
      while (j < n) {
        const char d = text[j];
        if (d == '"') {
          closed = true;
          break;
        }
        if (d == '\\' && j + 1 < n) {
          const char e = text[j + 1];
          if (e == '\n') {
            j += 2;
            continue;
          }
          if (e == '$' || e == '`' || e == '"' || e == '\\') {
            put(e, j + 1, true);
            j += 2;
            continue;
          }
          put(d, j, true);
          ++j;
          continue;
        }
        if (d == '$') {
          j = dollar(j, true);
          continue;
        }
        put(d, j, true);
        ++j;
      }
      if (!closed) return input_error("unterminated double quote", index.at(i));
      i = j + 1;
      continue;
    }
    if (c == '\\') {
      begin_word(i);
      if (i + 1 < n) put(text[i + 1], i + 1, true);
      i += 2;
      continue;
    }
    if (c == '`') {
      begin_word(i);
      size_t j = i + 1;
      while (j < n && text[j] != '`') ++j;
      if (j >= n) return input_error("unterminated backquote", index.at(i));
      for (size_t k = i; k <= j; ++k) put(text[k], k, false);
      i = j + 1;
      continue;
    }
    begin_word(i);
    if (c == '$') {
      i = dollar(i, false);
      continue;
    }
    put(c, i, false);
    ++i;
  }
  flush();
  return out;
}

}  // namespace specprobe::serving
