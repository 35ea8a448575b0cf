// The part the three importers share: what each reads out of one file, and the helpers they check input with.
#pragma once

#include "rnx/common/json.hpp"
#include "rnx/common/run_document.hpp"

#include <boost/json/value.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rnx::importers::detail {

// One configuration as one file reports it, before it is mapped to a configuration key.
struct measured_case {
  std::string path;    // JSON path of the case in its file ("$.benchmarks[3]"), for error messages
  std::string name;    // the harness's name without parameters ("BM_copy", "tests/test_x.py::test_sort")
  std::vector<std::pair<std::string, std::string>> params;  // in the harness's order
  std::string origin;  // the harness's full name for it
  std::string device = "cpu";
  result_status status = result_status::ok;
  std::string message;
  std::vector<double> samples_ms;
  std::optional<aggregate_summary> aggregates;  // set when the harness kept no per-sample times
  std::string aggregates_hint;                  // how to make this harness keep them
};

// What a file says about where it was measured; empty fields are filled from the importing machine.
struct harness_context {
  std::string harness;  // "gbench 1.7.1 (release build)"
  std::string device;   // a GPU's name; empty for CPU harnesses ("cpu: MODEL" of the importing machine)
  std::string compute_capability;
  std::string cpu;
  std::string python;
  std::int64_t threads = 0;
  std::map<std::string, double> clocks;
  std::string commit;
  std::string branch;
  std::string created_at;
  // The JSON path of the block the fields came from ("$.context"), for the mismatch message between files.
  std::string path = "$";
};

struct parsed_file {
  std::string file;
  harness_context context;
  std::vector<measured_case> cases;
};

parsed_file parse_gbench(const std::string& file, const boost::json::value& doc, bool cpu_time);
parsed_file parse_pytest_benchmark(const std::string& file, const boost::json::value& doc);
parsed_file parse_nvbench(const std::string& file, const boost::json::value& doc);

// What a document looks like ("Google Benchmark JSON", "an rnx run document", ...), or "" when unknown; an importer
// given the wrong kind of file says which kind it is.
std::string recognise(const boost::json::value& doc);
// Throws the one-line error for a file that is not `expected`, naming what it looks like and the --format to use.
[[noreturn]] void wrong_format(const std::string& file, const boost::json::value& doc, std::string_view expected,
                               std::string_view missing);

// rnx::error(invalid) "FILE: PATH: WHAT".
[[noreturn]] void fail(const std::string& file, const std::string& path, const std::string& what);

// A parameter value as the configuration's name shows it: strings as they are, anything else as JSON.
std::string param_text(const boost::json::value& v);

// The importing machine: CPU model, OS line, hardware threads, RNX_IMAGE.
struct machine_facts {
  std::string cpu;
  std::string os;
  std::int64_t threads = 0;
  std::string image = "none";
};
machine_facts this_machine();

// "2026-12-03T09:27:05+00:00" or "...05.123456+00:00" -> "2026-12-03T09:27:05Z"; "" for anything else.
std::string utc_timestamp(std::string_view text);

}  // namespace rnx::importers::detail
