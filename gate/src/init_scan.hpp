// `rnx init`'s search for kernels: .py files with an entry function or a KernelBench Model, read as text
// (nothing of the user's code runs), with the input shapes that the file itself states.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rnx::gate {

// One parameter of an entry function and, when the file shows it, its shape ("B,1024") and where it was seen.
struct found_input {
  std::string name;
  std::string shape;     // "" = not inferred
  std::string evidence;  // "kernels/gelu.py:14: x = torch.randn(batch_size, 1024)"
};

struct found_kernel {
  std::string name;                   // unique, letters, digits, '_', '-', '.'
  std::filesystem::path path;         // relative to the scanned root, '/'-separated
  bool kernelbench = false;           // class Model + get_inputs + get_init_inputs
  std::string entry;                  // "" = the runner's default (run, or ModelNew/Model)
  std::vector<found_input> inputs;    // function kernels: the required positional parameters, in order
  std::optional<std::int64_t> batch;  // a module-level batch_size (or the batch constant a shape used)
  bool uses_gpu = false;              // mentions cuda or triton: wants a GPU runner

  bool shapes_complete() const;  // every input has a shape (KernelBench: always)
};

// A .py file that looks like a kernel but could not be taken, and why (printed by `rnx init`).
struct skipped_file {
  std::filesystem::path path;
  std::string reason;
};

struct scan_result {
  std::vector<found_kernel> kernels;  // sorted by path
  std::vector<skipped_file> skipped;
  std::size_t files_read = 0;
};

// Reads one Python source (`path` only names it in evidence and names); nullopt when it is not a kernel.
// `why_not` gets a reason when the file looks like a kernel but is ambiguous.
std::optional<found_kernel> inspect_python_source(std::string_view source, const std::filesystem::path& path,
                                                  std::string* why_not = nullptr);

// Walks `root` for .py files, skipping hidden folders, virtual environments, __pycache__, build output,
// node_modules and test files (test_*.py, *_test.py, conftest.py, setup.py). Kernel names are file stems,
// prefixed with their folder where two would collide.
scan_result scan_for_kernels(const std::filesystem::path& root);

}  // namespace rnx::gate
