// SPDX-License-Identifier: MIT
// The extender's local state file (--state-file): an append-only journal of binds and releases,
// so that a restart without an API server rebuilds the same bindings.
//
// Format: text lines, the first "hetsched-extender-journal v1 KIND" (the backend kind), then
// one record per line: 8 lowercase hex digits of the CRC-32 (zlib) of the JSON that follows, a
// space, the JSON, '\n'. A bind record is {"op": "bind", "pod": {name, namespace, uid, gpus,
// priority, nodeSelector, annotations}, "node", "gpus", "bindInfo"} (only the HiveD
// pod-scheduling-spec annotation is kept: the one the backends read back); a release record is
// {"op": "release", "uid"}. Each append is one write() under the extender's lock; sync() then
// makes every record appended so far durable with one fdatasync() shared by all the threads
// waiting (group commit), outside the extender's lock, and the extender answers the bind or
// release only after it: a record the client saw acknowledged survives a kill -9 or power loss,
// and the disk's latency (about 6.6 ms an fdatasync on the development VM) is paid once per
// group of concurrent binds without stalling filter and prioritize. A failed write or
// fdatasync fails that bind (rolled back) and every later append, until a restart.
// At open: a last record that is incomplete or fails its checksum (a write torn by a crash) is
// dropped with a warning and cut off the file; a bad record followed by good ones is corruption,
// a named error (line and byte offset), and so is a header of another kind or version.
// Compaction: once the file holds more than 1,024 records and more than twice the live bindings,
// the live binds are written to FILE.tmp, fsync'd, renamed over FILE and the directory fsync'd;
// a crash at any point leaves either the old or the new file whole. Thread-safe (one mutex;
// the fdatasync itself runs without it).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <hetsched/model/result.hpp>

#include "extender.hpp"

namespace hetsched::k8s {

/// The journal file of one extender.
class bind_journal {
 public:
  /// What open() read: the live bindings in bind order and the warnings to log.
  struct contents {
    std::vector<binding_record> live;
    std::vector<std::string> warnings;
  };

  /// Opens (creating it if missing) the journal at `path` for a backend of `kind` and reads it.
  /// Errors: invalid_argument naming the file and the line (corrupt record, another kind or
  /// version); failed_precondition for I/O errors (with strerror).
  [[nodiscard]] static result<std::unique_ptr<bind_journal>> open(const std::string& path,
                                                                  std::string_view kind,
                                                                  contents& read);

  bind_journal(const bind_journal&) = delete;
  bind_journal& operator=(const bind_journal&) = delete;
  ~bind_journal();

  /// Appends a bind record (not yet durable: see sync()). Errors: failed_precondition (I/O,
  /// with strerror, or an earlier failure); the file is then unchanged up to a torn tail,
  /// which open() drops.
  [[nodiscard]] result<void> append_bind(const binding_record& rec);
  /// Appends a release record of `pod_uid` (no-op if it is not live). Errors as append_bind.
  [[nodiscard]] result<void> append_release(const std::string& pod_uid);
  /// Returns once every record appended before the call is on disk (fdatasync, one for all
  /// concurrent callers). Errors: failed_precondition (the fdatasync failed, now or before).
  [[nodiscard]] result<void> sync();
  /// Rewrites the file with the live binds only (see above). Errors: failed_precondition.
  [[nodiscard]] result<void> compact();

  /// Returns the number of records in the file (header excluded) and of live bindings.
  [[nodiscard]] std::size_t records() const;
  [[nodiscard]] std::size_t live() const;
  /// Returns how many fdatasync calls sync() made (a group commit makes fewer than syncs).
  [[nodiscard]] std::size_t fsyncs() const;

  /// Returns the record line of `rec` (checksum, JSON, newline).
  [[nodiscard]] static std::string bind_line(const binding_record& rec);

 private:
  bind_journal(std::string path, std::string kind, int fd)
      : path_(std::move(path)), kind_(std::move(kind)), fd_(fd) {}
  result<void> append(const std::string& line);
  void maybe_compact(std::unique_lock<std::mutex>& lock);
  result<void> compact(std::unique_lock<std::mutex>& lock);

  mutable std::mutex mu_;
  std::condition_variable synced_;
  std::string path_;
  std::string kind_;
  int fd_ = -1;
  std::size_t records_ = 0;
  std::uint64_t appended_ = 0;  ///< records appended since open
  std::uint64_t durable_ = 0;   ///< of those, known to be on disk
  bool syncing_ = false;        ///< a thread runs fdatasync without the mutex
  std::size_t fsyncs_ = 0;
  std::optional<error> failed_;
  std::uint64_t seq_ = 0;
  std::map<std::uint64_t, std::string> live_lines_;  ///< bind order -> record line
  std::unordered_map<std::string, std::uint64_t> live_by_uid_;
};

/// Returns `pod` as the JSON of a bind record's "pod" (see above) and back. Errors:
/// invalid_argument naming the field.
[[nodiscard]] nlohmann::json pod_record(const pod_info& pod);
[[nodiscard]] result<pod_info> pod_from_record(const nlohmann::json& j);

}  // namespace hetsched::k8s
