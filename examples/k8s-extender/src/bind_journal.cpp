// SPDX-License-Identifier: MIT
// The extender's local state file: append-only bind/release records with CRC-32 checksums.
#include "bind_journal.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string_view>
#include <unistd.h>
#include <utility>
#include <zlib.h>

#include "try_assign.hpp"

#include <sys/stat.h>

namespace hetsched::k8s {
namespace {

using json = nlohmann::json;

constexpr std::string_view magic = "hetsched-extender-journal v1 ";
constexpr std::size_t compact_after_records = 1024;

std::string crc_hex(std::string_view text) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths: feed the text in pieces
  for (std::size_t off = 0; off < text.size(); off += 1U << 30) {
    const std::size_t n = std::min<std::size_t>(text.size() - off, 1U << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(text.data() + off), static_cast<uInt>(n));
  }
  return fmt::format("{:08x}", crc);
}

std::string line_of(const json& record) {
  const std::string text = record.dump(-1, ' ', false, json::error_handler_t::replace);
  return crc_hex(text) + " " + text + "\n";
}

error io_error(std::string_view what, const std::string& path) {
  return error{errc::failed_precondition,
               fmt::format("state file {}: {}: {}", path, what, std::strerror(errno))};
}

result<void> write_all(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error("write", path);
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

result<void> sync_directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return io_error("open directory " + dir, path);
  const int r = ::fsync(fd);
  ::close(fd);
  if (r != 0) return io_error("fsync directory " + dir, path);
  return {};
}

result<binding_record> decode_bind(const json& j) {
  const auto pod = j.find("pod");
  const auto node = j.find("node");
  const auto gpus = j.find("gpus");
  if (pod == j.end() || node == j.end() || !node->is_string() || gpus == j.end() ||
      !gpus->is_array())
    return make_error(errc::invalid_argument, "a bind record needs pod, node and gpus");
  binding_record rec;
  K8S_TRY_ASSIGN(rec.pod, pod_from_record(*pod));
  rec.args = binding_args{rec.pod.name, rec.pod.name_space, rec.pod.uid, node->get<std::string>()};
  rec.where.node = rec.args.node;
  for (const auto& g : *gpus) {
    if (!g.is_number_integer()) return make_error(errc::invalid_argument, "gpus: not an integer");
    rec.where.gpus.push_back(g.get<std::int64_t>());
  }
  if (auto b = j.find("bindInfo"); b != j.end()) rec.where.bind_info = *b;
  return rec;
}

}  // namespace

json pod_record(const pod_info& pod) {
  json annotations = json::object();
  if (auto it = pod.annotations.find(std::string(hived_spec_annotation));
      it != pod.annotations.end())
    annotations[it->first] = it->second;
  return json{{"name", pod.name},
              {"namespace", pod.name_space},
              {"uid", pod.uid},
              {"gpus", pod.gpus},
              {"priority", pod.priority},
              {"nodeSelector", pod.node_selector},
              {"annotations", std::move(annotations)}};
}

result<pod_info> pod_from_record(const json& j) {
  if (!j.is_object()) return make_error(errc::invalid_argument, "pod must be an object");
  pod_info p;
  for (const auto& [key, field] :
       {std::pair{"name", &p.name}, std::pair{"namespace", &p.name_space},
        std::pair{"uid", &p.uid}}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string())
      return make_error(errc::invalid_argument, "pod.{} must be a string", key);
    *field = it->get<std::string>();
  }
  for (const auto& [key, field] :
       {std::pair{"gpus", &p.gpus}, std::pair{"priority", &p.priority}}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer())
      return make_error(errc::invalid_argument, "pod.{} must be an integer", key);
    *field = it->get<std::int64_t>();
  }
  for (const auto& [key, field] :
       {std::pair{"nodeSelector", &p.node_selector}, std::pair{"annotations", &p.annotations}}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_object())
      return make_error(errc::invalid_argument, "pod.{} must be an object", key);
    for (const auto& [k, v] : it->items()) {
      if (!v.is_string())
        return make_error(errc::invalid_argument, "pod.{}[{}] must be a string", key, k);
      field->emplace(k, v.get<std::string>());
    }
  }
  return p;
}

std::string bind_journal::bind_line(const binding_record& rec) {
  return line_of(json{{"op", "bind"},
                      {"pod", pod_record(rec.pod)},
                      {"node", rec.where.node},
                      {"gpus", rec.where.gpus},
                      {"bindInfo", rec.where.bind_info}});
}

result<std::unique_ptr<bind_journal>> bind_journal::open(const std::string& path,
                                                         std::string_view kind, contents& read) {
  read = contents{};
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return io_error("open", path);
  std::unique_ptr<bind_journal> j(new bind_journal(path, std::string(kind), fd));
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_error("read", path);
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  const std::string header = fmt::format("{}{}\n", magic, kind);
  if (text.empty()) {
    HETSCHED_TRY(write_all(fd, header, path));
    if (::fsync(fd) != 0) return io_error("fsync", path);
    HETSCHED_TRY(sync_directory_of(path));
    return j;
  }
  if (text.compare(0, header.size(), header) != 0) {
    const std::string first = text.substr(0, std::min(text.find('\n'), std::size_t{80}));
    return make_error(errc::invalid_argument,
                      "state file {}: line 1 is '{}', expected '{}' (another backend or version)",
                      path, first, header.substr(0, header.size() - 1));
  }
  // Bind records by UID in bind order; a release removes its UID.
  std::map<std::uint64_t, binding_record> live;
  std::unordered_map<std::string, std::uint64_t> by_uid;
  std::size_t pos = header.size();
  std::size_t line_no = 1;
  while (pos < text.size()) {
    ++line_no;
    const std::size_t end = text.find('\n', pos);
    const bool last = end == std::string::npos || end + 1 == text.size();
    std::string why;
    json record;
    if (end == std::string::npos) {
      why = "no end of line";
    } else {
      const std::string_view line = std::string_view(text).substr(pos, end - pos);
      if (line.size() < 10 || line[8] != ' ') {
        why = "no checksum";
      } else if (crc_hex(line.substr(9)) != line.substr(0, 8)) {
        why = "checksum mismatch";
      } else {
        record = json::parse(line.substr(9), nullptr, false);
        if (record.is_discarded() || !record.is_object()) why = "not a JSON object";
      }
    }
    if (why.empty()) {
      const auto op = record.find("op");
      if (op != record.end() && *op == "bind") {
        auto rec = decode_bind(record);
        if (!rec) {
          why = rec.error().message;
        } else {
          if (auto old = by_uid.find(rec->pod.uid); old != by_uid.end()) live.erase(old->second);
          const std::uint64_t seq = ++j->seq_;
          by_uid.insert_or_assign(rec->pod.uid, seq);
          j->live_lines_.emplace(seq, std::string(text, pos, end + 1 - pos));
          live.emplace(seq, std::move(*rec));
        }
      } else if (op != record.end() && *op == "release") {
        const auto uid = record.find("uid");
        if (uid == record.end() || !uid->is_string()) {
          why = "a release record needs a uid";
        } else if (auto it = by_uid.find(uid->get<std::string>()); it != by_uid.end()) {
          live.erase(it->second);
          j->live_lines_.erase(it->second);
          by_uid.erase(it);
        }
      } else {
        why = "unknown op";
      }
    }
    if (!why.empty()) {
      if (!last)
        return make_error(errc::invalid_argument,
                          "state file {}: line {} (byte {}) is corrupt: {}; later records follow, "
                          "so this is not a torn last write",
                          path, line_no, pos, why);
      read.warnings.push_back(fmt::format(
          "state file {}: dropped the last record, line {} (byte {}): {} (a write torn by a "
          "crash; it was never acknowledged)",
          path, line_no, pos, why));
      if (::ftruncate(fd, static_cast<off_t>(pos)) != 0) return io_error("truncate", path);
      if (::fsync(fd) != 0) return io_error("fsync", path);
      break;
    }
    ++j->records_;
    pos = end + 1;
  }
  for (auto& [seq, rec] : live) {
    j->live_by_uid_.emplace(rec.pod.uid, seq);
    read.live.push_back(std::move(rec));
  }
  return j;
}

bind_journal::~bind_journal() {
  if (fd_ >= 0) {
    (void)::fdatasync(fd_);
    ::close(fd_);
  }
}

std::size_t bind_journal::records() const {
  std::lock_guard lock(mu_);
  return records_;
}

std::size_t bind_journal::live() const {
  std::lock_guard lock(mu_);
  return live_by_uid_.size();
}

std::size_t bind_journal::fsyncs() const {
  std::lock_guard lock(mu_);
  return fsyncs_;
}

result<void> bind_journal::append(const std::string& line) {
  if (failed_) return *failed_;
  if (auto written = write_all(fd_, line, path_); !written) {
    failed_ = written.error();
    return written;
  }
  ++records_;
  ++appended_;
  return {};
}

result<void> bind_journal::sync() {
  std::unique_lock lock(mu_);
  const std::uint64_t target = appended_;
  while (durable_ < target) {
    if (failed_) return *failed_;
    if (syncing_) {
      synced_.wait(lock);
      continue;
    }
    // This thread syncs for everyone: all records appended so far, in one fdatasync.
    syncing_ = true;
    const std::uint64_t covers = appended_;
    const int fd = fd_;
    lock.unlock();
    const int r = ::fdatasync(fd);
    const int saved = errno;
    lock.lock();
    syncing_ = false;
    ++fsyncs_;
    if (r != 0) {
      errno = saved;
      failed_ = io_error("fdatasync", path_);
    } else {
      durable_ = std::max(durable_, covers);
    }
    synced_.notify_all();
  }
  return {};
}

void bind_journal::maybe_compact(std::unique_lock<std::mutex>& lock) {
  // Called once the live set includes the record just appended. The append stands either way;
  // a failed compaction leaves the old file whole and is tried again at the next append.
  if (records_ > compact_after_records && records_ > 2 * live_by_uid_.size()) (void)compact(lock);
}

result<void> bind_journal::append_bind(const binding_record& rec) {
  std::string line = bind_line(rec);
  std::unique_lock lock(mu_);
  HETSCHED_TRY(append(line));
  if (auto old = live_by_uid_.find(rec.pod.uid); old != live_by_uid_.end())
    live_lines_.erase(old->second);
  const std::uint64_t seq = ++seq_;
  live_by_uid_.insert_or_assign(rec.pod.uid, seq);
  live_lines_.emplace(seq, std::move(line));
  maybe_compact(lock);
  return {};
}

result<void> bind_journal::append_release(const std::string& pod_uid) {
  std::unique_lock lock(mu_);
  auto it = live_by_uid_.find(pod_uid);
  if (it == live_by_uid_.end()) return {};
  HETSCHED_TRY(append(line_of(json{{"op", "release"}, {"uid", pod_uid}})));
  live_lines_.erase(it->second);
  live_by_uid_.erase(it);
  maybe_compact(lock);
  return {};
}

result<void> bind_journal::compact() {
  std::unique_lock lock(mu_);
  return compact(lock);
}

result<void> bind_journal::compact(std::unique_lock<std::mutex>& lock) {
  // the descriptor is swapped below: no fdatasync may run on it meanwhile
  synced_.wait(lock, [this] { return !syncing_; });
  if (failed_) return *failed_;
  const std::string tmp = path_ + ".tmp";
  // Opened for appending: once renamed over path_, the same descriptor is the journal.
  const int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return io_error("open " + tmp, path_);
  std::string out = fmt::format("{}{}\n", magic, kind_);
  for (const auto& [seq, line] : live_lines_) out.append(line);
  auto written = write_all(fd, out, tmp);
  if (written && ::fsync(fd) != 0) written = io_error("fsync " + tmp, path_);
  if (written && ::rename(tmp.c_str(), path_.c_str()) != 0)
    written = io_error("rename " + tmp, path_);
  if (!written) {
    ::close(fd);
    (void)::unlink(tmp.c_str());
    return written;
  }
  ::close(fd_);
  fd_ = fd;
  records_ = live_lines_.size();
  // the new file holds every live record and was fsync'd whole
  durable_ = appended_;
  synced_.notify_all();
  return sync_directory_of(path_);
}

}  // namespace hetsched::k8s
