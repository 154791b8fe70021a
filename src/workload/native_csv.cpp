// SPDX-License-Identifier: MIT
// The native CSV trace reader.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <vector>

#include <hetsched/sim/engine.hpp>
#include <hetsched/workload/native_csv.hpp>

namespace hetsched::workload {
namespace {

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = line.find(',', pos);
    std::string_view f =
        line.substr(pos, comma == std::string_view::npos ? line.npos : comma - pos);
    while (!f.empty() && (f.front() == ' ' || f.front() == '\t')) f.remove_prefix(1);
    while (!f.empty() && (f.back() == ' ' || f.back() == '\t' || f.back() == '\r'))
      f.remove_suffix(1);
    out.push_back(f);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

/// "<path>:<line>: field '<field>': <problem>", the message form of the library's trace readers.
error field_error(std::string_view path, std::size_t line, std::string_view field,
                  std::string_view problem) {
  return make_error(errc::invalid_argument, "{}:{}: field '{}': {}", path, line, field, problem);
}

template <typename T>
result<T> parse_int(std::string_view text, std::string_view path, std::size_t line,
                    std::string_view field) {
  T v{};
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size())
    return field_error(path, line, field,
                       fmt::format("'{}' is not an integer in [{}, {}]", text,
                                   std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
  return v;
}

constexpr std::string_view known_columns[] = {"name",
                                              "tenant",
                                              "submit_ms",
                                              "duration_ms",
                                              "tasks",
                                              "gpus_per_task",
                                              "gpu_milli_per_task",
                                              "cpu_milli_per_task",
                                              "memory_mib_per_task",
                                              "gpu_type",
                                              "priority",
                                              "preemptible"};

}  // namespace

result<loaded_trace> parse_native_csv(std::string_view text, std::string_view path) {
  loaded_trace out;
  std::map<std::string, std::size_t, std::less<>> col;
  std::vector<std::string_view> header;
  std::map<std::string, std::size_t, std::less<>> name_lines;  // job name -> its line
  std::size_t line_no = 0;
  std::size_t header_line = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    const bool terminated = end != std::string_view::npos;
    if (!terminated) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.empty() || line == "\r" || line.front() == '#') continue;
    const std::vector<std::string_view> f = split(line);
    if (!terminated) {
      // Every line of the format ends with a line break: without one the file was cut.
      const std::size_t last = f.size() - 1;
      return field_error(
          path, line_no,
          last < header.size() ? std::string(header[last]) : fmt::format("#{}", last + 1),
          fmt::format("'{}' ends the file without a line break: the file looks cut "
                      "inside this line",
                      f[last]));
    }
    if (header_line == 0) {
      for (std::size_t i = 0; i < f.size(); ++i) {
        if (std::find(std::begin(known_columns), std::end(known_columns), f[i]) ==
            std::end(known_columns))
          return field_error(
              path, line_no, f[i],
              fmt::format("unknown column (known: {})", fmt::join(known_columns, ", ")));
        if (!col.emplace(std::string(f[i]), i).second)
          return field_error(path, line_no, f[i], "column appears twice");
      }
      for (const std::string_view need : {"name", "submit_ms", "duration_ms", "gpus_per_task"})
        if (!col.contains(need))
          return field_error(path, line_no, need, "required column missing from the header");
      header = f;
      header_line = line_no;
      continue;
    }
    if (f.size() != col.size())
      return field_error(path, line_no,
                         f.size() < header.size() ? std::string(header[f.size()])
                                                  : fmt::format("#{}", header.size() + 1),
                         fmt::format("{} fields, the header has {}", f.size(), col.size()));
    const auto get = [&](std::string_view name) -> std::string_view {
      const auto it = col.find(name);
      return it == col.end() ? std::string_view{} : f[it->second];
    };
    trace_job j;
    j.name = std::string(get("name"));
    if (j.name.empty()) return field_error(path, line_no, "name", "is empty");
    if (const auto [it, added] = name_lines.emplace(j.name, line_no); !added)
      return field_error(path, line_no, "name",
                         fmt::format("'{}' is used twice (first on line {})", j.name, it->second));
    j.tenant = std::string(get("tenant"));
    j.gpu_type = std::string(get("gpu_type"));
#define HETSCHED_FIELD(field, type)                               \
  if (!get(#field).empty()) {                                     \
    auto v = parse_int<type>(get(#field), path, line_no, #field); \
    if (!v) return std::move(v).error();                          \
    j.field = *v;                                                 \
  }
    HETSCHED_FIELD(submit_ms, std::int64_t)
    HETSCHED_FIELD(duration_ms, std::int64_t)
    HETSCHED_FIELD(tasks, std::uint32_t)
    HETSCHED_FIELD(gpus_per_task, std::uint32_t)
    j.gpu_milli_per_task = std::int64_t{1000} * j.gpus_per_task;
    HETSCHED_FIELD(gpu_milli_per_task, std::int64_t)
    HETSCHED_FIELD(cpu_milli_per_task, std::int64_t)
    HETSCHED_FIELD(memory_mib_per_task, std::int64_t)
    HETSCHED_FIELD(priority, std::int32_t)
#undef HETSCHED_FIELD
    if (j.submit_ms < 0 || j.submit_ms > max_trace_time_ms)
      return field_error(path, line_no, "submit_ms",
                         fmt::format("{} is outside [0, {}]", j.submit_ms, max_trace_time_ms));
    if (j.duration_ms < 1 || j.duration_ms > max_trace_time_ms)
      return field_error(path, line_no, "duration_ms",
                         fmt::format("{} is outside [1, {}]", j.duration_ms, max_trace_time_ms));
    const std::string_view pre = get("preemptible");
    if (!pre.empty()) {
      if (pre != "0" && pre != "1" && pre != "true" && pre != "false")
        return field_error(path, line_no, "preemptible",
                           fmt::format("'{}' is not 0, 1, true or false", pre));
      j.preemptible = pre == "1" || pre == "true";
    }
    if (auto ok = sim::validate_trace_job(j, out.jobs.size()); !ok)
      return make_error(errc::invalid_argument, "{}:{}: {}", path, line_no, ok.error().message);
    out.jobs.push_back(std::move(j));
    out.lines.push_back(line_no);
  }
  if (header_line == 0) return make_error(errc::invalid_argument, "{}: no header line", path);
  if (out.jobs.empty())
    return field_error(path, header_line + 1, "name",
                       "no jobs after the header (an empty trace, or a file cut after its "
                       "header)");
  return out;
}

}  // namespace hetsched::workload
