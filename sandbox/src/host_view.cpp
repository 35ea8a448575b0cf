// What of the host a sandboxed worker may read and run (parent side, before fork): its program's folder, its
// libraries' folders and the Python install above them, the Python environment its variables name, and, started as
// root, where those lie under a folder nobody may enter (/root), the tmpfs that covers that folder.
#include "host_view.hpp"

#include <elf.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>

namespace rnx::sandbox {

namespace fs = std::filesystem;

namespace {

// The DT_RUNPATH and DT_RPATH lists of a 64-bit ELF file of this machine's byte order; empty for anything else.
std::vector<std::string> elf_search_paths(const fs::path& program) {
  std::ifstream in(program, std::ios::binary);
  const std::string image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Elf64_Ehdr eh{};
  if (image.size() < sizeof eh) return {};
  std::copy_n(image.data(), sizeof eh, reinterpret_cast<char*>(&eh));
  if (std::string_view(reinterpret_cast<const char*>(eh.e_ident), SELFMAG) != ELFMAG ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr)) {
    return {};
  }
  std::vector<Elf64_Phdr> segments(eh.e_phnum);
  if (eh.e_phoff + segments.size() * sizeof(Elf64_Phdr) > image.size()) return {};
  std::copy_n(image.data() + eh.e_phoff, segments.size() * sizeof(Elf64_Phdr),
              reinterpret_cast<char*>(segments.data()));
  // A virtual address of a loaded segment as an offset in the file.
  auto file_offset = [&](std::uint64_t address) -> std::uint64_t {
    for (const auto& s : segments) {
      if (s.p_type == PT_LOAD && address >= s.p_vaddr && address < s.p_vaddr + s.p_filesz) {
        return address - s.p_vaddr + s.p_offset;
      }
    }
    return image.size();
  };
  std::vector<Elf64_Dyn> dynamic;
  for (const auto& s : segments) {
    if (s.p_type != PT_DYNAMIC || s.p_offset + s.p_filesz > image.size()) continue;
    dynamic.resize(s.p_filesz / sizeof(Elf64_Dyn));
    std::copy_n(image.data() + s.p_offset, dynamic.size() * sizeof(Elf64_Dyn), reinterpret_cast<char*>(dynamic.data()));
  }
  std::uint64_t strtab = image.size();
  for (const auto& d : dynamic) {
    if (d.d_tag == DT_STRTAB) strtab = file_offset(d.d_un.d_ptr);
  }
  std::vector<std::string> out;
  for (const auto& d : dynamic) {
    if ((d.d_tag != DT_RUNPATH && d.d_tag != DT_RPATH) || strtab + d.d_un.d_val >= image.size()) continue;
    std::istringstream list(std::string(image.c_str() + strtab + d.d_un.d_val));
    for (std::string dir; std::getline(list, dir, ':');) out.push_back(dir);
  }
  return out;
}

// A folder named lib or lib64 that holds python3.* is a Python install's: its prefix (bin/ with the interpreter the
// compilers start, lib/ with the standard library and site-packages) is what the worker needs.
fs::path python_prefix_of(const fs::path& folder) {
  const std::string name = folder.filename().string();
  if ((name != "lib" && name != "lib64") || folder.parent_path() == folder.root_path()) return {};
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename().string().rfind("python3", 0) == 0 && it->is_directory(ec)) return folder.parent_path();
  }
  return {};
}

// The value of `name` in an environment of NAME=VALUE entries.
std::string variable(const std::vector<std::string>& env, const std::string& name) {
  for (const auto& e : env) {
    if (e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=') {
      return e.substr(name.size() + 1);
    }
  }
  return "";
}

bool beneath(const fs::path& p, const fs::path& folder) {
  const auto rel = p.lexically_relative(folder);
  return !rel.empty() && *rel.begin() != "..";
}

// Canonical existing absolute paths, none beneath another (nor "/").
std::vector<fs::path> outermost(const std::vector<fs::path>& paths) {
  std::vector<fs::path> found;
  for (const auto& p : paths) {
    std::error_code ec;
    if (!p.is_absolute()) continue;
    const fs::path c = fs::canonical(p, ec);
    if (!ec && c != c.root_path()) found.push_back(c);
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  for (const auto& p : found) {
    if (out.empty() || !beneath(p, out.back())) out.push_back(p);
  }
  return out;
}

}  // namespace

std::vector<fs::path> program_folders(const fs::path& program, const std::vector<std::string>& env) {
  std::error_code ec;
  const fs::path exe = fs::canonical(program, ec);
  if (ec) return {};
  std::vector<fs::path> wanted = {exe.parent_path()};
  for (std::string dir : elf_search_paths(exe)) {
    if (dir.rfind("$ORIGIN", 0) == 0) dir = exe.parent_path().string() + dir.substr(7);
    const fs::path folder = fs::path(dir).lexically_normal();
    wanted.push_back(folder);
    if (auto prefix = python_prefix_of(folder); !prefix.empty()) wanted.push_back(prefix);
  }
  for (const char* name : {"PYTHONHOME", "VIRTUAL_ENV", "CONDA_PREFIX"}) wanted.push_back(variable(env, name));
  for (const char* name : {"PYTHONPATH", "LD_LIBRARY_PATH"}) {
    std::istringstream list(variable(env, name));
    for (std::string dir; std::getline(list, dir, ':');) wanted.push_back(dir);
  }
  return outermost(wanted);
}

namespace detail {

namespace {

bool closed_to_others(const fs::path& folder) {
  struct stat st {};
  return ::stat(folder.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && !(st.st_mode & S_IXOTH);
}

// The outermost folder above `p` that others may not enter; empty when there is none.
fs::path closed_above(const fs::path& p) {
  fs::path at = p.root_path();
  for (const auto& part : p.parent_path().relative_path()) {
    at /= part;
    if (closed_to_others(at)) return at;
  }
  return {};
}

void add_once(std::vector<fs::path>& list, const fs::path& p) {
  if (std::find(list.begin(), list.end(), p) == list.end()) list.push_back(p);
}

struct needed_path {
  fs::path path;
  bool job = false;  // one of the caller's `readable`
};

// Started as root, for a worker that is not: each needed path beneath a folder others may not enter gets that folder
// covered, the folders between made in the cover and the path itself shown again (its own modes then decide). A job
// path that is itself such a folder (a kernel's folder made by mkdtemp, mode 700) is made in the cover with what
// else is needed beneath it shown there, never shown itself: a bind of it would stay closed to the worker. So a
// needed path deeper in a closed folder than another is shown too (a manifest at a mode-700 project's root, its
// kernel in kernels/).
void plan_covers(host_view& view, const std::vector<needed_path>& needed) {
  std::vector<fs::path> shown;
  for (const auto& [p, job] : needed) {
    const bool closed_itself = job && closed_to_others(p);
    fs::path cover = closed_above(p);
    if (cover.empty() && closed_itself) cover = p;
    if (cover.empty()) continue;
    add_once(view.covers, cover);
    if (p == cover) continue;
    fs::path step = cover;
    for (const auto& part : p.lexically_relative(cover)) {
      step /= part;
      if (step != p || closed_itself) add_once(view.skeleton, step);
    }
    if (!closed_itself) add_once(shown, p);
  }
  // What lies beneath a shown path is shown with it (and nothing can be made there: it is the host's).
  std::sort(shown.begin(), shown.end());
  for (const auto& p : shown) {
    if (view.shown.empty() || !beneath(p, view.shown.back().path)) {
      std::error_code ec;
      view.shown.push_back({p, fs::is_directory(p, ec)});
    }
  }
  auto under_shown = [&](const fs::path& f) {
    return std::any_of(view.shown.begin(), view.shown.end(),
                       [&](const shown_path& s) { return f == s.path || beneath(f, s.path); });
  };
  view.skeleton.erase(std::remove_if(view.skeleton.begin(), view.skeleton.end(), under_shown), view.skeleton.end());
  std::sort(view.skeleton.begin(), view.skeleton.end());  // parents first
  // A cover beneath another is covered already.
  view.covers = outermost(view.covers);
}

}  // namespace

host_view plan_host_view(const fs::path& program, const std::vector<std::string>& env,
                         const std::vector<fs::path>& readable, const fs::path& scratch, bool cover_closed) {
  host_view view;
  view.programs = program_folders(program, env);
  std::error_code bad;
  if (const fs::path exe = fs::canonical(program, bad); !bad) {
    for (std::string dir : elf_search_paths(exe)) {
      if (dir.rfind("$ORIGIN", 0) == 0) dir = exe.parent_path().string() + dir.substr(7);
      const fs::path prefix = python_prefix_of(fs::path(dir).lexically_normal());
      if (!prefix.empty() && fs::is_directory(prefix / "bin", bad) && view.python_bin.empty()) {
        view.python_bin = prefix / "bin";
      }
    }
  }
  view.readable = outermost(readable);
  if (!cover_closed) return view;
  std::vector<needed_path> needed;
  for (const auto& p : view.programs) needed.push_back({p, false});
  for (const auto& r : readable) {
    std::error_code ec;
    const fs::path c = r.is_absolute() ? fs::canonical(r, ec) : fs::path();
    if (!c.empty() && !ec && c != c.root_path()) needed.push_back({c, true});
  }
  // Scratch is a tmpfs of its own: only a closed folder above it matters.
  if (std::error_code ec; fs::exists(scratch, ec)) needed.push_back({fs::canonical(scratch, ec), false});
  plan_covers(view, needed);
  return view;
}

}  // namespace detail

}  // namespace rnx::sandbox
