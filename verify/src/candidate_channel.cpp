// Length-prefixed messages between the judge and the candidate's process: an 8-byte marker, a 4-byte header
// length, the JSON header, each tensor's bytes in the order the header lists them, then an 8-byte end marker.
// The candidate runs in the process that writes the replies, so it can write to the channel too: the markers make
// anything it writes that is not a whole message a broken channel at once, and a message that stops part way
// (a forged length, say) is a broken channel once nothing more comes within the stall limit.
#include "candidate_channel.hpp"

#include "rnx/common/enum_names.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"

#include <boost/json.hpp>

#include <poll.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <limits>

namespace bj = boost::json;

namespace rnx::verify::detail {

std::string_view to_string(candidate_op op) {
  switch (op) {
    case candidate_op::load: return "load";
    case candidate_op::call: return "call";
    case candidate_op::hidden_work: return "hidden_work";
    case candidate_op::time: return "time";
    case candidate_op::time_fresh: return "time_fresh";
    case candidate_op::finish: return "finish";
  }
  return "finish";
}

std::optional<candidate_op> candidate_op_from_string(std::string_view name) {
  return enum_from_name(name, {candidate_op::load, candidate_op::call, candidate_op::hidden_work, candidate_op::time,
                               candidate_op::time_fresh, candidate_op::finish});
}

std::string_view to_string(candidate_event e) { return e == candidate_event::fatal ? "fatal" : "ready"; }

std::optional<candidate_event> candidate_event_from_string(std::string_view name) {
  return enum_from_name(name, {candidate_event::ready, candidate_event::fatal});
}

namespace {

constexpr std::uint32_t max_header_bytes = 1 << 20;
constexpr std::size_t max_dims = 16;

// The element types a kernel's inputs or outputs may have; anything else in a header is a broken message.
constexpr std::array<at::ScalarType, 12> known_types = {at::kFloat, at::kDouble, at::kHalf,         at::kBFloat16,
                                                        at::kLong,  at::kInt,    at::kShort,        at::kChar,
                                                        at::kByte,  at::kBool,   at::kComplexFloat, at::kComplexDouble};

constexpr std::array<char, 8> begin_marker = {'R', 'N', 'X', 'M', 'S', 'G', '0', '1'};
constexpr std::array<char, 8> end_marker = {'R', 'N', 'X', 'E', 'N', 'D', '0', '1'};

[[noreturn]] void broken(const std::string& what) {
  throw error(errc::kernel_failed, "its channel to the verifier broke (" + what +
                                       "): something in that process wrote to the channel, or cut a message short");
}

void write_all(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw error(errc::kernel_failed, "its channel is closed");
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

// Reads one message's bytes: the first may take as long as the call it answers; once it has come, the rest of the
// message must keep coming, each read within `stall_ms` (never, when negative).
class message_reader {
 public:
  message_reader(int fd, int stall_ms) : fd_(fd), stall_ms_(stall_ms) {}

  void read(void* data, std::size_t size) {
    char* p = static_cast<char*>(data);
    while (size > 0) {
      if (got_ > 0 && stall_ms_ >= 0) wait_for_more();
      ssize_t n = ::read(fd_, p, size);
      if (n < 0 && errno == EINTR) continue;
      if (n == 0) {
        if (got_ > 0) broken("a message cut short: the channel closed after " + std::to_string(got_) + " bytes");
        throw error(errc::kernel_failed, "its channel closed");
      }
      if (n < 0) throw error(errc::kernel_failed, std::string("reading its channel failed: ") + std::strerror(errno));
      p += n;
      size -= static_cast<std::size_t>(n);
      got_ += static_cast<std::uint64_t>(n);
    }
  }

 private:
  void wait_for_more() {
    for (;;) {
      pollfd pfd{fd_, POLLIN, 0};
      const int ready = ::poll(&pfd, 1, stall_ms_);
      if (ready > 0) return;
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0)
        throw error(errc::kernel_failed, std::string("waiting on its channel failed: ") + std::strerror(errno));
      broken("a message cut short: it stopped after " + std::to_string(got_) + " bytes and nothing more came within " +
             std::to_string(stall_ms_ / 1000.0).substr(0, 4) + " s");
    }
  }

  int fd_;
  int stall_ms_;
  std::uint64_t got_ = 0;
};

std::int64_t field_int(const bj::object& o, const char* key) {
  const bj::value* v = o.if_contains(key);
  if (!v || !v->is_int64() || v->as_int64() < 0)
    broken(std::string("tensor field '") + key + "' is missing or negative");
  return v->as_int64();
}

std::vector<std::int64_t> field_ints(const bj::object& o, const char* key) {
  const bj::value* v = o.if_contains(key);
  if (!v || !v->is_array() || v->as_array().size() > max_dims)
    broken(std::string("tensor field '") + key + "' is not a short list");
  std::vector<std::int64_t> out;
  for (const auto& x : v->as_array()) {
    if (!x.is_int64() || x.as_int64() < 0)
      broken(std::string("tensor field '") + key + "' holds a non-integer or negative");
    out.push_back(x.as_int64());
  }
  return out;
}

at::ScalarType parse_type(const bj::object& o) {
  const bj::value* v = o.if_contains("dtype");
  if (v && v->is_string()) {
    for (at::ScalarType t : known_types) {
      if (v->as_string() == c10::toString(t)) return t;
    }
  }
  broken("a tensor has no known dtype");
}

// Checked product: a header may not make the judge overflow or allocate past the message's limit.
std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) broken("tensor sizes overflow");
  return a * b;
}

}  // namespace

void send_message(int fd, bj::object header, const std::vector<at::Tensor>& values,
                  const std::vector<at::Tensor>& storages) {
  bj::array metas;
  std::vector<at::Tensor> payload;
  for (std::size_t index = 0; index < values.size() + storages.size(); ++index) {
    const bool whole_storage = index >= values.size();
    const at::Tensor& t = whole_storage ? storages[index - values.size()] : values[index];
    bj::object m;
    m["defined"] = t.defined();
    if (!t.defined()) {
      metas.push_back(std::move(m));
      continue;
    }
    at::Tensor cpu = t.detach();
    m["dtype"] = c10::toString(cpu.scalar_type());
    m["device"] = cpu.device().str();
    bj::array sizes;
    for (auto s : cpu.sizes()) sizes.push_back(s);
    m["sizes"] = std::move(sizes);
    if (whole_storage && cpu.has_storage()) {
      // The whole storage and the view's geometry: a kernel given every other element of a wider buffer must
      // get exactly that, gaps included.
      const std::int64_t item = static_cast<std::int64_t>(cpu.element_size());
      const std::int64_t elements = static_cast<std::int64_t>(cpu.storage().nbytes()) / item;
      at::Tensor host = cpu.as_strided({elements}, {1}, 0).to(at::kCPU).contiguous();
      bj::array strides;
      for (auto s : cpu.strides()) strides.push_back(s);
      m["strides"] = std::move(strides);
      m["offset"] = cpu.storage_offset();
      m["storage"] = elements;
      m["bytes"] = static_cast<std::int64_t>(host.nbytes());
      payload.push_back(std::move(host));
    } else {
      at::Tensor host = cpu.to(at::kCPU).contiguous();
      m["bytes"] = static_cast<std::int64_t>(host.nbytes());
      payload.push_back(std::move(host));
    }
    metas.push_back(std::move(m));
  }
  header["tensors"] = std::move(metas);
  const std::string text = bj::serialize(header);
  const auto length = static_cast<std::uint32_t>(text.size());
  write_all(fd, begin_marker.data(), begin_marker.size());
  write_all(fd, &length, sizeof length);
  write_all(fd, text.data(), text.size());
  for (const auto& t : payload) write_all(fd, t.data_ptr(), t.nbytes());
  write_all(fd, end_marker.data(), end_marker.size());
}

message receive_message(int fd, std::uint64_t max_bytes, int stall_ms) {
  message_reader in(fd, stall_ms);
  std::array<char, 8> marker{};
  in.read(marker.data(), marker.size());
  if (marker != begin_marker) broken("bytes that do not start a message");
  std::uint32_t length = 0;
  in.read(&length, sizeof length);
  if (length == 0 || length > max_header_bytes) broken("a message header of " + std::to_string(length) + " bytes");
  std::string text(length, '\0');
  in.read(text.data(), length);
  bj::value parsed;
  try {
    parsed = json::parse(text, "candidate channel");
  } catch (const error&) {
    broken("a message header that is not a JSON object");
  }
  if (!parsed.is_object()) broken("a message header that is not a JSON object");
  message m;
  m.header = std::move(parsed.as_object());
  const bj::value* list = m.header.if_contains("tensors");
  if (!list || !list->is_array()) broken("a message without its tensor list");
  std::uint64_t total = length;
  for (const auto& v : list->as_array()) {
    if (!v.is_object()) broken("a tensor entry that is not an object");
    const bj::object& meta = v.as_object();
    const bj::value* defined = meta.if_contains("defined");
    if (!defined || !defined->is_bool()) broken("a tensor entry without 'defined'");
    if (!defined->as_bool()) {
      m.tensors.emplace_back();
      continue;
    }
    const at::ScalarType type = parse_type(meta);
    const std::vector<std::int64_t> sizes = field_ints(meta, "sizes");
    const std::uint64_t bytes = static_cast<std::uint64_t>(field_int(meta, "bytes"));
    const auto item = static_cast<std::uint64_t>(c10::elementSize(type));
    total += bytes;
    if (total > max_bytes) broken("a message larger than " + std::to_string(max_bytes >> 20) + " MiB");
    at::Tensor t;
    if (meta.contains("strides")) {
      const std::vector<std::int64_t> strides = field_ints(meta, "strides");
      const std::int64_t offset = field_int(meta, "offset");
      const std::int64_t elements = field_int(meta, "storage");
      if (strides.size() != sizes.size()) broken("a tensor whose strides and sizes differ in length");
      if (checked_mul(static_cast<std::uint64_t>(elements), item) != bytes)
        broken("a tensor whose bytes do not match its storage");
      std::uint64_t last = static_cast<std::uint64_t>(offset);
      bool empty = false;
      for (std::size_t d = 0; d < sizes.size(); ++d) {
        if (sizes[d] == 0)
          empty = true;
        else
          last += checked_mul(static_cast<std::uint64_t>(sizes[d] - 1), static_cast<std::uint64_t>(strides[d]));
      }
      if (!empty && last >= static_cast<std::uint64_t>(elements)) broken("a tensor view reaching past its storage");
      at::Tensor storage = at::empty({elements}, at::TensorOptions().dtype(type));
      in.read(storage.data_ptr(), bytes);
      t = storage.as_strided(sizes, strides, offset);
    } else {
      std::uint64_t numel = 1;
      for (auto s : sizes) numel = checked_mul(numel, static_cast<std::uint64_t>(s));
      if (checked_mul(numel, item) != bytes) broken("a tensor whose bytes do not match its sizes");
      t = at::empty(sizes, at::TensorOptions().dtype(type));
      in.read(t.data_ptr(), bytes);
    }
    m.tensors.push_back(std::move(t));
  }
  in.read(marker.data(), marker.size());
  if (marker != end_marker) broken("a message that does not end where its header says");
  return m;
}

bool has_unread_bytes(int fd) {
  pollfd pfd{fd, POLLIN, 0};
  return ::poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLIN);
}

std::string sent_device(const bj::object& header, std::size_t index) {
  const bj::value* list = header.if_contains("tensors");
  if (!list || !list->is_array() || index >= list->as_array().size()) return "cpu";
  const bj::value& meta = list->as_array()[index];
  const bj::value* device = meta.is_object() ? meta.as_object().if_contains("device") : nullptr;
  return device && device->is_string() ? std::string(device->as_string()) : "cpu";
}

}  // namespace rnx::verify::detail
