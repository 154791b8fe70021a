// SPDX-License-Identifier: MIT
// parse_gavel_throughput_table() and parse_throughput_table(): the two JSON formats of the
// throughput table, read with the library's one JSON reader (src/jsonio: nlohmann-json, a private
// dependency, with duplicate keys, depth and size limits refused).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <hetsched/policies/throughput_table.hpp>

#include "jsonio/json.hpp"

namespace hetsched {
namespace {

using json = jsonio::json;

constexpr std::string_view unconsolidated_suffix = "_unconsolidated";

/// Parses `text` with the library's strict reader (src/jsonio: malformed JSON, duplicate keys and
/// the depth and size limits are errors), naming `source` and the line and column.
result<json> parse_strict(std::string_view text, std::string_view source) {
  auto doc = jsonio::parse_json(text);
  if (!doc) return make_error(doc.error().code, "{}: {}", source, doc.error().message);
  return std::move(*doc);
}

/// Reads a throughput: a finite JSON number >= 0.
result<double> read_number(const json& value, std::string_view source, const std::string& path) {
  if (!value.is_number()) {
    return make_error(errc::invalid_argument, "{}: {}: expected a number, got {}", source, path,
                      value.type_name());
  }
  const double v = value.get<double>();
  if (!std::isfinite(v) || v < 0) {
    return make_error(errc::invalid_argument, "{}: {}: throughput {} is not a finite number >= 0",
                      source, path, v);
  }
  return v;
}

/// Reads a packed pair: a list of two throughputs.
result<packed_throughput> read_pair(const json& value, std::string_view source,
                                    const std::string& path) {
  if (!value.is_array() || value.size() != 2) {
    return make_error(errc::invalid_argument,
                      "{}: {}: expected a list of two throughputs [self, peer]", source, path);
  }
  auto self = read_number(value[0], source, path + "[0]");
  if (!self) return std::move(self).error();
  auto peer = read_number(value[1], source, path + "[1]");
  if (!peer) return std::move(peer).error();
  return packed_throughput{*self, *peer};
}

result<gpu_type> read_gpu_type(std::string_view name, std::string_view source,
                               const std::string& path) {
  auto type = gpu_type::parse(name);
  if (!type) {
    return make_error(errc::invalid_argument, "{}: {}: bad GPU type \"{}\": {}", source, path, name,
                      type.error().message);
  }
  return *type;
}

/// Prefixes a table error with the source and the JSON path.
error located(error e, std::string_view source, const std::string& path) {
  e.message = fmt::format("{}: {}: {}", source, path, e.message);
  return e;
}

/// Reads one worker-type object of Gavel's table into `table` (spread figures if `spread`).
result<void> read_gavel_worker(const json& jobs, gpu_type type, bool spread,
                               std::string_view source, const std::string& path,
                               throughput_table& table) {
  if (!jobs.is_object()) {
    return make_error(errc::invalid_argument, "{}: {}: expected an object of job types", source,
                      path);
  }
  for (const auto& [job_text, entries] : jobs.items()) {
    const std::string job_path = fmt::format("{}.\"{}\"", path, job_text);
    auto job = parse_gavel_job_key(job_text);
    if (!job) return located(std::move(job).error(), source, path);
    if (!entries.is_object()) {
      return make_error(errc::invalid_argument, "{}: {}: expected an object", source, job_path);
    }
    for (const auto& [peer_text, value] : entries.items()) {
      const std::string entry_path = fmt::format("{}.\"{}\"", job_path, peer_text);
      if (peer_text == "null") {
        auto v = read_number(value, source, entry_path);
        if (!v) return std::move(v).error();
        auto ok = spread ? table.set_spread(*job, type, *v) : table.set_single(*job, type, *v);
        if (!ok) return located(std::move(ok).error(), source, entry_path);
        continue;
      }
      auto peer = parse_gavel_job_key(peer_text);
      if (!peer) return located(std::move(peer).error(), source, job_path);
      auto pair = read_pair(value, source, entry_path);
      if (!pair) return std::move(pair).error();
      if (peer->scale_factor != job->scale_factor) {
        return make_error(errc::invalid_argument, "{}: {}: packed peer of another scale factor",
                          source, entry_path);
      }
      if (spread) continue;  // checked, not kept
      auto ok = table.set_packed(*job, *peer, type, *pair, /*allow_mirror=*/true);
      if (!ok) return located(std::move(ok).error(), source, entry_path);
    }
  }
  return {};
}

/// Checks that `object` has only members named in `allowed`.
result<void> only_members(const json& object, std::initializer_list<std::string_view> allowed,
                          std::string_view source, const std::string& path) {
  for (const auto& [key, value] : object.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      return make_error(errc::invalid_argument, "{}: {}: unknown member \"{}\"", source, path, key);
    }
  }
  return {};
}

result<std::uint32_t> read_scale_factor(const json& entry, std::string_view source,
                                        const std::string& path) {
  if (!entry.contains("scale_factor")) return 1u;
  const json& v = entry["scale_factor"];
  if (!v.is_number_integer() || v.get<std::int64_t>() < 1 ||
      v.get<std::int64_t>() > throughput_table::max_scale_factor) {
    return make_error(errc::invalid_argument, "{}: {}.scale_factor: expected an integer in [1, {}]",
                      source, path, throughput_table::max_scale_factor);
  }
  return static_cast<std::uint32_t>(v.get<std::int64_t>());
}

result<std::string> read_name(const json& v, std::string_view source, const std::string& path) {
  if (!v.is_string() || v.get<std::string>().empty()) {
    return make_error(errc::invalid_argument, "{}: {}: expected a non-empty job type name", source,
                      path);
  }
  return v.get<std::string>();
}

/// Reads an object GPU type -> throughput of one job of the own format.
result<void> read_per_gpu(const json& object, const job_type_key& job, bool spread,
                          std::string_view source, const std::string& path,
                          throughput_table& table) {
  if (!object.is_object()) {
    return make_error(errc::invalid_argument, "{}: {}: expected an object GPU type -> throughput",
                      source, path);
  }
  for (const auto& [name, value] : object.items()) {
    const std::string entry_path = fmt::format("{}.{}", path, name);
    auto type = read_gpu_type(name, source, entry_path);
    if (!type) return std::move(type).error();
    auto v = read_number(value, source, entry_path);
    if (!v) return std::move(v).error();
    auto ok = spread ? table.set_spread(job, *type, *v) : table.set_single(job, *type, *v);
    if (!ok) return located(std::move(ok).error(), source, entry_path);
  }
  return {};
}

result<void> read_own_jobs(const json& jobs, std::string_view source, throughput_table& table) {
  if (!jobs.is_array()) {
    return make_error(errc::invalid_argument, "{}: jobs: expected a list", source);
  }
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const json& entry = jobs[i];
    std::string path = fmt::format("jobs[{}]", i);
    if (!entry.is_object()) {
      return make_error(errc::invalid_argument, "{}: {}: expected an object", source, path);
    }
    if (auto ok =
            only_members(entry, {"name", "scale_factor", "throughputs", "spread"}, source, path);
        !ok) {
      return ok;
    }
    if (!entry.contains("name")) {
      return make_error(errc::invalid_argument, "{}: {}: missing \"name\"", source, path);
    }
    auto name = read_name(entry["name"], source, path + ".name");
    if (!name) return std::move(name).error();
    auto scale = read_scale_factor(entry, source, path);
    if (!scale) return std::move(scale).error();
    path = fmt::format("jobs[{}] ({})", i, *name);
    const job_type_key job{*name, *scale};
    if (entry.contains("throughputs")) {
      auto ok =
          read_per_gpu(entry["throughputs"], job, false, source, path + ".throughputs", table);
      if (!ok) return ok;
    }
    if (entry.contains("spread")) {
      auto ok = read_per_gpu(entry["spread"], job, true, source, path + ".spread", table);
      if (!ok) return ok;
    }
  }
  return {};
}

result<void> read_own_packed(const json& packed, std::string_view source, throughput_table& table) {
  if (!packed.is_array()) {
    return make_error(errc::invalid_argument, "{}: packed: expected a list", source);
  }
  for (std::size_t i = 0; i < packed.size(); ++i) {
    const json& entry = packed[i];
    const std::string path = fmt::format("packed[{}]", i);
    if (!entry.is_object()) {
      return make_error(errc::invalid_argument, "{}: {}: expected an object", source, path);
    }
    if (auto ok =
            only_members(entry, {"gpu_type", "jobs", "scale_factor", "throughputs"}, source, path);
        !ok) {
      return ok;
    }
    for (const char* member : {"gpu_type", "jobs", "throughputs"}) {
      if (!entry.contains(member)) {
        return make_error(errc::invalid_argument, "{}: {}: missing \"{}\"", source, path, member);
      }
    }
    if (!entry["gpu_type"].is_string()) {
      return make_error(errc::invalid_argument, "{}: {}.gpu_type: expected a string", source, path);
    }
    auto type = read_gpu_type(entry["gpu_type"].get<std::string>(), source, path + ".gpu_type");
    if (!type) return std::move(type).error();
    const json& names = entry["jobs"];
    if (!names.is_array() || names.size() != 2) {
      return make_error(errc::invalid_argument, "{}: {}.jobs: expected two job type names", source,
                        path);
    }
    auto a = read_name(names[0], source, path + ".jobs[0]");
    if (!a) return std::move(a).error();
    auto b = read_name(names[1], source, path + ".jobs[1]");
    if (!b) return std::move(b).error();
    auto scale = read_scale_factor(entry, source, path);
    if (!scale) return std::move(scale).error();
    auto pair = read_pair(entry["throughputs"], source, path + ".throughputs");
    if (!pair) return std::move(pair).error();
    auto ok = table.set_packed({*a, *scale}, {*b, *scale}, *type, *pair);
    if (!ok) return located(std::move(ok).error(), source, path);
  }
  return {};
}

}  // namespace

result<throughput_table> parse_gavel_throughput_table(std::string_view json_text,
                                                      std::string_view source) {
  auto doc = parse_strict(json_text, source);
  if (!doc) return std::move(doc).error();
  if (!doc->is_object()) {
    return make_error(errc::invalid_argument, "{}: expected an object of GPU types", source);
  }
  throughput_table table;
  // Declare the consolidated types first so that spread keys can refer to any of them.
  for (const auto& [key, value] : doc->items()) {
    if (std::string_view(key).ends_with(unconsolidated_suffix)) continue;
    auto type = read_gpu_type(key, source, "top level");
    if (!type) return std::move(type).error();
    if (auto ok = table.add_gpu_type(*type); !ok)
      return located(std::move(ok).error(), source, key);
  }
  for (const auto& [key, value] : doc->items()) {
    std::string_view name = key;
    const bool spread = name.ends_with(unconsolidated_suffix);
    if (spread) name.remove_suffix(unconsolidated_suffix.size());
    auto type = read_gpu_type(name, source, key);
    if (!type) return std::move(type).error();
    if (!table.has_gpu_type(*type)) {
      return make_error(errc::not_found, "{}: {}: unknown GPU type '{}'", source, key, name);
    }
    auto ok = read_gavel_worker(value, *type, spread, source, key, table);
    if (!ok) return std::move(ok).error();
  }
  return table;
}

result<throughput_table> parse_throughput_table(std::string_view json_text,
                                                std::string_view source) {
  auto doc = parse_strict(json_text, source);
  if (!doc) return std::move(doc).error();
  if (!doc->is_object()) {
    return make_error(errc::invalid_argument, "{}: expected an object", source);
  }
  if (auto ok = only_members(*doc, {"gpu_types", "jobs", "packed"}, source, "top level"); !ok) {
    return std::move(ok).error();
  }
  if (!doc->contains("gpu_types") || !(*doc)["gpu_types"].is_array()) {
    return make_error(errc::invalid_argument, "{}: gpu_types: expected a list of GPU types",
                      source);
  }
  throughput_table table;
  const json& types = (*doc)["gpu_types"];
  for (std::size_t i = 0; i < types.size(); ++i) {
    const std::string path = fmt::format("gpu_types[{}]", i);
    if (!types[i].is_string()) {
      return make_error(errc::invalid_argument, "{}: {}: expected a string", source, path);
    }
    auto type = read_gpu_type(types[i].get<std::string>(), source, path);
    if (!type) return std::move(type).error();
    if (auto ok = table.add_gpu_type(*type); !ok) {
      return located(std::move(ok).error(), source, path);
    }
  }
  if (doc->contains("jobs")) {
    if (auto ok = read_own_jobs((*doc)["jobs"], source, table); !ok) return std::move(ok).error();
  }
  if (doc->contains("packed")) {
    if (auto ok = read_own_packed((*doc)["packed"], source, table); !ok) {
      return std::move(ok).error();
    }
  }
  return table;
}

}  // namespace hetsched
