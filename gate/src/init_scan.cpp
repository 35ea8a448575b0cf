// `rnx init`'s kernel search: top-level definitions and tensor constructions of .py files, read as text.
#include "init_scan.hpp"

#include "rnx/common/files.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>

namespace rnx::gate {

namespace fs = std::filesystem;

bool found_kernel::shapes_complete() const {
  return std::all_of(inputs.begin(), inputs.end(), [](const found_input& i) { return !i.shape.empty(); });
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s.front()))) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

bool is_integer(std::string_view s) {
  return !s.empty() && s.size() < 13 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Python text read one character at a time: whether it stands in a string literal, and how deep in brackets.
struct python_walk {
  int depth = 0;
  char quote = 0;

  // Reads text[i]; true when it is code outside every string literal (its bracket already counted in `depth`).
  // A backslash in a string also consumes the character it escapes (`i` moves past it).
  bool code_at(std::string_view text, std::size_t& i) {
    const char c = text[i];
    if (quote) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
      return false;
    }
    if (c == '"' || c == '\'') {
      quote = c;
      return false;
    }
    if (c == '(' || c == '[' || c == '{')
      ++depth;
    else if (c == ')' || c == ']' || c == '}')
      --depth;
    return true;
  }
};

bool is_closing_bracket(char c) { return c == ')' || c == ']' || c == '}'; }

// The text from `open` (an opening parenthesis) to its match, exclusive; nullopt when it is not closed.
std::optional<std::string> bracketed(std::string_view text, std::size_t open) {
  python_walk walk;
  for (std::size_t i = open; i < text.size(); ++i) {
    if (walk.code_at(text, i) && is_closing_bracket(text[i]) && walk.depth == 0) {
      return std::string(text.substr(open + 1, i - open - 1));
    }
  }
  return std::nullopt;
}

// Splits at commas that are not nested in brackets or strings.
std::vector<std::string> split_top_level(std::string_view text) {
  std::vector<std::string> out;
  python_walk walk;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (walk.code_at(text, i) && text[i] == ',' && walk.depth == 0) {
      out.emplace_back(trim(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (auto last = trim(text.substr(std::min(start, text.size()))); !last.empty()) out.emplace_back(last);
  return out;
}

struct parameter {
  std::string name;
  std::string annotation;
  bool has_default = false;
};

struct function_def {
  std::string name;
  std::vector<parameter> params;  // positional ones, up to a bare * or *args
  bool variadic = false;          // *args: any number of positional arguments
};

struct python_file {
  std::vector<std::string> lines;
  std::vector<function_def> functions;            // top level
  std::set<std::string> classes;                  // top level
  std::map<std::string, std::int64_t> constants;  // top-level NAME = INTEGER
  bool imports_torch = false;
};

function_def parse_signature(const std::string& name, std::string_view inside) {
  function_def f;
  f.name = name;
  for (const auto& piece : split_top_level(inside)) {
    std::string_view p = piece;
    if (p == "/") continue;
    if (!p.empty() && p.front() == '*') {
      f.variadic = p.size() > 1 && p[1] != '*';
      break;
    }
    parameter param;
    const auto colon = p.find(':');
    const auto equals = p.find('=');
    param.name = std::string(trim(p.substr(0, std::min(colon, equals))));
    param.has_default = equals != std::string_view::npos;
    if (colon != std::string_view::npos && (equals == std::string_view::npos || colon < equals)) {
      const auto length = equals == std::string_view::npos ? p.npos : equals - colon - 1;
      param.annotation = std::string(trim(p.substr(colon + 1, length)));
    }
    f.params.push_back(std::move(param));
  }
  return f;
}

python_file read_python(std::string_view source) {
  python_file file;
  std::istringstream in{std::string(source)};
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    file.lines.push_back(line);
  }
  bool in_string = false;  // inside a top-level triple-quoted string: its lines are not code
  for (std::size_t i = 0; i < file.lines.size(); ++i) {
    const std::string& line = file.lines[i];
    std::size_t quotes = 0;
    for (auto at = line.find("\"\"\""); at != std::string::npos; at = line.find("\"\"\"", at + 3)) ++quotes;
    for (auto at = line.find("'''"); at != std::string::npos; at = line.find("'''", at + 3)) ++quotes;
    const bool was_in_string = in_string;
    if (quotes % 2 == 1) in_string = !in_string;
    if (was_in_string || line.empty() || std::isspace(static_cast<unsigned char>(line.front()))) continue;
    std::string_view code = line;
    if (code.rfind("import torch", 0) == 0 || code.rfind("from torch", 0) == 0) file.imports_torch = true;
    if (code.rfind("def ", 0) == 0 || code.rfind("async def ", 0) == 0) {
      code.remove_prefix(code.find("def ") + 4);
      const auto paren = code.find('(');
      if (paren == std::string_view::npos) continue;
      const std::string name(trim(code.substr(0, paren)));
      // The signature may run over several lines.
      std::string rest(code.substr(paren));
      for (std::size_t j = i + 1; j < file.lines.size() && j < i + 40 && !bracketed(rest, 0); ++j) {
        rest += "\n" + file.lines[j];
      }
      if (auto inside = bracketed(rest, 0); inside && is_identifier(name)) {
        file.functions.push_back(parse_signature(name, *inside));
      }
      continue;
    }
    if (code.rfind("class ", 0) == 0) {
      code.remove_prefix(6);
      const auto end = code.find_first_of("(:");
      if (end != std::string_view::npos) file.classes.emplace(trim(code.substr(0, end)));
      continue;
    }
    const auto equals = code.find('=');
    if (equals != std::string_view::npos && equals + 1 < code.size() && code[equals + 1] != '=') {
      const std::string_view name = trim(code.substr(0, equals));
      std::string_view value = code.substr(equals + 1);
      value = trim(value.substr(0, value.find('#')));
      if (is_identifier(name) && is_integer(value)) file.constants[std::string(name)] = std::stoll(std::string(value));
    }
  }
  return file;
}

const function_def* find_function(const python_file& file, std::string_view name) {
  for (const auto& f : file.functions) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

bool is_batch_name(std::string_view name) {
  return name == "batch_size" || name == "batch" || name == "B" || name == "BATCH" || name == "BATCH_SIZE";
}

bool is_tensor_annotation(std::string_view annotation) {
  return annotation == "torch.Tensor" || annotation == "Tensor" || annotation == "\"torch.Tensor\"";
}

// `NAME = torch.randn(8, N)` (also rand, zeros, ones, empty; a tuple of sizes; keyword arguments ignored) in any
// line of the file: the shape with batch-named sizes written as B. Sizes must be integers or module constants.
struct shape_match {
  std::string shape;
  std::optional<std::int64_t> batch;
  std::string evidence;
};

std::optional<shape_match> shape_from_file(const python_file& file, const std::string& name, const fs::path& path) {
  static const std::vector<std::string> makers = {"torch.randn(", "torch.rand(", "torch.zeros(", "torch.ones(",
                                                  "torch.empty("};
  for (std::size_t i = 0; i < file.lines.size(); ++i) {
    std::string_view line = trim(file.lines[i]);
    if (line.rfind(name, 0) != 0) continue;
    std::string_view rest = trim(line.substr(name.size()));
    if (rest.empty() || rest.front() != '=' || (rest.size() > 1 && rest[1] == '=')) continue;
    rest = trim(rest.substr(1));
    auto maker =
        std::find_if(makers.begin(), makers.end(), [&](const std::string& m) { return rest.rfind(m, 0) == 0; });
    if (maker == makers.end()) continue;
    auto args = bracketed(rest, maker->size() - 1);
    if (!args) continue;
    std::vector<std::string> sizes = split_top_level(*args);
    if (!sizes.empty() && !sizes.front().empty() && (sizes.front().front() == '(' || sizes.front().front() == '[')) {
      auto inner = bracketed(sizes.front(), 0);
      if (!inner) continue;
      sizes = split_top_level(*inner);
    }
    shape_match match;
    bool ok = true;
    if (sizes.empty()) continue;  // torch.randn(): no sizes to read
    for (const auto& size : sizes) {
      if (size.find('=') != std::string::npos) break;  // dtype=, device=: the sizes are done
      std::string dim;
      if (is_integer(size) && std::stoll(size) > 0) {
        dim = size;
      } else if (is_identifier(size) && is_batch_name(size)) {
        dim = "B";
        if (auto c = file.constants.find(size); c != file.constants.end() && c->second > 0) match.batch = c->second;
      } else if (auto c = file.constants.find(size);
                 is_identifier(size) && c != file.constants.end() && c->second > 0) {
        dim = std::to_string(c->second);
      } else {
        ok = false;
        break;
      }
      match.shape += (match.shape.empty() ? "" : ",") + dim;
    }
    if (!ok) continue;
    match.evidence = path.generic_string() + ":" + std::to_string(i + 1) + ": " + std::string(line);
    return match;
  }
  return std::nullopt;
}

std::string kernel_name_of(const fs::path& path) {
  std::string name = path.stem().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') c = '_';
  }
  return name.empty() ? "kernel" : name;
}

bool skipped_folder(const fs::path& dir) {
  const std::string name = dir.filename().string();
  if (name.empty() || name.front() == '.') return true;  // .git, .venv, .rnx, .tox, ...
  if (name == "__pycache__" || name == "node_modules" || name == "site-packages" || name == "dist" || name == "build" ||
      name.rfind("build-", 0) == 0 || name.rfind("cmake-build", 0) == 0) {
    return true;
  }
  std::error_code ec;
  return fs::exists(dir / "pyvenv.cfg", ec);  // a virtual environment
}

bool skipped_file_name(const std::string& name) {
  return name == "setup.py" || name == "conftest.py" || name == "__init__.py" || name.rfind("test_", 0) == 0 ||
         (name.size() > 8 && name.compare(name.size() - 8, 8, "_test.py") == 0);
}

}  // namespace

std::optional<found_kernel> inspect_python_source(std::string_view source, const fs::path& path, std::string* why_not) {
  const python_file file = read_python(source);
  found_kernel k;
  k.path = path;
  k.name = kernel_name_of(path);
  k.uses_gpu = source.find("cuda") != std::string_view::npos || source.find("triton") != std::string_view::npos;
  const bool has_model = file.classes.count("Model") > 0;
  if (has_model && find_function(file, "get_inputs")) {
    if (!find_function(file, "get_init_inputs")) {
      if (why_not)
        *why_not = "class Model and get_inputs() but no get_init_inputs(): a KernelBench file needs all three";
      return std::nullopt;
    }
    k.kernelbench = true;
    if (auto b = file.constants.find("batch_size"); b != file.constants.end() && b->second > 0) k.batch = b->second;
    return k;
  }
  const function_def* entry = find_function(file, "run");
  if (!entry) {
    std::vector<const function_def*> candidates;
    for (const auto& f : file.functions) {
      if (f.name.front() == '_' || f.params.empty() || f.variadic) continue;
      const bool all_tensors = std::all_of(f.params.begin(), f.params.end(), [](const parameter& p) {
        return p.has_default || is_tensor_annotation(p.annotation);
      });
      const bool any_required =
          std::any_of(f.params.begin(), f.params.end(), [](const parameter& p) { return !p.has_default; });
      if (all_tensors && any_required) candidates.push_back(&f);
    }
    if (candidates.size() > 1 && file.imports_torch) {
      std::string names;
      for (const auto* f : candidates) names += (names.empty() ? "" : ", ") + f->name;
      if (why_not) {
        *why_not = "several functions take tensors (" + names +
                   "); add a [[kernel]] with entry = \"NAME\" for each one "
                   "to measure, or name one of them run";
      }
      return std::nullopt;
    }
    if (candidates.size() != 1 || !file.imports_torch) return std::nullopt;
    entry = candidates.front();
    k.entry = entry->name;
  }
  if (entry->variadic) {
    if (why_not) *why_not = "its entry " + entry->name + "(*args) takes any number of inputs; declare them in rnx.toml";
    return std::nullopt;
  }
  for (const auto& p : entry->params) {
    if (p.has_default || p.name == "self") continue;
    found_input in;
    in.name = p.name;
    if (auto match = shape_from_file(file, p.name, path)) {
      in.shape = match->shape;
      in.evidence = match->evidence;
      if (match->batch && !k.batch) k.batch = match->batch;
    }
    k.inputs.push_back(std::move(in));
  }
  if (k.inputs.empty()) {
    if (why_not) *why_not = "its entry " + entry->name + "() takes no tensors to measure";
    return std::nullopt;
  }
  // A batch size is only meaningful when a shape uses B.
  const bool uses_b = std::any_of(k.inputs.begin(), k.inputs.end(), [](const found_input& i) {
    return ("," + i.shape + ",").find(",B,") != std::string::npos;
  });
  if (!uses_b) k.batch.reset();
  return k;
}

scan_result scan_for_kernels(const fs::path& root) {
  constexpr std::size_t max_files = 20000;
  constexpr std::uintmax_t max_bytes = 1 << 20;
  scan_result out;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::directory_entry& entry = *it;
    std::error_code type_ec;
    if (entry.is_directory(type_ec)) {
      if (skipped_folder(entry.path())) it.disable_recursion_pending();
      continue;
    }
    if (entry.path().extension() != ".py" || !entry.is_regular_file(type_ec)) continue;
    if (skipped_file_name(entry.path().filename().string())) continue;
    if (entry.file_size(type_ec) > max_bytes || type_ec) continue;
    if (++out.files_read > max_files) break;
    const std::string text = read_whole_file(entry.path()).value_or("");
    const fs::path relative = entry.path().lexically_relative(root);
    std::string why_not;
    if (auto k = inspect_python_source(text, relative, &why_not)) {
      out.kernels.push_back(std::move(*k));
    } else if (!why_not.empty()) {
      out.skipped.push_back({relative, why_not});
    }
  }
  std::sort(out.kernels.begin(), out.kernels.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  std::sort(out.skipped.begin(), out.skipped.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  // Names must be unique: where two files share a stem, both take their folder's name as a prefix.
  std::map<std::string, int> seen;
  for (const auto& k : out.kernels) ++seen[k.name];
  for (auto& k : out.kernels) {
    if (seen[k.name] < 2) continue;
    std::string name = k.path.parent_path().generic_string() + "-" + k.name;
    for (char& c : name) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') c = '-';
    }
    k.name = name;
  }
  return out;
}

}  // namespace rnx::gate
