// What of rnx's environment the repository's own kernels get: everything but the job's credentials. The one rule
// for the processes that run a kernel outside the sandbox (rnx bench's workers, rnx-profile-worker); the sandbox has
// its own allow-list for untrusted candidates (rnx/sandbox/sandbox.hpp, sandbox_environment).
//
//   rnx::program_start plan;
//   plan.env_unset = rnx::kernel_withheld_variables(manifest.pass_env);   // the rest is inherited
//
// Allow by default, minus a deny rule (docs/runner.md, "The workers' environment"): a variable is withheld when
//  - its name marks a credential (rnx::credential_name: GITHUB_TOKEN, GH_TOKEN, RNX_TOKEN, HF_TOKEN,
//    OPENAI_API_KEY, ANTHROPIC_API_KEY, AWS_SECRET_ACCESS_KEY, GOOGLE_APPLICATION_CREDENTIALS, *_PASSWORD, ...);
//  - it belongs to a cloud's or the CI's credentials by prefix: AWS_, AZURE_, ARM_, GOOGLE_, GCLOUD_, CLOUDSDK_,
//    ACTIONS_ (GitHub Actions' runtime and OIDC token request: ACTIONS_RUNTIME_TOKEN, ACTIONS_ID_TOKEN_REQUEST_*);
//  - its value holds a credential whatever its name (a token format or a URL's password, rnx::scan_secrets).
// Everything else is kept: CUDA_*, NVIDIA_*, OMP_/MKL_ threads, TRITON_*, TORCHINDUCTOR_*, HOME, PATH, PYTHONPATH,
// LD_LIBRARY_PATH, TMPDIR, LANG, ... A name in `passed` (the manifest's [bench] pass_env) is kept whatever it is.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rnx {

// Whether NAME=VALUE is withheld from a kernel (the rule above, before any opt-in).
bool withheld_from_kernels(std::string_view name, std::string_view value);

// The names of this process's environment that a kernel's process must not inherit: those withheld_from_kernels
// marks, less the ones `passed` names.
std::vector<std::string> kernel_withheld_variables(const std::vector<std::string>& passed);

}  // namespace rnx
