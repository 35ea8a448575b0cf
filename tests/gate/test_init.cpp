// `rnx init`: the kernel search, the rnx.toml it writes (read back by the real parser), the workflow it copies,
// the .gitignore line, and its refusal to overwrite.
#include "init_scaffold.hpp"
#include "init_scan.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/manifest.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

using namespace rnx;
using namespace rnx::gate;

struct temp_repo {
  fs::path root;
  temp_repo() {
    static int counter = 0;
    root =
        fs::temp_directory_path() / ("rnx-init-test-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
    fs::remove_all(root);
    fs::create_directories(root);
  }
  ~temp_repo() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  void write(const fs::path& relative, const std::string& text) const {
    fs::create_directories((root / relative).parent_path());
    std::ofstream(root / relative, std::ios::binary) << text;
  }
  std::string read(const fs::path& relative) const {
    std::ifstream in(root / relative, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
};

const std::string gelu_source = R"(# A tanh GELU.
import math

import torch

batch_size = 16
features = 1024


def run(x: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3)))) * scale


if __name__ == "__main__":
    x = torch.randn(batch_size, features, dtype=torch.float32)
    print(run(x).shape)
)";

const std::string kernelbench_source = R"(import torch
import torch.nn as nn

batch_size = 32
dim = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
)";

}  // namespace

TEST_CASE("init: a function kernel's shapes come from the tensors its file makes") {
  auto k = inspect_python_source(gelu_source, "kernels/gelu.py");
  REQUIRE(k);
  CHECK(k->name == "gelu");
  CHECK_FALSE(k->kernelbench);
  CHECK(k->entry.empty());         // run: the runner's default
  REQUIRE(k->inputs.size() == 1);  // scale has a default: not an input
  CHECK(k->inputs[0].name == "x");
  CHECK(k->inputs[0].shape == "B,1024");
  CHECK(k->inputs[0].evidence == "kernels/gelu.py:15: x = torch.randn(batch_size, features, dtype=torch.float32)");
  REQUIRE(k->batch);
  CHECK(*k->batch == 16);
  CHECK_FALSE(k->uses_gpu);
}

TEST_CASE("init: KernelBench files, other entry names, and files that are not kernels") {
  auto kb = inspect_python_source(kernelbench_source, "kb/relu.py");
  REQUIRE(kb);
  CHECK(kb->kernelbench);
  CHECK(kb->inputs.empty());
  CHECK(kb->batch == std::optional<std::int64_t>(32));

  const std::string named =
      "import torch\n\n\ndef fused_add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:\n"
      "    return (a + b).cuda()\n\n\ndef _helper(x):\n    return x\n";
  auto f = inspect_python_source(named, "add.py");
  REQUIRE(f);
  CHECK(f->entry == "fused_add");
  REQUIRE(f->inputs.size() == 2);
  CHECK(f->inputs[1].name == "b");
  CHECK(f->inputs[1].shape.empty());
  CHECK_FALSE(f->shapes_complete());
  CHECK(f->uses_gpu);

  std::string why;
  const std::string two =
      "import torch\n\ndef f(a: torch.Tensor):\n    return a\n\ndef g(a: torch.Tensor):\n    return a\n";
  CHECK_FALSE(inspect_python_source(two, "two.py", &why));
  CHECK(why.find("several functions take tensors (f, g)") != std::string::npos);

  why.clear();
  const std::string no_init = "import torch\nclass Model:\n    pass\ndef get_inputs():\n    return []\n";
  CHECK_FALSE(inspect_python_source(no_init, "kb.py", &why));
  CHECK(why.find("get_init_inputs()") != std::string::npos);

  why.clear();
  CHECK_FALSE(inspect_python_source("def main():\n    print('hello')\n", "tool.py", &why));
  CHECK(why.empty());
  // Constructions it cannot read leave the shape to the user rather than guessing.
  auto odd = inspect_python_source(
      "import torch\nn = 3\ndef run(x, y, z):\n    return x\nx = torch.randn(,)\n"
      "y = torch.randn()\nz = torch.randn(n, m)\n",
      "odd.py");
  REQUIRE(odd);
  REQUIRE(odd->inputs.size() == 3);
  CHECK_FALSE(odd->shapes_complete());
  CHECK(odd->inputs[0].shape.empty());
  CHECK(odd->inputs[1].shape.empty());
  CHECK(odd->inputs[2].shape.empty());
  // A def inside a docstring is text, not a function.
  CHECK_FALSE(inspect_python_source("\"\"\"\ndef run(x):\n\"\"\"\nimport os\n", "doc.py", &why));
}

TEST_CASE("init: the rnx.toml it writes is read by the real parser, inferred or not") {
  temp_repo repo;
  repo.write("kernels/gelu.py", gelu_source);
  repo.write("kernels/kb_relu.py", kernelbench_source);
  repo.write("kernels/attention.py", "import torch\n\ndef run(q, k, v):\n    return q @ k.transpose(-2, -1) @ v\n");
  repo.write("other/gelu.py", gelu_source);       // same stem: both names take their folder
  repo.write("tests/test_gelu.py", gelu_source);  // test files are not kernels
  repo.write(".venv/lib/x.py", gelu_source);      // nor anything in hidden folders
  init_options options;
  options.root = repo.root;
  options.project = "demo";
  init_plan plan = plan_init(options);
  REQUIRE(plan.scan.kernels.size() == 4);
  CHECK(plan.workflow == "report-only-hosted");
  apply_init(plan, repo.root);

  const manifest m = load_manifest(repo.root / "rnx.toml");
  CHECK(m.project == "demo");
  REQUIRE(m.kernels.size() == 4);
  CHECK(m.kernels[0].name == "attention");
  CHECK(m.kernels[0].inputs.empty());  // not inferred: left to the user, explained in a comment
  CHECK(m.kernels[1].name == "kernels-gelu");
  REQUIRE(m.kernels[1].inputs.size() == 1);
  CHECK(m.kernels[1].inputs[0].text == "B,1024");
  CHECK(m.kernels[1].batch == std::vector<std::int64_t>{16});
  CHECK(m.kernels[2].name == "kb_relu");
  CHECK(m.kernels[2].batch == std::vector<std::int64_t>{32});
  CHECK(m.kernels[3].name == "other-gelu");
  CHECK(m.kernels[0].bench.threads == 1);
  const std::string text = repo.read("rnx.toml");
  CHECK(text.find("# inputs = { q = \"?\", k = \"?\", v = \"?\" }") != std::string::npos);
  CHECK(text.find("# x: from kernels/gelu.py:15: x = torch.randn(batch_size, features, dtype=torch.float32)") !=
        std::string::npos);

  const std::string workflow = repo.read(".github/workflows/rnx.yml");
  CHECK(workflow.rfind("# Written by `rnx init` from ci-examples/report-only-hosted.yml of rnx.\n", 0) == 0);
  CHECK(workflow.find(ci_example_text("report-only-hosted")) != std::string::npos);
  CHECK(repo.read(".gitignore") == "# rnx: the embedded baseline store and the run files rnx gate writes\n.rnx/\n");
}

TEST_CASE("init: a batch every kernel shares goes to [defaults]; a kernel's own batch only where it differs") {
  temp_repo repo;
  repo.write("kernels/gelu.py", gelu_source);            // batch_size = 16
  repo.write("other/gelu.py", gelu_source);              // 16 again
  repo.write("kernels/kb_relu.py", kernelbench_source);  // batch_size = 32
  init_options options;
  options.root = repo.root;
  options.project = "demo";
  apply_init(plan_init(options), repo.root);
  const std::string text = repo.read("rnx.toml");
  CHECK(text.find("batch    = [16]") != std::string::npos);
  // Only the KernelBench file differs from the defaults, and its line says that it replaces them.
  CHECK(text.find("batch  = [16]") == std::string::npos);
  CHECK(text.find("batch  = [32]   # batch_size = 32 in the file; this replaces [defaults] batch for this kernel") !=
        std::string::npos);
  const manifest m = load_manifest(repo.root / "rnx.toml");
  REQUIRE(m.find_kernel("kernels-gelu"));
  CHECK(m.find_kernel("kernels-gelu")->batch == std::vector<std::int64_t>{16});
  CHECK(m.find_kernel("other-gelu")->batch == std::vector<std::int64_t>{16});
  CHECK(m.find_kernel("kb_relu")->batch == std::vector<std::int64_t>{32});
}

TEST_CASE("init: refuses to overwrite, names the files and the flag; --force replaces; .gitignore is appended once") {
  temp_repo repo;
  repo.write("k/gelu.py", gelu_source);
  repo.write(".gitignore", "build/");  // no newline at its end
  init_options options;
  options.root = repo.root;
  apply_init(plan_init(options), repo.root);
  CHECK(repo.read(".gitignore") ==
        "build/\n# rnx: the embedded baseline store and the run files rnx gate writes\n.rnx/\n");
  CHECK(load_manifest(repo.root / "rnx.toml").project == repo.root.filename().string());

  repo.write("rnx.toml", "# mine\n");
  try {
    plan_init(options);
    FAIL("no error for an existing rnx.toml");
  } catch (const error& e) {
    CHECK(e.exit_code() == 2);
    CHECK(std::string(e.what()).find("rnx.toml and .github/workflows/rnx.yml already exist in ") == 0);
    CHECK(std::string(e.what()).find("; rnx init does not overwrite them: pass --force to replace them") !=
          std::string::npos);
  }
  CHECK(repo.read("rnx.toml") == "# mine\n");  // untouched

  options.force = true;
  init_plan plan = plan_init(options);
  for (const auto& f : plan.files) CHECK(f.path != fs::path(".gitignore"));  // the line is there already
  apply_init(plan, repo.root);
  CHECK(repo.read("rnx.toml").find("[[kernel]]") != std::string::npos);

  fs::remove_all(repo.root / ".github");
  options.force = false;
  CHECK_THROWS_WITH(plan_init(options), ("rnx.toml already exists in " + fs::canonical(repo.root).string() +
                                         "; rnx init does not overwrite it: pass --force to replace it (or --dry-run "
                                         "to see what it would write)")
                                            .c_str());
}

TEST_CASE("init: GPU kernels get the self-hosted gate; bad --workflow and an empty repository are usage errors") {
  temp_repo repo;
  repo.write("k/add.py", "import torch\n\ndef run(x):\n    return x.cuda() + 1\n");
  init_options options;
  options.root = repo.root;
  CHECK(plan_init(options).workflow == "pr-gate");
  options.workflow = "none";
  CHECK(plan_init(options).files.size() == 2);  // rnx.toml and .gitignore
  options.workflow = "nightly";
  CHECK_THROWS_WITH(plan_init(options), doctest::Contains("--workflow nightly: no such example workflow (use one of: "
                                                          "accept-comment, "));
  CHECK_THROWS_WITH(plan_init(options), doctest::Contains(", pr-gate, "));
  CHECK_THROWS_WITH(plan_init(options), doctest::Contains(", or none)"));
  temp_repo empty;
  empty.write("tool.py", "print('hello')\n");
  options.root = empty.root;
  options.workflow.clear();
  CHECK_THROWS_WITH(plan_init(options), doctest::Contains("no kernel found under "));
}

TEST_CASE("init: the workflows compiled into rnx are the ones in ci-examples/") {
  const auto names = ci_example_names();
  CHECK(names.size() >= 5);
  for (const auto& name : names) {
    std::ifstream in(fs::path(RNX_SOURCE_DIR) / "ci-examples" / (name + ".yml"), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    CHECK_MESSAGE(text.str() == ci_example_text(name), name, ".yml differs from the copy compiled into rnx");
  }
}

TEST_CASE("init: the example kernels of this repository make a manifest the parser accepts") {
  init_options options;
  options.root = fs::path(RNX_SOURCE_DIR) / "examples";
  options.force = true;  // examples/ has its own rnx.toml; nothing is written here
  init_plan plan = plan_init(options);
  CHECK(plan.scan.kernels.size() >= 10);
  const manifest m = parse_manifest(plan.files.front().content, "rnx.toml", options.root);
  CHECK(m.kernels.size() == plan.scan.kernels.size());
  const kernel_spec* kb = m.find_kernel("kb_linear_gelu");
  REQUIRE(kb);
  CHECK(kb->batch == std::vector<std::int64_t>{16});
}
