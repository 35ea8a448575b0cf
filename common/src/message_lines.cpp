// The one framing of a worker's messages (see message_lines.hpp).
#include "rnx/common/message_lines.hpp"

namespace rnx {

std::vector<std::string> message_lines::feed(std::string_view chunk) {
  std::vector<std::string> lines;
  if (overflowed_) return lines;
  std::size_t begin = 0;
  for (std::size_t nl; (nl = chunk.find('\n', begin)) != std::string_view::npos; begin = nl + 1) {
    const std::string_view piece = chunk.substr(begin, nl - begin);
    if (pending_.size() + piece.size() > max_bytes_) {
      overflowed_ = true;
      pending_.clear();
      return lines;
    }
    pending_.append(piece);
    lines.push_back(std::move(pending_));
    pending_.clear();
  }
  const std::string_view rest = chunk.substr(begin);
  if (pending_.size() + rest.size() > max_bytes_) {
    overflowed_ = true;
    pending_.clear();
    return lines;
  }
  pending_.append(rest);
  return lines;
}

std::string message_lines::overflow_reason() const {
  const bool whole_mib = max_bytes_ % (std::size_t{1} << 20) == 0;
  const std::string size =
      whole_mib ? std::to_string(max_bytes_ >> 20) + " MiB" : std::to_string(max_bytes_) + " bytes";
  return "it wrote a message longer than " + size + " (the most a worker's message may take) and was stopped";
}

}  // namespace rnx
