#include "sim/explore/shard_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "sim/explore/explore.hpp"      // ShardError
#include "sim/support/atomic_file.hpp"  // write_all

namespace mbcheck::sim::dpor {

namespace {

std::uint32_t checksum(const char* data, std::size_t n) {
  return static_cast<std::uint32_t>(::crc32(0L, reinterpret_cast<const Bytef*>(data), static_cast<uInt>(n)));
}

constexpr const char* kHeaderPrefix = "mbcheck shard log: ";

}  // namespace

ShardLogs::ShardLogs(std::string dir, unsigned index, unsigned count, std::string identity)
    : dir_(std::move(dir)), index_(index), identity_(std::move(identity)), logs_(count) {
  for (unsigned i = 0; i < count; ++i) logs_[i].path = fmt::format("{}/shard-{}.log", dir_, i + 1);
  Log& own = logs_[index_];
  own.fd = ::open(own.path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (own.fd < 0) throw ShardError(fmt::format("cannot open {}: {}", own.path, std::strerror(errno)));
  // What an earlier life of this shard recorded counts; a line it left unfinished is cut.
  read_new(own);
  struct stat st {};
  if (::fstat(own.fd, &st) != 0) throw ShardError(fmt::format("cannot read {}: {}", own.path, std::strerror(errno)));
  if (static_cast<std::uint64_t>(st.st_size) > own.offset && ::ftruncate(own.fd, static_cast<off_t>(own.offset)) != 0)
    throw ShardError(fmt::format("cannot cut the unfinished end of {}: {}", own.path, std::strerror(errno)));
  if (own.offset == 0) {
    const std::string h = header();
    append_line(h);
    own.offset = h.size();
  }
}

ShardLogs::~ShardLogs() {
  for (Log& log : logs_)
    if (log.fd >= 0) ::close(log.fd);
}

std::string ShardLogs::header() const { return fmt::format("{}{}\n", kHeaderPrefix, identity_); }

void ShardLogs::append_line(const std::string& line) {
  const Log& own = logs_[index_];
  if (const int err = write_all(own.fd, line))
    throw ShardError(fmt::format("cannot write {}: {}", own.path, std::strerror(err)));
}

void ShardLogs::append(std::uint64_t wave, std::size_t item, const std::string& json) {
  const std::string body = fmt::format("{} {} {}", wave, item, json);
  append_line(fmt::format("{:08x} {}\n", checksum(body.data(), body.size()), body));
}

void ShardLogs::read_new(Log& log) {
  if (log.fd < 0) {
    log.fd = ::open(log.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (log.fd < 0) {
      if (errno == ENOENT) return;  // that shard has not started yet
      throw ShardError(fmt::format("cannot open {}: {}", log.path, std::strerror(errno)));
    }
  }
  struct stat st {};
  if (::fstat(log.fd, &st) != 0) throw ShardError(fmt::format("cannot read {}: {}", log.path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) throw ShardError(fmt::format("{} is not a shard log (not a regular file)", log.path));
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size < log.offset) log.offset = 0;  // cut below what was read: read it again
  if (size == log.offset) return;
  std::string text(size - log.offset, '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t r = ::pread(log.fd, text.data() + got, text.size() - got, static_cast<off_t>(log.offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw ShardError(fmt::format("cannot read {}: {}", log.path, std::strerror(errno)));
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  text.resize(got);
  log.offset += judge(log, text);
}

std::size_t ShardLogs::judge(const Log& log, const std::string& text) {
  std::size_t pos = 0;
  for (;;) {
    const std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) return pos;  // unfinished: read again later
    const std::string_view line(text.data() + pos, nl - pos);
    if (log.offset + pos == 0) {  // the header
      if (line.substr(0, std::strlen(kHeaderPrefix)) != kHeaderPrefix)
        throw ShardError(fmt::format("{} is not a shard log", log.path));
      if (line.substr(std::strlen(kHeaderPrefix)) != identity_)
        throw ShardError(fmt::format("{} is the result of another search ({}); this one is {}", log.path,
                                     line.substr(std::strlen(kHeaderPrefix)), identity_));
      pos = nl + 1;
      continue;
    }
    // <crc> <wave> <item> <json>
    if (line.size() < 10 || line[8] != ' ') return pos;
    const char* const first = line.data();
    const char* const last = first + line.size();
    std::uint32_t crc = 0;
    if (std::from_chars(first, first + 8, crc, 16).ptr != first + 8 || crc != checksum(first + 9, line.size() - 9))
      return pos;
    std::uint64_t wave = 0, item = 0;
    const auto w = std::from_chars(first + 9, last, wave);
    if (w.ptr == last || *w.ptr != ' ') return pos;
    const auto i = std::from_chars(w.ptr + 1, last, item);
    if (i.ptr == last || *i.ptr != ' ') return pos;
    const char* const end = i.ptr;
    records_.try_emplace({wave, item}, end + 1, last);
    pos = nl + 1;
  }
}

std::optional<std::string> ShardLogs::take(std::uint64_t wave, std::size_t item) {
  if (!has(wave, item)) return std::nullopt;
  auto it = records_.find({wave, item});
  std::string json = std::move(it->second);
  records_.erase(it);
  return json;
}

bool ShardLogs::has(std::uint64_t wave, std::size_t item) {
  if (records_.count({wave, item})) return true;
  for (unsigned i = 0; i < logs_.size(); ++i)
    if (i != index_) read_new(logs_[i]);
  return records_.count({wave, item}) > 0;
}

void ShardLogs::forget_through(std::uint64_t wave) {
  records_.erase(records_.begin(), records_.lower_bound({wave + 1, 0}));
}

}  // namespace mbcheck::sim::dpor
