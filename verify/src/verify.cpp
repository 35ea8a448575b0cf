// The verify orchestrator: resolves reference and candidate, runs the sandboxed worker, assembles the report.
#include "rnx/verify/verify.hpp"

#include "orchestrator.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/process.hpp"
#include "rnx/common/text.hpp"
#include "rnx/sandbox/sandbox.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <cstdio>
#include <sstream>

namespace fs = std::filesystem;

namespace rnx::verify {

namespace {

std::vector<input_spec> parse_inputs(const std::string& text) {
  std::vector<input_spec> out;
  std::stringstream ss(text);
  std::string item;
  std::set<std::string> seen;
  while (std::getline(ss, item, ';')) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item.empty()) continue;
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw error(errc::usage,
                  "--inputs: \"" + item + "\" is not NAME=SHAPE; write e.g. \"q=B,8,128,64;k=B,8,128,64\"");
    }
    input_spec in;
    in.name = item.substr(0, eq);
    in.text = item.substr(eq + 1);
    if (!seen.insert(in.name).second) throw error(errc::usage, "--inputs: input \"" + in.name + "\" is given twice");
    try {
      in.dims = parse_shape(in.text, "--inputs " + in.name);
    } catch (const error& e) {
      throw error(errc::usage, e.what());
    }
    out.push_back(in);
  }
  return out;
}

}  // namespace

bool verify_report::accepted() const {
  if (checks.empty()) return false;
  for (const auto& c : checks) {
    if (c.result == outcome::fail) return false;
    if (c.result == outcome::review && review_rejects) return false;
  }
  return true;
}

bool verify_report::needs_review() const {
  return std::any_of(checks.begin(), checks.end(), [](const check_row& c) { return c.result == outcome::review; });
}

const check_row* verify_report::find(std::string_view name) const {
  for (const auto& c : checks) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

namespace {

std::vector<std::string> names_with(const std::vector<check_row>& checks, outcome result) {
  std::vector<std::string> out;
  for (const auto& c : checks) {
    if (c.result == result) out.push_back(c.name);
  }
  return out;
}

}  // namespace

std::vector<std::string> verify_report::failed() const { return names_with(checks, outcome::fail); }

std::vector<std::string> verify_report::reviewed() const { return names_with(checks, outcome::review); }

reference_spec reference_from_manifest(const fs::path& manifest_path, const std::string& kernel) {
  manifest m = load_manifest(manifest_path);
  const kernel_spec* k = m.find_kernel(kernel);
  if (!k) {
    std::string names;
    for (const auto& s : m.kernels) names += (names.empty() ? "" : ", ") + s.name;
    throw error(errc::usage, "--kernel \"" + kernel + "\" is not in " + m.source + " (it has: " + names + ")");
  }
  reference_spec r;
  r.name = k->name;
  r.path = k->resolved_path;
  r.entry = k->entry;
  r.inputs = k->inputs;
  if (!k->batch.empty()) r.batches = k->batch;
  if (!k->dtypes.empty()) r.dtypes = k->dtypes;
  r.device = k->device.empty() ? "auto" : k->device;
  r.tolerances = k->tolerances;
  return r;
}

reference_spec reference_from_file(const fs::path& path, const std::string& inputs, const std::string& entry) {
  if (!fs::exists(path)) {
    throw error(errc::not_found,
                "reference " + path.string() + " does not exist; pass the file the candidate rewrites");
  }
  reference_spec r;
  r.name = path.stem().string();
  r.path = fs::absolute(path);
  r.entry = entry;
  r.inputs = parse_inputs(inputs);
  return r;
}

fs::path default_worker_path() { return helper_program_path("RNX_VERIFY_WORKER", "rnx-verify-worker"); }

namespace {

// Started as root, the sandbox runs the kernels as nobody, who reads a file only through its mode's last digit: a
// kernel written under umask 077 (mode 600) would fail in the worker as a bare PermissionError.
void require_readable_by_worker(const fs::path& file, const std::string& role) {
  struct stat st {};
  if (::geteuid() != 0 || ::stat(file.c_str(), &st) != 0 || (st.st_mode & S_IROTH)) return;
  char mode[8];
  std::snprintf(mode, sizeof mode, "%03o", static_cast<unsigned>(st.st_mode & 0777));
  throw error(errc::bad_input, role + " " + file.string() + " (mode " + mode +
                                   ") cannot be read by the sandbox's user " +
                                   "nobody; make it readable to others (chmod o+r " + file.string() +
                                   ") or run rnx as an ordinary user");
}

void validate(const verify_options& o) {
  if (o.reference.path.empty()) throw error(errc::usage, "no reference: pass --config and --kernel, or --reference");
  if (!fs::exists(o.reference.path)) {
    throw error(errc::not_found, "reference " + o.reference.path.string() + " does not exist");
  }
  if (o.candidate.empty()) throw error(errc::usage, "no candidate: pass --candidate FILE");
  if (!fs::exists(o.candidate)) {
    throw error(errc::not_found,
                "candidate " + o.candidate.string() + " does not exist; pass the rewritten kernel file");
  }
  require_readable_by_worker(o.reference.path, "reference");
  require_readable_by_worker(o.candidate, "candidate");
  for (const auto& b : o.reference.batches) {
    if (b < 1) throw error(errc::usage, "batch sizes must be at least 1 (got " + std::to_string(b) + ")");
  }
  for (const auto& d : o.reference.dtypes) {
    const auto named = dtype_kind_from_string(d);
    if (!named || *named == dtype_kind::none) {
      throw error(errc::usage, "unsupported dtype \"" + d + "\" (use float32, float16, bfloat16 or float64)");
    }
  }
  if (!(o.speedup_limit > 1)) throw error(errc::usage, "--speedup-limit must be above 1");
  if (o.limits.wall_s <= 0 || o.limits.cpu_s <= 0 || o.limits.memory_mb <= 0) {
    throw error(errc::usage, "sandbox limits (--timeout, --cpu-limit, --memory-limit) must be positive");
  }
}

}  // namespace

verify_report verify_candidate(const verify_options& o) {
  validate(o);
  const auto started = std::chrono::steady_clock::now();
  verify_report report;
  report.reference = o.reference.path.string() + (o.reference.entry.empty() ? "" : ":" + o.reference.entry);
  report.candidate = o.candidate.string() + (o.candidate_entry.empty() ? "" : ":" + o.candidate_entry);
  report.dtypes = o.reference.dtypes;
  report.review_rejects = o.review_rejects;

  sandbox::scratch_folder dir("rnx-verify-");
  std::vector<std::string> withheld;
  std::vector<std::string> env = sandbox::sandbox_environment(o.limits, dir.path(), &withheld);
  detail::worker_outcome w = detail::run_worker(o, dir.path(), env);
  detail::add_rows(report, w, o, withheld);
  // The rows carry the candidate's words; none of the runner's credentials leaves in them, whatever the format.
  const std::vector<secret_value> secrets = environment_secrets(credential_name);
  for (auto& row : report.checks) row.detail = redact(row.detail, secrets);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

}  // namespace rnx::verify
