// SPDX-License-Identifier: MIT
// load_published_trace(): file and directory reading around the library's trace readers.
#include "trace_formats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <hetsched/workload/openb.hpp>
#include <hetsched/workload/trace_registry.hpp>

namespace hetsched::simcli {
namespace {

constexpr std::array<std::string_view, 4> formats = {"gavel", "openb", "pollux", "tiresias"};

result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(errc::not_found, "{}: cannot open the trace file", path);
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

result<loaded_trace> load_published_trace(std::string_view format, const std::string& path) {
  namespace fs = std::filesystem;
  loaded_trace out;
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

}  // namespace hetsched::simcli
