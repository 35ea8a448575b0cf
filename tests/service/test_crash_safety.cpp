// Crash safety: uploads while rnx-server is SIGKILLed and restarted; every 2xx'ed run survives, integrity ok.
#include "service_test_support.hpp"

#include "rnx/common/error.hpp"
#include "rnx/http/client.hpp"

#include <doctest/doctest.h>

using namespace rnx;

TEST_CASE("every acknowledged upload survives repeated SIGKILLs and the database stays intact") {
  test::temp_dir dir;
  std::string db_path = dir.file("rnx.sqlite");
  std::string token = test::make_token(db_path, "demo");
  http::header_list headers{{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}};
  std::vector<std::pair<std::string, std::string>> acknowledged;  // (run id, commit)
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> kill_after_ms(150, 600);
  constexpr int rounds = 6;
  int attempts = 0;
  int failures = 0;

  for (int round = 0; round < rounds; ++round) {
    test::server_process server(db_path);
    pid_t pid = server.pid();
    int delay = kill_after_ms(rng);
    // The kill lands at a random moment, usually in the middle of an upload.
    std::thread killer([pid, delay] {
      std::this_thread::sleep_for(std::chrono::milliseconds(delay));
      kill(pid, SIGKILL);
    });
    for (int i = 0;; ++i) {
      std::string commit = "crash-" + std::to_string(round) + "-" + std::to_string(i);
      ++attempts;
      try {
        auto r = http::request("POST", server.url("/api/v1/runs"), headers,
                               test::run_json({.commit = commit, .seed = static_cast<unsigned>(round * 1000 + i)}),
                               std::chrono::seconds(5));
        if (r.status / 100 != 2) {
          FAIL_CHECK("upload answered " << r.status << ": " << r.body);
          break;
        }
        acknowledged.emplace_back(std::string(json::parse(r.body, "upload").at("id").as_string()), commit);
      } catch (const error&) {
        ++failures;  // the server died under this request; nothing was promised
        break;
      }
    }
    killer.join();
    server.kill_hard();  // reaps the child
  }
  MESSAGE(attempts << " uploads attempted, " << acknowledged.size() << " acknowledged, " << failures
                   << " cut off by SIGKILL");
  REQUIRE(acknowledged.size() >= rounds);
  CHECK(failures == rounds);

  test::server_process server(db_path);
  for (const auto& [id, commit] : acknowledged) {
    auto r = http::request("GET", server.url("/api/v1/runs/" + id), {{"Authorization", "Bearer " + token}});
    REQUIRE_MESSAGE(r.status == 200, "acknowledged run " << id << " is gone: " << r.body);
    CHECK(json::parse(r.body, "run").at("document").at("commit").as_string() == commit);
  }
  server.stop();
  store::database db(db_path);
  CHECK(db.integrity_check() == "ok");
  CHECK(db.count_runs() >= static_cast<std::int64_t>(acknowledged.size()));
}
