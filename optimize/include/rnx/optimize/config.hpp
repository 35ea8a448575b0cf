// The [optimize] table of rnx.toml: which rewriter proposes candidates, how it is reached, and the loop's budget.
//
//   [optimize]
//   rewriter  = "anthropic"          # command | anthropic | openai
//   model     = "claude-sonnet-4-5"
//   budget    = 3                    # candidates per `rnx optimize` run
//   timeout_s = 120                  # per request to the rewriter
//   retries   = 4                    # extra attempts after a 429/5xx/network failure
#pragma once

#include "rnx/common/manifest.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace rnx::optimize {

enum class rewriter_kind { command, anthropic, openai };

std::string_view to_string(rewriter_kind k);

struct optimize_config {
  rewriter_kind rewriter = rewriter_kind::command;
  bool rewriter_set = false;  // false when neither rnx.toml nor --rewriter chose one
  std::string command;        // rewriter = "command": the executable (relative to rnx.toml's folder or on PATH)
  std::string model;          // empty = the provider's default_model()
  std::string base_url;       // empty = $ANTHROPIC_BASE_URL / $OPENAI_BASE_URL, else the public API
  std::string api_key_env;    // empty = ANTHROPIC_API_KEY / OPENAI_API_KEY
  int budget = 3;
  double timeout_s = 120;
  int retries = 4;
  double backoff_s = 1.0;  // first retry delay; doubles each time unless the server says Retry-After
  int max_tokens = 8192;
  double temperature = 0.2;
};

// Reads [optimize] from a manifest file (absent table = defaults). Errors are rnx::error(invalid) naming
// "FILE:LINE: optimize.KEY" and what to write; a missing file is errc::not_found.
optimize_config load_optimize_config(const std::filesystem::path& manifest_path);
optimize_config parse_optimize_config(std::string_view toml_text, const std::string& source);

// "command:PATH" | "anthropic" | "openai" (the --rewriter flag) applied over `config`; throws errc::usage.
void apply_rewriter_flag(optimize_config& config, std::string_view flag);

// The manifest text without its [optimize] table (its lines blanked, so line numbers stay), for readers
// that do not know the table.
std::string strip_optimize_table(std::string_view toml_text);

// Loads rnx.toml tolerating an [optimize] table (the shared manifest reader does not know it); kernel files must
// exist, as with rnx::load_manifest.
manifest load_manifest_with_optimize(const std::filesystem::path& path);

}  // namespace rnx::optimize
