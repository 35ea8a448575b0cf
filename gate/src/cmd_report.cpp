// `rnx report`: the pages rnx-server serves, written as one self-contained HTML file (an artifact for CI), from the
// embedded store or from run and verdict files.
#include "commands.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/service/pages.hpp"
#include "rnx/service/store.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>

namespace rnx::cli {

namespace {

struct report_options {
  std::string store;
  std::string project;
  std::int64_t run_id = 0;
  std::string head;
  std::string base;
  std::string verdict;
  std::string out = "rnx-report.html";
  bool proof = false;
};

// Written to a temporary beside the target and renamed: a reader never sees half a report.
void write_report(const std::vector<pages::page>& report, const std::string& title, const std::string& path) {
  const std::string html = pages::render_report(report, title);
  const std::filesystem::path out(path);
  const std::filesystem::path temp = out.string() + ".tmp";
  {
    std::ofstream f(temp, std::ios::binary | std::ios::trunc);
    f << html;
    if (!f) throw error(errc::usage, "cannot write " + temp.string() + "; pass --out with a writable path");
  }
  std::error_code ec;
  std::filesystem::rename(temp, out, ec);
  if (ec) throw error(errc::usage, "cannot write " + out.string() + ": " + ec.message());
  std::cout << "rnx report: wrote " << out.string() << " (" << report.size() << " page"
            << (report.size() == 1 ? "" : "s") << ", " << html.size() / 1024 << " kB, self-contained)\n";
}

void run_report(const report_options& o) {
  const bool from_store = !o.store.empty();
  const bool from_files = !o.head.empty();
  if (from_store == from_files) {
    throw error(errc::usage,
                "name one source: --store FILE --project NAME [--run-id ID] (the embedded store), or "
                "--head RUN.json [--base BASE.json] [--verdict VERDICT.json] (files)");
  }
  std::vector<pages::page> report;
  std::string title;
  if (from_store) {
    if (o.project.empty()) throw error(errc::usage, "--store needs --project NAME (the project to report)");
    if (!std::filesystem::exists(o.store)) {
      throw error(errc::not_found, o.store + ": no such store; pass the --store file `rnx gate` wrote");
    }
    store::database db(o.store);
    auto project = db.find_project(o.project);
    if (!project) throw error(errc::not_found, "project \"" + o.project + "\" is not in " + o.store);
    const auto wanted = o.run_id > 0 ? std::optional<std::int64_t>(o.run_id) : std::nullopt;
    if (o.proof) {
      const std::int64_t id = pages::reported_run(db, *project, wanted);
      report.push_back(pages::proof_page(pages::proof_data(db.find_run(id)->document, std::to_string(id))));
    } else {
      report = pages::report_pages(db, *project, wanted);
    }
    title = o.project;
  } else {
    if (!o.project.empty() || o.run_id > 0) {
      throw error(errc::usage, "--project and --run-id choose from a store; with --head they do not apply");
    }
    auto head = read_run_file(o.head);
    if (o.proof) {
      if (!o.base.empty() || !o.verdict.empty()) {
        throw error(errc::usage, "--proof shows one run: pass --head RUN.json without --base and --verdict");
      }
      report.push_back(pages::proof_page(pages::proof_data(head, "local")));
      write_report(report, head.project + " " + head.commit.substr(0, 12) + " speed of light", o.out);
      return;
    }
    std::optional<run_document> base;
    if (!o.base.empty()) base = read_run_file(o.base);
    std::optional<verdict_document> verdict;
    if (!o.verdict.empty()) verdict = verdict_from_json(json::parse_file(o.verdict), o.verdict);
    const std::string id = verdict && !verdict->head_run_id.empty() ? verdict->head_run_id : "local";
    auto data = pages::run_data(head, id, base ? &*base : nullptr, base ? "base" : "", verdict ? &*verdict : nullptr);
    pages::link_style links;
    links.report = true;
    report.push_back(pages::run_page(data, links));
    title = head.project + " " + head.commit.substr(0, 12);
  }
  write_report(report, title, o.out);
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto o = std::make_shared<report_options>();
  auto* cmd = app.add_subcommand("report", "Write the overview, history and run pages as one self-contained HTML file");
  cmd->add_option("--store", o->store, "The embedded store (SQLite file) to report from");
  cmd->add_option("--project", o->project, "With --store: the project");
  cmd->add_option("--run-id", o->run_id, "With --store: the run whose evidence to show (default: the newest)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--head", o->head, "A run document (rnx.run/v1) to report instead of a store");
  cmd->add_option("--base", o->base, "With --head: the base run it was compared with (its samples are drawn beside)");
  cmd->add_option("--verdict", o->verdict, "With --head: the verdict (rnx.verdict/v1) of head against base");
  cmd->add_option("--out,-o", o->out, "The HTML file to write")->capture_default_str();
  cmd->add_flag("--proof", o->proof,
                "Write the speed-of-light page of one run (--head, or --store's --run-id / newest) instead, refusing "
                "with the reasons unless it was measured with locked clocks, the L2 flushed and the peaks measured");
  cmd->callback([o] { run_report(*o); });
}

}  // namespace rnx::cli
