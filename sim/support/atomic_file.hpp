// A file written so that readers see all of it or nothing: a temporary file (flushed to
// disk) renamed over the final name. Shard results and --html/--trace/--sarif use it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace mbcheck::sim {

// Writes `text` to `path` through `tmp` (a name in the same directory that no other writer
// uses). Returns what went wrong ("cannot write x.json: No space left on device"), or
// nothing; a failed write leaves the old file (or none), never a truncated one.
// Writes all of `text` to `fd` (again after a short write or EINTR); 0, or the errno that
// stopped it (ENOSPC when a write wrote nothing).
int write_all(int fd, std::string_view text);

std::optional<std::string> write_file_atomically(const std::string& path, const std::string& tmp,
                                                 const std::string& text);

}  // namespace mbcheck::sim
