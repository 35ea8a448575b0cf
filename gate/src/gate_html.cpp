// `rnx gate`'s report.html, from the store's pages or from the documents in hand.
#include "gate_html.hpp"

#include "gate_report.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/text.hpp"
#include "rnx/service/pages.hpp"

#include <iostream>
#include <system_error>
#include <vector>

namespace rnx::gate {

void write_html_report(const std::filesystem::path& path, const html_sources& sources,
                       const verdict_document& verdict) {
  const run_document& head = sources.head;
  const std::optional<run_document>& base = sources.base;
  std::vector<pages::page> report;
  if (sources.backend && sources.upload && !sources.paired) {
    try {
      report = sources.backend->report_pages(head.project, sources.upload->id);
    } catch (const error& e) {
      std::cout << "rnx gate: report.html shows this job's documents only: " << terminal_safe(e.what()) << "\n";
    }
  }
  if (report.empty()) {
    pages::link_style links;
    links.report = true;
    auto data = pages::run_data(head, sources.upload ? sources.upload->id : "local", base ? &*base : nullptr,
                                base ? "base" : "", &verdict);
    report.push_back(pages::run_page(data, links));
  }
  const std::filesystem::path temp = path.string() + ".tmp";
  write_report_file(temp, pages::render_report(report, head.project + " " + head.commit.substr(0, 12)));
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) throw error(errc::usage, "cannot write " + path.string() + ": " + ec.message());
}

}  // namespace rnx::gate
