// The files through which shard processes share wave results: one append-only log per shard
// in the shared directory (shard-<i>.log), read by every shard.
//
// Why a log and not a file per result: creating and renaming a file per item costs the
// file system an inode and a directory update per wave, and two shards creating files in
// one directory wait on its lock; `lastzero --n 12` (682 waves) spent more time there than
// searching. Appending to one file per shard costs a write.
//
// Format: a header line naming the search, then one line per record,
//   <crc32 of the rest, 8 hex digits> <wave> <item> <the result's JSON>\n
// A record counts only when its line is complete and its checksum holds, so a record being
// written, or one cut short by a crash (nothing is fsynced: a lost record is only computed
// again), is never read; a log is read up to its first bad line. A shard that starts again
// cuts its own log there before appending.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mbcheck::sim::dpor {

class ShardLogs {
 public:
  // Opens (or starts) this shard's log for `identity`; ShardError when a log in `dir` belongs
  // to another search or cannot be read or written.
  ShardLogs(std::string dir, unsigned index, unsigned count, std::string identity);
  ~ShardLogs();
  ShardLogs(const ShardLogs&) = delete;
  ShardLogs& operator=(const ShardLogs&) = delete;

  // Appends a record (one write); ShardError when the write fails (a full disk, a file-size limit).
  void append(std::uint64_t wave, std::size_t item, const std::string& json);
  // The record of (wave, item) from any shard's log, reading what the logs gained since the
  // last look if it is not known yet; the record is handed over (asked once per item).
  std::optional<std::string> take(std::uint64_t wave, std::size_t item);
  // Whether some log holds it now (reads what the logs gained, keeps the record).
  bool has(std::uint64_t wave, std::size_t item);
  // Drops what is kept of waves up to `wave` (records computed here and elsewhere both).
  void forget_through(std::uint64_t wave);

 private:
  struct Log {
    std::string path;
    int fd = -1;
    std::uint64_t offset = 0;  // the valid lines read so far end here
  };
  // Reads what `log` gained past its offset; an unfinished or bad line is read again next time.
  void read_new(Log& log);
  // Keeps the records among the lines of `text` (the log's bytes from its offset); returns the
  // length of its valid lines, up to the first unfinished or bad one.
  std::size_t judge(const Log& log, const std::string& text);
  std::string header() const;
  void append_line(const std::string& line);

  std::string dir_;
  unsigned index_;
  std::string identity_;
  std::vector<Log> logs_;  // one per shard; logs_[index_] is this shard's own
  std::map<std::pair<std::uint64_t, std::size_t>, std::string> records_;
};

}  // namespace mbcheck::sim::dpor
