// SPDX-License-Identifier: MIT
// throughput_table: the measured job type x GPU type table, and Gavel's job type keys.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <utility>

#include <hetsched/policies/throughput_table.hpp>

namespace hetsched {
namespace {

struct entry_view {
  std::string_view name;
  std::uint32_t scale_factor = 1;
  gpu_type gpu;
};

struct pair_view {
  std::string_view name;
  std::string_view peer;
  std::uint32_t scale_factor = 1;
  gpu_type gpu;
};

std::string describe(const job_type_key& job, gpu_type type) {
  return fmt::format("{} on {}", to_string(job), type.name());
}

}  // namespace

std::string to_string(const job_type_key& key) {
  return fmt::format("('{}', {})", key.name, key.scale_factor);
}

result<job_type_key> parse_gavel_job_key(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return make_error(errc::invalid_argument, "job type key \"{}\": {}", text, why);
  };
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') {
    return bad("expected ('<name>', <scale factor>)");
  }
  std::string_view inner = text.substr(1, text.size() - 2);
  if (inner.empty() || (inner.front() != '\'' && inner.front() != '"')) {
    return bad("expected a quoted name after '('");
  }
  const char quote = inner.front();
  const auto close = inner.find(quote, 1);
  if (close == std::string_view::npos) return bad("unterminated name");
  job_type_key key;
  key.name = std::string(inner.substr(1, close - 1));
  if (key.name.empty()) return bad("empty name");
  if (key.name.find('\\') != std::string::npos) return bad("escapes in the name are not supported");
  std::string_view rest = inner.substr(close + 1);
  if (rest.size() < 2 || rest.front() != ',')
    return bad("expected ', <scale factor>' after the name");
  rest.remove_prefix(1);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  std::uint32_t scale = 0;
  const auto* end = rest.data() + rest.size();
  const auto [ptr, ec] = std::from_chars(rest.data(), end, scale);
  if (ec != std::errc() || ptr != end || scale < 1 || scale > throughput_table::max_scale_factor) {
    return bad(fmt::format("scale factor must be an integer in [1, {}]",
                           throughput_table::max_scale_factor));
  }
  key.scale_factor = scale;
  return key;
}

result<void> throughput_table::add_gpu_type(gpu_type type) {
  if (type.empty()) return make_error(errc::invalid_argument, "empty GPU type");
  const auto it = std::lower_bound(gpu_types_.begin(), gpu_types_.end(), type);
  if (it != gpu_types_.end() && *it == type) {
    return make_error(errc::already_exists, "GPU type {} declared twice", type.name());
  }
  gpu_types_.insert(it, type);
  return {};
}

bool throughput_table::has_gpu_type(gpu_type type) const noexcept {
  return std::binary_search(gpu_types_.begin(), gpu_types_.end(), type);
}

result<void> throughput_table::check_entry(const job_type_key& job, gpu_type type, double value,
                                           std::string_view what) const {
  if (job.name.empty()) return make_error(errc::invalid_argument, "{}: empty job type name", what);
  if (job.scale_factor < 1 || job.scale_factor > max_scale_factor) {
    return make_error(errc::invalid_argument, "{} of {}: scale factor {} outside [1, {}]", what,
                      job.name, job.scale_factor, max_scale_factor);
  }
  if (!has_gpu_type(type)) {
    return make_error(errc::not_found, "{} of {}: unknown GPU type '{}'", what, describe(job, type),
                      type.name());
  }
  if (!std::isfinite(value) || value < 0) {
    return make_error(errc::invalid_argument, "{} of {}: throughput {} is not a finite number >= 0",
                      what, describe(job, type), value);
  }
  return {};
}

result<void> throughput_table::set_single(const job_type_key& job, gpu_type type,
                                          double steps_per_second) {
  if (auto ok = check_entry(job, type, steps_per_second, "single throughput"); !ok) return ok;
  const auto [it, inserted] =
      single_.try_emplace(entry_key{job.name, job.scale_factor, type}, steps_per_second);
  if (!inserted) {
    return make_error(errc::already_exists, "single throughput of {} given twice",
                      describe(job, type));
  }
  return {};
}

result<void> throughput_table::set_spread(const job_type_key& job, gpu_type type,
                                          double steps_per_second) {
  if (auto ok = check_entry(job, type, steps_per_second, "spread throughput"); !ok) return ok;
  const auto [it, inserted] =
      spread_.try_emplace(entry_key{job.name, job.scale_factor, type}, steps_per_second);
  if (!inserted) {
    return make_error(errc::already_exists, "spread throughput of {} given twice",
                      describe(job, type));
  }
  return {};
}

result<void> throughput_table::set_packed(const job_type_key& job, const job_type_key& peer,
                                          gpu_type type, packed_throughput steps_per_second,
                                          bool allow_mirror) {
  if (auto ok = check_entry(job, type, steps_per_second.self, "packed throughput"); !ok) return ok;
  if (auto ok = check_entry(peer, type, steps_per_second.peer, "packed throughput"); !ok) {
    return ok;
  }
  const std::string entry = fmt::format("packed throughputs of {} with {} on {}", to_string(job),
                                        to_string(peer), type.name());
  if (job.scale_factor != peer.scale_factor) {
    return make_error(errc::invalid_argument, "{}: the two scale factors differ", entry);
  }
  const auto existing = packed(job.name, peer.name, job.scale_factor, type);
  if (existing) {
    if (allow_mirror && *existing == steps_per_second) return {};
    if (allow_mirror) {
      return make_error(
          errc::invalid_argument, "{}: [{}, {}] disagrees with the mirrored entry [{}, {}]", entry,
          steps_per_second.self, steps_per_second.peer, existing->self, existing->peer);
    }
    return make_error(errc::already_exists, "{} given twice", entry);
  }
  packed_.emplace(pair_key{job.name, peer.name, job.scale_factor, type}, steps_per_second);
  packed_.emplace(pair_key{peer.name, job.name, job.scale_factor, type},
                  packed_throughput{steps_per_second.peer, steps_per_second.self});
  return {};
}

std::optional<double> throughput_table::single(std::string_view name, std::uint32_t scale_factor,
                                               gpu_type type) const {
  const auto it = single_.find(entry_view{name, scale_factor, type});
  if (it == single_.end()) return std::nullopt;
  return it->second;
}

std::optional<double> throughput_table::spread(std::string_view name, std::uint32_t scale_factor,
                                               gpu_type type) const {
  const auto it = spread_.find(entry_view{name, scale_factor, type});
  if (it == spread_.end()) return std::nullopt;
  return it->second;
}

std::optional<packed_throughput> throughput_table::packed(std::string_view name,
                                                          std::string_view peer,
                                                          std::uint32_t scale_factor,
                                                          gpu_type type) const {
  const auto it = packed_.find(pair_view{name, peer, scale_factor, type});
  if (it == packed_.end()) return std::nullopt;
  return it->second;
}

std::vector<job_type_key> throughput_table::job_types() const {
  std::set<job_type_key> keys;
  for (const auto& [key, value] : single_) keys.insert({key.name, key.scale_factor});
  for (const auto& [key, value] : spread_) keys.insert({key.name, key.scale_factor});
  for (const auto& [key, value] : packed_) keys.insert({key.name, key.scale_factor});
  return {keys.begin(), keys.end()};
}

}  // namespace hetsched
