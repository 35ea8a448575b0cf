// The worker's environment: an allow-list of what kernels need; credentials and everything else withheld.
#include "rnx/sandbox/sandbox.hpp"

#include "rnx/common/secret_scan.hpp"

#include <pwd.h>
#include <unistd.h>

extern char** environ;

namespace rnx::sandbox {

namespace {

bool allowed_variable(const std::string& name, const sandbox_limits& limits) {
  static const char* const exact[] = {"PATH",
                                      "LANG",
                                      "LANGUAGE",
                                      "TZ",
                                      "TERM",
                                      "LD_LIBRARY_PATH",
                                      "PYTHONPATH",
                                      "PYTHONHOME",
                                      "VIRTUAL_ENV",
                                      "CONDA_PREFIX",
                                      "OMP_NUM_THREADS",
                                      "MKL_NUM_THREADS",
                                      "OPENBLAS_NUM_THREADS",
                                      "CC",
                                      "CXX"};
  static const char* const prefixes[] = {"LC_",    "CUDA_",   "NVIDIA_", "CUDNN_",
                                         "TORCH_", "TRITON_", "PYENV_",  "RNX_VERIFY_"};
  for (const char* e : exact) {
    if (name == e) return true;
  }
  for (const auto& k : limits.keep_env) {
    if (name == k) return true;
  }
  // A credential (rnx::credential_name, the one rule) never passes, even under an allowed prefix.
  if (credential_name(name)) return false;
  for (const char* p : prefixes) {
    if (name.rfind(p, 0) == 0) return true;
  }
  return false;
}

// The name of the user the worker runs as: nobody when started as root, else the caller. Python's
// getpass.getuser(), which torch's compiler calls, reads USER or LOGNAME; without them it looks the uid up through
// NSS, whose nscd and systemd modules open a Unix socket, which the seccomp filter refuses (and reports).
std::string worker_user_name() {
  const uid_t uid = ::geteuid() == 0 ? unprivileged_uid : ::getuid();
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found) return found->pw_name;
  return uid == unprivileged_uid ? "nobody" : std::to_string(uid);
}

}  // namespace

std::filesystem::path compiled_folder(const std::filesystem::path& workdir) { return workdir / ".compiled"; }

std::vector<std::string> sandbox_environment(const sandbox_limits& limits, const std::filesystem::path& workdir,
                                             std::vector<std::string>* withheld) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    std::string name = entry.substr(0, entry.find('='));
    if (name == "HOME" || name == "TMPDIR" || name == "USER" || name == "LOGNAME" || name == "MALLOC_PERTURB_" ||
        name == "TRITON_HOME" || name == "TRITON_CACHE_DIR" || name == "TRITON_DUMP_DIR" ||
        name == "TRITON_OVERRIDE_DIR" || name == "TORCHINDUCTOR_CACHE_DIR" || name == "TORCH_EXTENSIONS_DIR") {
      continue;  // set below, or (Triton's other folders) left at their defaults under TRITON_HOME
    }
    if (allowed_variable(name, limits)) {
      env.push_back(entry);
    } else if (withheld) {
      withheld->push_back(name);
    }
  }
  const std::string user = worker_user_name();
  env.push_back("USER=" + user);
  env.push_back("LOGNAME=" + user);
  env.push_back("HOME=" + workdir.string());
  env.push_back("TMPDIR=" + workdir.string());
  env.push_back("TRITON_HOME=" + workdir.string());
  // What the compilers build and then load as code, in the one folder where files may be mapped executable (scratch
  // is noexec): Triton's launchers (built at a kernel's first call), inductor's CPU libraries (torch.compile) and
  // cpp extensions (torch.utils.cpp_extension, whose default is under HOME).
  const std::filesystem::path compiled = compiled_folder(workdir);
  env.push_back("TRITON_CACHE_DIR=" + (compiled / "triton").string());
  env.push_back("TORCHINDUCTOR_CACHE_DIR=" + (compiled / "inductor").string());
  env.push_back("TORCH_EXTENSIONS_DIR=" + (compiled / "torch_extensions").string());
  // glibc fills freed heap memory with 0xff bytes (NaN in every float format), so a candidate that returns an
  // uninitialised buffer cannot pick up a result the reference left behind on the CPU.
  env.push_back("MALLOC_PERTURB_=255");
  return env;
}

}  // namespace rnx::sandbox
