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
  std::string path;  // JSON path of the case in its file ("$.benchmarks[3]"), for error messages
  std::string name;  // the harness's name without parameters ("BM_copy", "tests/test_x.py::test_sort")
  std::vector<std::pair<std::string, std::string>> params;  // in the harness's order
  std::string origin;                                       // the harness's full name for it
  std::string device = "cpu";
  result_status status = result_status::ok;
  std::string message;
  std::vector<double> samples_ms;
  std::optional<aggregate_summary> aggregates;  // set when the harness kept no per-sample times
  std::string aggregates_what;  // what it kept instead: "a single repetition (one mean over its 1000 iterations)"
  std::string aggregates_hint;  // how to make this harness keep them
};

// What a file says about where it was measured. Where it names its machine (`names_machine`), that is the run's
// environment and empty fields stay unknown; where it names none, the importing machine's fill them.
struct harness_context {
  std::string harness;  // "gbench 1.7.1 (release build)"
  std::string device;   // a GPU's name; empty for CPU harnesses ("cpu: " + the CPU)
  std::string compute_capability;
  std::string cpu;         // the CPU's model, where the file names it
  std::string cpu_detail;  // what else it says of the CPU where it names no model ("caches L1d 32 KiB, L2 1 MiB")
  std::string python;
  std::int64_t threads = 0;
  bool names_machine = false;  // host, CPU, OS or GPU recorded: the environment is the file's
  std::string host;            // the host name it ran on
  std::string os;              // the OS as the harness records it ("Darwin 23.4.0 arm64")
  std::map<std::string, double> clocks;
  std::string commit;
  std::string branch;
  // The harness's own time stamp as written, where it is, and what a stamp without a UTC offset means in it.
  std::string timestamp;
  std::string timestamp_path;
  std::string naive_timestamp_rule;
  // A project name the file records (pytest-benchmark's commit_info.project), and where.
  std::string project;
  std::string project_path;
  // The JSON path of the block the fields came from ("$.context"), for the mismatch message between files.
  std::string path = "$";
};

struct parsed_file {
  std::string file;
  harness_context context;
  std::vector<measured_case> cases;
  std::vector<std::string> notes;  // what was left out or renamed, and why ("FILE: PATH: ...")
};

parsed_file parse_gbench(const std::string& file, const boost::json::value& doc, bool cpu_time);
parsed_file parse_pytest_benchmark(const std::string& file, const boost::json::value& doc);
parsed_file parse_nvbench(const std::string& file, const boost::json::value& doc);

// What a document looks like ("Google Benchmark JSON", "an rnx run document", ...), or "" when unknown; an importer
// given the wrong kind of file says which kind it is.
std::string recognise(const boost::json::value& doc);
// Returns when the top level of `doc` is an object with `key` and "benchmarks" (the mark of the `expected` harness's
// file); else throws the one-line error for a file that is not `expected`, naming what it looks like and the
// --format to use.
void require_harness_keys(const std::string& file, const boost::json::value& doc, std::string_view expected,
                          std::string_view key);

// rnx::error(invalid) "FILE: PATH: WHAT".
[[noreturn]] void fail(const std::string& file, const std::string& path, const std::string& what);

// A parameter value as the configuration's name shows it: strings as they are, anything else as JSON.
std::string param_text(const boost::json::value& v);

// The importing machine: CPU model, OS line (and the kernel's part of it alone), hardware threads, host name,
// RNX_IMAGE.
struct machine_facts {
  std::string cpu;
  std::string os;
  std::string kernel;
  std::int64_t threads = 0;
  std::string host;
  std::string image = "none";
};
machine_facts this_machine();

// A harness's time stamp in UTC to the second ("2026-12-03T09:27:05Z"), from ISO 8601 with any UTC offset ("Z",
// "+02:00", "-0500") or none (naive: the caller decides what that means), a space or "T" between date and time,
// and Google Benchmark's oldest "MM/DD/YY HH:MM:SS"; nullopt for anything else.
struct time_stamp {
  std::string utc;
  bool naive = false;
};
std::optional<time_stamp> read_timestamp(std::string_view text);

}  // namespace rnx::importers::detail
