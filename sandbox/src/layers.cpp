// The names of the sandbox's layers and launch lines, and the report a caller builds from those lines.
#include "rnx/sandbox/sandbox.hpp"

#include "rnx/common/enum_names.hpp"

namespace rnx::sandbox {

std::string_view to_string(layer l) {
  switch (l) {
    case layer::user: return "user";
    case layer::host_files: return "host_files";
    case layer::session: return "session";
    case layer::proc_sys: return "proc_sys";
    case layer::dev: return "dev";
    case layer::scratch: return "scratch";
    case layer::tasks: return "tasks";
  }
  return "unknown";
}

std::optional<layer> parse_layer(std::string_view name) {
  for (layer l : all_layers()) {
    if (to_string(l) == name) return l;
  }
  return std::nullopt;
}

std::string_view to_string(launch_event e) {
  switch (e) {
    case launch_event::sandbox: return "sandbox";
    case launch_event::sandbox_proc: return "sandbox_proc";
    case launch_event::sandbox_fs: return "sandbox_fs";
    case launch_event::sandbox_layer: return "sandbox_layer";
  }
  return "sandbox";
}

std::optional<launch_event> launch_event_from_string(std::string_view name) {
  return enum_from_name(
      name, {launch_event::sandbox, launch_event::sandbox_proc, launch_event::sandbox_fs, launch_event::sandbox_layer});
}

std::string_view to_string(network_cut c) { return c == network_cut::seccomp ? "seccomp" : "namespace"; }

std::optional<network_cut> network_cut_from_string(std::string_view name) {
  return enum_from_name(name, {network_cut::own_namespace, network_cut::seccomp});
}

const std::vector<layer>& all_layers() {
  static const std::vector<layer> layers = {layer::user, layer::host_files, layer::session, layer::proc_sys,
                                            layer::dev,  layer::scratch,    layer::tasks};
  return layers;
}

bool layer_report::read(const boost::json::object& event) {
  const auto* kind = event.if_contains("event");
  if (!kind || !kind->is_string() ||
      launch_event_from_string(std::string_view(kind->as_string())) != launch_event::sandbox_layer) {
    return false;
  }
  const auto* name = event.if_contains("layer");
  const auto* ok = event.if_contains("ok");
  const auto* how = event.if_contains("how");
  if (!name || !name->is_string() || !ok || !ok->is_bool() || !how || !how->is_string()) return true;
  if (auto l = parse_layer(std::string_view(name->as_string()))) {
    seen_[*l] = {ok->as_bool(), std::string(how->as_string())};
  }
  return true;
}

std::vector<std::string> layer_report::missing() const {
  std::vector<std::string> out;
  for (layer l : all_layers()) {
    auto it = seen_.find(l);
    if (it == seen_.end()) {
      out.push_back(std::string(to_string(l)) + ": unknown (the worker said nothing)");
    } else if (!it->second.first) {
      out.push_back(std::string(to_string(l)) + ": " + it->second.second);
    }
  }
  return out;
}

std::string layer_report::describe() const {
  std::string out;
  for (layer l : all_layers()) {
    auto it = seen_.find(l);
    if (it == seen_.end() || !it->second.first) continue;
    out += (out.empty() ? "" : "; ") + it->second.second;
  }
  return out;
}

}  // namespace rnx::sandbox
