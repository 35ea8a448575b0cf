// Unit tests of the torch-free half of rnx verify: the sandbox launch and environment, the worker's result lines and
// the report's rules.
#include "rnx/common/error.hpp"
#include "rnx/verify/verify.hpp"
#include "rnx/sandbox/sandbox.hpp"
// The verify worker's events and the judge's reading of them are private to rnx_verify (its src folder).
#include "../../verify/src/job_file.hpp"
#include "../../verify/src/orchestrator.hpp"

#include <boost/json.hpp>
#include <doctest/doctest.h>

#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace rv = rnx::verify;
namespace rvd = rnx::verify::detail;

namespace {

bool has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

bool has_prefix(const std::vector<std::string>& v, const std::string& p) {
  return std::any_of(v.begin(), v.end(), [&](const std::string& s) { return s.rfind(p, 0) == 0; });
}

// Runs `script` under spawn_sandboxed and returns what it wrote to its result descriptor (fd 3).
// `prepare` fills the scratch folder first (hands files to the sandbox).
std::string run_sandboxed(const std::string& script, const std::vector<std::string>& env,
                          rv::sandbox_limits limits = {},
                          const std::function<void(const std::filesystem::path&)>& prepare = {}) {
  limits.wall_s = 20;
  auto dir = std::filesystem::temp_directory_path() / ("rnx-sandbox-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir, std::filesystem::perms::all);  // the test's own shell runs there as nobody too
  if (prepare) prepare(dir);
  auto p = rnx::sandbox::spawn_sandboxed({"/bin/sh", "-c", script}, env, dir, limits, true);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(p.read_fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  ::close(p.read_fd);
  int status = 0;
  ::waitpid(p.pid, &status, 0);
  std::filesystem::remove_all(dir);
  return out;
}

}  // namespace

TEST_CASE("the sandbox environment withholds secrets and keeps what kernels need") {
  ::setenv("GITHUB_TOKEN", "ghp_secret", 1);
  ::setenv("RNX_TOKEN", "rnx_secret", 1);
  ::setenv("OPENAI_API_KEY", "sk-secret", 1);
  ::setenv("TORCH_SECRET_KEY", "hidden", 1);  // a secret under an allowed prefix is still withheld
  ::setenv("CUDA_VISIBLE_DEVICES", "0", 1);
  ::setenv("RNX_TEST_KEEP", "kept", 1);
  ::setenv("TORCH_EXTENSIONS_DIR", "/elsewhere", 1);  // a folder outside the one where code may be mapped
  rv::sandbox_limits limits;
  limits.keep_env = {"RNX_TEST_KEEP"};
  std::vector<std::string> withheld;
  auto env = rnx::sandbox::sandbox_environment(limits, "/tmp/rnx-x", &withheld);
  CHECK(has(withheld, "GITHUB_TOKEN"));
  CHECK(has(withheld, "RNX_TOKEN"));
  CHECK(has(withheld, "OPENAI_API_KEY"));
  CHECK(has(withheld, "TORCH_SECRET_KEY"));
  CHECK_FALSE(has_prefix(env, "GITHUB_TOKEN="));
  CHECK_FALSE(has_prefix(env, "TORCH_SECRET_KEY="));
  CHECK(has(env, "CUDA_VISIBLE_DEVICES=0"));
  CHECK(has(env, "RNX_TEST_KEEP=kept"));
  CHECK(has(env, "HOME=/tmp/rnx-x"));
  CHECK(has(env, "TMPDIR=/tmp/rnx-x"));
  CHECK(has(env, "MALLOC_PERTURB_=255"));
  CHECK(has_prefix(env, "PATH="));
  // The name of the user it runs as, so that getpass.getuser() needs no NSS lookup (a Unix socket, refused).
  if (::geteuid() == 0) {
    CHECK(has(env, "USER=nobody"));
    CHECK(has(env, "LOGNAME=nobody"));
  } else {
    CHECK(has_prefix(env, "USER="));
  }
  // What the compilers build and load goes to the one folder whose files may be mapped as code.
  CHECK(rnx::sandbox::compiled_folder("/tmp/rnx-x") == "/tmp/rnx-x/.compiled");
  CHECK(has(env, "TRITON_CACHE_DIR=/tmp/rnx-x/.compiled/triton"));
  CHECK(has(env, "TORCHINDUCTOR_CACHE_DIR=/tmp/rnx-x/.compiled/inductor"));
  CHECK(has(env, "TORCH_EXTENSIONS_DIR=/tmp/rnx-x/.compiled/torch_extensions"));
  CHECK_FALSE(has(env, "TORCH_EXTENSIONS_DIR=/elsewhere"));
  ::unsetenv("TORCH_EXTENSIONS_DIR");
}

TEST_CASE("a sandboxed process has no network interfaces but loopback, its own folder, and closed descriptors") {
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "GITHUB_TOKEN_COPY=no"};
  std::string out = run_sandboxed(
      "echo cwd=$(pwd | grep -c rnx-sandbox-test) >&3; echo nets=$(grep -o '^ *[a-z0-9]*:' /proc/net/dev | tr -d ' "
      "\\n') >&3;"
      " echo fds=$(ls /proc/self/fd | wc -l) >&3; echo limit=$(ulimit -c) >&3",
      env);
  // The first line says how the network was isolated.
  CHECK(out.find("\"event\":\"sandbox\"") != std::string::npos);
  CHECK(out.find("cwd=1") != std::string::npos);
  CHECK(out.find("limit=0") != std::string::npos);
  if (out.find("\"network\":\"namespace\"") != std::string::npos) {
    // In a fresh network namespace only the loopback device exists (and is down).
    CHECK(out.find("nets=lo:\n") != std::string::npos);
  } else {
    MESSAGE("network namespaces are not permitted here; the seccomp filter is the only network barrier");
  }
  // stdin, stdout, stderr, fd 3, and the descriptor `ls` opens for /proc/self/fd: nothing inherited beyond that.
  CHECK(out.find("fds=5") != std::string::npos);
}

TEST_CASE("never host root: unprivileged uid, read-only /proc/sys, a reduced /dev, no terminal, scratch on tmpfs") {
  std::vector<std::string> env = {"PATH=/usr/bin:/bin"};
  rv::sandbox_limits limits;
  limits.scratch_mb = 4;
  limits.shm_mb = 2;
  const auto host_shm = std::filesystem::path("/dev/shm") / ("rnx-sandbox-test-" + std::to_string(::getpid()));
  std::string out = run_sandboxed(
      "echo uid=$(id -u) >&3;"
      " (echo rnx > /proc/sys/kernel/domainname) 2>/dev/null && echo sysctl=written >&3 || echo sysctl=refused >&3;"
      " echo dev=$(ls /dev | grep -v '^nvidia' | grep -v '^dri$' | tr '\\n' ,) >&3;"
      " echo stdin=$(readlink /proc/$$/fd/0) stdout=$(readlink /proc/$$/fd/1) stderr=$(readlink /proc/$$/fd/2) >&3;"
      " echo tty=$(cat /dev/tty 2>/dev/null </dev/null; echo $?) >&3;"
      " echo secret > /dev/shm/" +
          host_shm.filename().string() +
          ";"
          " dd if=/dev/zero of=big bs=1M count=8 2>/dev/null; echo big=$(($(stat -c %s big) >> 20)) >&3;"
          " mkdir locked && touch locked/x && chmod 000 locked; echo nproc=$(grep 'Max processes' /proc/self/limits | "
          "tr -s ' ' | cut -d' ' -f3) >&3",
      env, limits);
  INFO(out);
  const bool root = ::geteuid() == 0;
  CHECK(out.find("uid=" + std::to_string(root ? rnx::sandbox::unprivileged_uid : ::getuid()) + "\n") !=
        std::string::npos);
  CHECK(out.find("sysctl=refused") != std::string::npos);
  CHECK(out.find("dev=dri,") == std::string::npos);
  CHECK(out.find("dev=fd,full,null,random,shm,stderr,stdin,stdout,urandom,zero,\n") != std::string::npos);
  CHECK(out.find("stdin=/dev/null stdout=/dev/null stderr=/dev/null") != std::string::npos);
  CHECK(out.find("tty=1") != std::string::npos);    // no controlling terminal, no /dev/tty
  CHECK(out.find("big=4\n") != std::string::npos);  // 8 MiB asked, the 4 MiB scratch tmpfs is full
  CHECK(out.find("nproc=512") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(host_shm));  // its /dev/shm was its own
  for (auto l : rnx::sandbox::all_layers()) {
    CHECK(out.find("\"layer\":\"" + std::string(rnx::sandbox::to_string(l)) + "\",\"ok\":true") != std::string::npos);
  }
}

TEST_CASE("a copied program never starts: not from scratch, /dev/shm or .compiled, nor through the loader") {
  std::vector<std::string> env = {"PATH=/usr/bin:/bin"};
  // Each copy started directly (Landlock's execute rule: not an installed folder) and through the dynamic loader,
  // which maps the file itself (refused by the noexec mounts); .compiled, whose files may be mapped as code, is the
  // one place the loader can run one.
  std::string out = run_sandboxed(
      "loader=$(ls /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1 2>/dev/null | head -n 1);"
      " for d in . /dev/shm .compiled; do cp /bin/true $d/copy && chmod 755 $d/copy;"
      " $d/copy 2>/dev/null && echo $d:direct=ran >&3 || echo $d:direct=refused >&3;"
      " $loader $d/copy 2>/dev/null && echo $d:loader=ran >&3 || echo $d:loader=refused >&3; done;"
      " echo mounts=$(grep -c \" $PWD/.compiled tmpfs \" /proc/self/mounts)"
      ",$(grep \" $PWD/.compiled tmpfs \" /proc/self/mounts | grep -c noexec)"
      ",$(grep \" $PWD tmpfs \" /proc/self/mounts | grep -c noexec) >&3",
      env);
  INFO(out);
  for (const char* refused : {"\n.:direct=refused\n", "\n.:loader=refused\n", "\n/dev/shm:direct=refused\n",
                              "\n/dev/shm:loader=refused\n", "\n.compiled:direct=refused\n"}) {
    CHECK(out.find(refused) != std::string::npos);
  }
  CHECK(out.find("\n.compiled:loader=ran\n") != std::string::npos);
  CHECK(out.find("mounts=1,0,1\n") != std::string::npos);  // .compiled a tmpfs of its own, not noexec; scratch noexec
}

TEST_CASE("restrict_execute: installed programs run, a program copied into scratch does not") {
  rnx::sandbox::scratch_folder dir("rnx-sandbox-test-");
  const auto copy = dir.path() / "mine";
  std::filesystem::copy_file("/bin/true", copy);
  std::filesystem::permissions(copy, std::filesystem::perms::owner_all);
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::string why;
    if (!rnx::sandbox::restrict_execute(rnx::sandbox::system_program_folders(), dir.path(), why)) ::_exit(90);
    auto run = [](const char* path) {
      const pid_t child = ::fork();
      if (child == 0) {
        ::execl(path, path, static_cast<char*>(nullptr));
        ::_exit(errno == EACCES ? 3 : 4);
      }
      int status = 0;
      ::waitpid(child, &status, 0);
      return WIFEXITED(status) ? WEXITSTATUS(status) : 5;
    };
    // A cache's write-then-rename between two of scratch's folders still works (Triton's does exactly that).
    const auto from = dir.path() / "tmp.1" / "entry";
    const auto to = dir.path() / "cache" / "entry";
    std::filesystem::create_directories(from.parent_path());
    std::filesystem::create_directories(to.parent_path());
    std::ofstream(from) << "compiled";
    const bool moved = ::rename(from.c_str(), to.c_str()) == 0;
    ::_exit(run("/bin/true") == 0 && run(copy.c_str()) == 3 && moved ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("a scratch folder is removed even with a mode-000 folder in it") {
  std::filesystem::path kept;
  {
    rnx::sandbox::scratch_folder dir("rnx-sandbox-test-");
    kept = dir.path();
    std::filesystem::create_directories(dir.path() / "locked" / "deeper");
    std::ofstream(dir.path() / "locked" / "deeper" / "f") << "x";
    std::filesystem::permissions(dir.path() / "locked" / "deeper", std::filesystem::perms::none);
    std::filesystem::permissions(dir.path() / "locked", std::filesystem::perms::none);
  }
  CHECK_FALSE(std::filesystem::exists(kept));
}

namespace {

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

}  // namespace

TEST_CASE("kernel_sources: the kernel and the sources beside it, never a hidden file, a credential, a link or data") {
  rnx::sandbox::scratch_folder dir("rnx-sandbox-test-");
  const auto k = dir.path() / "kernels";
  for (const char* f :
       {"kernel.py", "helper.py", "fused.cu", "sub/util.py", "sub/deep/a/b/too_deep.py", "sub/weights.json", ".env",
        "gha-creds-0123abcd.json", "__pycache__/helper.cpython-311.py", ".hidden/x.py", "notes.txt"}) {
    write_file(k / f, "x = 1\n");
  }
  std::filesystem::create_symlink("/etc/passwd", k / "linked.py");
  std::filesystem::create_directory_symlink(dir.path(), k / "linked_folder");
  const std::vector<std::filesystem::path> expected = {"kernel.py", "fused.cu", "helper.py", "sub/util.py"};
  CHECK(rnx::sandbox::kernel_sources(k / "kernel.py") == expected);
}

TEST_CASE("kernel_sources: nearer levels first, a level past the limit left out") {
  rnx::sandbox::scratch_folder dir("rnx-sandbox-test-");
  const auto k = dir.path() / "kernels";
  write_file(k / "kernel.py", "");
  write_file(k / "helper.py", "");
  for (std::size_t i = 0; i < rnx::sandbox::max_handed_files; ++i)
    write_file(k / "many" / (std::to_string(i) + ".py"), "");
  const std::vector<std::filesystem::path> expected = {"kernel.py", "helper.py"};
  CHECK(rnx::sandbox::kernel_sources(k / "kernel.py") == expected);
}

TEST_CASE("a handed kernel is read in the sandbox, read-only; its folder's other files and the home folder are not") {
  // A project in a mode-700 temporary folder (as mktemp -d makes it, and as /root is): started as root, the worker's
  // user may not enter it; the kernel reaches the sandbox because it is handed, never by its path.
  rnx::sandbox::scratch_folder project("rnx-sandbox-project-");
  std::filesystem::permissions(project.path(), std::filesystem::perms::owner_all);
  const auto k = project.path() / "kernels";
  write_file(k / "kernel.py", "rnx-kernel-text\n");
  write_file(k / "helper.py", "rnx-helper-text\n");
  write_file(k / ".env", "RNX_PLANTED=rnx-dotenv-secret\n");
  write_file(k / "gha-creds-0123abcd.json", "{\"private_key\": \"rnx-service-account-secret\"}\n");
  // The worst case: world-readable, in a folder others may enter.
  for (const char* f : {"kernels", "kernels/.env", "kernels/gha-creds-0123abcd.json"}) {
    std::filesystem::permissions(project.path() / f,
                                 std::filesystem::perms::others_read | std::filesystem::perms::others_exec,
                                 std::filesystem::perm_options::add);
  }
  const char* home = std::getenv("HOME");
  const auto home_secret =
      std::filesystem::path(home ? home : "/root") / (".rnx-sandbox-test-" + std::to_string(::getpid()) + ".env");
  write_file(home_secret, "rnx-home-secret\n");
  std::filesystem::permissions(home_secret, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                                                std::filesystem::perms::group_read |
                                                std::filesystem::perms::others_read);
  rv::sandbox_limits limits;
  limits.confine_reads = true;
  const std::string script =
      "cat handed/candidate/kernel.py handed/candidate/helper.py >&3;"
      " ls -a handed/candidate | tr '\\n' , | sed 's/^/listed=/' >&3; echo >&3;"
      " for f in " +
      k.string() + "/.env " + k.string() + "/gha-creds-0123abcd.json " + k.string() + "/kernel.py " +
      home_secret.string() +
      "; do cat $f >&3 2>/dev/null || echo refused:$f >&3; done;"
      " (echo changed > handed/candidate/kernel.py) 2>/dev/null && echo handed=written >&3 || echo handed=read-only "
      ">&3;"
      " mv handed gone 2>/dev/null && echo handed=moved >&3 || echo handed=stays >&3";
  std::string out = run_sandboxed(script, {"PATH=/usr/bin:/bin"}, limits, [&](const std::filesystem::path& scratch) {
    CHECK(rnx::sandbox::hand_kernel(scratch, k / "kernel.py", "candidate") ==
          rnx::sandbox::handed_folder(scratch) / "candidate" / "kernel.py");
  });
  std::filesystem::remove(home_secret);
  INFO(out);
  CHECK(out.find("rnx-kernel-text\nrnx-helper-text\n") != std::string::npos);
  CHECK(out.find("listed=.,..,helper.py,kernel.py,\n") != std::string::npos);
  for (const char* secret : {"rnx-dotenv-secret", "rnx-service-account-secret", "rnx-home-secret"}) {
    CHECK(out.find(secret) == std::string::npos);
  }
  CHECK(out.find("refused:" + (k / ".env").string()) != std::string::npos);
  CHECK(out.find("refused:" + (k / "gha-creds-0123abcd.json").string()) != std::string::npos);
  CHECK(out.find("refused:" + (k / "kernel.py").string()) != std::string::npos);
  CHECK(out.find("refused:" + home_secret.string()) != std::string::npos);
  CHECK(out.find("handed=read-only") != std::string::npos);
  CHECK(out.find("handed=stays") != std::string::npos);
  CHECK(out.find("\"layer\":\"scratch\",\"ok\":true") != std::string::npos);
}

TEST_CASE("job paths under a mode-700 folder, one deeper than another, are all shown; nothing else of it is") {
  // As rnx optimize's benchmark names them: a manifest at a mktemp -d project's root (the root itself one of the
  // paths) and the kernel in kernels/. Started as root the worker's user may enter none of it on the host.
  rnx::sandbox::scratch_folder project("rnx-sandbox-project-");
  std::filesystem::permissions(project.path(), std::filesystem::perms::owner_all);
  const auto p = project.path();
  write_file(p / "rnx.toml", "rnx-manifest-text\n");
  write_file(p / "kernels" / "kernel.py", "rnx-kernel-text\n");
  write_file(p / ".env", "rnx-dotenv-secret\n");
  for (const char* f : {"rnx.toml", "kernels", "kernels/kernel.py", ".env"}) {
    std::filesystem::permissions(p / f, std::filesystem::perms::others_read | std::filesystem::perms::others_exec,
                                 std::filesystem::perm_options::add);
  }
  rv::sandbox_limits limits;
  limits.readable = {p / "rnx.toml", p, p / "kernels" / "kernel.py", p / "kernels"};
  std::string out = run_sandboxed("cat " + (p / "rnx.toml").string() + " " + (p / "kernels" / "kernel.py").string() +
                                      " >&3; cat " + (p / ".env").string() + " >&3 2>/dev/null || echo refused >&3",
                                  {"PATH=/usr/bin:/bin"}, limits);
  INFO(out);
  CHECK(out.find("rnx-manifest-text\nrnx-kernel-text\n") != std::string::npos);
  CHECK(out.find("\"layer\":\"host_files\",\"ok\":true") != std::string::npos);
  if (::geteuid() == 0) {
    // Covered: only what was named is there (an ordinary user reads their own files where they lie).
    CHECK(out.find("refused") != std::string::npos);
    CHECK(out.find("rnx-dotenv-secret") == std::string::npos);
  }
}

TEST_CASE("the report's verdict: fail rejects, review rejects only on request, nothing run rejects") {
  rv::verify_report r;
  CHECK_FALSE(r.accepted());
  r.checks = {{rv::check_group::correctness, "smoke", rv::outcome::pass, "", 0},
              {rv::check_group::audit, "hidden_work", rv::outcome::skip, "", 0}};
  CHECK(r.accepted());
  r.checks.push_back({rv::check_group::audit, "implausible_speedup", rv::outcome::review, "40x", 0});
  CHECK(r.accepted());
  CHECK(r.needs_review());
  r.review_rejects = true;
  CHECK_FALSE(r.accepted());
  r.review_rejects = false;
  r.checks.push_back({rv::check_group::audit, "static_scan", rv::outcome::fail, "a | b", 0});
  CHECK_FALSE(r.accepted());
  CHECK(r.failed() == std::vector<std::string>{"static_scan"});
  REQUIRE(r.find("static_scan") != nullptr);
  std::string md = rv::render_markdown(r);
  CHECK(md.find("a \\| b") != std::string::npos);  // a pipe in a detail cannot break the table
  CHECK(md.find("**FAIL**") != std::string::npos);
  auto json = rv::to_json(r);
  CHECK(json.at("verdict").as_string() == "rejected");
  CHECK(json.at("needs_review").as_bool());
}

TEST_CASE("the check table: every check and outcome by its name and back, in report order with its group") {
  CHECK(rv::check_table.front().id == rv::check_id::smoke);
  CHECK(rv::check_table.back().id == rv::check_id::sandbox);
  CHECK(rv::group_of(rv::check_id::edge_cases) == rv::check_group::correctness);
  CHECK(rv::group_of(rv::check_id::implausible_speedup) == rv::check_group::audit);
  CHECK(rv::group_of(rv::check_id::sandbox) == rv::check_group::containment);
  for (const rv::check_entry& c : rv::check_table) {
    CHECK(rv::check_id_from_string(rv::to_string(c.id)) == c.id);
    CHECK(rv::group_of(c.id) == c.group);
  }
  CHECK(rv::to_string(rv::check_id::shape_specialization) == "shape_specialization");
  CHECK_FALSE(rv::check_id_from_string("smoke_test").has_value());
  for (auto o : {rv::outcome::pass, rv::outcome::fail, rv::outcome::review, rv::outcome::skip}) {
    CHECK(rv::outcome_from_string(rv::to_string(o)) == o);
  }
  CHECK_FALSE(rv::outcome_from_string("pas").has_value());
  CHECK_FALSE(rv::outcome_from_string("").has_value());
}

namespace {

// Verifies the reference itself with a stand-in worker: a shell script that writes `lines` to its result
// descriptor (fd 3).
rv::verify_report verify_with_worker_lines(const std::string& lines) {
  auto dir = std::filesystem::temp_directory_path() / ("rnx-fake-worker-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir, std::filesystem::perms::all);  // the sandbox runs it as nobody
  const auto worker = dir / "worker.sh";
  std::ofstream(worker) << "#!/bin/sh\ncat >&3 <<'EOF'\n" << lines << "EOF\n";
  std::filesystem::permissions(worker, std::filesystem::perms::all);
  const auto reference = std::filesystem::path(RNX_SOURCE_DIR) / "tests" / "verify" / "refs" / "softmax.py";
  rv::verify_options o;
  o.reference = rv::reference_from_file(reference, "x=B,8");
  o.candidate = reference;
  o.worker = worker;
  o.limits.wall_s = 30;
  o.limits.allow_weaker = true;
  struct remove_dir {
    std::filesystem::path dir;
    ~remove_dir() { std::filesystem::remove_all(dir); }
  } cleanup{dir};
  return rv::verify_candidate(o);
}

}  // namespace

TEST_CASE("a worker row whose result is no outcome is the worker's failure, never a quiet fail") {
  const std::string ready = std::string(R"({"event":"ready","device":"cpu"})") + "\n";
  const std::string done = std::string(R"({"event":"done"})") + "\n";
  const std::string smoke = R"({"event":"check","group":"correctness","name":"smoke","detail":"ok","seconds":0,)";
  const rv::verify_report read = verify_with_worker_lines(ready + smoke + R"("result":"pass"})" + "\n" + done);
  REQUIRE(read.find("smoke") != nullptr);
  CHECK(read.find("smoke")->result == rv::outcome::pass);
  CHECK(read.find("shape_sweep")->result == rv::outcome::fail);  // a row the worker never wrote
  CHECK(read.checks.size() == rv::check_table.size());
  CHECK_THROWS_WITH_AS(verify_with_worker_lines(ready + smoke + R"("result":"pas"})" + "\n" + done),
                       doctest::Contains("the verify worker failed: its check row 'smoke' came with the unknown "
                                         "result 'pas'"),
                       rnx::error);
}

TEST_CASE("the verify worker's event names round trip; the sandbox's lines keep the sandbox's names") {
  using rvd::worker_event;
  std::set<std::string> names;
  for (auto k : {worker_event::sandbox, worker_event::sandbox_proc, worker_event::sandbox_fs, worker_event::ready,
                 worker_event::fatal, worker_event::check, worker_event::speedup, worker_event::costs,
                 worker_event::sealed, worker_event::done, worker_event::garbage}) {
    const std::string name(rvd::to_string(k));
    CAPTURE(name);
    CHECK(names.insert(name).second);
    CHECK(rvd::worker_event_from_string(name) == k);
  }
  CHECK(rvd::to_string(worker_event::unknown).empty());
  for (const char* unknown : {"", "unknown", "Check", "sandbox_layer", "check "}) {
    CAPTURE(unknown);
    CHECK_FALSE(rvd::worker_event_from_string(unknown).has_value());
  }
  namespace sb = rnx::sandbox;
  CHECK(rvd::to_string(worker_event::sandbox) == sb::to_string(sb::launch_event::sandbox));
  CHECK(rvd::to_string(worker_event::sandbox_proc) == sb::to_string(sb::launch_event::sandbox_proc));
  CHECK(rvd::to_string(worker_event::sandbox_fs) == sb::to_string(sb::launch_event::sandbox_fs));
}

namespace {

// `event` written as its line, carried as text (as the pipe carries it) and read back by `reader`: the line it
// reads as is the line written.
template <class Event>
Event round_trip(const Event& event, Event (*reader)(const boost::json::value&)) {
  const boost::json::object line = rvd::to_json(event);
  const Event back = reader(boost::json::parse(boost::json::serialize(line)));
  CHECK(rvd::to_json(back) == line);
  return back;
}

// The rows `add_rows` makes of the worker's `lines` (JSON objects), the sandbox's weaker layers allowed so that
// only what the lines say decides the sandbox row.
rv::verify_report rows_of(const std::vector<std::string>& lines) {
  rvd::worker_outcome w;
  for (const std::string& line : lines) w.events.push_back(boost::json::parse(line).as_object());
  rv::verify_options o;
  o.limits.allow_weaker = true;
  rv::verify_report report;
  rvd::add_rows(report, w, o, {});
  return report;
}

std::string line_of(const boost::json::object& event) { return boost::json::serialize(event); }

}  // namespace

TEST_CASE("every event of the verify worker reads back as it was written, under its wire names") {
  CHECK(round_trip(rvd::ready_event{.device = "cuda:0"}, rvd::ready_from_json).device == "cuda:0");

  const auto fatal =
      round_trip(rvd::fatal_event{.code = rnx::errc::not_found, .message = "no kernel"}, rvd::fatal_from_json);
  CHECK(fatal.code == rnx::errc::not_found);
  CHECK(rvd::to_json(fatal).at("code") == "not_found");

  const rvd::check_event check{.group = rv::check_group::audit,
                               .name = rv::check_id::static_scan,
                               .result = rv::outcome::review,
                               .detail = "line 3 [timer] patches time",
                               .dtype = "float16",
                               .seconds = 0.25};
  const auto check_back = round_trip(check, rvd::check_from_json);
  CHECK(check_back.name == rv::check_id::static_scan);
  CHECK(check_back.result == rv::outcome::review);
  CHECK(check_back.dtype == "float16");
  const boost::json::object check_line = rvd::to_json(check);
  CHECK(check_line.at("event") == "check");
  CHECK(check_line.at("group") == "audit");
  CHECK(check_line.at("name") == "static_scan");
  CHECK(check_line.at("result") == "review");
  CHECK(rvd::to_json(rvd::check_event{.name = rv::check_id::sandbox}).at("dtype").is_null());  // a row of the run

  CHECK(round_trip(rvd::speedup_event{.dtype = "float32", .value = 3.5}, rvd::speedup_from_json).value == 3.5);

  const auto costs = round_trip(
      rvd::costs_event{
          .compiler_stack_s = 1.5, .import_s = 0.5, .first_call_s = 2, .other_calls_s = 0.125, .calls = 41},
      rvd::costs_from_json);
  CHECK(costs.calls == 41);
  CHECK(costs.first_call_s == 2);

  const auto sealed = round_trip(rvd::sealed_event{.seccomp = true,
                                                   .why = "",
                                                   .killed = "killed by SIGSYS",
                                                   .sockets = 2,
                                                   .processes = 1,
                                                   .io_uring = 3,
                                                   .foreign_abi = 4,
                                                   .other = 5,
                                                   .calls = "socket x2",
                                                   .writes_outside = {.count = 6, .first = "/etc/passwd"},
                                                   .restarts = {"exit status 1"}},
                                 rvd::sealed_from_json);
  CHECK(sealed.writes_outside.count == 6);
  CHECK(sealed.writes_outside.first == "/etc/passwd");
  CHECK(sealed.restarts == std::vector<std::string>{"exit status 1"});
  CHECK(rvd::to_json(sealed).at("writes_outside").as_object().at("first") == "/etc/passwd");

  CHECK(rvd::to_json(round_trip(rvd::done_event{}, rvd::done_from_json)) == boost::json::object{{"event", "done"}});
  CHECK(round_trip(rvd::garbage_event{.line = "not json"}, rvd::garbage_from_json).line == "not json");

  // A line of one event is no other event, and a key no event has is refused by name.
  CHECK_THROWS_WITH_AS(rvd::check_from_json(rvd::to_json(rvd::done_event{})),
                       doctest::Contains("the line is a \"done\" event"), rnx::error);
  CHECK_THROWS_WITH_AS(rvd::ready_from_json(boost::json::parse(R"({"event":"ready","device":"cpu","root":true})")),
                       doctest::Contains("unknown key \"root\""), rnx::error);
}

TEST_CASE("a line of a known event that does not read as one is tampering, never a crash of the judge") {
  const std::string ready = line_of(rvd::to_json(rvd::ready_event{.device = "cpu"}));
  const std::string done = line_of(rvd::to_json(rvd::done_event{}));
  const std::string smoke = line_of(rvd::to_json(rvd::check_event{.group = rv::check_group::correctness,
                                                                  .name = rv::check_id::smoke,
                                                                  .result = rv::outcome::pass,
                                                                  .detail = "ok",
                                                                  .seconds = 0.5}));

  // Well-formed lines, with an event name the judge does not read among them: ignored, as before.
  const rv::verify_report honest = rows_of({ready, R"({"event":"progress","done":3})", smoke, done});
  REQUIRE(honest.find("smoke") != nullptr);
  CHECK(honest.find("smoke")->result == rv::outcome::pass);
  CHECK(honest.device == "cpu");
  REQUIRE(honest.find("sandbox") != nullptr);
  CHECK(honest.find("sandbox")->result == rv::outcome::pass);
  CHECK(honest.find("sandbox")->detail.find("tampered") == std::string::npos);

  struct malformed {
    const char* line;
    const char* entry;  // the start of the tampering entry the sandbox row names
  };
  for (const malformed& m : {
           malformed{R"({"event":"check","group":"correctness","name":"smoke","result":"pass","detail":"ok",)"
                     R"("seconds":"fast"})",
                     R"(a "check" line that does not read as one: verify worker output (check): key "seconds")"},
           malformed{R"({"event":"check","group":"correctness","name":"smoke_test","result":"pass"})",
                     R"(a "check" line that does not read as one: verify worker output (check): key "name")"},
           malformed{
               R"({"event":"check","name":"smoke","result":"pass","verdict":"accept"})",
               R"(a "check" line that does not read as one: verify worker output (check): unknown key "verdict")"},
           malformed{R"({"event":"sealed","seccomp":"yes"})",
                     R"(a "sealed" line that does not read as one: verify worker output (sealed): key "seccomp")"},
           malformed{R"({"event":"costs","calls":"many"})",
                     R"(a "costs" line that does not read as one: verify worker output (costs): key "calls")"},
           malformed{R"({"event":"fatal","code":"nonsense","message":"stop"})",
                     R"(a "fatal" line that does not read as one: verify worker output (fatal): key "code")"},
           malformed{R"({"event":"garbage"})", R"(a line that is not JSON: )"},
       }) {
    CAPTURE(m.line);
    rv::verify_report report;
    CHECK_NOTHROW(report = rows_of({ready, m.line, smoke, done}));
    REQUIRE(report.find("sandbox") != nullptr);
    CHECK(report.find("sandbox")->result == rv::outcome::fail);
    const std::string& detail = report.find("sandbox")->detail;
    CAPTURE(detail);
    CHECK(detail.find(std::string("the worker's report was tampered with (") + m.entry) != std::string::npos);
    CHECK(report.find("smoke")->result == rv::outcome::pass);  // the well-formed row still counts
  }

  // After the final line, even a well-formed one is tampering.
  const rv::verify_report late = rows_of({ready, done, smoke});
  CHECK(late.find("sandbox")->detail.find("tampered with (output after the final line)") != std::string::npos);

  // A genuine fatal event is the worker's error, thrown as before.
  CHECK_THROWS_WITH_AS(
      rows_of({ready, line_of(rvd::to_json(rvd::fatal_event{.code = rnx::errc::not_found, .message = "no kernel"}))}),
      doctest::Contains("no kernel"), rnx::error);
  CHECK_THROWS_WITH_AS(
      rows_of({ready, line_of(rvd::to_json(rvd::fatal_event{.code = rnx::errc::internal, .message = "boom"}))}),
      doctest::Contains("the verify worker failed: boom"), rnx::error);
}

TEST_CASE("the verify job file reads back as it was written; a key it does not know is refused by name") {
  rvd::job_file j;
  j.name = "softmax";
  j.reference = {"/k/ref.py", "run"};
  j.candidate = {"/k/cand.py", ""};
  j.inputs = {{"x", "B,1024"}, {"y", "4"}};
  j.batches = {1, 4};
  j.dtypes = {"float32", "bfloat16"};
  j.device = "cpu";
  j.tolerances["float32"] = {1e-4, 2e-5};
  j.seed = 0x7fffffffffffffffULL;
  j.speedup_limit = 12.5;
  j.implausible_speedup = rvd::on_implausible::review;
  j.cache_dir = "/cache";
  const boost::json::value written = rnx::json::to_object(j);
  CHECK(written.at("implausible_speedup") == "review");
  CHECK(written.at("inputs").at(0).at("shape") == "B,1024");
  const auto back = rnx::json::from_object<rvd::job_file>(written, "the verify job");
  CHECK(back.name == j.name);
  CHECK(back.reference.path == "/k/ref.py");
  CHECK(back.reference.entry == "run");
  CHECK(back.candidate.path == "/k/cand.py");
  REQUIRE(back.inputs.size() == 2);
  CHECK(back.inputs[1].name == "y");
  CHECK(back.inputs[1].shape == "4");
  CHECK(back.batches == j.batches);
  CHECK(back.dtypes == j.dtypes);
  CHECK(back.tolerances.at("float32").rtol == 1e-4);
  CHECK(back.tolerances.at("float32").atol == 2e-5);
  CHECK(back.seed == j.seed);
  CHECK(back.speedup_limit == 12.5);
  CHECK(back.implausible_speedup == rvd::on_implausible::review);
  CHECK(back.cache_dir == "/cache");
  boost::json::object extra = written.as_object();
  extra["speedup_review"] = true;
  try {
    (void)rnx::json::from_object<rvd::job_file>(extra, "the verify job");
    FAIL("expected an unknown key to be refused");
  } catch (const rnx::error& e) {
    CHECK(e.code() == rnx::errc::invalid);
    CHECK(std::string(e.what()).find("unknown key \"speedup_review\"") != std::string::npos);
  }
}

TEST_CASE("bad references are usage errors naming the fix") {
  CHECK_THROWS_WITH_AS(rv::reference_from_file("/nonexistent/ref.py", "x=B,8"), doctest::Contains("does not exist"),
                       rnx::error);
  auto here = std::filesystem::path(RNX_SOURCE_DIR) / "tests" / "verify" / "refs" / "softmax.py";
  CHECK_THROWS_WITH_AS(rv::reference_from_file(here, "x B,8"), doctest::Contains("NAME=SHAPE"), rnx::error);
  CHECK_THROWS_WITH_AS(rv::reference_from_file(here, "x=B,8;x=B,9"), doctest::Contains("given twice"), rnx::error);
  auto spec = rv::reference_from_file(here, "x=B,8; y=3,B");
  CHECK(spec.inputs.size() == 2);
  rv::verify_options o;
  o.reference = spec;
  o.candidate = "/nonexistent/candidate.py";
  CHECK_THROWS_WITH_AS(rv::verify_candidate(o), doctest::Contains("candidate /nonexistent/candidate.py does not exist"),
                       rnx::error);
}

namespace {

// Runs `body` in a child that first installs the worker's seccomp filter (phases 1 and 2); returns the wait status.
template <typename Body>
int in_filtered_child(Body body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::string why;
    if (!rnx::sandbox::install_filter(1, why) || !rnx::sandbox::install_filter(2, why)) ::_exit(90);
    ::_exit(body());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

}  // namespace

TEST_CASE("the seccomp filter refuses network sockets, ptrace, TIOCSTI, memfd_create and x32 calls, naming each") {
  // socket(AF_INET) and socket(AF_UNIX): EPERM from the trap handler, counted (a Unix socket on disk, such as
  // the Docker daemon's, would reach what the network namespace takes away); netlink still works.
  const int inet = in_filtered_child([] {
    errno = 0;
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd >= 0 || errno != EPERM) return 1;
    if (rnx::sandbox::blocked().sockets != 1) return 2;
    errno = 0;
    const int local = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (local >= 0 || errno != EPERM || rnx::sandbox::blocked().sockets != 2) return 3;
    return ::socket(AF_NETLINK, SOCK_RAW, 0) >= 0 ? 0 : 4;
  });
  REQUIRE(WIFEXITED(inet));
  CHECK(WEXITSTATUS(inet) == 0);

  // New processes are allowed (a kernel's first call may start its compilers) and inherit the filter.
  const int fork_status = in_filtered_child([] {
    const pid_t child = ::fork();
    if (child == 0) ::_exit(::socket(AF_INET, SOCK_STREAM, 0) < 0 && errno == EPERM ? 0 : 1);
    int status = 0;
    ::waitpid(child, &status, 0);
    return child > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
  });
  REQUIRE(WIFEXITED(fork_status));
  CHECK(WEXITSTATUS(fork_status) == 0);

  // Another process's memory: ptrace and process_vm_writev are refused with EPERM. Aimed at the process itself,
  // where both succeed without the filter, so only the filter can make them fail.
  const int peek = in_filtered_child([] {
    errno = 0;
    if (::syscall(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0) == 0 || errno != EPERM) return 1;
    char byte = 0, target = 0;
    iovec local{&byte, 1}, remote{&target, 1};
    errno = 0;
    if (::syscall(SYS_process_vm_writev, ::getpid(), &local, 1, &remote, 1, 0) >= 0 || errno != EPERM) return 2;
    // Typing into a terminal, and replacing the handler that records refusals: refused too.
    char c = 'x';
    errno = 0;
    if (::ioctl(0, TIOCSTI, &c) == 0 || errno != EPERM) return 3;
    struct sigaction sa {};
    sa.sa_handler = SIG_IGN;
    errno = 0;
    if (::sigaction(SIGSYS, &sa, nullptr) == 0 || errno != EPERM) return 4;
    const auto b = rnx::sandbox::blocked();
    if (b.other != 3) return 5;
    for (const char* name : {"ptrace x1", "process_vm_writev x1", "ioctl(TIOCSTI) x1"}) {
      if (b.calls.find(name) == std::string::npos) return 6;
    }
    return 0;
  });
  REQUIRE(WIFEXITED(peek));
  CHECK(WEXITSTATUS(peek) == 0);

  // memfd_create: a file on no mount, which neither noexec nor Landlock's execute rule covers.
  const int memfd = in_filtered_child([] {
    errno = 0;
    if (::syscall(SYS_memfd_create, "copy", 0) >= 0 || errno != EPERM) return 1;
    return rnx::sandbox::blocked().calls.find("memfd_create x1") == std::string::npos ? 2 : 0;
  });
  REQUIRE(WIFEXITED(memfd));
  CHECK(WEXITSTATUS(memfd) == 0);

#if defined(__x86_64__)
  // The same socket() through the x32 ABI (__X32_SYSCALL_BIT | nr): the filter sees the number before the kernel
  // decides whether it supports x32, so this holds on kernels with and without x32.
  // Refused with ENOSYS and recorded by name, not a kill (a kill took Triton down with it on the H200); so is
  // syscall(-1).
  const int x32 = in_filtered_child([] {
    errno = 0;
    if (::syscall(0x40000000L | SYS_socket, AF_INET, SOCK_STREAM, 0) >= 0 || errno != ENOSYS) return 1;
    errno = 0;
    if (::syscall(-1L) >= 0 || errno != ENOSYS) return 2;
    const auto b = rnx::sandbox::blocked();
    if (b.foreign_abi != 2 || b.calls.find("x32 system call 41 x1") == std::string::npos) return 3;
    return 0;
  });
  REQUIRE(WIFEXITED(x32));
  CHECK(WEXITSTATUS(x32) == 0);
#endif
}

TEST_CASE("resident_mb counts a grandchild that a thread other than the main one started") {
  constexpr std::size_t held_mb = 96;
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::setpgid(0, 0);  // its own group, so that one kill below ends the grandchild too
    // The child's main thread starts nothing; a second thread starts the grandchild that holds the memory.
    std::thread starter([&] {
      const pid_t grandchild = ::fork();
      if (grandchild == 0) {
        std::vector<char> held(held_mb << 20);
        std::memset(held.data(), 1, held.size());  // resident, not only reserved
        const char byte = 'r';
        if (::write(ready[1], &byte, 1) != 1) ::_exit(3);
        ::pause();
        ::_exit(0);
      }
      ::pause();
    });
    starter.join();
    ::_exit(0);
  }
  ::close(ready[1]);
  char byte = 0;
  REQUIRE(::read(ready[0], &byte, 1) == 1);  // the grandchild's memory is touched
  ::close(ready[0]);
  const std::int64_t counted = rnx::sandbox::resident_mb(child);
  ::kill(-child, SIGKILL);  // the child and the grandchild, which inherited its group
  ::waitpid(child, nullptr, 0);
  CHECK(counted >= static_cast<std::int64_t>(held_mb));
}

TEST_CASE("a tree's memory cgroup counts a process that left the tree by setsid and a double fork, and kills it") {
  rnx::sandbox::tree_cgroup group;
  if (!group.available()) {
    MESSAGE("skipped: this machine lets this process make no memory cgroup (the /proc walk alone counts)");
    return;
  }
  constexpr std::size_t held_mb = 96;
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (!rnx::sandbox::join_cgroup(group.procs_path().c_str())) ::_exit(2);
    if (::fork() == 0) {
      ::setsid();  // out of the tree's session and process group; its parent exits below, so out of its parent too
      std::vector<char> held(held_mb << 20);
      std::memset(held.data(), 1, held.size());
      const char byte = 'r';
      if (::write(ready[1], &byte, 1) != 1) ::_exit(3);
      ::pause();
      ::_exit(0);
    }
    ::_exit(0);
  }
  ::close(ready[1]);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  char byte = 0;
  REQUIRE(::read(ready[0], &byte, 1) == 1);  // the orphan's memory is touched
  ::close(ready[0]);
  CHECK(rnx::sandbox::resident_mb(child) == 0);  // the walk from the tree's root finds nothing: the root is gone
  CHECK(group.anon_mb() >= static_cast<std::int64_t>(held_mb));
  REQUIRE(group.processes().size() == 1);
  group.kill_all();
  // The orphan's new parent reaps it; it leaves the cgroup once it has exited (however long that takes: the test's
  // ctest TIMEOUT bounds the wait).
  while (!group.processes().empty()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(group.anon_mb() < static_cast<std::int64_t>(held_mb));
}
