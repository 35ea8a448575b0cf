// The rewriter providers: a local command, the Anthropic Messages API and OpenAI-compatible chat completions.
#include "rnx/optimize/rewriter.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/text.hpp"
#include "rnx/http/client.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/process.hpp"
#include "rnx/common/retry.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <optional>

namespace rnx::optimize {

namespace bj = boost::json;

boost::json::value to_json(const rewrite_request& r) {
  bj::object kernel;
  kernel["name"] = r.kernel;
  kernel["path"] = r.path;
  kernel["entry"] = r.entry;
  kernel["kind"] = r.kind;
  kernel["inputs"] = r.inputs;
  kernel["source"] = r.source;
  bj::array attempts;
  for (const auto& a : r.attempts) {
    bj::object o;
    o["index"] = a.index;
    o["source"] = a.source;
    o["decision"] = a.decision;
    o["correct"] = a.correct;
    o["clean"] = a.clean;
    o["speedup"] = a.speedup ? bj::value(*a.speedup) : bj::value(nullptr);
    o["p_faster"] = a.p_faster ? bj::value(*a.p_faster) : bj::value(nullptr);
    o["reason"] = a.reason;
    attempts.push_back(std::move(o));
  }
  bj::object doc;
  doc["schema"] = "rnx.rewrite_request/v1";
  doc["attempt"] = r.attempt;
  doc["budget"] = r.budget;
  doc["kernel"] = std::move(kernel);
  doc["profile"] = r.profile;
  doc["benchmark"] = r.benchmark;
  doc["attempts"] = std::move(attempts);
  return doc;
}

std::string_view system_prompt() {
  return "You rewrite one PyTorch kernel to make it faster. You receive a JSON document: the kernel's source, "
         "its op profile (ranked by share of self time), its benchmark, and every earlier attempt with the "
         "verdict rnx gave it. Reply with the complete new source file in one fenced code block and nothing "
         "else of substance. Keep the same entry point, argument order, output shapes and dtypes. The rewrite "
         "must compute the same function on every valid input (a correctness gate sweeps shapes, scales and "
         "edge cases against a float64 reference) and must win honestly: an audit rejects cached or "
         "memorized outputs, ignored inputs, mutated or aliased inputs, special-cased shapes, lowered "
         "precision, work hidden from the timer, extra threads or streams, and calls back to the original. "
         "Do not repeat an earlier attempt that was rejected or slower.";
}

std::string extract_source(std::string_view reply) {
  std::string best;
  std::size_t pos = 0;
  bool found = false;
  while (true) {
    std::size_t open = reply.find("```", pos);
    if (open == std::string_view::npos) break;
    std::size_t line_end = reply.find('\n', open);
    if (line_end == std::string_view::npos) break;
    std::size_t close = reply.find("```", line_end + 1);
    if (close == std::string_view::npos) break;
    std::string_view body = reply.substr(line_end + 1, close - line_end - 1);
    if (!found || body.size() > best.size()) best = std::string(body);
    found = true;
    pos = close + 3;
  }
  if (!found) {
    std::size_t b = reply.find_first_not_of(" \t\r\n");
    std::size_t e = reply.find_last_not_of(" \t\r\n");
    best = b == std::string_view::npos ? std::string() : std::string(reply.substr(b, e - b + 1));
  }
  if (!best.empty() && best.back() != '\n') best += '\n';
  return best;
}

std::string default_model(rewriter_kind kind) {
  switch (kind) {
    case rewriter_kind::anthropic: return "claude-sonnet-4-5";
    case rewriter_kind::openai: return "gpt-4o";
    case rewriter_kind::command: return "";
  }
  return "";
}

namespace {

// ---- command ----------------------------------------------------------------------------------------------

class command_rewriter final : public rewriter {
 public:
  command_rewriter(std::string command, std::filesystem::path root, std::chrono::milliseconds timeout)
      : command_(std::move(command)), root_(std::move(root)), timeout_(timeout) {}

  std::string describe() const override { return "command:" + command_; }

  std::string propose(const rewrite_request& request) override {
    // A command with a '/' is a path relative to rnx.toml's folder; a bare name is looked up on PATH.
    std::string program = command_;
    if (program.find('/') != std::string::npos && std::filesystem::path(program).is_relative()) {
      program = (root_ / program).lexically_normal().string();
    }
    process_options o;
    o.cwd = root_;
    o.input = json::serialize(to_json(request), true);
    o.timeout = timeout_;
    process_result r = run_process({program}, o);
    if (r.timed_out) {
      throw error(errc::kernel_failed, "rewriter command '" + command_ + "' did not answer within " +
                                           std::to_string(timeout_.count() / 1000.0) +
                                           " s (raise [optimize] timeout_s or fix the command)");
    }
    if (r.exit_code != 0) {
      std::string why = r.signal ? "was killed by signal " + std::to_string(r.signal)
                                 : "exited with status " + std::to_string(r.exit_code);
      throw error(errc::kernel_failed, "rewriter command '" + command_ + "' " + why + ": " + tail_lines(r.err, 5));
    }
    std::string source = extract_source(r.out);
    if (source.empty()) {
      throw error(errc::kernel_failed, "rewriter command '" + command_ +
                                           "' printed nothing on stdout (it must print the candidate's source)");
    }
    return source;
  }

 private:
  std::string command_;
  std::filesystem::path root_;
  std::chrono::milliseconds timeout_;
};

// ---- HTTP providers ---------------------------------------------------------------------------------------

bool retryable_status(int status) { return status == 408 || status == 429 || status >= 500; }

// The server's error message from {"error": {"message": ...}} (both APIs answer in that shape), else the body.
std::string api_error_message(const std::string& body) {
  try {
    bj::value v = json::parse(body, "the provider's error");
    if (auto* o = v.if_object()) {
      if (auto* e = o->if_contains("error")) {
        if (auto* eo = e->if_object()) {
          if (auto* m = eo->if_contains("message"); m && m->is_string()) return std::string(m->as_string());
        }
        if (e->is_string()) return std::string(e->as_string());
      }
    }
  } catch (const std::exception&) {
  }
  return body.size() > 300 ? body.substr(0, 300) + "..." : body;
}

// The wait a Retry-After header in seconds asks for, at most `cap`; none without one (the backoff's delay then).
std::optional<std::chrono::milliseconds> retry_after(const http::response& r, std::chrono::milliseconds cap) {
  std::string h = r.header("retry-after");
  if (!h.empty()) {
    char* end = nullptr;
    double s = std::strtod(h.c_str(), &end);
    if (end != h.c_str() && s >= 0) {
      return std::min(cap, std::chrono::milliseconds(static_cast<long long>(s * 1000)));
    }
  }
  return std::nullopt;
}

class http_rewriter : public rewriter {
 public:
  http_rewriter(std::string provider, std::string url, std::string model, std::string key_env, int max_tokens,
                double temperature, retry_policy retry, std::ostream* log)
      : provider_(std::move(provider)),
        url_(std::move(url)),
        model_(std::move(model)),
        key_env_(std::move(key_env)),
        max_tokens_(max_tokens),
        temperature_(temperature),
        retry_(retry),
        log_(log) {}

  std::string describe() const override { return provider_ + " " + model_; }

  std::string propose(const rewrite_request& request) override {
    const std::string body = json::serialize(request_body(request));
    http::request_options options;
    options.timeout = retry_.timeout;
    std::string last_failure;
    std::string reply;
    const retry_backoff backoff{retry_.retries + 1, retry_.backoff, 2.0, retry_.max_backoff};
    const bool answered = run_with_retries(backoff, [&](int attempt) {
      if (attempt > 1 && log_)
        *log_ << "rnx optimize: " << provider_ << ": " << last_failure << "; retry " << attempt - 1 << " of "
              << retry_.retries << "\n";
      try {
        http::response r = http::request("POST", url_, headers(), body, options);
        if (r.status / 100 == 2) {
          reply = parse_reply(r.body);
          return attempt_outcome::success();
        }
        std::string message = api_error_message(r.body);
        if (r.status == 401 || r.status == 403) {
          throw error(errc::unauthorized, provider_ + " rejected the key in $" + key_env_ + " (HTTP " +
                                              std::to_string(r.status) + ": " + message +
                                              "); set a valid key: export " + key_env_ + "=...");
        }
        if (!retryable_status(r.status)) {
          throw error(errc::invalid, provider_ + " refused the request (HTTP " + std::to_string(r.status) + " from " +
                                         url_ + ": " + message + "); check [optimize] model (\"" + model_ +
                                         "\") and base_url");
        }
        last_failure = "HTTP " + std::to_string(r.status) + " (" + message + ")";
        return attempt_outcome::again(retry_after(r, retry_.max_backoff));
      } catch (const error& e) {
        if (e.code() != errc::unavailable) throw;
        last_failure = e.what();
        return attempt_outcome::again();
      }
    });
    if (answered) return reply;
    throw error(errc::unavailable, provider_ + " at " + url_ + " failed " + std::to_string(retry_.retries + 1) +
                                       " times; last: " + last_failure +
                                       " (check the network and [optimize] base_url, or raise [optimize] retries)");
  }

 protected:
  virtual bj::value request_body(const rewrite_request& request) const = 0;
  virtual http::header_list headers() const = 0;
  virtual std::string reply_text(const bj::value& reply) const = 0;

  std::string key() const {
    const char* k = std::getenv(key_env_.c_str());
    return k ? std::string(k) : std::string();
  }
  std::string user_message(const rewrite_request& request) const {
    return "Rewrite this kernel (attempt " + std::to_string(request.attempt) + " of " + std::to_string(request.budget) +
           "). The request:\n\n```json\n" + json::serialize(to_json(request), true) + "\n```";
  }

  std::string provider_;
  std::string url_;
  std::string model_;
  std::string key_env_;
  int max_tokens_;
  double temperature_;
  retry_policy retry_;
  std::ostream* log_;

 private:
  std::string parse_reply(const std::string& body) const {
    bj::value v = json::parse(body, provider_ + " reply");
    std::string text;
    try {
      text = reply_text(v);
    } catch (const std::exception& e) {
      throw error(errc::bad_input, provider_ + " reply from " + url_ + " has an unexpected shape: " + e.what());
    }
    std::string source = extract_source(text);
    if (source.empty()) throw error(errc::bad_input, provider_ + " replied with no text (nothing to try)");
    return source;
  }
};

class anthropic_rewriter final : public http_rewriter {
 public:
  anthropic_rewriter(const std::string& base, std::string model, std::string key_env, int max_tokens,
                     double temperature, retry_policy retry, std::ostream* log)
      : http_rewriter("anthropic", base + "/v1/messages", std::move(model), std::move(key_env), max_tokens, temperature,
                      retry, log) {}

 protected:
  bj::value request_body(const rewrite_request& request) const override {
    bj::object body;
    body["model"] = model_;
    body["max_tokens"] = max_tokens_;
    body["temperature"] = temperature_;
    body["system"] = system_prompt();
    bj::object message;
    message["role"] = "user";
    message["content"] = user_message(request);
    body["messages"] = bj::array{std::move(message)};
    return body;
  }
  http::header_list headers() const override {
    return {{"x-api-key", key()}, {"anthropic-version", "2023-06-01"}, {"content-type", "application/json"}};
  }
  std::string reply_text(const bj::value& reply) const override {
    // The Messages API returns a list of content blocks; the text ones carry the answer.
    std::string text;
    for (const auto& block : reply.at("content").as_array()) {
      if (block.at("type").as_string() == "text") text += std::string(block.at("text").as_string());
    }
    return text;
  }
};

class openai_rewriter final : public http_rewriter {
 public:
  openai_rewriter(const std::string& base, std::string model, std::string key_env, int max_tokens, double temperature,
                  retry_policy retry, std::ostream* log)
      : http_rewriter("openai", base + "/chat/completions", std::move(model), std::move(key_env), max_tokens,
                      temperature, retry, log) {}

 protected:
  bj::value request_body(const rewrite_request& request) const override {
    bj::object system;
    system["role"] = "system";
    system["content"] = system_prompt();
    bj::object user;
    user["role"] = "user";
    user["content"] = user_message(request);
    bj::object body;
    body["model"] = model_;
    body["messages"] = bj::array{std::move(system), std::move(user)};
    body["max_tokens"] = max_tokens_;
    body["temperature"] = temperature_;
    return body;
  }
  http::header_list headers() const override {
    return {{"Authorization", "Bearer " + key()}, {"Content-Type", "application/json"}};
  }
  std::string reply_text(const bj::value& reply) const override {
    const auto& choices = reply.at("choices").as_array();
    if (choices.empty()) throw std::runtime_error("no choices");
    const auto& content = choices.at(0).at("message").at("content");
    return content.is_string() ? std::string(content.as_string()) : std::string();
  }
};

std::string env_or(const char* name, std::string fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : std::move(fallback);
}

std::string trim_slash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

}  // namespace

std::unique_ptr<rewriter> make_rewriter(const optimize_config& config, const std::filesystem::path& root,
                                        std::ostream* log) {
  auto ms = [](double s) { return std::chrono::milliseconds(static_cast<long long>(s * 1000)); };
  retry_policy retry;
  retry.retries = config.retries;
  retry.timeout = ms(config.timeout_s);
  retry.backoff = ms(config.backoff_s);
  if (config.rewriter == rewriter_kind::command) {
    if (config.command.empty()) {
      throw error(errc::usage,
                  "no rewriter chosen: pass --rewriter command:PATH | anthropic | openai, or set "
                  "[optimize] rewriter in rnx.toml");
    }
    return std::make_unique<command_rewriter>(config.command, root, retry.timeout);
  }
  const bool anthropic = config.rewriter == rewriter_kind::anthropic;
  std::string key_env =
      !config.api_key_env.empty() ? config.api_key_env : (anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY");
  const char* key = std::getenv(key_env.c_str());
  if (!key || !*key) {
    throw error(errc::usage, "the " + std::string(to_string(config.rewriter)) + " rewriter needs an API key in $" +
                                 key_env + ", which is unset; export " + key_env +
                                 "=... (in CI: a repository secret) or choose --rewriter command:PATH");
  }
  std::string model = config.model.empty() ? default_model(config.rewriter) : config.model;
  std::string base = !config.base_url.empty() ? config.base_url
                                              : (anthropic ? env_or("ANTHROPIC_BASE_URL", "https://api.anthropic.com")
                                                           : env_or("OPENAI_BASE_URL", "https://api.openai.com/v1"));
  base = trim_slash(base);
  if (anthropic) {
    return std::make_unique<anthropic_rewriter>(base, model, key_env, config.max_tokens, config.temperature, retry,
                                                log);
  }
  return std::make_unique<openai_rewriter>(base, model, key_env, config.max_tokens, config.temperature, retry, log);
}

}  // namespace rnx::optimize
