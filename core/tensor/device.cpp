#include "tensor/device.h"

#include <charconv>

#include "util/error.h"

namespace plexus {

Device parse_device(const std::string& text) {
  if (text == "cpu") return Device::cpu();
  if (text == "cuda") return Device::cuda(0);
  if (text.rfind("cuda:", 0) == 0 && text.size() > 5) {
    int index = -1;
    const char* first = text.data() + 5;
    const char* last = text.data() + text.size();
    const auto [end, ec] = std::from_chars(first, last, index);
    if (ec == std::errc() && end == last && index >= 0) return Device::cuda(index);
  }
  throw ValueError("unknown device '" + text + "': expected cpu, cuda or cuda:N");
}

}  // namespace plexus
