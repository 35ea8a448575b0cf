// The revisions `rnx bisect` searches and how it compares two of them: `rnx bench --pair BASE` run in a worktree
// of HEAD (the gate's paired machinery), the run documents kept so that a later bisect reuses them.
#pragma once

#include "bisect_search.hpp"

#include "rnx/common/run_document.hpp"
#include "rnx/common/verdict_document.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rnx::gate {

struct revision {
  std::string sha;
  std::string subject;
};

// GOOD, then every first-parent commit after it up to BAD, oldest first. GOOD must be an ancestor of BAD;
// anything else is errc::usage naming the revision.
std::vector<revision> first_parent_range(const std::filesystem::path& repo, const std::string& good,
                                         const std::string& bad);

struct bisect_setup {
  std::filesystem::path repo;               // the repository's top folder
  std::filesystem::path manifest_relative;  // rnx.toml relative to it (it must exist at every revision measured)
  std::vector<revision> commits;
  std::vector<std::string> kernels;  // the bench filters
  std::vector<std::string> runtimes;
  std::vector<std::string> dtypes;
  std::vector<std::int64_t> batches;
  std::optional<int> processes;
  std::optional<int> max_processes;
  std::optional<double> budget_ms;
  std::filesystem::path cache_dir;  // paired run documents, reused across bisects
  gate_policy policy;               // rope = the step threshold
};

// Compares two revisions of the range on one configuration: the one `bisect_setup` filters leave, or, when
// several remain, the one the first comparison finds slowest (fixed from then on).
class revision_measure final : public pair_measure {
 public:
  explicit revision_measure(bisect_setup setup, std::function<void(const std::string&)> log = {});
  step_estimate compare(std::size_t base, std::size_t head) override;
  const std::optional<config_key>& key() const { return key_; }
  const bisect_setup& setup() const { return setup_; }

 private:
  struct pair_files {
    std::string head;
    std::string base;
  };
  pair_files files_for(std::size_t base, std::size_t head) const;
  std::optional<std::pair<run_document, run_document>> cached(const pair_files& files, std::size_t base,
                                                              std::size_t head) const;
  std::pair<run_document, run_document> measure(const pair_files& files, std::size_t base, std::size_t head);
  step_estimate estimate(const run_document& base, const run_document& head, std::size_t head_index);

  bisect_setup setup_;
  std::function<void(const std::string&)> log_;
  std::optional<config_key> key_;
};

// The command that measures `culprit` against its parent as bisect did, run in a checkout of the culprit.
std::string repro_command(const bisect_setup& setup, const config_key& key, const std::string& parent);

}  // namespace rnx::gate
