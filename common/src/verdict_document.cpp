// Names of decisions and answers, gate policy validation, and the verdict document's JSON form.
#include "rnx/common/verdict_document.hpp"

#include "rnx/common/enum_names.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/manifest_keys.hpp"

#include <cctype>
#include <sstream>

namespace rnx {

namespace bj = boost::json;

std::string_view to_string(decision d) {
  switch (d) {
    case decision::faster: return "faster";
    case decision::slower: return "slower";
    case decision::equivalent: return "equivalent";
    case decision::abstain: return "abstain";
    case decision::new_config: return "new";
    case decision::missing: return "missing";
    case decision::broken: return "broken";
  }
  return "abstain";
}

std::string_view to_string(overall o) {
  switch (o) {
    case overall::pass: return "PASS";
    case overall::warn: return "WARN";
    case overall::block: return "BLOCK";
  }
  return "WARN";
}

std::string_view to_string(statistic s) { return s == statistic::mean ? "mean" : "median"; }

std::optional<decision> decision_from_string(std::string_view s) {
  return enum_from_name(s, {decision::faster, decision::slower, decision::equivalent, decision::abstain,
                            decision::new_config, decision::missing, decision::broken});
}

namespace {

std::string lower_case(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::optional<overall> overall_from_string(std::string_view s) {
  // The manifest's on_abstain is written in lower case ("warn"); the documents carry the upper-case answer.
  for (auto o : {overall::pass, overall::warn, overall::block}) {
    if (to_string(o) == s || lower_case(to_string(o)) == s) return o;
  }
  return std::nullopt;
}

std::optional<statistic> statistic_from_string(std::string_view s) {
  return enum_from_name(s, {statistic::median, statistic::mean});
}

std::string_view to_string(baseline_kind k) {
  switch (k) {
    case baseline_kind::unknown: return "";
    case baseline_kind::push: return "push";
    case baseline_kind::accepted: return "accepted";
  }
  return "";
}

std::optional<baseline_kind> baseline_kind_from_string(std::string_view text) {
  return enum_from_name(text, {baseline_kind::push, baseline_kind::accepted});
}

void validate(const gate_policy& p) {
  // The ranges are the [gate] keys' (manifest_keys.cpp): one range whether a value came from rnx.toml, a flag or
  // a request.
  const auto check = [](double v, std::string_view name) {
    const manifest_key* key = find_manifest_key("gate", name);
    if (key && key->range && !in_range(*key->range, v)) {
      std::ostringstream got;
      got << v;
      throw error(errc::usage, "gate." + std::string(name) + " must be a " + manifest_key_type_text(*key) + " (e.g. " +
                                   std::string(key->default_text) + "); got " + got.str());
    }
  };
  check(p.rope, "rope");
  check(p.probability, "probability");
  check(p.min_samples, "min_samples");
  check(p.resamples, "resamples");
}

namespace {

void put_optional(bj::object& o, const char* key, const std::optional<double>& v) {
  if (v) {
    o[key] = *v;
  } else {
    o[key] = nullptr;
  }
}

std::optional<double> optional_number(const json::reader& r, std::string_view key) {
  auto m = r.maybe(key);
  if (!m) return std::nullopt;
  return m->number();
}

}  // namespace

bj::value to_json(const verdict_document& v) {
  bj::object doc;
  doc["schema"] = verdict_schema_id;
  doc["verdict"] = to_string(v.verdict);
  doc["reason"] = v.reason;
  if (v.baseline) {
    doc["baseline"] =
        bj::object{{"id", v.baseline->id}, {"commit", v.baseline->commit}, {"created_at", v.baseline->created_at}};
  } else {
    doc["baseline"] = nullptr;
  }
  doc["head_run_id"] = v.head_run_id;
  doc["env_id"] = v.env_id;
  doc["policy"] = bj::object{{"rope", v.policy.rope},
                             {"probability", v.policy.probability},
                             {"min_samples", v.policy.min_samples},
                             {"resamples", v.policy.resamples},
                             {"statistic", to_string(v.policy.stat)},
                             {"on_abstain", to_string(v.policy.on_abstain)},
                             {"report_only", v.policy.report_only}};
  bj::array configs;
  for (const auto& c : v.configs) {
    bj::object o;
    o["kernel"] = c.key.kernel;
    o["runtime"] = c.key.runtime;
    o["dtype"] = c.key.dtype;
    o["batch"] = c.key.batch;
    o["decision"] = to_string(c.result);
    put_optional(o, "ratio", c.ratio);
    if (c.ci_lo && c.ci_hi) {
      o["ci95"] = bj::array{*c.ci_lo, *c.ci_hi};
    } else {
      o["ci95"] = nullptr;
    }
    put_optional(o, "p_faster", c.p_faster);
    put_optional(o, "p_slower", c.p_slower);
    put_optional(o, "p_equivalent", c.p_equivalent);
    put_optional(o, "base_ms", c.base_ms);
    put_optional(o, "head_ms", c.head_ms);
    o["n_base"] = c.n_base;
    o["n_head"] = c.n_head;
    o["reason"] = c.reason;
    put_optional(o, "mde", c.mde);
    if (c.pairing != pairing_mode::none) o["pairing"] = to_string(c.pairing);
    if (c.threshold) o["threshold"] = *c.threshold;
    if (c.beyond_physics) o["beyond_physics"] = true;
    if (c.base_unstable) o["base_unstable"] = true;
    if (c.head_unstable) o["head_unstable"] = true;
    if (c.explanation) o["explanation"] = to_json(*c.explanation);
    configs.push_back(std::move(o));
  }
  doc["configs"] = std::move(configs);
  return doc;
}

verdict_document verdict_from_json(const bj::value& v, std::string_view source) {
  json::reader r(v, std::string(source));
  auto schema = r.at("schema");
  if (schema.string() != verdict_schema_id) schema.fail("\"rnx.verdict/v1\"");
  verdict_document doc;
  auto verdict = r.at("verdict");
  auto o = overall_from_string(verdict.string());
  if (!o) verdict.fail("one of \"PASS\", \"WARN\", \"BLOCK\"");
  doc.verdict = *o;
  doc.reason = r.string_or("reason", "");
  if (auto b = r.maybe("baseline")) {
    doc.baseline = baseline_ref{b->string("id"), b->string_or("commit", ""), b->string_or("created_at", "")};
  }
  doc.head_run_id = r.string_or("head_run_id", "");
  doc.env_id = r.string_or("env_id", "");
  if (auto p = r.maybe("policy")) {
    doc.policy.rope = p->number("rope");
    doc.policy.probability = p->number("probability");
    doc.policy.min_samples = static_cast<int>(p->integer("min_samples"));
    doc.policy.resamples = static_cast<int>(p->integer("resamples"));
    auto stat = p->at("statistic");
    auto s = statistic_from_string(stat.string());
    if (!s) stat.fail("\"median\" or \"mean\"");
    doc.policy.stat = *s;
    auto abstain = p->at("on_abstain");
    auto a = overall_from_string(abstain.string());
    if (!a) abstain.fail("one of PASS, WARN, BLOCK");
    doc.policy.on_abstain = *a;
    doc.policy.report_only = p->at("report_only").boolean();
  }
  auto configs = r.at("configs");
  for (std::size_t i = 0; i < configs.array().size(); ++i) {
    auto c = configs.at(i);
    config_verdict cv;
    cv.key = {c.string("kernel"), c.string("runtime"), c.string("dtype"), c.integer("batch")};
    auto d = c.at("decision");
    auto parsed = decision_from_string(d.string());
    if (!parsed) d.fail("one of faster, slower, equivalent, abstain, new, missing, broken");
    cv.result = *parsed;
    cv.ratio = optional_number(c, "ratio");
    if (auto ci = c.maybe("ci95")) {
      cv.ci_lo = ci->at(std::size_t{0}).number();
      cv.ci_hi = ci->at(std::size_t{1}).number();
    }
    cv.p_faster = optional_number(c, "p_faster");
    cv.p_slower = optional_number(c, "p_slower");
    cv.p_equivalent = optional_number(c, "p_equivalent");
    cv.base_ms = optional_number(c, "base_ms");
    cv.head_ms = optional_number(c, "head_ms");
    cv.n_base = c.integer("n_base");
    cv.n_head = c.integer("n_head");
    cv.reason = c.string_or("reason", "");
    cv.mde = optional_number(c, "mde");
    if (auto p = c.maybe("pairing")) {
      const std::optional<pairing_mode> mode = pairing_mode_from_string(p->string());
      if (!mode) p->fail("\"in-process\" or \"process\"");
      cv.pairing = *mode;
    }
    cv.threshold = optional_number(c, "threshold");
    if (auto b = c.maybe("beyond_physics")) cv.beyond_physics = b->boolean();
    if (auto b = c.maybe("base_unstable")) cv.base_unstable = b->boolean();
    if (auto b = c.maybe("head_unstable")) cv.head_unstable = b->boolean();
    if (auto e = c.maybe("explanation")) cv.explanation = explanation_from_json(e->value(), std::string(source));
    doc.configs.push_back(std::move(cv));
  }
  return doc;
}

}  // namespace rnx
