// Nsight Compute's counters of one call: DRAM bytes read and written and instructions executed, summed over the
// kernels of the call's window (the profile worker marks it; ncu --profile-from-start off sees only it).
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace rnx::explain {

// The metrics asked of ncu (--metrics), in this order.
inline constexpr std::string_view ncu_metrics = "dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum";

struct ncu_counts {
  int kernels = 0;  // kernels profiled in the window
  double dram_bytes_read = 0;
  double dram_bytes_written = 0;
  double instructions = 0;
};

// Sums ncu's CSV (--csv --page raw --print-units base): a header naming the metric columns, an optional units row,
// one row per kernel; quoted fields, thousands separators tolerated. Lines before the header (ncu's ==PROF==
// messages) are skipped. Throws rnx::error(invalid) naming `source` when no header names the three metrics or a
// value is not a number.
ncu_counts parse_ncu_csv(std::string_view text, const std::string& source);

// ncu's command line in front of the worker's: the window only, the three metrics, its report in `log_file`.
std::vector<std::string> ncu_argv(const std::string& ncu, const std::filesystem::path& log_file,
                                  const std::vector<std::string>& worker_argv);

}  // namespace rnx::explain
