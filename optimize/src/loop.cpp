// The optimize loop: candidates from the rewriter, the verifier's verdict, a paired benchmark, the Bayesian
// verdict, the choice of the best kept rewrite, and its proposal.
#include "rnx/common/text.hpp"
#include "rnx/common/enum_names.hpp"
#include "rnx/common/secret_scan.hpp"
#include "rnx/optimize/loop.hpp"

#include "publish.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/files.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/report.hpp"
#include "rnx/optimize/profile_worker.hpp"
#include "rnx/optimize/rewriter.hpp"
#include "rnx/runner/bench.hpp"
#include "rnx/sandbox/sandbox.hpp"
#include "rnx/stats/summary.hpp"
#include "rnx/stats/verdict.hpp"

#include <boost/json.hpp>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <streambuf>
#include <unistd.h>

namespace rnx::optimize {

namespace fs = std::filesystem;
namespace bj = boost::json;

using detail::fixed;
using detail::log_line_bytes;
using detail::own_secrets;
using detail::results_json;
using detail::rewriter_bytes;

namespace {

std::string read_text(const fs::path& path) {
  std::optional<std::string> text = read_whole_file(path);
  if (!text) throw error(errc::not_found, path.string() + ": cannot read it (pass --config PATH to rnx.toml)");
  return *text;
}

void write_text(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw error(errc::internal, path.string() + ": cannot write it");
  out.close();
  // Readable to others whatever the umask: the sandboxed verifier reads the candidate as nobody when rnx is root.
  std::error_code ec;
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read,
                  ec);
}

// Byte offset of a toml++ (line, column) position, both 1-based.
std::size_t offset_of(std::string_view text, const toml::source_position& at) {
  std::size_t pos = 0;
  for (std::uint32_t line = 1; line < at.line; ++line) {
    pos = text.find('\n', pos);
    if (pos == std::string_view::npos) return std::string_view::npos;
    ++pos;
  }
  return pos + at.column - 1;
}

// The end of the string literal that starts at `begin` (just past its closing quote).
std::size_t literal_end(std::string_view text, std::size_t begin) {
  char quote = text[begin];
  std::size_t i = begin + 1;
  while (i < text.size() && text[i] != quote && text[i] != '\n') {
    if (quote == '"' && text[i] == '\\') ++i;
    ++i;
  }
  return i < text.size() && text[i] == quote ? i + 1 : std::string_view::npos;
}

std::string inputs_text(const kernel_spec& spec) {
  std::string s;
  for (const auto& in : spec.inputs) s += (s.empty() ? "" : "; ") + in.name + "=" + in.text;
  return s;
}

verify::reference_spec reference_of(const kernel_spec& spec) {
  verify::reference_spec r;
  r.name = spec.name;
  r.path = spec.resolved_path;
  r.entry = spec.entry;
  r.inputs = spec.inputs;
  r.batches = spec.batch;
  r.dtypes = spec.dtypes;
  r.device = spec.device;
  r.tolerances = spec.tolerances;
  return r;
}

// The sandbox a candidate's benchmark runs in: the verifier's, with its scrubbed environment and fail-closed
// rule. The orchestrator's per-configuration timeouts bound each worker's time; the CPU-time limit is only a
// backstop there, raised so that a worker timing several configurations with every core is not cut short.
sandbox::sandbox_limits benchmark_containment(const sandbox::sandbox_limits& verify_limits) {
  sandbox::sandbox_limits l = verify_limits;
  l.cpu_s = std::max(l.cpu_s, 3600.0);
  return l;
}

// A line of the log (a CI job's log is published too): it may quote a candidate, so credentials are redacted and
// it is made terminal_safe, one line.
void say(std::ostream* log, const std::string& line) {
  if (!log) return;
  *log << "rnx optimize: " << terminal_safe(published_excerpt(line, log_line_bytes, own_secrets()), false) << "\n"
       << std::flush;
}

// The benchmark's progress stream: each line passes the secret scan before it reaches the log, since the runner
// quotes the first line of a configuration's failure, which for a candidate is its own exception.
class scanned_lines : public std::streambuf {
 public:
  explicit scanned_lines(std::ostream& target) : target_(target) {}
  ~scanned_lines() override {
    if (!line_.empty()) write_line();
  }
  scanned_lines(const scanned_lines&) = delete;
  scanned_lines& operator=(const scanned_lines&) = delete;

 protected:
  int overflow(int ch) override {
    if (ch == traits_type::eof()) return 0;
    if (ch == '\n') {
      write_line();
    } else {
      line_ += static_cast<char>(ch);
    }
    return ch;
  }

 private:
  void write_line() {
    target_ << redact(line_, own_secrets()) << "\n" << std::flush;
    line_.clear();
  }
  std::ostream& target_;
  std::string line_;
};

}  // namespace

std::string_view to_string(attempt_status s) {
  switch (s) {
    case attempt_status::error: return "error";
    case attempt_status::rejected: return "rejected";
    case attempt_status::faster: return "faster";
    case attempt_status::slower: return "slower";
    case attempt_status::equivalent: return "equivalent";
    case attempt_status::abstain: return "abstain";
    case attempt_status::broken: return "broken";
    case attempt_status::kept: return "kept";
  }
  return "error";
}

std::optional<attempt_status> attempt_status_from_string(std::string_view text) {
  return enum_from_name(
      text, {attempt_status::error, attempt_status::rejected, attempt_status::faster, attempt_status::slower,
             attempt_status::equivalent, attempt_status::abstain, attempt_status::broken, attempt_status::kept});
}

std::string retarget_manifest(std::string_view text, const std::string& source, const fs::path& root,
                              const std::string& kernel, const fs::path& candidate) {
  std::string stripped = strip_optimize_table(text);
  toml::table doc;
  try {
    doc = toml::parse(stripped, source);
  } catch (const toml::parse_error& e) {
    throw error(errc::bad_input, source + ":" + std::to_string(e.source().begin.line) +
                                     ": malformed TOML: " + std::string(e.description()));
  }
  // Replace path strings in place (from the last to the first) so everything else stays byte for byte: the
  // inputs' written order is their call order, which a re-serialization would lose.
  std::vector<std::pair<std::size_t, std::string>> edits;
  if (auto* kernels = doc["kernel"].as_array()) {
    for (auto& node : *kernels) {
      auto* t = node.as_table();
      if (!t) continue;
      auto* path = t->get("path");
      auto* name = t->get("name");
      if (!path || !path->is_string()) continue;
      std::string target = (root / path->value<std::string>().value_or("")).lexically_normal().string();
      if (!candidate.empty() && name && name->value<std::string>() == kernel) target = candidate.string();
      edits.emplace_back(offset_of(stripped, path->source().begin), toml_quoted(target));
    }
  }
  std::sort(edits.begin(), edits.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [begin, replacement] : edits) {
    if (begin >= stripped.size() || (stripped[begin] != '"' && stripped[begin] != '\'')) {
      throw error(errc::invalid, source + ": kernel paths must be plain strings (\"kernels/x.py\") for rnx optimize");
    }
    std::size_t end = literal_end(stripped, begin);
    if (end == std::string::npos) throw error(errc::invalid, source + ": a kernel path string is not closed");
    stripped.replace(begin, end - begin, replacement);
  }
  return stripped;
}

namespace {

// The manifest's kernel named on the command line, or a usage error naming the ones it has.
kernel_spec select_kernel(const manifest& m, const optimize_options& options) {
  const kernel_spec* found = m.find_kernel(options.kernel);
  if (found) return *found;
  std::string names;
  for (const auto& k : m.kernels) names += (names.empty() ? "" : ", ") + k.name;
  throw error(errc::usage, "no kernel named \"" + options.kernel + "\" in " + options.manifest_path.string() +
                               " (it has: " + names + ")");
}

// [optimize] with the command line's --rewriter and --budget over it.
optimize_config effective_config(const optimize_options& options) {
  optimize_config config = load_optimize_config(options.manifest_path);
  if (options.rewriter) apply_rewriter_flag(config, *options.rewriter);
  if (options.budget) {
    if (*options.budget < 1) throw error(errc::usage, "--budget must be at least 1");
    config.budget = *options.budget;
  }
  return config;
}

// The benchmark settings every run of the loop shares (the original's own and each paired one).
runner::bench_options bench_settings(const optimize_options& options, const kernel_spec& spec) {
  runner::bench_options bench;
  bench.filters.kernels = {spec.name};
  bench.filters.runtimes = options.runtimes;
  bench.filters.dtypes = options.dtypes;
  bench.filters.batches = options.batches;
  bench.processes = options.processes;
  bench.min_samples = options.min_samples;
  bench.max_samples = options.max_samples;
  bench.budget_ms = options.budget_ms;
  bench.warmup_ms = options.warmup_ms;
  bench.log = options.log;
  // Every timed call on inputs no earlier call saw, as the verifier times: a candidate that remembers its answer
  // per input (its address, sampled values) is timed computing, never serving a copy.
  bench.fresh_inputs = options.isolated_benchmark;
  return bench;
}

// What the rewriter is told for attempt `index`: the kernel, the original's source, profile and benchmark, and
// every earlier attempt with its outcome.
rewrite_request make_request(const kernel_spec& spec, const std::string& original_source, const optimize_result& result,
                             int index, int budget) {
  rewrite_request request;
  request.kernel = spec.name;
  request.path = spec.path;
  request.entry = spec.entry;
  request.kind = std::string(to_string(spec.kind()));
  request.inputs = inputs_text(spec);
  request.source = original_source;
  request.profile = result.profile ? to_json(*result.profile, 10, {2.0, INFINITY}) : bj::value(nullptr);
  request.benchmark = results_json(result.baseline);
  // The rewriter is a third party (a model provider): a credential a candidate printed never leaves in a reason.
  const std::vector<secret_value> secrets = own_secrets();
  for (const auto& prev : result.attempts) {
    attempt_summary s;
    s.index = prev.index;
    s.source = prev.source;
    s.decision = std::string(to_string(prev.status));
    s.correct = prev.correct;
    s.clean = prev.clean;
    s.speedup = prev.speedup;
    s.p_faster = prev.p_faster;
    s.reason = published_excerpt(prev.reason, rewriter_bytes, secrets);
    request.attempts.push_back(std::move(s));
  }
  request.attempt = index;
  request.budget = budget;
  return request;
}

// Asks the rewriter for the candidate's source. False (the attempt marked an error) when the command failed or its
// reply was unusable; a key, network or API refusal ends the run (thrown).
bool propose_candidate(attempt& a, rewriter& provider, const rewrite_request& request, std::ostream* log) {
  try {
    a.source = provider.propose(request);
    return true;
  } catch (const error& e) {
    if (e.code() != errc::kernel_failed && e.code() != errc::bad_input) throw;
    a.status = attempt_status::error;
    a.reason = e.what();
    say(log, "candidate " + std::to_string(a.index) + ": " + a.reason);
    return false;
  }
}

// The verifier's correctness checks and anti-cheat audit. False when the candidate is rejected (or the verifier
// failed); a.status and a.reason then say why.
bool verify_attempt(attempt& a, const kernel_spec& spec, const optimize_options& options) {
  say(options.log, "candidate " + std::to_string(a.index) + ": verifying (correctness and anti-cheat audit)");
  verify::verify_options vo;
  vo.reference = reference_of(spec);
  vo.candidate = a.file;
  vo.limits = options.verify_limits;
  try {
    a.audit = verify::verify_candidate(vo);
  } catch (const error& e) {
    a.status = attempt_status::error;
    a.reason = std::string("verify: ") + e.what();
    return false;
  }
  a.correct = true;
  a.clean = true;
  std::vector<std::string> failed;
  for (const auto& row : a.audit->checks) {
    if (row.result != verify::outcome::fail) continue;
    failed.push_back(std::string(to_string(row.group)) + "/" + row.name + ": " + row.detail);
    if (row.group == verify::check_group::correctness)
      a.correct = false;
    else
      a.clean = false;
  }
  a.review = a.audit->needs_review();
  if (a.audit->accepted()) return true;
  a.status = attempt_status::rejected;
  a.reason =
      failed.empty() ? "marked for review: " + std::string(a.review ? "implausible speedup" : "") : failed.front();
  for (std::size_t f = 1; f < failed.size() && f < 3; ++f) a.reason += "; " + failed[f];
  say(options.log, "candidate " + std::to_string(a.index) + ": rejected: " + a.reason);
  return false;
}

// The files a run of the loop reads and writes: the user's manifest and kernel source, and the original's manifest
// retargeted into the work folder.
struct loop_files {
  std::string manifest_text;
  std::string original_source;
  fs::path original_manifest;
  // The original's handed copy (sandbox::hand_kernel): the kernel and its own sources, never what else lies beside
  // it (a .env, a cloud login's key file), so the candidate, which shares the benchmark's sandbox, reads none of it.
  fs::path original_kernel;
};

// The original kernel handed into `folder` (loop_files::original_kernel), in place of a copy an earlier run with
// the same work folder left there.
fs::path hand_original(const fs::path& folder, const fs::path& kernel) {
  fs::create_directories(folder);
  fs::remove_all(sandbox::handed_folder(folder));
  return sandbox::hand_kernel(folder, kernel, "kernel");
}

// One paired run, candidate (head) against original (base), in the verifier's sandbox; the verdict per
// configuration into a.configs. The two sides never share a process (docs/optimize.md): each runs in worker
// processes of its own, the sides' processes interleaved, so nothing the candidate does inside its process (patching
// a torch function the original calls, warming or evicting what the original reads) reaches the original's timing.
void benchmark_attempt(attempt& a, const manifest& m, const kernel_spec& spec, const optimize_options& options,
                       const runner::bench_options& bench, const loop_files& files) {
  say(options.log, "candidate " + std::to_string(a.index) + ": benchmarking against the original (paired run, " +
                       (options.isolated_benchmark ? "each side in processes of its own, fresh inputs)"
                                                   : "both sides in shared processes, the same inputs at every call)"));
  const fs::path candidate_manifest = a.file.parent_path() / "rnx.toml";
  write_text(candidate_manifest,
             retarget_manifest(files.manifest_text, options.manifest_path.string(), m.root, spec.name, a.file));
  // The candidate is untrusted code in the benchmark too: its workers run in the verifier's sandbox.
  runner::bench_options paired = bench;
  paired.manifests = {candidate_manifest, files.original_manifest};
  paired.contain = benchmark_containment(options.verify_limits);
  // What the workers read beyond the installed files, shown to them where it lies under a folder nobody may enter
  // (a work folder made by mkdtemp, mode 700): the two manifests, the candidate's folder (it and its manifest) and
  // the original's handed copy. Never the original kernel's own folder: what else lies there is not the kernel's.
  for (const fs::path& file : {candidate_manifest, files.original_manifest, a.file, files.original_kernel}) {
    paired.contain->readable.push_back(fs::absolute(file));
  }
  paired.contain->readable.push_back(fs::absolute(a.file).parent_path());
  paired.contain->readable.push_back(fs::absolute(files.original_kernel).parent_path());
  paired.in_process_pairing = !options.isolated_benchmark;
  std::vector<runner::bench_side> sides = runner::run_bench(paired);
  run_document head = runner::make_run_document(sides.at(0), "candidate-" + std::to_string(a.index), "", "", {});
  run_document base = runner::make_run_document(sides.at(1), "original", "", "", {});
  a.configs = stats::judge_runs(base, head, m.gate).configs;
}

// The attempt's decision from its configurations' verdicts: faster (some faster, none worse), broken, slower,
// equivalent or abstain; its speedup (geometric mean) and smallest P(faster).
void judge_attempt(attempt& a, const gate_policy& gate) {
  bool any_faster = false, all_ok = !a.configs.empty();
  double log_sum = 0;
  int with_ratio = 0;
  for (const auto& c : a.configs) {
    if (c.result == decision::faster) any_faster = true;
    if (c.result != decision::faster && c.result != decision::equivalent) all_ok = false;
    if (c.ratio && *c.ratio > 0) {
      log_sum += std::log(1.0 / *c.ratio);
      ++with_ratio;
    }
    if (c.p_faster) a.p_faster = a.p_faster ? std::min(*a.p_faster, *c.p_faster) : *c.p_faster;
  }
  if (with_ratio) a.speedup = std::exp(log_sum / with_ratio);
  auto has = [&](decision d) {
    return std::any_of(a.configs.begin(), a.configs.end(), [d](const config_verdict& c) { return c.result == d; });
  };
  if (all_ok && any_faster) {
    a.status = attempt_status::faster;
    a.reason = "faster in " +
               std::to_string(std::count_if(a.configs.begin(), a.configs.end(),
                                            [](const auto& c) { return c.result == decision::faster; })) +
               " of " + std::to_string(a.configs.size()) + " configurations, none slower";
  } else if (has(decision::broken)) {
    a.status = attempt_status::broken;
    a.reason = "failed in the benchmark";
  } else if (has(decision::slower)) {
    a.status = attempt_status::slower;
    a.reason = "slower in at least one configuration";
  } else if (all_ok) {
    a.status = attempt_status::equivalent;
    a.reason = "within ±" + fixed(100 * gate.rope, 1) + "% of the original";
  } else {
    a.status = attempt_status::abstain;
    a.reason = "the samples do not decide at P >= " + fixed(gate.probability, 2);
  }
  for (const auto& c : a.configs) {
    if (!c.reason.empty() && (a.status == attempt_status::abstain || a.status == attempt_status::broken)) {
      a.reason += " (" + c.reason + ")";
      break;
    }
  }
}

// The `faster` attempt with the largest speedup, marked kept; its proposal commit (and pull request) when asked.
void keep_best(optimize_result& result, const manifest& m, const kernel_spec& spec, const optimize_options& options) {
  for (std::size_t i = 0; i < result.attempts.size(); ++i) {
    const attempt& a = result.attempts[i];
    if (a.status != attempt_status::faster || !a.speedup) continue;
    if (!result.best || *a.speedup > *result.attempts[*result.best].speedup) result.best = static_cast<int>(i);
  }
  if (!result.best) {
    say(options.log, "no candidate was correct, clean and faster; nothing written");
    return;
  }
  attempt& best = result.attempts[*result.best];
  best.kept = true;
  best.status = attempt_status::kept;
  if (!options.commit) return;
  commit_request c;
  c.repo = m.root;
  c.kernel = spec.name;
  c.file = spec.resolved_path;
  c.new_source = best.source;
  c.message = render_commit_message(result);
  result.proposal = create_proposal_commit(c);
  say(options.log, "proposal: branch " + result.proposal->branch + ", commit " + result.proposal->commit);
  if (!options.open_pr) return;
  pull_request_options pr = options.pr;
  if (pr.base.empty()) pr.base = result.proposal->base_branch;
  pr.title = proposal_title(result);
  pr.body = render_proposal_body(result);
  result.pr = open_pull_request(*result.proposal, pr);
  say(options.log, "pull request #" + std::to_string(result.pr->number) + " " + result.pr->html_url);
}

}  // namespace

optimize_result run_optimize(const optimize_options& options) {
  // The profile, verify and bench workers import the user's kernel from its tree; without this Python would
  // leave __pycache__ folders there, and optimize promises to write nothing to the user's checkout.
  ::setenv("PYTHONDONTWRITEBYTECODE", "1", 0);
  manifest m = load_manifest_with_optimize(options.manifest_path);
  const kernel_spec spec = select_kernel(m, options);
  const optimize_config config = effective_config(options);
  auto provider = make_rewriter(config, m.root, options.log);

  optimize_result result;
  result.kernel = spec.name;
  result.kernel_file = spec.resolved_path;
  result.rewriter = provider->describe();
  result.policy = m.gate;
  result.work_dir = options.work_dir.empty()
                        ? fs::temp_directory_path() / ("rnx-optimize-" + spec.name + "-" + std::to_string(::getpid()))
                        : fs::absolute(options.work_dir);
  fs::create_directories(result.work_dir);
  say(options.log, "kernel " + spec.name + " (" + spec.resolved_path.string() + "), rewriter " + result.rewriter +
                       ", budget " + std::to_string(config.budget) + ", work folder " + result.work_dir.string());

  loop_files files{read_text(options.manifest_path), read_text(spec.resolved_path),
                   result.work_dir / "original" / "rnx.toml",
                   hand_original(result.work_dir / "original", spec.resolved_path)};
  write_text(files.original_manifest, retarget_manifest(files.manifest_text, options.manifest_path.string(), m.root,
                                                        spec.name, files.original_kernel));
  runner::bench_options bench = bench_settings(options, spec);
  std::optional<scanned_lines> scanned_buffer;
  std::optional<std::ostream> scanned_log;
  if (options.log) {
    scanned_buffer.emplace(*options.log);
    scanned_log.emplace(&*scanned_buffer);
    bench.log = &*scanned_log;
  }
  if (options.profile) {
    say(options.log, "profiling the original with libtorch's profiler");
    result.profile = profile_in_worker(options.manifest_path, spec.name, options.profiling);
  }
  say(options.log, "benchmarking the original");
  bench.manifests = {files.original_manifest};
  result.baseline = runner::run_bench(bench).at(0).results;

  const std::string stem = spec.resolved_path.stem().string();
  const std::string ext = spec.resolved_path.extension().string();
  for (int i = 1; i <= config.budget; ++i) {
    attempt a;
    a.index = i;
    say(options.log, "candidate " + std::to_string(i) + ": asking " + result.rewriter);
    const rewrite_request request = make_request(spec, files.original_source, result, i, config.budget);
    if (propose_candidate(a, *provider, request, options.log)) {
      // A distinct file name per candidate: Python caches modules by name.
      std::string file_name = stem;
      file_name += "_rnx_candidate_" + std::to_string(i);
      file_name += ext;
      a.file = result.work_dir / ("candidate-" + std::to_string(i)) / file_name;
      write_text(a.file, a.source);
      if (verify_attempt(a, spec, options)) {
        benchmark_attempt(a, m, spec, options, bench, files);
        judge_attempt(a, m.gate);
        say(options.log, "candidate " + std::to_string(i) + ": " + std::string(to_string(a.status)) +
                             (a.speedup ? ", speedup " + fixed(*a.speedup, 3) + "x" : std::string()));
      }
    }
    result.attempts.push_back(std::move(a));
  }
  keep_best(result, m, spec, options);
  write_text(result.work_dir / "optimize.json", json::serialize(to_json(result), true));
  return result;
}

}  // namespace rnx::optimize
