// The store's side of sharded runs: a run group's shard documents, held until the group is formed into one run.
#include "rnx/service/store.hpp"

#include "store_statement.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"

#include <sqlite3.h>

#include <chrono>

namespace rnx::store {

using detail::transaction;

namespace {

std::string shard_name(std::int64_t k, std::int64_t n) { return std::to_string(k) + "/" + std::to_string(n); }

}  // namespace

run_group_record database::store_shard(std::int64_t project_id, const run_document& shard) {
  if (!shard.shard) throw error(errc::internal, "store_shard: the run document is not a shard");
  const shard_info& info = *shard.shard;
  const std::string document = json::serialize(to_json(shard));
  const std::string digest = sha256_hex(document);
  const std::string now = now_text();
  {
    std::lock_guard lock(mutex_);
    transaction tx(db_);
    auto& find = prepare("SELECT id, shard_count, run_id FROM run_groups WHERE project_id = ?1 AND run_group = ?2");
    find.bind(1, project_id).bind(2, std::string_view(info.group));
    std::int64_t group_id = 0;
    if (find.step()) {
      group_id = find.integer(0);
      const std::int64_t count = find.integer(1);
      const bool formed = !find.is_null(2);
      const std::int64_t run_id = formed ? find.integer(2) : 0;
      find.restart();
      if (count != info.count) {
        throw error(errc::conflict, "run group " + info.group + " has " + std::to_string(count) + " shards, and " +
                                        "this shard says " + shard_name(info.index, info.count) +
                                        ": every shard of one run names the same N");
      }
      auto& held = prepare("SELECT digest FROM shard_uploads WHERE group_id = ?1 AND shard_index = ?2");
      held.bind(1, group_id).bind(2, info.index);
      if (held.step()) {
        const bool same = held.text(0) == digest;
        held.restart();
        if (!same) {
          throw error(errc::conflict, "run group " + info.group + " holds another document for shard " +
                                          shard_name(info.index, info.count) +
                                          ": a re-run of a workflow is a new attempt, so a new run group");
        }
        tx.commit();
        return *find_run_group_locked(project_id, info.group);
      }
      if (formed) {
        throw error(errc::conflict, "run group " + info.group + " was formed as run " + std::to_string(run_id) +
                                        " without shard " + shard_name(info.index, info.count) +
                                        " (it arrived after the group's timeout; its verdict names the shard's "
                                        "configurations as not measured): re-run the workflow for a verdict over "
                                        "every shard");
      }
    } else {
      find.restart();
      auto& make = prepare(
          "INSERT INTO run_groups (project_id, run_group, shard_count, first_received, first_received_at) "
          "VALUES (?1, ?2, ?3, ?4, ?5)");
      make.bind(1, project_id).bind(2, std::string_view(info.group)).bind(3, info.count).bind(4, now_unix());
      make.bind(5, std::string_view(now)).run();
      group_id = sqlite3_last_insert_rowid(db_);
    }
    auto& ins = prepare(
        "INSERT INTO shard_uploads (group_id, shard_index, digest, document, received_at) VALUES (?1, ?2, ?3, ?4, ?5)");
    ins.bind(1, group_id).bind(2, info.index).bind(3, std::string_view(digest)).bind(4, std::string_view(document));
    ins.bind(5, std::string_view(now)).run();
    tx.commit();
    return *find_run_group_locked(project_id, info.group);
  }
}

std::optional<run_group_record> database::find_run_group(std::int64_t project_id, std::string_view group) {
  std::lock_guard lock(mutex_);
  return find_run_group_locked(project_id, group);
}

std::optional<run_group_record> database::find_run_group_locked(std::int64_t project_id, std::string_view group) {
  auto& st = prepare(
      "SELECT id, run_group, shard_count, first_received, first_received_at, run_id, formed_at FROM run_groups "
      "WHERE project_id = ?1 AND run_group = ?2");
  st.bind(1, project_id).bind(2, group);
  if (!st.step()) return std::nullopt;
  const std::int64_t group_id = st.integer(0);
  run_group_record out;
  out.group = st.text(1);
  out.count = st.integer(2);
  out.first_received = st.integer(3);
  out.first_received_at = st.text(4);
  if (!st.is_null(5)) out.run_id = st.integer(5);
  if (!st.is_null(6)) out.formed_at = st.text(6);
  st.restart();
  auto& shards = prepare("SELECT shard_index FROM shard_uploads WHERE group_id = ?1 ORDER BY shard_index");
  shards.bind(1, group_id);
  while (shards.step()) out.arrived.push_back(shards.integer(0));
  return out;
}

std::vector<run_document> database::shard_documents(std::int64_t project_id, std::string_view group) {
  std::vector<std::string> texts;
  {
    std::lock_guard lock(mutex_);
    auto& st = prepare(
        "SELECT s.document FROM shard_uploads s JOIN run_groups g ON g.id = s.group_id "
        "WHERE g.project_id = ?1 AND g.run_group = ?2 ORDER BY s.shard_index");
    st.bind(1, project_id).bind(2, group);
    while (st.step()) texts.push_back(st.text(0));
  }
  std::vector<run_document> out;
  out.reserve(texts.size());
  for (const auto& text : texts) {
    out.push_back(run_from_json(json::parse(text, "stored shard"), "stored shard", kernel_names::as_stored));
  }
  return out;
}

void database::mark_group_formed(std::int64_t project_id, std::string_view group, std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  transaction tx(db_);
  auto& st = prepare("SELECT run_id FROM run_groups WHERE project_id = ?1 AND run_group = ?2");
  st.bind(1, project_id).bind(2, group);
  if (!st.step()) throw error(errc::not_found, "run group " + std::string(group) + " does not exist");
  if (!st.is_null(0)) {
    const std::int64_t formed = st.integer(0);
    st.restart();
    throw error(errc::conflict, "run group " + std::string(group) + " was formed as run " + std::to_string(formed));
  }
  st.restart();
  auto& set = prepare("UPDATE run_groups SET run_id = ?3, formed_at = ?4 WHERE project_id = ?1 AND run_group = ?2");
  set.bind(1, project_id).bind(2, group).bind(3, run_id).bind(4, std::string_view(now_text())).run();
  tx.commit();
}

std::optional<std::int64_t> database::find_run_by_document(std::int64_t project_id, const run_document& run) {
  // The digest insert_run stores: over Boost.JSON's own serialization of the document.
  const std::string digest = sha256_hex(boost::json::serialize(to_json(run)));
  std::lock_guard lock(mutex_);
  auto& st = prepare("SELECT id FROM runs WHERE project_id = ?1 AND digest = ?2");
  st.bind(1, project_id).bind(2, std::string_view(digest));
  if (!st.step()) return std::nullopt;
  const std::int64_t id = st.integer(0);
  st.restart();
  return id;
}

}  // namespace rnx::store
