// SPDX-License-Identifier: MIT
// File and directory reading around the library's trace and quota readers.
#include "trace_files.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <hetsched/policies/capacity_tree_json.hpp>
#include <hetsched/workload/openb.hpp>
#include <hetsched/workload/trace_registry.hpp>

namespace hetsched::cli {
namespace {

constexpr std::array<std::string_view, 4> formats = {"gavel", "openb", "pollux", "tiresias"};

/// Returns the contents of file `path`; not_found "<path>: cannot open the <what> file".
result<std::string> read_file(const std::string& path, std::string_view what = "trace") {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(errc::not_found, "{}: cannot open the {} file", path, what);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// "line N: rest" becomes "source:N: rest"; other messages get a "source: " prefix.
error with_source(const error& e, std::string_view source) {
  const std::string_view m = e.message;
  constexpr std::string_view line = "line ";
  const std::size_t colon = m.find(':');
  if (m.starts_with(line) && colon != std::string_view::npos && colon > line.size()) {
    std::string out(source);
    out += ':';
    out += m.substr(line.size());
    return error{e.code, std::move(out)};
  }
  std::string out(source);
  out += ": ";
  out += m;
  return error{e.code, std::move(out)};
}

result<workload::trace> parse_openb(std::string_view text, std::string_view source) {
  auto pods = workload::parse_openb_pods(text, source);
  if (!pods) return std::move(pods).error();
  return workload::openb_to_trace(*pods, source);
}

result<workload::trace> read_one(std::string_view format, const std::string& path) {
  auto text = read_file(path);
  if (!text) return std::move(text).error();
  const std::array<workload::trace_format, 1> extra = {
      workload::trace_format{"openb", parse_openb}};
  auto t = workload::parse_trace(format, *text, path, extra);
  if (!t && t.error().message.find(path) == std::string::npos) return with_source(t.error(), path);
  return t;
}

}  // namespace

std::string published_trace_formats() { return fmt::format("{}", fmt::join(formats, ", ")); }

bool is_published_format(std::string_view format) {
  return std::find(formats.begin(), formats.end(), format) != formats.end();
}

result<workload::loaded_trace> load_published_trace(std::string_view format,
                                                    const std::string& path) {
  namespace fs = std::filesystem;
  workload::loaded_trace out;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    auto t = read_one(format, path);
    if (!t) return std::move(t).error();
    out.jobs = std::move(*t);
    return out;
  }
  const std::string_view ext = format == "gavel" ? ".trace" : ".csv";
  std::vector<std::string> files;
  for (const fs::directory_entry& e : fs::directory_iterator(path, ec))
    if (e.is_regular_file() && e.path().extension() == ext) files.push_back(e.path().string());
  if (ec)
    return make_error(errc::not_found, "{}: cannot list the directory: {}", path, ec.message());
  if (files.empty())
    return make_error(errc::not_found, "{}: no {} files in the directory", path, ext);
  std::sort(files.begin(), files.end());
  std::vector<workload::trace> traces;
  for (const std::string& f : files) {
    auto t = read_one(format, f);
    if (!t) return std::move(t).error();
    traces.push_back(std::move(*t));
  }
  auto merged = workload::merge_traces(traces);
  if (!merged) return make_error(merged.error().code, "{}: {}", path, merged.error().message);
  out.jobs = std::move(*merged);
  return out;
}

std::string trace_formats() {
  std::string s = "csv, ";
  s += published_trace_formats();
  return s;
}

result<workload::loaded_trace> load_trace(std::string_view spec) {
  const std::size_t colon = spec.find(':');
  if (colon == std::string_view::npos)
    return make_error(errc::invalid_argument, "--trace {}: expected FORMAT:PATH (formats: {})",
                      spec, trace_formats());
  const std::string_view format = spec.substr(0, colon);
  const std::string path(spec.substr(colon + 1));
  if (is_published_format(format)) return load_published_trace(format, path);
  if (format != "csv")
    return make_error(errc::not_found, "--trace {}: unknown format '{}' (formats: {})", spec,
                      format, trace_formats());
  auto text = read_file(path);
  if (!text) return std::move(text).error();
  return workload::parse_native_csv(*text, path);
}

result<std::optional<workload::vc_quota_table>> load_vc_quota(
    const std::string& path, const workload::vc_day_selector& day) {
  if (path.empty()) return std::optional<workload::vc_quota_table>{};
  auto text = read_file(path, "VC quota");
  if (!text) return std::move(text).error();
  auto t = workload::parse_vc_quota_file(*text, path, day);
  if (!t) return std::move(t).error();
  return std::optional<workload::vc_quota_table>(std::move(*t));
}

result<throughput_table> load_throughput_table(std::string_view spec) {
  const std::size_t colon = spec.find(':');
  if (colon == std::string_view::npos)
    return make_error(errc::invalid_argument,
                      "--throughput-table {}: expected FORMAT:PATH (formats: gavel, hetsched)",
                      spec);
  const std::string_view format = spec.substr(0, colon);
  const std::string path(spec.substr(colon + 1));
  if (format != "gavel" && format != "hetsched")
    return make_error(errc::not_found,
                      "--throughput-table {}: unknown format '{}' (formats: gavel, hetsched)", spec,
                      format);
  auto text = read_file(path, "throughput table");
  if (!text) return std::move(text).error();
  return format == "gavel" ? parse_gavel_throughput_table(*text, path)
                           : parse_throughput_table(*text, path);
}

namespace {

/// Reads the queue tree in `path` and returns its text; errors name the file.
result<std::string> read_queue_tree(const std::string& path) {
  auto text = read_file(path, "queue tree");
  if (!text) return std::move(text).error();
  if (auto doc = parse_queue_tree_json(*text); !doc)
    return make_error(doc.error().code, "{}: {}", path, doc.error().message);
  return text;
}

}  // namespace

result<void> resolve_queue_trees(std::vector<policy_spec>& specs, const std::string& path) {
  std::vector<policy_spec> out = specs;
  std::optional<std::string> common;
  if (!path.empty()) {
    auto text = read_queue_tree(path);
    if (!text) return std::move(text).error();
    common = std::move(*text);
  }
  for (policy_spec& s : out) {
    if (s.placement != "capacity") continue;
    const auto it = s.placement_params.find("tree");
    if (it == s.placement_params.end()) {
      if (common) s.placement_params["tree"] = *common;
      continue;
    }
    const std::size_t first = it->second.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && it->second[first] == '{') continue;  // a document already
    auto text = read_queue_tree(it->second);
    if (!text)
      return make_error(text.error().code, "policy '{}': tree: {}", s.text, text.error().message);
    it->second = std::move(*text);
  }
  specs = std::move(out);
  return ok();
}

}  // namespace hetsched::cli
