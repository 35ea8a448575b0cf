// What of rnx's environment the repository's kernels get (rnx/common/kernel_environment.hpp), over a table of
// variables a CI job holds; and the program starter's env_unset, which carries the rule to the child.
#include "rnx/common/kernel_environment.hpp"
#include "rnx/common/process.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

using rnx::kernel_withheld_variables;
using rnx::withheld_from_kernels;

namespace {

struct variable {
  const char* name;
  const char* value;
};

// The job's tokens and credentials: GitHub's, Actions' runtime, rnx's, the clouds', the model providers', and
// generic secret names, and values that hold a credential under a harmless name.
const variable withheld[] = {
    {"GITHUB_TOKEN", "ghs_Qm3Vb8Nx2Lk7Jh5Gf1Ds9Az4Sx6Dc0Fv3Gb7"},
    {"GH_TOKEN", "gho_16C7e42F292c6912E7710c838347Ae178B4a"},
    {"ACTIONS_RUNTIME_TOKEN", "eyJ0eXAiOiJKV1QifQ.eyJzY3AiOiJBY3Rpb25zIn0.c2lnbmF0dXJlMTIz"},
    {"ACTIONS_RUNTIME_URL", "https://pipelines.actions.githubusercontent.com/abc/"},
    {"ACTIONS_ID_TOKEN_REQUEST_URL", "https://pipelines.actions.githubusercontent.com/oidc"},
    {"ACTIONS_ID_TOKEN_REQUEST_TOKEN", "eyJ0eXAiOiJKV1QifQ.eyJvaWRjIjoidHJ1ZSJ9.c2lnbmF0dXJlNDU2"},
    {"ACTIONS_CACHE_URL", "https://artifactcache.actions.githubusercontent.com/xyz/"},
    {"RNX_TOKEN", "rnx_up_5f1c9a7e2b4d"},
    {"RNX_BASELINE_TOKEN", "rnx_bl_5f1c9a7e2b4d"},
    {"RNX_ACCEPT_TOKEN", "rnx_ac_5f1c9a7e2b4d"},
    {"AWS_ACCESS_KEY_ID", "AKIA5QW3RT7YU2IO9PLK"},
    {"AWS_SECRET_ACCESS_KEY", "q8Vn2Xc5Lm9Kj4Hg7Fd1Sa6Zx3Cv0Bn8Mq2Wp5Er"},
    {"AWS_SESSION_TOKEN", "FwoGZXIvYXdzEJr//////////wEaDH"},
    {"AWS_REGION", "eu-west-1"},
    {"GOOGLE_APPLICATION_CREDENTIALS", "/home/runner/work/demo/demo/gha-creds-5d2e8f1a9c3b.json"},
    {"GOOGLE_GHA_CREDS_PATH", "/home/runner/work/demo/demo/gha-creds-5d2e8f1a9c3b.json"},
    {"CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE", "/home/runner/work/demo/demo/gha-creds-5d2e8f1a9c3b.json"},
    {"AZURE_CLIENT_ID", "0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"},
    {"AZURE_CLIENT_SECRET", "Wq8Er2Ty6Ui0Op4~As"},
    {"ARM_CLIENT_SECRET", "Wq8Er2Ty6Ui0Op4~As"},
    {"OPENAI_API_KEY", "sk-proj-Hs82Kd71Lw93Mq64Nz50Pb27Xc18Vy39Tr46"},
    {"ANTHROPIC_API_KEY", "sk-ant-api03-Hs82Kd71Lw93Mq64Nz50Pb27Xc18Vy39Tr46"},
    {"HF_TOKEN", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"},
    {"HUGGING_FACE_HUB_TOKEN", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"},
    {"NPM_TOKEN", "npm_Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Yz"},
    {"TWINE_PASSWORD", "pypi-upload-password"},
    {"DB_PASSWORD", "Corr3ct-H0rse-Battery"},
    {"SIGNING_KEY", "Zm9vYmFyYmF6"},
    {"SSH_AUTH_SOCK", "/tmp/ssh-XXXX/agent.123"},
    {"DATABASE_URL", "postgres://app:Pl4nted-Db-Pass-77@db.internal:5432/app"},
    {"DEPLOY_NOTE", "use ghp_Zq7Lw2Vx9Kc4Nb8Hj3Tf6Rd1Sg5Pm0Ya2Ue7 for the push"},
};

// What kernels need: the GPU, threads, compiler caches, Python and the libraries, the locale, the folders.
const variable kept[] = {
    {"PATH", "/usr/local/bin:/usr/bin:/bin"},
    {"HOME", "/home/runner"},
    {"TMPDIR", "/tmp"},
    {"LANG", "C.UTF-8"},
    {"LC_ALL", "C.UTF-8"},
    {"PYTHONPATH", "/work/src"},
    {"LD_LIBRARY_PATH", "/usr/local/cuda/lib64:/opt/libtorch/lib"},
    {"CUDA_VISIBLE_DEVICES", "0,1"},
    {"CUDA_HOME", "/usr/local/cuda"},
    {"NVIDIA_VISIBLE_DEVICES", "all"},
    {"NVIDIA_DRIVER_CAPABILITIES", "compute,utility"},
    {"OMP_NUM_THREADS", "8"},
    {"MKL_NUM_THREADS", "8"},
    {"TRITON_CACHE_DIR", "/home/runner/.triton/cache"},
    {"TORCHINDUCTOR_CACHE_DIR", "/tmp/torchinductor_runner"},
    {"TORCHINDUCTOR_FX_GRAPH_CACHE", "1"},
    {"TORCH_CUDA_ARCH_LIST", "9.0"},
    {"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"},
    {"TOKENIZERS_PARALLELISM", "false"},
    {"VIRTUAL_ENV", "/work/.venv"},
    {"CI", "true"},
    {"GITHUB_SHA", "3f2a9c1e0b7d6a5f4e3d2c1b0a9f8e7d6c5b4a3f"},
    {"GITHUB_REPOSITORY", "owner/demo"},
    {"RNX_PIN", "1"},
    {"PWD", "/home/runner/work/demo/demo"},
};

}  // namespace

TEST_CASE("withheld_from_kernels: the job's credentials are withheld, what kernels need is kept") {
  for (const auto& v : withheld) {
    CAPTURE(v.name);
    CHECK(withheld_from_kernels(v.name, v.value));
  }
  for (const auto& v : kept) {
    CAPTURE(v.name);
    CHECK_FALSE(withheld_from_kernels(v.name, v.value));
  }
}

TEST_CASE("kernel_withheld_variables: this process's withheld names, less the ones passed on purpose") {
  ::setenv("RNX_TEST_KENV_TOKEN", "rnx-kenv-5f1c9a7e", 1);
  ::setenv("RNX_TEST_KENV_PASSED_TOKEN", "rnx-kenv-passed-5f1c9a7e", 1);
  ::setenv("RNX_TEST_KENV_NOTE", "ghp_Zq7Lw2Vx9Kc4Nb8Hj3Tf6Rd1Sg5Pm0Ya2Ue7", 1);
  ::setenv("RNX_TEST_KENV_THREADS", "4", 1);
  const std::vector<std::string> names = kernel_withheld_variables({"RNX_TEST_KENV_PASSED_TOKEN"});
  auto has = [&](const char* n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  CHECK(has("RNX_TEST_KENV_TOKEN"));
  CHECK(has("RNX_TEST_KENV_NOTE"));  // a harmless name over a token's value
  CHECK_FALSE(has("RNX_TEST_KENV_PASSED_TOKEN"));
  CHECK_FALSE(has("RNX_TEST_KENV_THREADS"));
  CHECK_FALSE(has("PATH"));

  // The starter removes them from what the child inherits; env_set still adds.
  rnx::process_options o;
  o.what = rnx::capture::stdout_only;
  o.env_unset = names;
  o.env_set["RNX_TEST_KENV_ADDED"] = "yes";
  const rnx::process_result r = rnx::run_process({"env"}, o);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("RNX_TEST_KENV_TOKEN=") == std::string::npos);
  CHECK(r.out.find("rnx-kenv-5f1c9a7e") == std::string::npos);
  CHECK(r.out.find("ghp_Zq7Lw2Vx9Kc4") == std::string::npos);
  CHECK(r.out.find("RNX_TEST_KENV_PASSED_TOKEN=rnx-kenv-passed-5f1c9a7e\n") != std::string::npos);
  CHECK(r.out.find("RNX_TEST_KENV_THREADS=4\n") != std::string::npos);
  CHECK(r.out.find("RNX_TEST_KENV_ADDED=yes\n") != std::string::npos);
  CHECK((r.out.rfind("PATH=", 0) == 0 || r.out.find("\nPATH=") != std::string::npos));
  for (const char* n :
       {"RNX_TEST_KENV_TOKEN", "RNX_TEST_KENV_PASSED_TOKEN", "RNX_TEST_KENV_NOTE", "RNX_TEST_KENV_THREADS"}) {
    ::unsetenv(n);
  }
}
