// SPDX-License-Identifier: MIT
// Readers of the openb (Alibaba cluster-trace-gpu-v2023) pod and node list CSV text.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include <hetsched/workload/openb.hpp>

#include "detail/text.hpp"

namespace hetsched::workload {
namespace {

constexpr std::uint32_t max_gpus = 64;
constexpr std::int64_t max_value = std::int64_t{1} << 50;  // far above any real capacity
/// Largest time in seconds: a trace time in ms must stay within max_trace_time_ms.
constexpr std::int64_t max_time_s = max_trace_time_ms / 1000;

/// "<source>:<line>", or "line <line>" when the caller gave no source name.
std::string where(std::string_view source, std::size_t line) {
  if (source.empty()) return "line " + std::to_string(line);
  return std::string(source) + ":" + std::to_string(line);
}

/// Splits the text into lines (without "\n" or "\r\n"), 1-based numbering by position.
std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    auto line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  while (true) {
    const auto comma = line.find(',');
    fields.push_back(line.substr(0, comma));
    if (comma == std::string_view::npos) break;
    line.remove_prefix(comma + 1);
  }
  return fields;
}

/// A CSV table with named columns.
class table {
 public:
  /// Reads the header and rows; `required` columns must be present. Every line of an openb list
  /// ends with a line break, so a last line without one is reported as a cut file.
  static result<table> read(std::string_view csv, std::string_view source,
                            std::span<const std::string_view> required) {
    table t;
    t.source_ = source;
    t.lines_ = split_lines(csv);
    if (t.lines_.empty() || t.lines_.front().empty())
      return make_error(errc::invalid_argument, "{}: missing header", where(source, 1));
    t.header_ = split_fields(t.lines_.front());
    for (std::size_t i = 0; i < t.header_.size(); ++i) {
      if (std::find(t.header_.begin(), t.header_.begin() + static_cast<std::ptrdiff_t>(i),
                    t.header_[i]) != t.header_.begin() + static_cast<std::ptrdiff_t>(i))
        return make_error(errc::invalid_argument, "{}: column '{}' appears twice", where(source, 1),
                          hetsched::detail::shown(t.header_[i]));
    }
    if (csv.back() != '\n') {  // the last line has no line break: the text was cut
      const std::size_t last = t.lines_.size();
      const auto fields = split_fields(t.lines_.back());
      const std::string_view field =
          last == 1 || fields.size() > t.header_.size() ? "" : t.header_[fields.size() - 1];
      return make_error(errc::invalid_argument,
                        "{}: field '{}': '{}' ends the text without a line break: the file looks "
                        "cut inside this line (every line of an openb list ends with one)",
                        where(source, last),
                        field.empty() ? fmt::format("#{}", fields.size()) : std::string(field),
                        hetsched::detail::shown(fields.back()));
    }
    for (const auto r : required) {
      if (!t.column(r))
        return make_error(errc::invalid_argument, "{}: missing column '{}'", where(source, 1), r);
    }
    return t;
  }

  [[nodiscard]] std::optional<std::size_t> column(std::string_view name) const {
    const auto it = std::find(header_.begin(), header_.end(), name);
    if (it == header_.end()) return std::nullopt;
    return static_cast<std::size_t>(it - header_.begin());
  }
  [[nodiscard]] std::size_t width() const { return header_.size(); }
  [[nodiscard]] const std::vector<std::string_view>& lines() const { return lines_; }
  [[nodiscard]] std::string_view source() const { return source_; }
  [[nodiscard]] std::string_view first_column() const { return header_.front(); }

 private:
  std::string_view source_;
  std::vector<std::string_view> lines_;
  std::vector<std::string_view> header_;
};

/// One data row being read: field access by column with line/field-named errors.
class row {
 public:
  row(const table& t, std::vector<std::string_view> fields, std::size_t line)
      : t_(t), fields_(std::move(fields)), line_(line) {}

  [[nodiscard]] std::string_view text(std::string_view col) const {
    const auto c = t_.column(col);
    return c ? fields_[*c] : std::string_view{};
  }
  [[nodiscard]] bool has(std::string_view col) const { return t_.column(col).has_value(); }

  /// Returns the field as an integer in [0, max] (a time in seconds: max_time_s).
  [[nodiscard]] result<std::int64_t> integer(std::string_view col,
                                             std::int64_t max = max_value) const {
    const auto s = text(col);
    std::int64_t v = 0;
    const auto* end = s.data() + s.size();
    const auto [p, ec] = std::from_chars(s.data(), end, v);
    if (s.empty() || ec != std::errc{} || p != end)
      return make_error(errc::invalid_argument, "{}: field '{}': '{}' is not an integer", at(), col,
                        hetsched::detail::shown(s));
    if (v < 0 || v > max)
      return make_error(errc::out_of_range, "{}: field '{}': {} outside 0..{}", at(), col, v,
                        max == max_value ? "2^50" : std::to_string(max));
    return v;
  }
  /// Returns the integer of an optional column; nullopt when the column is absent or empty.
  [[nodiscard]] result<std::optional<std::int64_t>> optional_integer(
      std::string_view col, std::int64_t max = max_value) const {
    if (!has(col) || text(col).empty()) return std::optional<std::int64_t>{};
    auto v = integer(col, max);
    if (!v) return std::move(v).error();
    return std::optional<std::int64_t>{*v};
  }
  [[nodiscard]] std::size_t line() const { return line_; }
  /// Returns "<source>:<line>" (or "line <line>") for messages.
  [[nodiscard]] std::string at() const { return where(t_.source(), line_); }

 private:
  const table& t_;
  std::vector<std::string_view> fields_;
  std::size_t line_;
};

/// Calls `on_row(row)` for each data line; stops at the first error.
template <typename OnRow>
result<void> for_each_row(const table& t, OnRow&& on_row) {
  const auto& lines = t.lines();
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::size_t line_no = i + 1;
    if (lines[i].empty()) {
      if (i + 1 == lines.size()) break;  // text ends with a newline
      return make_error(errc::invalid_argument, "{}: blank line", where(t.source(), line_no));
    }
    if (lines[i].find('"') != std::string_view::npos)
      return make_error(errc::invalid_argument, "{}: quoted fields are not supported",
                        where(t.source(), line_no));
    auto fields = split_fields(lines[i]);
    if (fields.size() != t.width())
      return make_error(errc::invalid_argument, "{}: {} fields, header has {}",
                        where(t.source(), line_no), fields.size(), t.width());
    HETSCHED_TRY(on_row(row(t, std::move(fields), line_no)));
  }
  return ok();
}

result<std::string> name_of(const row& r, std::string_view col,
                            std::unordered_set<std::string>& seen) {
  const auto name = r.text(col);
  if (name.empty())
    return make_error(errc::invalid_argument, "{}: field '{}' is empty", r.at(), col);
  if (!seen.insert(std::string(name)).second)
    return make_error(errc::already_exists, "{}: field '{}': '{}' appears twice", r.at(), col,
                      hetsched::detail::shown(name));
  return std::string(name);
}

}  // namespace

result<std::vector<openb_pod>> parse_openb_pods(std::string_view csv, std::string_view source) {
  static constexpr std::string_view required[] = {"name", "cpu_milli", "memory_mib", "num_gpu",
                                                  "gpu_milli"};
  auto t = table::read(csv, source, required);
  if (!t) return std::move(t).error();
  std::vector<openb_pod> pods;
  std::unordered_set<std::string> seen;
  auto done = for_each_row(*t, [&](const row& r) -> result<void> {
    openb_pod p;
    p.line = r.line();
    auto name = name_of(r, "name", seen);
    if (!name) return std::move(name).error();
    p.name = std::move(*name);
    auto cpu = r.integer("cpu_milli");
    if (!cpu) return std::move(cpu).error();
    auto mem = r.integer("memory_mib");
    if (!mem) return std::move(mem).error();
    auto num = r.integer("num_gpu");
    if (!num) return std::move(num).error();
    auto milli = r.integer("gpu_milli");
    if (!milli) return std::move(milli).error();
    if (*num > max_gpus)
      return make_error(errc::out_of_range, "{}: field 'num_gpu': {} > {}", r.at(), *num, max_gpus);
    const bool ok_milli = *num == 0   ? *milli == 0
                          : *num == 1 ? (*milli >= 1 && *milli <= 1000)
                                      : *milli == 1000;
    if (!ok_milli)
      return make_error(errc::out_of_range,
                        "{}: field 'gpu_milli': {} does not fit num_gpu {} (0 with 0 GPUs, "
                        "1..1000 with 1, 1000 with more)",
                        r.at(), *milli, *num);
    p.cpu_milli = *cpu;
    p.memory_mib = *mem;
    p.num_gpu = static_cast<std::uint32_t>(*num);
    p.gpu_milli = *milli;
    p.gpu_spec = std::string(r.text("gpu_spec"));
    p.qos = std::string(r.text("qos"));
    p.pod_phase = std::string(r.text("pod_phase"));
    for (auto [col, field] : {std::pair{"creation_time", &p.creation_time},
                              std::pair{"deletion_time", &p.deletion_time},
                              std::pair{"scheduled_time", &p.scheduled_time}}) {
      auto v = r.optional_integer(col, max_time_s);
      if (!v) return std::move(v).error();
      *field = *v;
    }
    if (p.creation_time && p.deletion_time && *p.deletion_time < *p.creation_time)
      return make_error(errc::invalid_argument,
                        "{}: field 'deletion_time': {} is before creation_time {}", r.at(),
                        *p.deletion_time, *p.creation_time);
    pods.push_back(std::move(p));
    return ok();
  });
  if (!done) return std::move(done).error();
  if (pods.empty())
    return make_error(errc::invalid_argument,
                      "{}: field 'name': no pods after the header (an empty list, or a file cut "
                      "after its header)",
                      where(source, 2));
  return pods;
}

result<std::vector<openb_node>> parse_openb_nodes(std::string_view csv, std::string_view source) {
  static constexpr std::string_view required[] = {"sn", "cpu_milli", "memory_mib", "gpu", "model"};
  auto t = table::read(csv, source, required);
  if (!t) return std::move(t).error();
  std::vector<openb_node> nodes;
  std::unordered_set<std::string> seen;
  auto done = for_each_row(*t, [&](const row& r) -> result<void> {
    openb_node n;
    auto name = name_of(r, "sn", seen);
    if (!name) return std::move(name).error();
    n.name = std::move(*name);
    auto cpu = r.integer("cpu_milli");
    if (!cpu) return std::move(cpu).error();
    auto mem = r.integer("memory_mib");
    if (!mem) return std::move(mem).error();
    auto gpus = r.integer("gpu");
    if (!gpus) return std::move(gpus).error();
    if (*gpus > max_gpus)
      return make_error(errc::out_of_range, "{}: field 'gpu': {} > {}", r.at(), *gpus, max_gpus);
    n.model = std::string(r.text("model"));
    if (*gpus > 0 && n.model.empty())
      return make_error(errc::invalid_argument, "{}: field 'model' is empty on a GPU node", r.at());
    n.cpu_milli = *cpu;
    n.memory_mib = *mem;
    n.gpus = static_cast<std::uint32_t>(*gpus);
    nodes.push_back(std::move(n));
    return ok();
  });
  if (!done) return std::move(done).error();
  if (nodes.empty())
    return make_error(errc::invalid_argument,
                      "{}: field 'sn': no nodes after the header (an empty list, or a file cut "
                      "after its header)",
                      where(source, 2));
  return nodes;
}

result<trace> openb_to_trace(std::span<const openb_pod> pods, std::string_view source) {
  trace out;
  out.reserve(pods.size());
  for (const auto& p : pods) {
    const std::string at = p.line > 0 ? where(source, p.line) : "pod '" + p.name + "'";
    if (!p.creation_time || !p.deletion_time)
      return make_error(errc::invalid_argument,
                        "{}: field '{}': pod '{}' has none (the multigpu pod lists have no times)",
                        at, p.creation_time ? "deletion_time" : "creation_time", p.name);
    // Pods built in code are checked here too (parse_openb_pods already refused these).
    if (*p.creation_time < 0 || *p.creation_time > max_time_s || *p.deletion_time > max_time_s ||
        *p.deletion_time < *p.creation_time)
      return make_error(errc::out_of_range,
                        "{}: field 'deletion_time': pod '{}' lives from {} to {} s (times must be "
                        "in 0..{} s, deletion not before creation)",
                        at, p.name, *p.creation_time, *p.deletion_time, max_time_s);
    trace_job j;
    j.name = p.name;
    j.tenant = p.qos;
    j.submit_ms = *p.creation_time * 1000;
    j.duration_ms = std::max<std::int64_t>(1, (*p.deletion_time - *p.creation_time) * 1000);
    j.tasks = 1;
    j.gpus_per_task = p.num_gpu;
    j.gpu_milli_per_task = p.gpu_milli * static_cast<std::int64_t>(p.num_gpu);
    j.cpu_milli_per_task = p.cpu_milli;
    j.memory_mib_per_task = p.memory_mib;
    j.gpu_type = p.gpu_spec;
    j.priority = (p.qos == "LS" || p.qos == "Guaranteed") ? 1 : 0;
    j.preemptible = j.priority == 0;
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace hetsched::workload
