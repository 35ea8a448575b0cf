// The one parse of a closed vocabulary (docs/architecture.md, "Closed vocabularies"): each enum has its own
// to_string, and its `..._from_string` is the value among all of them whose to_string is the name.
//
//   std::optional<trend_kind> trend_kind_from_string(std::string_view name) {
//     return rnx::enum_from_name(name, {trend_kind::slower, trend_kind::faster, trend_kind::flat});
//   }
#pragma once

#include <initializer_list>
#include <optional>
#include <string_view>

namespace rnx {

// The value of `all` whose to_string (found beside the enum) equals `name`; nullopt for any other text.
template <class E>
std::optional<E> enum_from_name(std::string_view name, std::initializer_list<E> all) {
  for (E value : all) {
    if (to_string(value) == name) return value;
  }
  return std::nullopt;
}

}  // namespace rnx
