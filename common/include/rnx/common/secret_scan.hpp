// The one secret scanner: what rnx takes out of text it publishes (a pull request, a step summary, a report, a log
// line) when the text came from a process it does not trust (a candidate's exception or output, a kernel's message),
// and the one rule for names that mark a credential (an environment variable, a field of a .env or JSON file).
//
//   std::vector<rnx::secret_value> known = rnx::environment_secrets(rnx::credential_name);
//   rnx::secret_scan s = rnx::scan_secrets(candidate_text, known);      // s.text: "[redacted github token]" ...
//   std::string cell = rnx::published_excerpt(candidate_text, 300, known);
//   // "RuntimeError: GITHUB_TOKEN=[redacted github token] ... [2 secrets removed: github token, private key]"
//
// What it finds, in this order (docs/optimize.md, "Candidate text is data"):
//  - the values `known` lists (this process's own credentials, by value), marked with their variable's name;
//  - PEM private key blocks (RSA, EC, OpenSSH, PGP, PKCS#8), from BEGIN to END, or to the end of a text cut short;
//  - credential formats: GitHub (ghp_ gho_ ghu_ ghs_ ghr_ github_pat_), GitLab (glpat-), AWS access key ids
//    (AKIA...), Google API keys (AIza...) and OAuth tokens (ya29.), provider keys (sk-..., sk-ant-..., Stripe's
//    sk_live_...), Hugging Face (hf_...), Slack tokens (xox.-) and webhooks, npm and PyPI tokens, JWTs, bearer
//    tokens, the password of a URL (scheme://user:PASSWORD@host), service-account e-mail addresses;
//  - the value of every NAME=VALUE, NAME: VALUE and "NAME": "VALUE" whose NAME credential_name marks (a .env line,
//    YAML, JSON, a Python dict), and the identifying fields of a service-account key file (client_email,
//    client_id), unless the value is a number, a boolean, a reference ($VAR) or too short to be a credential.
// Each is replaced by "[redacted KIND]"; nothing of it is kept.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rnx {

// A value this process must never publish (a token, a key from its environment) and the name shown in its place.
struct secret_value {
  std::string name;
  std::string value;
};

// Whether `name` (an environment variable, a key of a .env, YAML or JSON file, in any case) marks a credential.
// The name is split into parts at '_', '-' and '.'; it marks one when a part ends with a strong word (TOKEN,
// SECRET(S), PASSWORD, PASSWD, PASSPHRASE, CREDENTIAL(S), CREDS, APIKEY, PRIVATEKEY, ACCESSKEY, SECRETKEY: so
// GITHUB_TOKEN, clientSecret, accessToken) or, in a name of two parts or more, a part is a weak word (KEY, PASS,
// PWD, AUTH, PAT, COOKIE, PRIVATE, DSN, AUTHORIZATION: OPENAI_API_KEY, DB_PASS, GH_PAT, SSH_AUTH_SOCK). Not:
// TOKENIZERS_PARALLELISM, MAX_TOKENS, KeyError, GIT_AUTHOR_NAME, PWD, a lone "key".
bool credential_name(const std::string& name);

// The values of this process's environment whose names `looks_secret` marks as credentials (rnx passes
// credential_name; tests pass their own), longest first so that a value
// holding another is hidden whole. Values shorter than 8 bytes are left out: no credential is that short, and
// hiding them would cut ordinary words out of a report.
std::vector<secret_value> environment_secrets(bool (*looks_secret)(const std::string&));

struct secret_scan {
  std::string text;                  // the text with each secret replaced by "[redacted KIND]"
  std::vector<std::string> removed;  // the kind of each secret removed, in the order found
};

// Every secret of `text` (see the top of this file) replaced by "[redacted KIND]"; `known` values by
// "[redacted NAME]".
secret_scan scan_secrets(std::string_view text, const std::vector<secret_value>& known = {});

// scan_secrets(text, secrets).text: the whole text with its secrets marked (a JSON record, a verifier's row).
// Applied to outside text before it is escaped for any target (an escaper would split a value), so JSON, terminal
// and Markdown all carry the mark.
std::string redact(std::string_view text, const std::vector<secret_value>& secrets);

// "[2 secrets removed: github token, private key]" (each kind once, in the order found); "" when none was.
std::string removal_note(const std::vector<std::string>& removed);

// Text an untrusted process produced, as rnx publishes it: its secrets removed (from the whole text, so that no
// cut hides one from the scanner), then at most `most` bytes kept (cut on a character boundary, "…" at the cut),
// then the removal note when something was removed: every "[redacted KIND]" of the text in the order they stand,
// this scan's and those an earlier one left (the verifier's rows come redacted already).
std::string published_excerpt(std::string_view text, std::size_t most, const std::vector<secret_value>& known = {});

}  // namespace rnx
