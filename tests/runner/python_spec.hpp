// A Python kernel's spec as a manifest would give it: inputs of the given shapes, named `names` (the entry's
// parameters: inputs are bound by name), else a, b, c...
#pragma once

#include "rnx/common/manifest.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace rnx::test {

inline kernel_spec python_spec(const std::string& name, const std::filesystem::path& path,
                               const std::vector<std::string>& shapes, const std::string& entry = "",
                               const std::vector<std::string>& names = {}) {
  kernel_spec k;
  k.name = name;
  k.path = path.string();
  k.resolved_path = path;
  k.entry = entry;
  char input_name = 'a';
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const std::string& s = shapes[i];
    input_spec in;
    in.name = i < names.size() ? names[i] : std::string(1, input_name);
    ++input_name;
    in.text = s;
    in.dims = parse_shape(s, "test");
    k.inputs.push_back(in);
  }
  return k;
}

}  // namespace rnx::test
