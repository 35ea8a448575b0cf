// The one secret scanner (rnx/common/secret_scan.hpp): known values, private key blocks, credential formats and
// secret-named values taken out of text rnx publishes.
#include "rnx/common/secret_scan.hpp"

#include <boost/regex.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <exception>

extern char** environ;

namespace rnx {

namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

std::string mark(std::string_view kind) { return "[redacted " + std::string(kind) + "]"; }

// ---- known values --------------------------------------------------------------------------------------------

void remove_known(std::string& text, const std::vector<secret_value>& known, std::vector<std::string>& removed) {
  for (const auto& s : known) {
    if (s.value.empty()) continue;
    const std::string m = mark(s.name);
    for (std::size_t at = text.find(s.value); at != std::string::npos; at = text.find(s.value, at + m.size())) {
      text.replace(at, s.value.size(), m);
      removed.push_back(s.name);
    }
  }
}

// ---- private key blocks --------------------------------------------------------------------------------------

// "-----BEGIN <label> PRIVATE KEY-----" (or "... PRIVATE KEY BLOCK-----") to its END line, or to the end of a text
// cut before it: found by hand, so that a huge text cannot make a pattern backtrack.
void remove_private_keys(std::string& text, std::vector<std::string>& removed) {
  static constexpr std::string_view begin = "-----BEGIN ";
  static constexpr std::string_view end = "-----END ";
  static constexpr std::string_view dashes = "-----";
  const std::string m = mark("private key");
  for (std::size_t at = text.find(begin); at != std::string::npos; at = text.find(begin, at)) {
    const std::size_t label_at = at + begin.size();
    const std::size_t label_end = text.find(dashes, label_at);
    if (label_end == std::string::npos || label_end - label_at > 64 ||
        std::string_view(text).substr(label_at, label_end - label_at).find("PRIVATE KEY") == std::string_view::npos) {
      at = label_at;
      continue;
    }
    std::size_t stop = text.size();
    if (const std::size_t e = text.find(end, label_end + dashes.size()); e != std::string::npos) {
      const std::size_t close = text.find(dashes, e + end.size());
      if (close != std::string::npos && close - e < 80) stop = close + dashes.size();
    }
    text.replace(at, stop - at, m);
    removed.emplace_back("private key");
    at += m.size();
  }
}

// ---- credential formats --------------------------------------------------------------------------------------

int count_digits(std::string_view s) {
  return static_cast<int>(std::count_if(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }));
}

// Random keys hold digits; an identifier that happens to start like one ("sk-learn-...") mostly does not.
bool has_two_digits(std::string_view s) { return count_digits(s) >= 2; }

// A long run of base64 is encoded data (a key body without its BEGIN line, a token) when it mixes upper and
// lower case and digits and is not a path: a hex digest (lower case only), a long name or a folder path (a '/'
// every few characters, where base64 has about one in 64) is not.
bool mixed_base64(std::string_view s) {
  bool lower = false, upper_case = false;
  for (char c : s) {
    lower = lower || (c >= 'a' && c <= 'z');
    upper_case = upper_case || (c >= 'A' && c <= 'Z');
  }
  const auto slashes = static_cast<std::size_t>(std::count(s.begin(), s.end(), '/'));
  return lower && upper_case && count_digits(s) >= 4 && slashes * 16 <= s.size();
}

struct format {
  const char* kind;
  boost::regex pattern;
  int group = 0;                               // the sub-match removed (0: the whole match)
  bool (*accept)(std::string_view) = nullptr;  // a further check of the removed text
};

const std::vector<format>& formats() {
  static const std::vector<format> list = [] {
    auto re = [](const char* text) { return boost::regex(text, boost::regex::perl); };
    std::vector<format> f;
    f.push_back({"github token", re(R"(\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}))")});
    f.push_back({"gitlab token", re(R"(\bglpat-[A-Za-z0-9_-]{20,})")});
    f.push_back({"aws access key id",
                 re(R"(\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|AKPA|ANPA|ANVA|AROA|APKA)[A-Z0-9]{16}\b)")});
    f.push_back({"google api key", re(R"(\bAIza[0-9A-Za-z_-]{35,})")});
    f.push_back({"google oauth token", re(R"(\bya29\.[0-9A-Za-z_-]{20,})")});
    f.push_back({"anthropic key", re(R"(\bsk-ant-[A-Za-z0-9_-]{20,})")});
    f.push_back({"provider key", re(R"(\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,})"), 0, has_two_digits});
    f.push_back({"stripe key", re(R"(\b[rsp]k_(?:live|test)_[A-Za-z0-9]{16,})")});
    f.push_back({"hugging face token", re(R"(\bhf_[A-Za-z0-9]{30,})")});
    f.push_back({"slack token", re(R"(\bxox[abposre]-[A-Za-z0-9-]{10,})")});
    f.push_back({"slack webhook", re(R"(https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,})")});
    f.push_back({"npm token", re(R"(\bnpm_[A-Za-z0-9]{36,})")});
    f.push_back({"pypi token", re(R"(\bpypi-[A-Za-z0-9_-]{50,})")});
    f.push_back({"jwt", re(R"(\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})")});
    f.push_back({"bearer token", re(R"(\b[Bb]earer\s+([A-Za-z0-9._~+/-]{16,}=*))"), 1});
    f.push_back({"password in url", re(R"(\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@'"]+:([^\s/@'"]+)@)"), 1});
    f.push_back({"service account email", re(R"([A-Za-z0-9._%+-]+@[A-Za-z0-9-]+\.iam\.gserviceaccount\.com\b)")});
    f.push_back({"encoded data", re(R"([A-Za-z0-9+/]{64,}={0,2})"), 0, mixed_base64});
    return f;
  }();
  return list;
}

void remove_format(const format& f, std::string& text, std::vector<std::string>& removed) {
  std::string out;
  std::size_t copied = 0;
  bool any = false;
  for (boost::sregex_iterator it(text.begin(), text.end(), f.pattern), last; it != last; ++it) {
    const auto& sub = (*it)[f.group];
    if (!sub.matched) continue;
    const std::string_view found(&*sub.first, static_cast<std::size_t>(sub.length()));
    if (f.accept && !f.accept(found)) continue;
    const auto at = static_cast<std::size_t>(sub.first - text.begin());
    out.append(text, copied, at - copied);
    out += mark(f.kind);
    copied = at + found.size();
    removed.emplace_back(f.kind);
    any = true;
  }
  if (!any) return;
  out.append(text, copied, std::string::npos);
  text = std::move(out);
}

// ---- secret-named values -------------------------------------------------------------------------------------

bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'; }

// The kind removed for a value under `name`, or nullptr when the name marks nothing.
const char* named_kind(const std::string& name) {
  if (credential_name(name)) return "secret-named value";
  const std::string u = upper(name);
  if (u == "CLIENT_EMAIL" || u == "CLIENT_ID" || u == "CLIENT_X509_CERT_URL") return "service account field";
  return nullptr;
}

// Whether what follows a secret name is a credential, not a setting: a number, a boolean, a reference to another
// variable ($NAME, ${{ ... }}), a masked value (***) or anything under 6 bytes is left as it is. A service
// account's fields are removed whatever they hold (its client_id is a number).
bool secret_like_value(std::string_view v, bool any_value) {
  if (v.empty() || v.rfind("[redacted", 0) == 0) return false;
  if (any_value) return v.size() >= 4;
  if (v.size() < 6) return false;
  if (v.front() == '$' || v.rfind("{{", 0) == 0 || v.rfind("%(", 0) == 0) return false;
  if (v.find_first_not_of("0123456789.+-eE_") == std::string_view::npos) return false;
  if (v.find_first_not_of("*xX") == std::string_view::npos) return false;
  const std::string u = upper(v);
  for (const char* word : {"ENABLED", "DISABLED", "UNDEFINED", "NOT SET", "UNSET", "<NONE>"}) {
    if (u == word) return false;
  }
  return true;
}

bool value_stop(char c) {
  switch (c) {
    case ' ':
    case '\t':
    case '\r':
    case '\n':
    case ',':
    case ';':
    case '"':
    case '\'':
    case '`':
    case ')':
    case '}':
    case ']':
    case '>': return true;
    default: return false;
  }
}

// The end of a value that starts at `at` and is closed by `quote` (one quote character, or a backslash and one
// when the text is itself quoted JSON): the closing quote, else the end of the line.
std::size_t quoted_end(const std::string& text, std::size_t at, std::string_view quote) {
  const std::size_t line_end = std::min(text.find('\n', at), text.size());
  if (quote.size() == 2) return std::min(text.find(quote, at), line_end);
  for (std::size_t k = at; k < line_end; ++k) {
    if (text[k] == '\\') {
      ++k;
    } else if (text[k] == quote[0]) {
      return k;
    }
  }
  return line_end;
}

void skip_blanks(const std::string& text, std::size_t& j) {
  while (j < text.size() && (text[j] == ' ' || text[j] == '\t')) ++j;
}

// NAME=VALUE, NAME: VALUE, "NAME": "VALUE", 'NAME': 'VALUE', \"NAME\": \"VALUE\" (JSON inside a string), with
// NAME marked by named_kind: the value replaced.
void remove_named_values(std::string& text, std::vector<std::string>& removed) {
  std::string out;
  std::size_t copied = 0;
  bool any = false;
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const char c = text[i];
    const bool starts =
        (std::isalpha(static_cast<unsigned char>(c)) || c == '_') && (i == 0 || !name_char(text[i - 1]));
    if (!starts) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < n && name_char(text[end])) ++end;
    std::size_t name_end = end;
    while (name_end > i && (text[name_end - 1] == '.' || text[name_end - 1] == '-')) --name_end;
    const char* kind = named_kind(text.substr(i, name_end - i));
    if (!kind) {
      i = end;
      continue;
    }
    std::size_t j = name_end;
    for (int q = 0; q < 2 && j < n && (text[j] == '"' || text[j] == '\'' || text[j] == '\\'); ++q) ++j;
    skip_blanks(text, j);
    const bool separator = j < n && (text[j] == ':' || text[j] == '=') && !(j + 1 < n && text[j + 1] == text[j]);
    if (!separator) {
      i = end;
      continue;
    }
    ++j;
    if (j < n && text[j] == '=') ++j;  // :=
    skip_blanks(text, j);
    std::string_view quote;
    if (j + 1 < n && text[j] == '\\' && (text[j + 1] == '"' || text[j + 1] == '\'')) {
      quote = std::string_view(text).substr(j, 2);
    } else if (j < n && (text[j] == '"' || text[j] == '\'')) {
      quote = std::string_view(text).substr(j, 1);
    }
    const std::size_t value_at = j + quote.size();
    std::size_t value_end = value_at;
    if (!quote.empty()) {
      value_end = quoted_end(text, value_at, quote);
    } else {
      while (value_end < n && !value_stop(text[value_end])) ++value_end;
    }
    const std::string_view value = std::string_view(text).substr(value_at, value_end - value_at);
    if (secret_like_value(value, std::string_view(kind) == "service account field")) {
      out.append(text, copied, value_at - copied);
      out += mark(kind);
      copied = value_end;
      removed.emplace_back(kind);
      any = true;
    }
    i = std::max(value_end, end);
  }
  if (!any) return;
  out.append(text, copied, std::string::npos);
  text = std::move(out);
}

}  // namespace

bool credential_name(const std::string& name) {
  static constexpr std::array<std::string_view, 13> strong = {
      "TOKEN",       "SECRET", "SECRETS", "PASSWORD",   "PASSWD",    "PASSPHRASE", "CREDENTIAL",
      "CREDENTIALS", "CREDS",  "APIKEY",  "PRIVATEKEY", "ACCESSKEY", "SECRETKEY"};
  static constexpr std::array<std::string_view, 9> weak = {"KEY",    "PASS",    "PWD", "AUTH",         "PAT",
                                                           "COOKIE", "PRIVATE", "DSN", "AUTHORIZATION"};
  const std::string u = upper(name);
  std::vector<std::string_view> parts;
  std::size_t begin = 0;
  for (std::size_t k = 0; k <= u.size(); ++k) {
    if (k == u.size() || u[k] == '_' || u[k] == '-' || u[k] == '.') {
      if (k > begin) parts.push_back(std::string_view(u).substr(begin, k - begin));
      begin = k + 1;
    }
  }
  for (std::string_view part : parts) {
    for (std::string_view word : strong) {
      if (ends_with(part, word)) return true;
    }
  }
  if (parts.size() < 2) return false;
  for (std::string_view part : parts) {
    if (std::find(weak.begin(), weak.end(), part) != weak.end()) return true;
  }
  return false;
}

std::vector<secret_value> environment_secrets(bool (*looks_secret)(const std::string&)) {
  std::vector<secret_value> found;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry(*e);
    const std::size_t equals = entry.find('=');
    if (equals == std::string_view::npos || entry.size() - equals - 1 < 8) continue;
    std::string name(entry.substr(0, equals));
    if (looks_secret(name)) found.push_back({std::move(name), std::string(entry.substr(equals + 1))});
  }
  std::sort(found.begin(), found.end(), [](const secret_value& a, const secret_value& b) {
    return a.value.size() != b.value.size() ? a.value.size() > b.value.size() : a.name < b.name;
  });
  return found;
}

secret_scan scan_secrets(std::string_view text, const std::vector<secret_value>& known) {
  secret_scan s;
  s.text = std::string(text);
  remove_known(s.text, known, s.removed);
  remove_private_keys(s.text, s.removed);
  try {
    for (const format& f : formats()) remove_format(f, s.text, s.removed);
  } catch (const std::exception&) {
    // A pattern that could not finish (Boost.Regex bounds its work) leaves nothing of the text to publish.
    s.text = "[text withheld: the secret scan could not finish]";
    s.removed.emplace_back("unscanned text");
    return s;
  }
  remove_named_values(s.text, s.removed);
  return s;
}

std::string redact(std::string_view text, const std::vector<secret_value>& secrets) {
  return scan_secrets(text, secrets).text;
}

std::string removal_note(const std::vector<std::string>& removed) {
  if (removed.empty()) return "";
  std::vector<std::string> kinds;
  for (const auto& k : removed) {
    if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) kinds.push_back(k);
  }
  std::string note =
      "[" + std::to_string(removed.size()) + (removed.size() == 1 ? " secret" : " secrets") + " removed: ";
  for (std::size_t i = 0; i < kinds.size(); ++i) note += (i ? ", " : "") + kinds[i];
  return note + "]";
}

namespace {

// The kinds of the "[redacted KIND]" marks of `text`, in the order they stand: this scan's and any an earlier one
// left (the verifier redacts its rows before the optimizer publishes them).
std::vector<std::string> marks_in(std::string_view text) {
  static constexpr std::string_view opening = "[redacted ";
  std::vector<std::string> kinds;
  for (std::size_t at = text.find(opening); at != std::string_view::npos; at = text.find(opening, at + 1)) {
    const std::size_t close = text.find(']', at + opening.size());
    if (close == std::string_view::npos || close - at > 80) continue;
    kinds.emplace_back(text.substr(at + opening.size(), close - at - opening.size()));
  }
  return kinds;
}

}  // namespace

std::string published_excerpt(std::string_view text, std::size_t most, const std::vector<secret_value>& known) {
  secret_scan s = scan_secrets(text, known);
  std::vector<std::string> removed = marks_in(s.text);
  if (removed.empty()) removed = std::move(s.removed);  // a text withheld whole has no marks
  std::string out = std::move(s.text);
  if (out.size() > most) {
    std::size_t cut = most;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
    out.resize(cut);
    out += "\xE2\x80\xA6";  // …
  }
  const std::string note = removal_note(removed);
  if (!note.empty()) out += (out.empty() ? "" : " ") + note;
  return out;
}

}  // namespace rnx
