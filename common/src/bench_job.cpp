#include "rnx/common/bench_job.hpp"

#include "rnx/common/described_json.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace rnx {

void write_bench_job(const bench_job& job, const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  fs::path temp = target;
  temp += ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw error(errc::not_found, path + ": cannot write (does the folder exist and is it writable?)");
    out << json::serialize(json::to_object(job), true) << "\n";
    out.flush();
    if (!out) throw error(errc::internal, path + ": write failed (disk full?)");
  }
  std::error_code ec;
  fs::rename(temp, target, ec);
  if (ec) {
    fs::remove(temp, ec);
    throw error(errc::not_found, path + ": cannot replace file: " + ec.message());
  }
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
