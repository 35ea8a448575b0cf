// The shipped change-point detector driven over simulated histories (bench/changepoint_sim.py writes them).
//
// stdin: one history a line, each run as "log_stat,log_se" separated by spaces, oldest first.
// stdout: one line per history, the change points the store would have stored and announced, as the store does it:
// after each run the history so far is scanned and the changes not yet known (rnx::stats::unknown_changes) are
// stored. Each is "look index ratio ci_lo ci_hi probability" (look: the newest run's index when it was found),
// separated by ';'. Usage: changepoint_sim [--penalty X] [--widening W] [--residual-widening W] [--second-pass 0|1]
// [--probability P] [--min-effect E] [--hazard H] [--step-sd S] [--min-segment N] < histories.txt
#include "rnx/stats/changepoint.hpp"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::vector<rnx::stats::run_point> parse_history(const std::string& line) {
  std::vector<rnx::stats::run_point> out;
  std::istringstream in(line);
  std::string token;
  while (in >> token) {
    const auto comma = token.find(',');
    if (comma == std::string::npos) throw std::runtime_error("a run must be written log_stat,log_se: " + token);
    out.push_back({std::stod(token.substr(0, comma)), std::stod(token.substr(comma + 1))});
  }
  return out;
}

std::string stored_changes(const std::vector<rnx::stats::run_point>& history, const rnx::stats::change_options& opt) {
  std::vector<rnx::stats::known_change> known;
  std::ostringstream out;
  for (std::size_t look = 1; look <= history.size(); ++look) {
    const auto scan = rnx::stats::find_change_points({history.data(), look}, opt);
    for (const auto& c : rnx::stats::unknown_changes(scan.changes, known)) {
      known.push_back({c.index, c.slower()});
      if (out.tellp() > 0) out << ';';
      out << look - 1 << ' ' << c.index << ' ' << c.ratio << ' ' << c.ci_lo << ' ' << c.ci_hi << ' ' << c.probability;
    }
  }
  return out.str();
}

// The options a run may set, by flag: the detector's defaults otherwise.
bool set_option(rnx::stats::change_options& opt, const std::string& flag, const char* value) {
  const double v = std::atof(value);
  if (flag == "--penalty") {
    opt.penalty = v;
  } else if (flag == "--widening") {
    opt.short_history_widening = v;
  } else if (flag == "--residual-widening") {
    opt.residual_widening = v;
  } else if (flag == "--second-pass") {
    opt.second_pass = v != 0;
  } else if (flag == "--probability") {
    opt.probability = v;
  } else if (flag == "--min-effect") {
    opt.min_effect = v;
  } else if (flag == "--hazard") {
    opt.hazard = v;
  } else if (flag == "--step-sd") {
    opt.step_prior_sd = v;
  } else if (flag == "--min-segment") {
    opt.min_segment = static_cast<std::size_t>(v);
  } else {
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  rnx::stats::change_options opt;
  for (int i = 1; i < argc; ++i) {
    if (i + 1 >= argc || !set_option(opt, argv[i], argv[i + 1])) {
      std::cerr << "usage: changepoint_sim [--penalty X] [--widening W] [--residual-widening W] [--second-pass 0|1] "
                   "[--probability P] [--min-effect E] [--hazard H] [--step-sd S] [--min-segment N] < histories (one "
                   "a line, runs as log_stat,log_se)\n";
      return 2;
    }
    ++i;
  }
  std::string line;
  try {
    while (std::getline(std::cin, line)) std::cout << stored_changes(parse_history(line), opt) << '\n';
  } catch (const std::exception& e) {
    std::cerr << "changepoint_sim: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
