// A file written so that readers see all of it or nothing: a temporary file (flushed to
// disk) renamed over the final name. Shard results and --html/--trace/--sarif use it.
#pragma once

#include <optional>
#include <string>

namespace mbcheck::sim {

// Writes `text` to `path` through `tmp` (a name in the same directory that no other writer
// uses). Returns what went wrong ("cannot write x.json: No space left on device"), or
// nothing; a failed write leaves the old file (or none), never a truncated one.
std::optional<std::string> write_file_atomically(const std::string& path, const std::string& tmp,
                                                 const std::string& text);

}  // namespace mbcheck::sim
