// Running one configuration inside the worker process: alone, or paired in-process with the base revision's.
#pragma once

#include "rnx/common/manifest.hpp"
#include "rnx/runner/kernel.hpp"
#include "worker_protocol.hpp"

#include <boost/json/object.hpp>

#include <map>
#include <memory>
#include <string>

namespace rnx::runner::detail {

// Kernels are loaded once per process; a failed load is remembered so each configuration reports it.
struct loaded_entry {
  std::unique_ptr<runner::kernel> kernel;
  std::string error;
};
using kernel_cache = std::map<std::string, loaded_entry>;  // by module prefix + kernel name

// The result event of one configuration measured alone.
result_event run_config(const job_config& c, const manifest& m, const worker_job& job, kernel_cache& cache);

// The result event of a configuration whose base (from `base`) is measured in the same process, alternated in
// blocks: the head's outcome and the base's. When the two cannot share the process (a side fails, or a kernel
// imports helpers from its folder), the event carries pair_fallback with the reason and no measurement, and the
// orchestrator measures the sides in processes of their own.
result_event run_paired_config(const job_config& c, const manifest& head, const manifest& base, const worker_job& job,
                               kernel_cache& cache);

}  // namespace rnx::runner::detail
