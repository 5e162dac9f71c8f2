#include "sim/support/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

namespace mbcheck::sim {

int write_all(int fd, std::string_view text) {
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return w < 0 ? errno : ENOSPC;
    done += static_cast<std::size_t>(w);
  }
  return 0;
}

std::optional<std::string> write_file_atomically(const std::string& path, const std::string& tmp,
                                                 const std::string& text) {
  const int fd = ::open(tmp.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (fd < 0) return fmt::format("cannot create {}: {}", tmp, std::strerror(errno));
  auto fail = [&](const char* what) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return fmt::format("cannot {} {}: {}", what, path, std::strerror(err));
  };
  if (const int err = write_all(fd, text)) {
    errno = err;
    const std::string why = fail("write");
    ::close(fd);
    return why;
  }
  if (::fsync(fd) != 0) {
    const std::string why = fail("write");
    ::close(fd);
    return why;
  }
  if (::close(fd) != 0) return fail("write");
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return fail("rename a file over");
  return std::nullopt;
}

}  // namespace mbcheck::sim
