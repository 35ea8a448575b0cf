// JSON form of worker jobs; the orchestrator writes it to a file the worker reads.
#include "worker_protocol.hpp"

#include "rnx/common/json.hpp"

namespace rnx::runner::detail {

namespace bj = boost::json;

bj::value to_json(const worker_job& job) {
  bj::object o;
  o["manifest"] = job.manifest;
  if (!job.base_manifest.empty()) o["base_manifest"] = job.base_manifest;
  o["pairing_seed"] = job.pairing_seed;
  o["cuda_arch"] = job.cuda_arch;
  o["cache_dir"] = job.cache_dir;
  o["fingerprint_device"] = job.fingerprint_device;
  o["device_override"] = job.device_override;
  if (!job.cores.empty()) {
    bj::array cores;
    for (int c : job.cores) cores.push_back(c);
    o["cores"] = std::move(cores);
  }
  bj::object ov;
  if (job.overrides.min_samples) ov["min_samples"] = *job.overrides.min_samples;
  if (job.overrides.max_samples) ov["max_samples"] = *job.overrides.max_samples;
  if (job.overrides.budget_ms) ov["budget_ms"] = *job.overrides.budget_ms;
  if (job.overrides.warmup_ms) ov["warmup_ms"] = *job.overrides.warmup_ms;
  o["overrides"] = std::move(ov);
  bj::array configs;
  for (const auto& c : job.configs) {
    bj::object config{{"index", c.index}, {"kernel", c.kernel}, {"runtime", c.runtime}, {"dtype", c.dtype},
                      {"batch", c.batch}, {"check", c.check}};
    if (c.base_index) {
      config["base_index"] = *c.base_index;
      config["check_base"] = c.check_base;
      config["base_first"] = c.base_first;
    }
    if (c.budget_ms) config["budget_ms"] = *c.budget_ms;
    if (c.max_samples) config["max_samples"] = *c.max_samples;
    configs.push_back(std::move(config));
  }
  o["configs"] = std::move(configs);
  return o;
}

worker_job job_from_json(const bj::value& v) {
  json::reader r(v, "worker job");
  worker_job job;
  job.manifest = r.string("manifest");
  job.base_manifest = r.string_or("base_manifest", "");
  if (auto seed = r.maybe("pairing_seed")) job.pairing_seed = seed->value().to_number<std::uint64_t>();
  job.cuda_arch = r.string_or("cuda_arch", "");
  job.cache_dir = r.string_or("cache_dir", "");
  job.fingerprint_device = r.string_or("fingerprint_device", "auto");
  job.device_override = r.string_or("device_override", "");
  if (auto cores = r.maybe("cores")) {
    for (std::size_t i = 0; i < cores->array().size(); ++i) {
      job.cores.push_back(static_cast<int>(cores->at(i).integer()));
    }
  }
  if (auto ov = r.maybe("overrides")) {
    if (auto x = ov->maybe("min_samples")) job.overrides.min_samples = static_cast<int>(x->integer());
    if (auto x = ov->maybe("max_samples")) job.overrides.max_samples = static_cast<int>(x->integer());
    if (auto x = ov->maybe("budget_ms")) job.overrides.budget_ms = x->number();
    if (auto x = ov->maybe("warmup_ms")) job.overrides.warmup_ms = x->number();
  }
  auto configs = r.at("configs");
  for (std::size_t i = 0; i < configs.array().size(); ++i) {
    auto c = configs.at(i);
    job_config jc;
    jc.index = static_cast<std::size_t>(c.integer("index"));
    jc.kernel = c.string("kernel");
    jc.runtime = c.string("runtime");
    jc.dtype = c.string("dtype");
    jc.batch = c.integer("batch");
    jc.check = c.at("check").boolean();
    if (auto b = c.maybe("base_index")) {
      jc.base_index = static_cast<std::size_t>(b->integer());
      jc.check_base = c.at("check_base").boolean();
      if (auto f = c.maybe("base_first")) jc.base_first = f->boolean();
    }
    if (auto x = c.maybe("budget_ms")) jc.budget_ms = x->number();
    if (auto x = c.maybe("max_samples")) jc.max_samples = static_cast<int>(x->integer());
    job.configs.push_back(std::move(jc));
  }
  return job;
}

}  // namespace rnx::runner::detail
