// Rewriter providers: something that reads a kernel, its profile, its benchmark and every earlier attempt,
// and proposes a new source file. `command` runs any executable; `anthropic` and `openai` call those APIs.
//
//   auto config = rnx::optimize::load_optimize_config("rnx.toml");
//   auto provider = rnx::optimize::make_rewriter(config, "/repo");   // checks the key before any work
//   std::string source = provider->propose(request);                 // throws rnx::error on failure
#pragma once

#include "rnx/optimize/config.hpp"

#include <boost/json/value.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace rnx::optimize {

// One earlier candidate as the rewriter sees it: what it proposed and what rnx made of it.
struct attempt_summary {
  int index = 0;
  std::string source;
  std::string decision;  // the attempt's status as text (to_string(attempt_status), loop.hpp)
  bool correct = false;
  bool clean = false;
  std::optional<double> speedup;  // original time / candidate time
  std::optional<double> p_faster;
  std::string reason;
};

struct rewrite_request {
  std::string kernel;  // its name in rnx.toml
  std::string path;    // relative to rnx.toml
  std::string entry;
  std::string kind;              // python | kernelbench | cpp | cuda | torchscript
  std::string inputs;            // "q=B,8,128,64; k=..." as declared
  std::string source;            // the original kernel's text
  boost::json::value profile;    // rnx profile JSON of the original (null when not profiled)
  boost::json::value benchmark;  // the original's benchmark results (null when not measured)
  std::vector<attempt_summary> attempts;
  int attempt = 1;  // 1-based index of the candidate asked for
  int budget = 1;
};

// The JSON a `command` rewriter reads on stdin (schema rnx.rewrite_request/v1); the LLM providers send the same
// document as the user message.
boost::json::value to_json(const rewrite_request& request);

class rewriter {
 public:
  virtual ~rewriter() = default;
  virtual std::string describe() const = 0;  // "command:./rw.sh", "anthropic claude-...", for reports
  // The candidate's complete source. Throws rnx::error: unavailable (network, 429/5xx after retries),
  // unauthorized (rejected key), invalid (the API refused the request), kernel_failed (a command failed).
  virtual std::string propose(const rewrite_request& request) = 0;
};

// Retry and timing knobs shared by the HTTP providers; sleep is replaceable so tests need not wait.
struct retry_policy {
  int retries = 4;
  std::chrono::milliseconds timeout{std::chrono::seconds(120)};
  std::chrono::milliseconds backoff{std::chrono::seconds(1)};
  std::chrono::milliseconds max_backoff{std::chrono::seconds(60)};
};

// Builds the provider of `config`. `root` is the folder relative commands are resolved from. Throws
// rnx::error(usage) when the API key variable is unset, naming it and how to set it. `log` receives one
// line per retry (nullptr = silent).
std::unique_ptr<rewriter> make_rewriter(const optimize_config& config, const std::filesystem::path& root,
                                        std::ostream* log = nullptr);

std::string default_model(rewriter_kind kind);

// The source inside a reply: the longest fenced code block (```python ... ```), else the whole reply trimmed.
std::string extract_source(std::string_view reply);

// The instructions sent as the system prompt to the LLM providers.
std::string_view system_prompt();

}  // namespace rnx::optimize
