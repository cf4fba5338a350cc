#include "common/handles.h"

#include <unistd.h>

namespace sigil::common {

void UniqueFd::Reset(int fd) {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = fd;
}

}  // namespace sigil::common
