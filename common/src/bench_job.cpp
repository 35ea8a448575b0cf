#include "rnx/common/bench_job.hpp"

#include "rnx/common/described_json.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/files.hpp"
#include "rnx/common/json.hpp"

namespace rnx {

void write_bench_job(const bench_job& job, const std::string& path) {
  write_file_atomically(path, json::serialize(json::to_object(job), true) + "\n");
}

bench_job read_bench_job(const std::string& path) {
  bench_job job = json::from_object<bench_job>(json::parse_file(path), path);
  if (job.schema != bench_job_schema) {
    throw error(errc::invalid, path + ": schema \"" + job.schema + "\" is not " + bench_job_schema +
                                   " (a job file rnx gate writes for its rnx bench child)");
  }
  return job;
}

}  // namespace rnx
