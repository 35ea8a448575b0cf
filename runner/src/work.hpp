// A configuration's work of one call: the manifest's declaration, the worker's count, and the rates they imply.
#pragma once

#include "rnx/common/manifest.hpp"
#include "rnx/common/run_document.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace rnx::runner::detail {

// The kernel's declared flops / bytes evaluated at `batch` and rounded to whole counts (source declared), or nullopt
// where it declares neither. Throws rnx::error(invalid), naming `manifest_source`, the kernel and the key, for a
// value that is negative or not finite there (a division by B - 1 at B = 1).
std::optional<work_info> declared_work(const kernel_spec& k, std::int64_t batch, const std::string& manifest_source);

// The work a result carries: each declared key wins over the counted one (the work is then declared), a key left
// undeclared is the count's.
work_info with_counted(const std::optional<work_info>& declared, const work_info& counted);

// A rate for the summary table (1234, 56.7, 8.91, 0.123), or "-" where unset.
std::string rate_text(const std::optional<double>& rate);

}  // namespace rnx::runner::detail
