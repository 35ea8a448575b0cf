// libFuzzer target: raw bytes -> Beast HTTP parser -> api::handle_request (routing, auth, JSON, run documents, store).
//
// The first input byte picks whether a valid bearer token is added, so the fuzzer reaches the code
// behind authentication (JSON and run-document parsing, the store) and not only the 401 path.
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/run_document.hpp"
#include "rnx/service/api.hpp"
#include "rnx/service/store.hpp"

#include <boost/beast/http.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <unistd.h>

namespace {

struct fixture {
  std::filesystem::path dir;
  std::unique_ptr<rnx::store::database> db;
  rnx::service::metrics metrics;
  std::unique_ptr<rnx::service::api> api;
  std::string token;

  fixture() {
    dir = std::filesystem::temp_directory_path() / ("rnx-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    rnx::store::open_options options;
    options.synchronous_full = false;  // speed; durability is not what is fuzzed here
    db = std::make_unique<rnx::store::database>(dir / "fuzz.sqlite", options);
    db->create_project("demo");
    token = db->create_token("demo", "fuzz").token;
    api = std::make_unique<rnx::service::api>(*db, metrics, nullptr);
  }
  ~fixture() {
    api.reset();
    db.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

fixture& the_fixture() {
  static fixture f;
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  the_fixture();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  auto& f = the_fixture();
  bool authorize = (data[0] & 1) != 0;
  std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);

  // The run-document reader on its own: any input must give a value or an rnx::error, nothing else.
  try {
    auto v = rnx::json::parse(bytes, "fuzz", 64);
    (void)rnx::run_from_json(v, "fuzz");
  } catch (const rnx::error&) {
  }

  namespace bhttp = boost::beast::http;
  bhttp::request_parser<bhttp::string_body> parser;
  parser.eager(true);
  parser.body_limit(1 << 20);
  boost::system::error_code ec;
  parser.put(boost::asio::buffer(bytes.data(), bytes.size()), ec);
  if (ec || !parser.is_done()) return 0;
  auto req = parser.release();
  if (authorize) req.set(bhttp::field::authorization, "Bearer " + f.token);
  auto res = f.api->handle_request(req);
  // Every answer is a real HTTP status with a body; a 500 means a handler let an unexpected error through.
  if (res.result_int() < 200 || res.result_int() >= 600 || res.result_int() == 500) std::abort();
  return 0;
}
