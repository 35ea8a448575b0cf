// What the kernel forms share inside the runner: the factories load_kernel dispatches to (one per form, each in
// its own file: kernel_python.cpp, kernel_torchscript.cpp, kernel_native.cpp) and the helpers of their messages.
#pragma once

#include "rnx/runner/kernel.hpp"

#include <memory>
#include <string>
#include <vector>

namespace rnx::runner::detail {

std::unique_ptr<kernel> make_python_kernel(const kernel_spec& spec, const std::string& module_prefix);
std::unique_ptr<kernel> make_torchscript_kernel(const kernel_spec& spec);
std::unique_ptr<kernel> make_native_kernel(const kernel_spec& spec, const load_options& options);

std::string shape_text(const at::Tensor& t);
// "x=[8, 1024], w=[1024]": the inputs by their declared names, for a message.
std::string describe_inputs(const std::vector<input_spec>& specs, const std::vector<at::Tensor>& inputs);
std::string device_text(at::Device d);
// The floating inputs in float64 (the reference's), the others as they are.
std::vector<at::Tensor> to_float64(const std::vector<at::Tensor>& inputs);
// Throws rnx::error(kernel_failed) naming the kernel, its file, what failed and the inputs' shapes.
[[noreturn]] void kernel_call_failed(const kernel_spec& spec, const std::string& message,
                                     const std::vector<at::Tensor>& inputs);

}  // namespace rnx::runner::detail
