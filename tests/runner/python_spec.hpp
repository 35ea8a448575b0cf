// A Python kernel's spec as a manifest would give it: inputs named a, b, c... of the given shapes.
#pragma once

#include "rnx/common/manifest.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace rnx::test {

inline kernel_spec python_spec(const std::string& name, const std::filesystem::path& path,
                               const std::vector<std::string>& shapes, const std::string& entry = "") {
  kernel_spec k;
  k.name = name;
  k.path = path.string();
  k.resolved_path = path;
  k.entry = entry;
  char input_name = 'a';
  for (const auto& s : shapes) {
    input_spec in;
    in.name = std::string(1, input_name++);
    in.text = s;
    in.dims = parse_shape(s, "test");
    k.inputs.push_back(in);
  }
  return k;
}

}  // namespace rnx::test
