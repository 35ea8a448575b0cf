// Rewriter providers against local stand-ins: the Anthropic and OpenAI wire formats (checked field by field),
// 429/500 retries, timeouts, missing keys, unreachable hosts; the command provider; the [optimize] table.
#include "fake_http_server.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/optimize/config.hpp"
#include "rnx/optimize/rewriter.hpp"

#include <doctest/doctest.h>

#include <boost/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace bj = boost::json;
using namespace rnx::optimize;
using rnx::testing::fake_http_server;
using rnx::testing::scripted_response;

namespace {

rewrite_request sample_request() {
  rewrite_request r;
  r.kernel = "attention";
  r.path = "kernels/attention.py";
  r.entry = "run";
  r.kind = "python";
  r.inputs = "q=B,4,16,8; k=B,4,16,8; v=B,4,16,8";
  r.source = "import torch\ndef run(q, k, v):\n    return q\n";
  r.profile = bj::parse(R"({"ops":[{"name":"aten::bmm","calls":8}]})");
  r.benchmark = bj::parse(R"({"median_ms":1.5})");
  attempt_summary a;
  a.index = 1;
  a.source = "def run(q, k, v): return k\n";
  a.decision = "incorrect";
  a.reason = "smoke: mismatch";
  r.attempts.push_back(a);
  r.attempt = 2;
  r.budget = 3;
  return r;
}

optimize_config http_config(rewriter_kind kind, const std::string& key_env) {
  optimize_config c;
  c.rewriter = kind;
  c.rewriter_set = true;
  c.api_key_env = key_env;
  c.model = kind == rewriter_kind::anthropic ? "claude-test-model" : "gpt-test-model";
  c.retries = 3;
  c.backoff_s = 0.01;
  c.timeout_s = 5;
  c.max_tokens = 1234;
  c.temperature = 0.3;
  return c;
}

const std::string candidate =
    "import torch\ndef run(q, k, v):\n    return torch.softmax(q @ k.transpose(-1, -2), -1) @ v\n";

std::string anthropic_reply() {
  bj::object block;
  block["type"] = "text";
  block["text"] = "Here is a faster version:\n```python\n" + candidate + "```\nIt batches the heads.";
  bj::object reply;
  reply["id"] = "msg_01";
  reply["type"] = "message";
  reply["role"] = "assistant";
  reply["model"] = "claude-test-model";
  reply["content"] = bj::array{block};
  reply["stop_reason"] = "end_turn";
  reply["usage"] = bj::object{{"input_tokens", 10}, {"output_tokens", 20}};
  return bj::serialize(reply);
}

std::string openai_reply() {
  bj::object message{{"role", "assistant"}, {"content", "```python\n" + candidate + "```"}};
  bj::object choice{{"index", 0}, {"message", message}, {"finish_reason", "stop"}};
  bj::object reply{
      {"id", "chatcmpl-1"}, {"object", "chat.completion"}, {"model", "gpt-test-model"}, {"choices", bj::array{choice}}};
  return bj::serialize(reply);
}

// The user message must carry the whole request document, so the model sees source, profile and attempts.
void check_user_message(const std::string& content) {
  auto start = content.find("```json\n");
  REQUIRE(start != std::string::npos);
  auto end = content.rfind("\n```");
  bj::value doc = bj::parse(content.substr(start + 8, end - start - 8));
  CHECK(doc.at("schema").as_string() == "rnx.rewrite_request/v1");
  CHECK(doc.at("kernel").at("source").as_string() == sample_request().source);
  CHECK(doc.at("profile").at("ops").at(0).at("name").as_string() == "aten::bmm");
  CHECK(doc.at("attempts").at(0).at("decision").as_string() == "incorrect");
  CHECK(doc.at("attempt").as_int64() == 2);
}

struct scoped_env {
  std::string name;
  scoped_env(std::string n, const std::string& value) : name(std::move(n)) { ::setenv(name.c_str(), value.c_str(), 1); }
  ~scoped_env() { ::unsetenv(name.c_str()); }
};

unsigned short closed_port() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor a(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return a.local_endpoint().port();  // closed again when `a` goes
}

}  // namespace

TEST_CASE("anthropic: Messages API request field by field, retried through 429 and 500") {
  fake_http_server server;
  server.push({429,
               R"({"type":"error","error":{"type":"rate_limit_error","message":"slow down"}})",
               {{"retry-after", "0"}},
               {}});
  server.push({500, R"({"type":"error","error":{"type":"api_error","message":"boom"}})", {}, {}});
  server.push({200, anthropic_reply(), {}, {}});
  scoped_env key("RNX_TEST_ANTHROPIC_KEY", "sk-ant-test-123");
  scoped_env base("ANTHROPIC_BASE_URL", server.url());  // the production default path reads this variable
  auto provider = make_rewriter(http_config(rewriter_kind::anthropic, "RNX_TEST_ANTHROPIC_KEY"), ".");
  std::string source = provider->propose(sample_request());
  CHECK(source == candidate);

  auto reqs = server.requests();
  REQUIRE(reqs.size() == 3);
  for (const auto& r : reqs) {
    CHECK(r.method == "POST");
    CHECK(r.target == "/v1/messages");
    CHECK(r.header("x-api-key") == "sk-ant-test-123");
    CHECK(r.header("anthropic-version") == "2023-06-01");
    CHECK(r.header("content-type") == "application/json");
    CHECK(r.header("authorization").empty());
    bj::value body = bj::parse(r.body);
    const auto& o = body.as_object();
    CHECK(o.size() == 5);
    CHECK(o.at("model").as_string() == "claude-test-model");
    CHECK(o.at("max_tokens").as_int64() == 1234);
    CHECK(o.at("temperature").as_double() == doctest::Approx(0.3));
    CHECK(o.at("system").as_string() == system_prompt());
    const auto& messages = o.at("messages").as_array();
    REQUIRE(messages.size() == 1);
    CHECK(messages[0].at("role").as_string() == "user");
    check_user_message(std::string(messages[0].at("content").as_string()));
  }
  CHECK(reqs[0].body == reqs[2].body);  // a retry resends the same request
}

TEST_CASE("anthropic: a rejected key is unauthorized at once, never retried") {
  fake_http_server server;
  server.push(
      {401, R"({"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}})", {}, {}});
  scoped_env key("RNX_TEST_ANTHROPIC_KEY", "wrong");
  auto config = http_config(rewriter_kind::anthropic, "RNX_TEST_ANTHROPIC_KEY");
  config.base_url = server.url();
  auto provider = make_rewriter(config, ".");
  try {
    provider->propose(sample_request());
    FAIL("expected an error");
  } catch (const rnx::error& e) {
    CHECK(e.code() == rnx::errc::unauthorized);
    CHECK(e.exit_code() == 2);
    CHECK(std::string(e.what()).find("RNX_TEST_ANTHROPIC_KEY") != std::string::npos);
    CHECK(std::string(e.what()).find("invalid x-api-key") != std::string::npos);
  }
  CHECK(server.requests().size() == 1);
}

TEST_CASE("anthropic: timeouts are retried, then reported as unavailable naming the URL") {
  fake_http_server server;
  server.set_fallback({200, anthropic_reply(), {}, {}, /*hold=*/true});
  scoped_env key("RNX_TEST_ANTHROPIC_KEY", "k");
  auto config = http_config(rewriter_kind::anthropic, "RNX_TEST_ANTHROPIC_KEY");
  config.base_url = server.url();
  config.timeout_s = 0.2;
  config.retries = 1;
  auto provider = make_rewriter(config, ".");
  try {
    provider->propose(sample_request());
    FAIL("expected an error");
  } catch (const rnx::error& e) {
    CHECK(e.code() == rnx::errc::unavailable);
    CHECK(e.exit_code() == 2);
    std::string what = e.what();
    CHECK(what.find("failed 2 times") != std::string::npos);
    CHECK(what.find("timed out") != std::string::npos);
    CHECK(what.find(server.url() + "/v1/messages") != std::string::npos);
  }
}

TEST_CASE("anthropic: a missing key is a usage error before any request") {
  ::unsetenv("RNX_TEST_UNSET_KEY");
  auto config = http_config(rewriter_kind::anthropic, "RNX_TEST_UNSET_KEY");
  try {
    make_rewriter(config, ".");
    FAIL("expected an error");
  } catch (const rnx::error& e) {
    CHECK(e.code() == rnx::errc::usage);
    CHECK(e.exit_code() == 2);
    CHECK(std::string(e.what()).find("export RNX_TEST_UNSET_KEY=") != std::string::npos);
  }
}

TEST_CASE("openai: chat completions request field by field, retried through 500") {
  fake_http_server server;
  server.push({500, R"({"error":{"message":"The server had an error","type":"server_error"}})", {}, {}});
  server.push({429, R"({"error":{"message":"Rate limit reached","type":"requests"}})", {}, {}});
  server.push({200, openai_reply(), {}, {}});
  scoped_env key("RNX_TEST_OPENAI_KEY", "sk-openai-456");
  auto config = http_config(rewriter_kind::openai, "RNX_TEST_OPENAI_KEY");
  config.base_url = server.url() + "/v1/";
  auto provider = make_rewriter(config, ".");
  CHECK(provider->describe() == "openai gpt-test-model");
  CHECK(provider->propose(sample_request()) == candidate);

  auto reqs = server.requests();
  REQUIRE(reqs.size() == 3);
  for (const auto& r : reqs) {
    CHECK(r.method == "POST");
    CHECK(r.target == "/v1/chat/completions");
    CHECK(r.header("authorization") == "Bearer sk-openai-456");
    CHECK(r.header("content-type") == "application/json");
    bj::value body = bj::parse(r.body);
    const auto& o = body.as_object();
    CHECK(o.size() == 4);
    CHECK(o.at("model").as_string() == "gpt-test-model");
    CHECK(o.at("max_tokens").as_int64() == 1234);
    CHECK(o.at("temperature").as_double() == doctest::Approx(0.3));
    const auto& messages = o.at("messages").as_array();
    REQUIRE(messages.size() == 2);
    CHECK(messages[0].at("role").as_string() == "system");
    CHECK(messages[0].at("content").as_string() == system_prompt());
    CHECK(messages[1].at("role").as_string() == "user");
    check_user_message(std::string(messages[1].at("content").as_string()));
  }
}

TEST_CASE("openai: a bad model is invalid with the API's message; an unreachable host is unavailable") {
  scoped_env key("RNX_TEST_OPENAI_KEY", "k");
  {
    fake_http_server server;
    server.push(
        {404, R"({"error":{"message":"The model `nope` does not exist","type":"invalid_request_error"}})", {}, {}});
    auto config = http_config(rewriter_kind::openai, "RNX_TEST_OPENAI_KEY");
    config.base_url = server.url();
    auto provider = make_rewriter(config, ".");
    try {
      provider->propose(sample_request());
      FAIL("expected an error");
    } catch (const rnx::error& e) {
      CHECK(e.code() == rnx::errc::invalid);
      CHECK(std::string(e.what()).find("does not exist") != std::string::npos);
      CHECK(std::string(e.what()).find("[optimize] model") != std::string::npos);
    }
    CHECK(server.requests().size() == 1);
  }
  auto config = http_config(rewriter_kind::openai, "RNX_TEST_OPENAI_KEY");
  config.base_url = "http://127.0.0.1:" + std::to_string(closed_port());
  config.retries = 2;
  auto provider = make_rewriter(config, ".");
  try {
    provider->propose(sample_request());
    FAIL("expected an error");
  } catch (const rnx::error& e) {
    CHECK(e.code() == rnx::errc::unavailable);
    CHECK(e.exit_code() == 2);
    CHECK(std::string(e.what()).find("failed 3 times") != std::string::npos);
    CHECK(std::string(e.what()).find("base_url") != std::string::npos);
  }
}

TEST_CASE("command: the request arrives on stdin as JSON; stdout is the candidate; failures name the command") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("rnx-test-rewriter-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream s(dir / "rw.sh");
    // Saves what it read, answers with a fixed candidate.
    s << "#!/bin/sh\ncat > \"$(dirname \"$0\")/seen.json\"\nprintf 'import torch\\ndef run(q, k, v):\\n    return "
         "v\\n'\n";
  }
  {
    std::ofstream s(dir / "fail.sh");
    s << "#!/bin/sh\necho 'rewriter exploded: no idea' >&2\nexit 3\n";
  }
  {
    std::ofstream s(dir / "slow.sh");
    s << "#!/bin/sh\nexec sleep 600\n";  // only the provider's timeout ends it
  }
  for (const char* f : {"rw.sh", "fail.sh", "slow.sh"}) fs::permissions(dir / f, fs::perms::owner_all);

  optimize_config config;
  apply_rewriter_flag(config, "command:./rw.sh");
  auto provider = make_rewriter(config, dir);
  CHECK(provider->propose(sample_request()) == "import torch\ndef run(q, k, v):\n    return v\n");
  bj::value seen = rnx::json::parse_file(dir / "seen.json");
  CHECK(seen.at("schema").as_string() == "rnx.rewrite_request/v1");
  CHECK(seen.at("kernel").at("name").as_string() == "attention");
  CHECK(seen.at("kernel").at("source").as_string() == sample_request().source);
  CHECK(seen.at("benchmark").at("median_ms").as_double() == 1.5);
  CHECK(seen.at("attempts").as_array().size() == 1);
  CHECK(seen.at("budget").as_int64() == 3);

  apply_rewriter_flag(config, "command:./fail.sh");
  try {
    make_rewriter(config, dir)->propose(sample_request());
    FAIL("expected an error");
  } catch (const rnx::error& e) {
    CHECK(e.code() == rnx::errc::kernel_failed);
    CHECK(std::string(e.what()).find("exited with status 3") != std::string::npos);
    CHECK(std::string(e.what()).find("rewriter exploded") != std::string::npos);
  }
  apply_rewriter_flag(config, "command:./slow.sh");
  config.timeout_s = 0.3;
  CHECK_THROWS_WITH_AS(make_rewriter(config, dir)->propose(sample_request()), doctest::Contains("did not answer"),
                       rnx::error);
  fs::remove_all(dir);
}

TEST_CASE("extract_source: the longest fenced block, else the trimmed reply") {
  CHECK(extract_source("```python\nx = 1\n```") == "x = 1\n");
  CHECK(extract_source("a\n```\nshort\n```\nand\n```py\nlonger one\n```\n") == "longer one\n");
  CHECK(extract_source("  def f(): pass  \n") == "def f(): pass\n");
  CHECK(extract_source("   ").empty());
}

TEST_CASE("[optimize] table: values, bad keys with their line, --rewriter flag, stripping keeps line numbers") {
  std::string text =
      "[project]\nname = \"p\"\n\n[optimize]\nrewriter = \"openai\"\nmodel = \"m\"\nbudget = 5\n"
      "base_url = \"http://127.0.0.1:9/v1\"\n\n[gate]\nrope = 0.02\n";
  auto c = parse_optimize_config(text, "rnx.toml");
  CHECK(c.rewriter == rewriter_kind::openai);
  CHECK(c.model == "m");
  CHECK(c.budget == 5);
  CHECK(c.base_url == "http://127.0.0.1:9/v1");
  CHECK_THROWS_WITH_AS(parse_optimize_config("[optimize]\nbudjet = 3\n", "rnx.toml"),
                       doctest::Contains("rnx.toml:2: optimize.budjet: unknown key"), rnx::error);
  CHECK_THROWS_WITH_AS(parse_optimize_config("[optimize]\nrewriter = \"gemini\"\n", "rnx.toml"),
                       doctest::Contains("use command, anthropic or openai"), rnx::error);
  CHECK_THROWS_WITH_AS(parse_optimize_config("[optimize]\nbudget = 0\n", "x.toml"),
                       doctest::Contains("optimize.budget: must lie in [1, 100]"), rnx::error);
  CHECK_THROWS_AS(apply_rewriter_flag(c, "command:"), rnx::error);
  apply_rewriter_flag(c, "anthropic");
  CHECK(c.rewriter == rewriter_kind::anthropic);
  std::string stripped = strip_optimize_table(text);
  CHECK(stripped.find("optimize") == std::string::npos);
  CHECK(stripped.find("rewriter") == std::string::npos);
  CHECK(std::count(stripped.begin(), stripped.end(), '\n') == std::count(text.begin(), text.end(), '\n'));
  CHECK(stripped.find("[gate]\nrope = 0.02\n") != std::string::npos);
}
