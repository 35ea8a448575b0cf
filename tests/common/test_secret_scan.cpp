// The one secret scanner (rnx/common/secret_scan.hpp) on a table of samples written for this test: each credential
// format, a .env, a service-account key file, and near-misses that must come out unchanged. Every "secret" below is
// made up, in the shape of the real thing.
#include "rnx/common/secret_scan.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

using rnx::credential_name;
using rnx::published_excerpt;
using rnx::removal_note;
using rnx::scan_secrets;
using rnx::secret_value;

namespace {

struct sample {
  const char* what;
  std::string text;
  std::string secret;  // must not survive
  std::string kind;    // the kind removed (the first one)
};

std::vector<sample> secret_samples() {
  return {
      {"GitHub personal token", "push failed: ghp_Zq7Lw2Vx9Kc4Nb8Hj3Tf6Rd1Sg5Pm0Ya2Ue7 was refused",
       "ghp_Zq7Lw2Vx9Kc4Nb8Hj3Tf6Rd1Sg5Pm0Ya2Ue7", "github token"},
      {"GitHub OAuth token", "gho_16C7e42F292c6912E7710c838347Ae178B4a", "gho_16C7e42F292c6912E7710c838347Ae178B4a",
       "github token"},
      {"GitHub Actions token", "auth ghs_Qm3Vb8Nx2Lk7Jh5Gf1Ds9Az4Sx6Dc0Fv3Gb7",
       "ghs_Qm3Vb8Nx2Lk7Jh5Gf1Ds9Az4Sx6Dc0Fv3Gb7", "github token"},
      {"GitHub fine-grained token",
       "github_pat_11AB2CD3E0aBcDeFgHiJkLmN_oPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ01234 in use",
       "github_pat_11AB2CD3E0aBcDeFgHiJkLmN_oPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ01234", "github token"},
      {"GitLab token", "glpat-Xk29Ab3Cd4Ef5Gh6Ij7K", "glpat-Xk29Ab3Cd4Ef5Gh6Ij7K", "gitlab token"},
      {"AWS access key id", "id AKIA5QW3RT7YU2IO9PLK for s3", "AKIA5QW3RT7YU2IO9PLK", "aws access key id"},
      {"AWS secret key in a credentials file",
       "[default]\naws_secret_access_key = q8Vn2Xc5Lm9Kj4Hg7Fd1Sa6Zx3Cv0Bn8Mq2Wp5Er\n",
       "q8Vn2Xc5Lm9Kj4Hg7Fd1Sa6Zx3Cv0Bn8Mq2Wp5Er", "secret-named value"},
      {"Google API key", "key=AIzaSyB3x9Kq2Lm7Np4Rs8Tv1Wx6Yz0Ab5Cd3Ef7", "AIzaSyB3x9Kq2Lm7Np4Rs8Tv1Wx6Yz0Ab5Cd3Ef7",
       "google api key"},
      {"Google OAuth access token", "ya29.a0AfB_byC7Xk2Lm9Np4Qr8St1Uv6Wx3Yz0",
       "ya29.a0AfB_byC7Xk2Lm9Np4Qr8St1Uv6Wx3Yz0", "google oauth token"},
      {"Anthropic key", "sk-ant-api03-Hs82Kd71Lw93Mq64Nz50Pb27Xc18Vy39Tr46-AbCdEf",
       "sk-ant-api03-Hs82Kd71Lw93Mq64Nz50Pb27Xc18Vy39Tr46-AbCdEf", "anthropic key"},
      {"OpenAI project key", "OpenAI said no to sk-proj-Hs82Kd71Lw93Mq64Nz50Pb27Xc18Vy39Tr46",
       "sk-proj-Hs82Kd71Lw93Mq64Nz50Pb27Xc18Vy39Tr46", "provider key"},
      {"Stripe key", "sk_live_51Hs82Kd71Lw93Mq64Nz50", "sk_live_51Hs82Kd71Lw93Mq64Nz50", "stripe key"},
      {"Hugging Face token", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
       "hugging face token"},
      {"Slack bot token", "xoxb-2048-4096-Ab3Cd5Ef7Gh9", "xoxb-2048-4096-Ab3Cd5Ef7Gh9", "slack token"},
      {"npm token", "//registry.npmjs.org/:_authToken=npm_Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Yz",
       "npm_Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Yz", "npm token"},
      {"JWT", "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJyZWQtdGVhbSJ9.Qm3Vb8Nx2Lk7Jh5Gf1Ds9Az4",
       "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJyZWQtdGVhbSJ9.Qm3Vb8Nx2Lk7Jh5Gf1Ds9Az4", "jwt"},
      {"bearer header", "Authorization: Bearer Qm3Vb8Nx2Lk7Jh5Gf1Ds9Az4Sx6Dc0Fv", "Qm3Vb8Nx2Lk7Jh5Gf1Ds9Az4Sx6Dc0Fv",
       "bearer token"},
      {"URL password", "connect postgres://app:Pl4nted-Db-Pass-77@db.internal:5432/app", "Pl4nted-Db-Pass-77",
       "password in url"},
      {"PEM private key",
       "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7Vq2Lx8Zt4Rk9Wm3Np6Hd1Jf5Gs0Tc8Y\n"
       "-----END RSA PRIVATE KEY-----\nafter",
       "MIIEpAIBAAKCAQEA7Vq2Lx8Zt4Rk9Wm3Np6Hd1Jf5Gs0Tc8Y", "private key"},
      {"PEM cut before its END", "raised: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU",
       "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU", "private key"},
      {"service-account e-mail", "as rnx-ci@demo-project-274183.iam.gserviceaccount.com",
       "rnx-ci@demo-project-274183.iam.gserviceaccount.com", "service account email"},
      {".env password", "DB_PASSWORD=Corr3ct-H0rse-Battery\n", "Corr3ct-H0rse-Battery", "secret-named value"},
      {".env export", "export MY_SERVICE_TOKEN='tok-7Hs82Kd71Lw93'", "tok-7Hs82Kd71Lw93", "secret-named value"},
      {"YAML secret", "client_secret: Wq8Er2Ty6Ui0Op4", "Wq8Er2Ty6Ui0Op4", "secret-named value"},
      {"Python dict", "{'api_key': 'plain-words-key-1234'}", "plain-words-key-1234", "secret-named value"},
      {"camelCase JSON", R"({"accessToken": "opaque-value-98765"})", "opaque-value-98765", "secret-named value"},
      {"JSON quoted in a string", R"(detail: {\"private_key_id\": \"4f1c2b9a7e6d5c3b2a1f\"})", "4f1c2b9a7e6d5c3b2a1f",
       "secret-named value"},
      {"service-account client id", R"("client_id": "109876543210987654321")", "109876543210987654321",
       "service account field"},
      {"encoded key body without its BEGIN line",
       "body MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7Vq2Lx8Zt4Rk9Wm3Np6Hd1Jf5",
       "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7Vq2Lx8Zt4Rk9Wm3Np6Hd1Jf5", "encoded data"},
  };
}

// Text that looks a little like a secret and is not one: it must come out as it went in.
std::vector<std::string> near_misses() {
  return {
      "KeyError: 'attention_weights'",
      "max_tokens=4096, temperature=0.2",
      "TOKENIZERS_PARALLELISM=false",
      "num_keys: 128",
      "commit 3f2a9c1e0b7d6a5f4e3d2c1b0a9f8e7d6c5b4a3f on main",
      "env_id 9b74c9897bac770ffc029102a200c5de7a1d4e2f6f8e2b3c1d0a9f8e7d6c5b4a",
      "scikit: sk-learn 1.4 is installed",
      "ghp_short is not a token",
      "AKIA alone",
      "loaded /usr/local/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so",
      "https://github.com/owner/repo/pull/42 and git@github.com:owner/repo.git",
      "http://127.0.0.1:8080/api/v1/projects/demo",
      "mail user@example.com",
      "DEBUG=false",
      "password: abc",
      "token: 12345678",
      "GITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}",
      "api_key: $OPENAI_API_KEY",
      "the key is wrong; Bearer tokens expire",
      "GIT_AUTHOR_NAME=rnx optimize",
      "RuntimeError: expected scalar type Float but found Half",
      "speedup 3.10x, P(faster) 0.999 over 8 samples",
      "AUTH_ENABLED=true",
      "[redacted GITHUB_TOKEN] stays a mark",
      "CamelCaseIdentifierThatIsQuiteLongButHasNoDigitsAtAllInsideItAnywhereReally",
  };
}

}  // namespace

TEST_CASE("scan_secrets: every credential format and secret-named value of the table is removed and named") {
  for (const auto& s : secret_samples()) {
    CAPTURE(s.what);
    const rnx::secret_scan r = scan_secrets(s.text);
    CHECK_MESSAGE(r.text.find(s.secret) == std::string::npos, r.text);
    // No 10-byte piece of it either.
    for (std::size_t at = 0; at + 10 <= s.secret.size(); ++at) {
      CHECK_MESSAGE(r.text.find(s.secret.substr(at, 10)) == std::string::npos, r.text);
    }
    REQUIRE_FALSE(r.removed.empty());
    CHECK(r.removed.front() == s.kind);
    CHECK(r.text.find("[redacted " + s.kind + "]") != std::string::npos);
  }
}

TEST_CASE("scan_secrets: near-misses come out unchanged") {
  for (const auto& text : near_misses()) {
    CAPTURE(text);
    const rnx::secret_scan r = scan_secrets(text);
    CHECK(r.text == text);
    CHECK(r.removed.empty());
  }
}

TEST_CASE("scan_secrets: a planted .env and a service-account key, read whole and raised") {
  const std::string env =
      "# local settings\nDEBUG=false\nGITHUB_TOKEN=ghp_Zq7Lw2Vx9Kc4Nb8Hj3Tf6Rd1Sg5Pm0Ya2Ue7\n"
      "AWS_ACCESS_KEY_ID=AKIA5QW3RT7YU2IO9PLK\nAWS_SECRET_ACCESS_KEY=q8Vn2Xc5Lm9Kj4Hg7Fd1Sa6Zx3Cv0Bn8Mq2Wp5Er\n"
      "DB_PASSWORD=Corr3ct-H0rse-Battery\nLOG_LEVEL=info\n";
  const std::string key_json =
      "{\n  \"type\": \"service_account\",\n  \"project_id\": \"demo-project-274183\",\n"
      "  \"private_key_id\": \"4f1c2b9a7e6d5c3b2a1f0e9d8c7b6a5f4e3d2c1b\",\n"
      "  \"private_key\": \"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7Vq2L\\n"
      "-----END PRIVATE KEY-----\\n\",\n"
      "  \"client_email\": \"rnx-ci@demo-project-274183.iam.gserviceaccount.com\",\n"
      "  \"client_id\": \"109876543210987654321\"\n}\n";
  const rnx::secret_scan r = scan_secrets("RuntimeError: " + env + key_json);
  for (const char* secret :
       {"ghp_Zq7Lw2Vx9Kc4Nb8Hj3Tf6Rd1Sg5Pm0Ya2Ue7", "AKIA5QW3RT7YU2IO9PLK", "q8Vn2Xc5Lm9Kj4Hg7Fd1Sa6Zx3Cv0Bn8Mq2Wp5Er",
        "Corr3ct-H0rse-Battery", "4f1c2b9a7e6d5c3b2a1f0e9d8c7b6a5f4e3d2c1b",
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7Vq2L", "rnx-ci@demo-project-274183",
        "109876543210987654321"}) {
    CHECK_MESSAGE(r.text.find(secret) == std::string::npos, secret << " survived in " << r.text);
  }
  // What is not a secret stays, so the reader still sees what the candidate did.
  for (const char* kept : {"DEBUG=false", "LOG_LEVEL=info", "\"type\": \"service_account\"", "demo-project-274183"}) {
    CHECK_MESSAGE(r.text.find(kept) != std::string::npos, kept << " lost from " << r.text);
  }
  CHECK(removal_note(r.removed) ==
        "[8 secrets removed: private key, github token, aws access key id, service account email, secret-named value, "
        "service account field]");
}

TEST_CASE("scan_secrets: known values first, marked with their names; the sandbox's old redact() is this scan") {
  const std::vector<secret_value> known = {{"RNX_TEST_SECRET_TOKEN", "rnx-test-secret-5f1c9a7e"}};
  const rnx::secret_scan r =
      scan_secrets("token rnx-test-secret-5f1c9a7e and ghs_Qm3Vb8Nx2Lk7Jh5Gf1Ds9Az4Sx6Dc0Fv3Gb7", known);
  CHECK(r.text == "token [redacted RNX_TEST_SECRET_TOKEN] and [redacted github token]");
  CHECK(r.removed == std::vector<std::string>{"RNX_TEST_SECRET_TOKEN", "github token"});
  CHECK(rnx::redact("a rnx-test-secret-5f1c9a7e b", known) == "a [redacted RNX_TEST_SECRET_TOKEN] b");
}

TEST_CASE("published_excerpt: scanned whole, then cut to a bound, with what was removed said") {
  const std::string pem =
      "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7Vq2L\n"
      "-----END PRIVATE KEY-----";
  const std::string text =
      "RuntimeError: ghp_Zq7Lw2Vx9Kc4Nb8Hj3Tf6Rd1Sg5Pm0Ya2Ue7 " + pem + " " + std::string(2000, 'x');
  const std::string out = published_excerpt(text, 300);
  CHECK(out.find("ghp_Zq7Lw2Vx9K") == std::string::npos);
  CHECK(out.find("MIIEvQIBADAN") == std::string::npos);
  CHECK(out.find("\xE2\x80\xA6 [2 secrets removed: github token, private key]") != std::string::npos);
  CHECK(out.size() <= 300 + 3 + 1 + removal_note({"github token", "private key"}).size());
  // A secret across the bound is removed before the cut, so no prefix of it is left at the end.
  const std::string across = std::string(290, 'y') + " ghp_Zq7Lw2Vx9Kc4Nb8Hj3Tf6Rd1Sg5Pm0Ya2Ue7";
  const std::string cut = published_excerpt(across, 300);
  CHECK(cut.find("ghp_Zq7") == std::string::npos);
  CHECK(cut.find("[1 secret removed: github token]") != std::string::npos);
  // Marks an earlier scan left (the verifier's) are counted with this scan's, in the order they stand.
  CHECK(published_excerpt("a [redacted RNX_TOKEN] b ghp_Zq7Lw2Vx9Kc4Nb8Hj3Tf6Rd1Sg5Pm0Ya2Ue7", 300) ==
        "a [redacted RNX_TOKEN] b [redacted github token] [2 secrets removed: RNX_TOKEN, github token]");
  // Short and clean: as it was.
  CHECK(published_excerpt("IndexError: list index out of range", 300) == "IndexError: list index out of range");
  // Never cut inside a character.
  CHECK(published_excerpt("\xC3\xA9\xC3\xA9", 3) == "\xC3\xA9\xE2\x80\xA6");
}

TEST_CASE("credential_name: the one rule for names that mark a credential") {
  const char* credentials[] = {"GITHUB_TOKEN",
                               "GH_TOKEN",
                               "RNX_TOKEN",
                               "RNX_BASELINE_TOKEN",
                               "ACTIONS_RUNTIME_TOKEN",
                               "ACTIONS_ID_TOKEN_REQUEST_URL",
                               "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
                               "HF_TOKEN",
                               "HUGGING_FACE_HUB_TOKEN",
                               "OPENAI_API_KEY",
                               "ANTHROPIC_API_KEY",
                               "AWS_ACCESS_KEY_ID",
                               "AWS_SECRET_ACCESS_KEY",
                               "AWS_SESSION_TOKEN",
                               "GOOGLE_APPLICATION_CREDENTIALS",
                               "GOOGLE_GHA_CREDS_PATH",
                               "AZURE_CLIENT_SECRET",
                               "NPM_TOKEN",
                               "TWINE_PASSWORD",
                               "DOCKER_PASSWD",
                               "SSH_AUTH_SOCK",
                               "GH_PAT",
                               "SENTRY_DSN",
                               "DB_PASS",
                               "GPG_PASSPHRASE",
                               "clientSecret",
                               "accessToken",
                               "apiKey",
                               "private_key",
                               "private_key_id",
                               "x-api-key",
                               "password",
                               "token",
                               "secret"};
  for (const char* name : credentials) {
    CAPTURE(name);
    CHECK(credential_name(name));
  }
  const char* settings[] = {"PATH",
                            "PWD",
                            "OLDPWD",
                            "HOME",
                            "CUDA_VISIBLE_DEVICES",
                            "NVIDIA_VISIBLE_DEVICES",
                            "OMP_NUM_THREADS",
                            "TRITON_CACHE_DIR",
                            "TORCHINDUCTOR_CACHE_DIR",
                            "PYTHONPATH",
                            "LD_LIBRARY_PATH",
                            "TOKENIZERS_PARALLELISM",
                            "MAX_TOKENS",
                            "max_tokens",
                            "KeyError",
                            "GIT_AUTHOR_NAME",
                            "key",
                            "auth",
                            "KEYBOARD",
                            "MONKEY_PATCH",
                            "GIT_ASKPASS_HELPER_PATH"};
  for (const char* name : settings) {
    CAPTURE(name);
    CHECK_FALSE(credential_name(name));
  }
}

TEST_CASE("environment_secrets: this process's credentials by value, longest first, none under 8 bytes") {
  ::setenv("RNX_TEST_SCAN_TOKEN", "rnx-scan-5f1c9a7e", 1);
  ::setenv("RNX_TEST_SCAN_TOKEN_LONG", "rnx-scan-5f1c9a7e-and-more", 1);
  ::setenv("RNX_TEST_SCAN_SHORT_TOKEN", "abc", 1);
  ::setenv("RNX_TEST_SCAN_SETTING", "rnx-scan-plain-value", 1);
  const std::vector<secret_value> found = rnx::environment_secrets(credential_name);
  std::vector<std::string> names;
  for (const auto& s : found) {
    if (s.name.rfind("RNX_TEST_SCAN_", 0) == 0) names.push_back(s.name);
  }
  CHECK(names == std::vector<std::string>{"RNX_TEST_SCAN_TOKEN_LONG", "RNX_TEST_SCAN_TOKEN"});
  CHECK(rnx::redact("a rnx-scan-5f1c9a7e-and-more b", found).find("[redacted RNX_TEST_SCAN_TOKEN_LONG]") !=
        std::string::npos);
  for (const char* n :
       {"RNX_TEST_SCAN_TOKEN", "RNX_TEST_SCAN_TOKEN_LONG", "RNX_TEST_SCAN_SHORT_TOKEN", "RNX_TEST_SCAN_SETTING"}) {
    ::unsetenv(n);
  }
}
