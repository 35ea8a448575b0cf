// The job the verifier hands its worker (and the worker its candidate host) as a file: written by launch.cpp, read
// by worker_io.cpp, both through this one described type (rnx/common/described_json.hpp), so the two sides cannot
// disagree on a key; a file that does not read as one is errc::invalid naming the key.
#pragma once

#include "rnx/common/described_json.hpp"

#include <boost/describe.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rnx::verify::detail {

// What the worker does with a candidate implausibly faster than its reference: fail the row, or mark it `review`.
enum class on_implausible { reject, review };
BOOST_DESCRIBE_ENUM(on_implausible, reject, review)

// A kernel file and the name in it to call (an empty entry: the file's own convention).
struct side_spec {
  std::string path;
  std::string entry;
};
BOOST_DESCRIBE_STRUCT(side_spec, (), (path, entry))

// One declared input: its parameter name and its shape text ("B,1024").
struct job_input {
  std::string name;
  std::string shape;
};
BOOST_DESCRIBE_STRUCT(job_input, (), (name, shape))

struct job_tolerance {
  double rtol = 0;
  double atol = 0;
};
BOOST_DESCRIBE_STRUCT(job_tolerance, (), (rtol, atol))

struct job_file {
  std::string name;
  side_spec reference;
  side_spec candidate;
  std::vector<job_input> inputs;
  std::vector<std::int64_t> batches;
  std::vector<std::string> dtypes;
  std::string device;
  std::map<std::string, job_tolerance> tolerances;  // per dtype name
  std::uint64_t seed = 0;                           // the run's seed, its low 63 bits (torch seeds are signed)
  double speedup_limit = 10;
  on_implausible implausible_speedup = on_implausible::reject;
  std::string cache_dir;
};
BOOST_DESCRIBE_STRUCT(job_file, (),
                      (name, reference, candidate, inputs, batches, dtypes, device, tolerances, seed, speedup_limit,
                       implausible_speedup, cache_dir))

}  // namespace rnx::verify::detail
