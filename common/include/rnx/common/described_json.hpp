// Messages declared once: a struct described with BOOST_DESCRIBE_STRUCT (its public members, by name) is written
// and read by these two templates, so the process that writes a message and the one that reads it share one type
// and no codec is written by hand for it. Reading is strict: a key that is no member is refused (naming the
// members), a member's value must have the member's type (the error names the key), and a member left out keeps
// its default. Enums described with BOOST_DESCRIBE_ENUM travel as their names; std::optional as the value or null.
#pragma once

#include "rnx/common/error.hpp"

#include <boost/describe.hpp>
#include <boost/json.hpp>
#include <boost/mp11/algorithm.hpp>

#include <string>
#include <string_view>
#include <type_traits>

namespace rnx::json {

template <class T>
using described_members = boost::describe::describe_members<T, boost::describe::mod_public>;

// Every member of `message` under its name.
template <class T>
boost::json::object to_object(const T& message) {
  boost::json::object out;
  boost::mp11::mp_for_each<described_members<T>>(
      [&](auto member) { out[member.name] = boost::json::value_from(message.*member.pointer); });
  return out;
}

// The members' names, comma-separated, for messages.
template <class T>
std::string member_names() {
  std::string out;
  boost::mp11::mp_for_each<described_members<T>>(
      [&](auto member) { out += (out.empty() ? "" : ", ") + std::string(member.name); });
  return out;
}

// `value` as a T; throws rnx::error(invalid) "WHERE: ..." naming the key at fault.
template <class T>
T from_object(const boost::json::value& value, std::string_view where) {
  const boost::json::object* object = value.if_object();
  if (!object) throw error(errc::invalid, std::string(where) + ": expected a JSON object");
  for (const auto& field : *object) {
    bool known = false;
    boost::mp11::mp_for_each<described_members<T>>([&](auto member) { known = known || field.key() == member.name; });
    if (!known) {
      throw error(errc::invalid, std::string(where) + ": unknown key \"" + std::string(field.key()) +
                                     "\" (the keys are " + member_names<T>() + ")");
    }
  }
  T out{};
  boost::mp11::mp_for_each<described_members<T>>([&](auto member) {
    const boost::json::value* given = object->if_contains(member.name);
    if (!given) return;
    using member_type = std::remove_cvref_t<decltype(out.*member.pointer)>;
    auto read = boost::json::try_value_to<member_type>(*given);
    if (!read) {
      throw error(errc::invalid, std::string(where) + ": key \"" + member.name + "\": " + read.error().message());
    }
    out.*member.pointer = std::move(*read);
  });
  return out;
}

}  // namespace rnx::json
