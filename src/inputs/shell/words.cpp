// POSIX-shell word splitting for deploy scripts (see shell/words.hpp).
#include "inputs/shell/words.hpp"

#include <algorithm>
#include <cctype>

namespace specprobe::serving {

bool shell_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool shell_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

namespace {

bool all_digits(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char d) { return std::isdigit(static_cast<unsigned char>(d)); });
}

// Offset just after the `}` that closes the `${` at I (nested `${...}` and quotes skipped), or
// npos when the text ends first.
size_t closing_brace(std::string_view text, size_t i) {
  int depth = 0;
  for (size_t j = i; j < text.size(); ++j) {
    const char c = text[j];
    if (c == '\\') {
      ++j;
    } else if (c == '\'' && depth > 0) {
      const size_t q = text.find('\'', j + 1);
      if (q == std::string_view::npos) return std::string_view::npos;
      j = q;
    } else if (c == '$' && j + 1 < text.size() && text[j + 1] == '{') {
      ++depth;
      ++j;
    } else if (c == '}') {
      if (--depth == 0) return j + 1;
    }
  }
  return std::string_view::npos;
}

// Offset just after the `)` closing the `(` at I (nesting and quotes skipped); npos if none.
size_t closing_paren(std::string_view text, size_t i) {
  int depth = 0;
  for (size_t j = i; j < text.size(); ++j) {
    const char c = text[j];
    if (c == '\\') {
      ++j;
    } else if (c == '\'' || c == '"' || c == '`') {
      size_t q = j + 1;
      while (q < text.size() && text[q] != c) q += (text[q] == '\\' && c != '\'') ? 2 : 1;
      if (q >= text.size()) return std::string_view::npos;
      j = q;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      if (--depth == 0) return j + 1;
    }
  }
  return std::string_view::npos;
}

class Splitter {
 public:
  Splitter(std::string_view text, const PosMap& pos) : text_(text), pos_(pos), n_(text.size()) {}

  Expected<std::vector<ShellWord>> run() {
    size_t i = 0;
    while (i < n_) {
      auto next = step(i);
      if (!next) return next.error();
      i = *next;
    }
    flush();
    if (!pending_.empty()) attach_heredocs(n_);
    return std::move(out_);
  }

 private:
  struct Pending {
    size_t index;  // in out_: the delimiter word
    std::string delimiter;
    bool strip_tabs;
    bool quoted;
  };

  bool continuation(size_t i) const {
    return text_[i] == '\\' &&
           ((i + 1 < n_ && text_[i + 1] == '\n') || (i + 2 < n_ && text_[i + 1] == '\r' && text_[i + 2] == '\n'));
  }

  void begin_word(size_t at) {
    if (active_) return;
    cur_ = ShellWord{};
    cur_.start = at;
    active_ = true;
  }
  void mark_quoted() {
    if (!cur_.quoted) {
      cur_.quoted = true;
      cur_.unquoted_prefix = cur_.text.size();
    }
  }
  void put(char c, size_t at, bool quoted) {
    if (quoted) mark_quoted();
    cur_.text += c;
    cur_.offsets.push_back(static_cast<uint32_t>(at));
  }
  void flush(size_t end = std::string_view::npos) {
    if (active_) {
      if (!cur_.quoted) cur_.unquoted_prefix = cur_.text.size();
      cur_.end = end == std::string_view::npos ? (cur_.offsets.empty() ? cur_.start : cur_.offsets.back() + 1) : end;
      out_.push_back(std::move(cur_));
      if (want_delimiter_) {
        want_delimiter_ = false;
        const ShellWord& w = out_.back();
        pending_.push_back({out_.size() - 1, w.text, strip_tabs_, w.quoted});
      }
    }
    active_ = false;
  }
  void push_op(ShellWord::Kind kind, std::string op, size_t at) {
    ShellWord w;
    w.kind = kind;
    w.text = std::move(op);
    w.start = at;
    w.end = at + w.text.size();
    for (size_t k = 0; k < w.text.size(); ++k) w.offsets.push_back(static_cast<uint32_t>(at + k));
    out_.push_back(std::move(w));
  }

  // `$...` at I: copies its text into the word and records the expansion. Returns where it ends.
  size_t dollar(size_t i, bool quoted) {
    const size_t pos = cur_.text.size();
    auto copy = [&](size_t from, size_t to) {
      for (size_t k = from; k < to; ++k) put(text_[k], k, quoted);
    };
    auto record = [&](ShellExpansion::Kind kind, size_t end, std::string name, std::string expr) {
      copy(i, end);
      cur_.expansions.push_back({pos, end - i, std::move(name), std::move(expr), kind, quoted});
      return end;
    };
    const char c = i + 1 < n_ ? text_[i + 1] : '\0';
    if (c == '{') {
      const size_t end = closing_brace(text_, i);
      if (end == std::string_view::npos) {
        copy(i, i + 2);
        return i + 2;
      }
      std::string expr(text_.substr(i + 2, end - 1 - (i + 2)));
      size_t k = 0;
      while (k < expr.size() && shell_name_char(expr[k])) ++k;
      std::string name = expr.substr(0, k);
      const bool plain = k == expr.size() && !name.empty() && shell_name_start(name[0]);
      return record(plain ? ShellExpansion::plain : ShellExpansion::braced, end, name, expr);
    }
    if (c == '(') {
      const bool arith = i + 2 < n_ && text_[i + 2] == '(';
      const size_t end = closing_paren(text_, i + 1);
      if (end == std::string_view::npos) {
        copy(i, n_);
        return n_;
      }
      const size_t inner = arith ? i + 3 : i + 2;
      const size_t inner_end = arith ? end - 2 : end - 1;
      return record(arith ? ShellExpansion::arith : ShellExpansion::command, end, "",
                    std::string(text_.substr(inner, inner_end > inner ? inner_end - inner : 0)));
    }
    if (shell_name_start(c)) {
      size_t j = i + 1;
      while (j < n_ && shell_name_char(text_[j])) ++j;
      return record(ShellExpansion::plain, j, std::string(text_.substr(i + 1, j - i - 1)), "");
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c != '\0' && std::string_view("@*#?$!-").find(c) != std::string_view::npos))
      return record(ShellExpansion::special, i + 2, std::string(1, c), "");
    put('$', i, quoted);
    return i + 1;
  }

  Expected<size_t> single_quote(size_t i) {
    begin_word(i);
    const size_t j = text_.find('\'', i + 1);
    if (j == std::string_view::npos) return input_error("unterminated single quote", pos_(i));
    mark_quoted();
    for (size_t k = i + 1; k < j; ++k) put(text_[k], k, true);
    return j + 1;
  }

  // $'...': backslash escapes \n \t \\ \' \" are decoded; others kept.
  Expected<size_t> ansi_quote(size_t i) {
    begin_word(i);
    mark_quoted();
    size_t j = i + 2;
    for (; j < n_ && text_[j] != '\''; ++j) {
      if (text_[j] == '\\' && j + 1 < n_) {
        const char e = text_[j + 1];
        const char d = e == 'n' ? '\n' : e == 't' ? '\t' : e;
        if (std::string_view("nt\\'\"").find(e) != std::string_view::npos) {
          put(d, j, true);
          ++j;
          continue;
        }
      }
      put(text_[j], j, true);
    }
    if (j >= n_) return input_error("unterminated $'...' quote", pos_(i));
    return j + 1;
  }

  Expected<size_t> double_quote(size_t i) {
    begin_word(i);
    mark_quoted();
    size_t j = i + 1;
    while (j < n_) {
      const char d = text_[j];
      if (d == '"') return j + 1;
      if (d == '\\' && j + 1 < n_) {
        const char e = text_[j + 1];
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
      if (d == '`') {
        const size_t q = text_.find('`', j + 1);
        if (q == std::string_view::npos) return input_error("unterminated backquote", pos_(j));
        const size_t pos = cur_.text.size();
        for (size_t k = j; k <= q; ++k) put(text_[k], k, true);
        cur_.expansions.push_back(
            {pos, q + 1 - j, "", std::string(text_.substr(j + 1, q - j - 1)), ShellExpansion::command, true});
        j = q + 1;
        continue;
      }
      put(d, j, true);
      ++j;
    }
    return input_error("unterminated double quote", pos_(i));
  }

  size_t operator_at(size_t i) {
    const char c = text_[i];
    if (c == '&' && i + 1 < n_ && text_[i + 1] == '>') {  // &> file, &>> file
      flush(i);
      const bool twice = i + 2 < n_ && text_[i + 2] == '>';
      push_op(ShellWord::redirection, twice ? "&>>" : "&>", i);
      return i + (twice ? 3 : 2);
    }
    if (c == '>' || c == '<') {
      // "2>&1": a word made only of digits right before the operator is its file descriptor.
      if (active_ && !cur_.quoted && all_digits(cur_.text)) active_ = false;
      flush(i);
      const size_t at = i;
      std::string op;
      while (i < n_ && (text_[i] == '>' || text_[i] == '<') && op.size() < 3) op += text_[i++];
      if (op == "<<" && i < n_ && text_[i] == '-')
        op += text_[i++];
      else if (i < n_ && (text_[i] == '&' || text_[i] == '|'))
        op += text_[i++];
      push_op(ShellWord::redirection, op, at);
      if (op == "<<" || op == "<<-") {
        want_delimiter_ = true;
        strip_tabs_ = op == "<<-";
      }
      return i;
    }
    flush(i);
    std::string op(1, c);
    if (i + 1 < n_ && (c == '&' || c == '|' || c == ';') && text_[i + 1] == c) op += c;
    push_op(ShellWord::separator, op, i);
    return i + op.size();
  }

  // The bytes [FROM, TO) of an unquoted here-document line appended to BODY, with the expansions
  // they hold (dollar() and the backquote case build into cur_, which is free between words).
  void heredoc_line(ShellWord& body, size_t from, size_t to) {
    ShellWord saved = std::move(cur_);
    const bool saved_active = active_;
    cur_ = ShellWord{};
    cur_.text = std::move(body.text);
    cur_.offsets = std::move(body.offsets);
    cur_.expansions = std::move(body.expansions);
    for (size_t k = from; k < to;) {
      const char c = text_[k];
      if (c == '\\' && k + 1 < to && (text_[k + 1] == '$' || text_[k + 1] == '`' || text_[k + 1] == '\\')) {
        put(text_[k + 1], k + 1, true);
        k += 2;
      } else if (c == '$') {
        k = std::max(k + 1, dollar(k, true));
      } else if (c == '`' && text_.find('`', k + 1) < to) {
        const size_t q = text_.find('`', k + 1);
        const size_t pos = cur_.text.size();
        for (size_t j = k; j <= q; ++j) put(text_[j], j, true);
        cur_.expansions.push_back(
            {pos, q + 1 - k, "", std::string(text_.substr(k + 1, q - k - 1)), ShellExpansion::command, true});
        k = q + 1;
      } else {
        put(c, k, true);
        ++k;
      }
    }
    body.text = std::move(cur_.text);
    body.offsets = std::move(cur_.offsets);
    body.expansions = std::move(cur_.expansions);
    cur_ = std::move(saved);
    active_ = saved_active;
  }

  // The bodies of the here-documents opened on the line that ends at NL; returns where the
  // script goes on.
  size_t attach_heredocs(size_t nl) {
    size_t at = nl < n_ ? nl + 1 : n_;
    size_t inserted = 0;
    for (const Pending& p : pending_) {
      ShellWord body;
      body.kind = ShellWord::heredoc;
      body.quoted = p.quoted;
      body.start = at;
      while (at < n_) {
        size_t e = text_.find('\n', at);
        if (e == std::string_view::npos) e = n_;
        std::string_view line = text_.substr(at, e - at);
        size_t skip = 0;
        if (p.strip_tabs)
          while (skip < line.size() && line[skip] == '\t') ++skip;
        std::string_view bare = line.substr(skip);
        if (!bare.empty() && bare.back() == '\r') bare.remove_suffix(1);
        const size_t line_start = at;
        at = e < n_ ? e + 1 : n_;
        if (bare == p.delimiter) break;
        if (p.quoted) {
          for (size_t k = skip; k < line.size(); ++k) {
            body.text += line[k];
            body.offsets.push_back(static_cast<uint32_t>(line_start + k));
          }
        } else {
          // An unquoted delimiter: the body is expanded like a double-quoted word ($NAME,
          // ${...}, $(...), `...`; a backslash escapes only $ ` \), so its expansions are
          // recorded here for the walk to substitute.
          heredoc_line(body, line_start + skip, line_start + line.size());
        }
        body.text += '\n';
        body.offsets.push_back(static_cast<uint32_t>(e < n_ ? e : n_ - 1));
      }
      body.end = at;
      out_.insert(out_.begin() + static_cast<long>(p.index + 1 + inserted), std::move(body));
      ++inserted;
    }
    pending_.clear();
    return at;
  }

  Expected<size_t> step(size_t i) {
    const char c = text_[i];
    if (continuation(i)) return i + (text_[i + 1] == '\r' ? 3 : 2);
    if (c == ' ' || c == '\t' || c == '\r') {
      flush(i);
      return i + 1;
    }
    if (c == '\n') {
      flush(i);
      push_op(ShellWord::separator, "\n", i);
      return pending_.empty() ? i + 1 : attach_heredocs(i);
    }
    if (c == '#' && !active_) {
      while (i < n_ && text_[i] != '\n') ++i;
      return i;
    }
    if (c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '>' || c == '<') return operator_at(i);
    if (c == '\'') return single_quote(i);
    if (c == '$' && i + 1 < n_ && text_[i + 1] == '\'') return ansi_quote(i);
    if (c == '"') return double_quote(i);
    if (c == '$' && i + 1 < n_ && text_[i + 1] == '"') {
      begin_word(i);
      return double_quote(i + 1);
    }
    begin_word(i);
    if (c == '\\') {
      if (i + 1 < n_) put(text_[i + 1], i + 1, true);
      return i + 2;
    }
    if (c == '`') {
      const size_t j = text_.find('`', i + 1);
      if (j == std::string_view::npos) return input_error("unterminated backquote", pos_(i));
      const size_t pos = cur_.text.size();
      for (size_t k = i; k <= j; ++k) put(text_[k], k, false);
      cur_.expansions.push_back(
          {pos, j + 1 - i, "", std::string(text_.substr(i + 1, j - i - 1)), ShellExpansion::command, false});
      return j + 1;
    }
    if (c == '$') return dollar(i, false);
    put(c, i, false);
    return i + 1;
  }

  std::string_view text_;
  const PosMap& pos_;
  size_t n_;
  std::vector<ShellWord> out_;
  ShellWord cur_;
  bool active_ = false;
  bool want_delimiter_ = false;
  bool strip_tabs_ = false;
  std::vector<Pending> pending_;
};

}  // namespace

Expected<std::vector<ShellWord>> split_shell_words(std::string_view text, const LineIndex& index) {
  const PosMap pos = [&index](size_t off) { return index.at(off); };
  return Splitter(text, pos).run();
}

Expected<std::vector<ShellWord>> split_shell_words(std::string_view text, const PosMap& pos) {
  return Splitter(text, pos).run();
}

}  // namespace specprobe::serving
