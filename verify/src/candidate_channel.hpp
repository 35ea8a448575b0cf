// The channel between the judge (rnx-verify-worker, which runs the reference and decides every check) and the
// candidate's own process (the same binary started with --candidate-host): length-prefixed messages, a JSON
// header followed by the raw bytes of the tensors it lists. The judge treats everything it reads as untrusted.
#pragma once

#include <boost/json/object.hpp>

#include <ATen/ATen.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rnx::verify::detail {

// What the judge asks the candidate's process ("op" of a request header), and the "event" of the header the
// candidate's process sends unasked: ready once it is up, fatal when it cannot go on.
enum class candidate_op { load, call, hidden_work, time, time_fresh, finish };
std::string_view to_string(candidate_op op);
std::optional<candidate_op> candidate_op_from_string(std::string_view name);
enum class candidate_event { ready, fatal };
std::string_view to_string(candidate_event e);
std::optional<candidate_event> candidate_event_from_string(std::string_view name);

struct message {
  boost::json::object header;
  std::vector<at::Tensor> tensors;  // on the CPU, as read; undefined entries where the sender sent none
};

// Writes one message: `values` travel as their values only (contiguous: what outputs need), then `storages`
// with their whole storage and view geometry (so strided views with gaps keep their layout). Tensors may live on
// any device (they are copied to the CPU first); an undefined tensor is sent as such. Throws
// rnx::error(kernel_failed) when the other end is gone.
void send_message(int fd, boost::json::object header, const std::vector<at::Tensor>& values,
                  const std::vector<at::Tensor>& storages = {});

// Reads one message of at most `max_bytes` in all. Its first byte may take any time; once it has come, the rest
// must keep coming, each read within `stall_ms` (negative: no limit). Throws rnx::error(kernel_failed) with what
// was wrong: the other end closed the channel, or the channel broke: bytes that do not start a message, a message
// that breaks the format (bad length, unknown dtype, sizes that do not match the bytes, no end marker, ...) or one
// cut short. Nothing in a malformed message is used.
message receive_message(int fd, std::uint64_t max_bytes, int stall_ms = -1);

// Whether bytes are waiting on `fd` (after a whole reply: something wrote what nobody asked for).
bool has_unread_bytes(int fd);

// The device a received tensor claims to have come from ("cpu", "cuda:0"), as written by send_message.
std::string sent_device(const boost::json::object& header, std::size_t index);

}  // namespace rnx::verify::detail
