// Shards of a suite: parsing K/N and run groups, the balanced split, and the merge of a group's run documents.
#include "rnx/common/shard.hpp"

#include "rnx/common/enum_names.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/order_statistics.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <numeric>
#include <set>

namespace rnx {

namespace bj = boost::json;

std::string_view to_string(shard_balance b) {
  switch (b) {
    case shard_balance::cost: return "cost";
    case shard_balance::count: return "count";
  }
  return "count";
}

std::optional<shard_balance> shard_balance_from_string(std::string_view text) {
  return enum_from_name(text, {shard_balance::cost, shard_balance::count});
}

namespace {

std::optional<std::int64_t> whole_number(std::string_view text) {
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return n;
}

}  // namespace

shard_spec parse_shard(std::string_view text, std::string_view flag) {
  const auto slash = text.find('/');
  const auto fail = [&](const std::string& why) -> shard_spec {
    throw error(errc::usage, std::string(flag) + " " + std::string(text) + ": " + why +
                                 " (write K/N: this job's shard K of N, e.g. 2/4; from 1 to N, N at most " +
                                 std::to_string(max_shards) + ")");
  };
  if (slash == std::string_view::npos) return fail("no '/'");
  auto k = whole_number(text.substr(0, slash));
  auto n = whole_number(text.substr(slash + 1));
  if (!k || !n) return fail("K and N must be whole numbers");
  if (*n < 1 || *n > max_shards) return fail("N out of range");
  if (*k < 1 || *k > *n) return fail("K out of range");
  return {*k, *n};
}

void validate_run_group(std::string_view group, std::string_view what) {
  const bool ok_chars = std::all_of(group.begin(), group.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
  if (group.empty() || group.size() > 200 || !ok_chars || group.front() == '.') {
    throw error(errc::usage, std::string(what) + " \"" + std::string(group) +
                                 "\": a run group is 1-200 characters of A-Z a-z 0-9 . _ - (not starting with '.'), "
                                 "e.g. COMMIT-RUN_ID-ATTEMPT");
  }
}

std::string github_run_group(std::string_view sha, std::string_view run_id, std::string_view attempt) {
  if (sha.empty() || run_id.empty() || attempt.empty()) return {};
  return std::string(sha) + "-" + std::string(run_id) + "-" + std::string(attempt);
}

shard_split split_shards(const std::vector<config_key>& keys, const std::map<config_key, double>& costs,
                         std::int64_t count) {
  shard_split out;
  out.shard_of.assign(keys.size(), 1);
  std::vector<double> known;
  for (const auto& k : keys) {
    if (auto it = costs.find(k); it != costs.end() && it->second > 0) known.push_back(it->second);
  }
  double unknown_cost = 1;
  if (!known.empty()) {
    out.balanced_by = shard_balance::cost;
    unknown_cost = upper_median(std::move(known));
  }
  std::vector<double> cost(keys.size(), unknown_cost);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (auto it = costs.find(keys[i]); it != costs.end() && it->second > 0) cost[i] = it->second;
  }
  std::vector<std::size_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0);
  // Longest first; equal costs in key order, so every job of the matrix computes the same split.
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (cost[a] != cost[b]) return cost[a] > cost[b];
    return keys[a] < keys[b];
  });
  std::vector<double> load(static_cast<std::size_t>(count), 0);
  std::vector<std::size_t> members(static_cast<std::size_t>(count), 0);
  for (std::size_t i : order) {
    std::size_t best = 0;
    for (std::size_t s = 1; s < load.size(); ++s) {
      // An empty shard first (so no shard is left without work while another has two), then the least loaded.
      const bool emptier = (members[s] == 0) != (members[best] == 0) ? members[s] == 0 : load[s] < load[best];
      if (emptier) best = s;
    }
    load[best] += cost[i];
    ++members[best];
    out.shard_of[i] = static_cast<std::int64_t>(best) + 1;
  }
  return out;
}

std::map<config_key, double> costs_from_run(const run_document& run) {
  std::map<config_key, double> out;
  for (const auto& r : run.results) {
    double sum = 0;
    for (double s : r.samples_ms) sum += s;
    if (sum > 0) out[r.key()] = sum;
  }
  return out;
}

std::vector<config_key> configs_of_shard(const shard_info& info, std::int64_t shard) {
  std::vector<config_key> out;
  for (const auto& [key, s] : info.assignment) {
    if (s == shard) out.push_back(key);
  }
  return out;
}

namespace {

std::string shard_label(std::int64_t k, std::int64_t n) { return std::to_string(k) + "/" + std::to_string(n); }

// The group, N, split and filing of `doc` agree with `first`; rnx::error(invalid) naming both shards otherwise.
void check_same_group(const run_document& first, const run_document& doc, std::string_view source) {
  const shard_info& a = *first.shard;
  const shard_info& b = *doc.shard;
  const std::string both =
      std::string(source) + ": shards " + shard_label(a.index, a.count) + " and " + shard_label(b.index, b.count);
  if (a.group != b.group) {
    throw error(errc::invalid, both + " belong to different run groups (" + a.group + ", " + b.group +
                                   "): merge the documents of one workflow run attempt only");
  }
  if (a.count != b.count) throw error(errc::invalid, both + " disagree on the number of shards");
  if (a.assignment != b.assignment) {
    throw error(errc::invalid, both +
                                   " disagree on the split of the suite: run every shard with the same "
                                   "manifest, filters and --shard-costs");
  }
  if (first.project != doc.project || first.commit != doc.commit || first.branch != doc.branch ||
      first.base_branch != doc.base_branch || first.pull_request != doc.pull_request) {
    throw error(errc::invalid, both + " name different projects, commits, branches or pull requests");
  }
  if (first.env.env_id != doc.env.env_id) {
    throw error(errc::invalid, both + " ran in different environments (" + first.env.env_id + ", " + doc.env.env_id +
                                   "): a verdict compares one environment; run every shard of the "
                                   "matrix on the same runner type");
  }
  const std::string side_a = first.pairing ? std::string(to_string(first.pairing->side)) : "";
  const std::string side_b = doc.pairing ? std::string(to_string(doc.pairing->side)) : "";
  if (side_a != side_b) {
    throw error(errc::invalid, both + " are different sides of a paired run (" + (side_a.empty() ? "-" : side_a) +
                                   ", " + (side_b.empty() ? "-" : side_b) + "): merge the heads and the bases apart");
  }
  if (first.pairing && first.pairing->block != doc.pairing->block) {
    throw error(errc::invalid, both + " were paired in blocks of different sizes");
  }
}

}  // namespace

shard_merge merge_shards(const std::vector<run_document>& shards, std::string_view source) {
  if (shards.empty()) throw error(errc::usage, std::string(source) + ": no run documents to merge");
  std::map<std::int64_t, const run_document*> by_index;
  for (const auto& doc : shards) {
    if (!doc.shard) {
      throw error(errc::invalid, std::string(source) + ": a run of " + doc.project + " at " + doc.commit +
                                     " is not a shard (it has no \"shard\"; write it with rnx bench --shard K/N)");
    }
    check_same_group(shards.front(), doc, source);
    auto [it, fresh] = by_index.emplace(doc.shard->index, &doc);
    if (!fresh && to_json(*it->second).as_object().at("results") != to_json(doc).as_object().at("results")) {
      throw error(errc::conflict, std::string(source) + ": shard " + shard_label(doc.shard->index, doc.shard->count) +
                                      " of run group " + doc.shard->group + " given twice with different results");
    }
  }
  const run_document& first = *by_index.begin()->second;
  shard_merge out;
  out.group = first.shard->group;
  out.count = first.shard->count;
  out.merged = first;
  out.merged.shard.reset();
  out.merged.results.clear();
  if (out.merged.pairing) {
    // One pairing id for the merged sides of the group; the looks of the most cautious shard.
    out.merged.pairing->id = "group:" + out.group;
    for (const auto& [k, doc] : by_index)
      out.merged.pairing->looks = std::max(out.merged.pairing->looks, doc->pairing->looks);
  }
  std::map<config_key, const run_result*> results;
  for (const auto& [k, doc] : by_index) {
    out.arrived.push_back(k);
    for (const auto& r : doc->results) results[r.key()] = &r;
    if (doc->created_at > out.merged.created_at) out.merged.created_at = doc->created_at;
  }
  for (std::int64_t k = 1; k <= out.count; ++k) {
    if (!by_index.count(k)) out.missing.push_back(k);
  }
  for (const auto& [key, shard] : first.shard->assignment) {
    if (!by_index.count(shard)) {
      out.missing_configs.emplace_back(key, shard);
    } else if (auto it = results.find(key); it != results.end()) {
      out.merged.results.push_back(*it->second);
    }
  }
  return out;
}

std::string missing_shards_text(const shard_merge& merge) {
  if (merge.missing.empty()) return {};
  std::string names;
  for (std::size_t i = 0; i < merge.missing.size(); ++i) {
    names += (i ? ", " : "") + shard_label(merge.missing[i], merge.count);
  }
  const std::size_t n = merge.missing_configs.size();
  return std::string(merge.missing.size() == 1 ? "shard " : "shards ") + names + " of run group " + merge.group +
         " did not arrive: " + std::to_string(n) + " configuration" + (n == 1 ? " was" : "s were") + " not measured";
}

shard_info shard_from_json(const json::reader& r) {
  r.only_keys({"index", "count", "group", "balanced_by", "assignment"});
  shard_info info;
  auto count = r.at("count");
  info.count = count.integer();
  if (info.count < 1 || info.count > max_shards)
    count.fail("a number of shards from 1 to " + std::to_string(max_shards));
  auto index = r.at("index");
  info.index = index.integer();
  if (info.index < 1 || info.index > info.count) index.fail("a shard index from 1 to count");
  auto group = r.at("group");
  info.group = group.string();
  try {
    validate_run_group(info.group, "group");
  } catch (const error& e) {
    group.fail(e.what());
  }
  auto balance = r.at("balanced_by");
  const std::optional<shard_balance> how = shard_balance_from_string(balance.string());
  if (!how) balance.fail("\"cost\" or \"count\"");
  info.balanced_by = *how;
  auto assignment = r.at("assignment");
  std::set<config_key> seen;
  for (std::size_t i = 0; i < assignment.array().size(); ++i) {
    auto item = assignment.at(i);
    item.only_keys({"kernel", "runtime", "dtype", "batch", "shard"});
    config_key key{item.string("kernel"), item.string("runtime"), item.string("dtype"), item.integer("batch")};
    auto shard = item.at("shard");
    const std::int64_t s = shard.integer();
    if (s < 1 || s > info.count) shard.fail("a shard from 1 to count");
    if (!seen.insert(key).second) item.fail("each configuration once (" + key.label() + " repeats)");
    info.assignment.emplace_back(std::move(key), s);
  }
  if (configs_of_shard(info, info.index).empty()) {
    assignment.fail("an assignment that gives shard " + std::to_string(info.index) + " a configuration");
  }
  return info;
}

bj::value to_json(const shard_info& info) {
  bj::array assignment;
  for (const auto& [key, shard] : info.assignment) {
    assignment.push_back(bj::object{{"kernel", key.kernel},
                                    {"runtime", key.runtime},
                                    {"dtype", key.dtype},
                                    {"batch", key.batch},
                                    {"shard", shard}});
  }
  return bj::object{{"index", info.index},
                    {"count", info.count},
                    {"group", info.group},
                    {"balanced_by", to_string(info.balanced_by)},
                    {"assignment", std::move(assignment)}};
}

void check_shard_results(const run_document& run, std::string_view source) {
  std::set<config_key> mine;
  for (const auto& key : configs_of_shard(*run.shard, run.shard->index)) mine.insert(key);
  for (std::size_t i = 0; i < run.results.size(); ++i) {
    if (!mine.count(run.results[i].key())) {
      throw error(errc::invalid, std::string(source) + ": $.results[" + std::to_string(i) +
                                     "]: " + run.results[i].key().label() + " is not in shard " +
                                     shard_label(run.shard->index, run.shard->count) + " of $.shard.assignment");
    }
  }
}

}  // namespace rnx
