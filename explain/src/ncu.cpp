// Nsight Compute's CSV summed per window, and the command line that produces it.
#include "rnx/explain/ncu.hpp"

#include "rnx/common/error.hpp"

#include <array>
#include <cstdlib>
#include <sstream>

namespace rnx::explain {

namespace {

// One CSV line's fields: quoted ("a,b") or bare, separated by commas.
std::vector<std::string> csv_fields(std::string_view line) {
  std::vector<std::string> out;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(std::move(field));
      field.clear();
    } else if (c != '\r') {
      field += c;
    }
  }
  out.push_back(std::move(field));
  return out;
}

bool parse_number(std::string text, double& out) {
  std::string digits;
  for (char c : text) {
    if (c != ',' && c != ' ') digits += c;
  }
  if (digits.empty()) return false;
  char* end = nullptr;
  out = std::strtod(digits.c_str(), &end);
  return end && *end == '\0';
}

}  // namespace

ncu_counts parse_ncu_csv(std::string_view text, const std::string& source) {
  const std::array<std::string_view, 3> names = {"dram__bytes_read.sum", "dram__bytes_write.sum",
                                                 "smsp__inst_executed.sum"};
  std::array<int, 3> column{-1, -1, -1};
  ncu_counts counts;
  bool header = false;
  std::istringstream lines{std::string(text)};
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (line.empty() || line.rfind("==", 0) == 0) continue;
    const auto fields = csv_fields(line);
    if (!header) {
      for (std::size_t i = 0; i < fields.size(); ++i) {
        for (std::size_t m = 0; m < names.size(); ++m) {
          if (fields[i] == names[m]) column[m] = static_cast<int>(i);
        }
      }
      header = column[0] >= 0 && column[1] >= 0 && column[2] >= 0;
      continue;
    }
    std::array<double, 3> v{};
    bool units_row = false;
    for (std::size_t m = 0; m < names.size(); ++m) {
      const auto at = static_cast<std::size_t>(column[m]);
      if (at >= fields.size()) {
        throw error(errc::invalid, source + ":" + std::to_string(number) + ": a kernel row without the " +
                                       std::string(names[m]) + " column");
      }
      if (!parse_number(fields[at], v[m])) {
        // The units row ("byte", "inst") follows the header; any other text is not a count.
        if (counts.kernels == 0 && !units_row && m == 0) {
          units_row = true;
          break;
        }
        throw error(errc::invalid, source + ":" + std::to_string(number) + ": " + std::string(names[m]) + " is \"" +
                                       fields[at] + "\", not a number (run ncu with --print-units base)");
      }
    }
    if (units_row) continue;
    counts.kernels += 1;
    counts.dram_bytes_read += v[0];
    counts.dram_bytes_written += v[1];
    counts.instructions += v[2];
  }
  if (!header) {
    throw error(errc::invalid, source + ": no CSV header naming " + std::string(ncu_metrics) +
                                   " (is ncu's --csv --page raw output there? ncu may have failed: see its log)");
  }
  return counts;
}

std::vector<std::string> ncu_argv(const std::string& ncu, const std::filesystem::path& log_file,
                                  const std::vector<std::string>& worker_argv) {
  std::vector<std::string> argv{ncu,
                                "--csv",
                                "--page",
                                "raw",
                                "--print-units",
                                "base",
                                "--metrics",
                                std::string(ncu_metrics),
                                "--profile-from-start",
                                "off",
                                "--target-processes",
                                "all",
                                "--log-file",
                                log_file.string()};
  argv.insert(argv.end(), worker_argv.begin(), worker_argv.end());
  return argv;
}

}  // namespace rnx::explain
