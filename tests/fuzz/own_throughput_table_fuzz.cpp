// SPDX-License-Identifier: MIT
// libFuzzer target for parse_throughput_table() (hetsched's own JSON throughput table).
//
// An accepted table must hold only declared GPU types in ascending order, and every single and
// spread figure of every listed job type must be a finite number >= 0.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

#include <hetsched/policies/throughput_table.hpp>

namespace {

void check_figure(std::optional<double> v) {
  if (v && (!std::isfinite(*v) || *v < 0)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto table = hetsched::parse_throughput_table(text, "fuzz.json");
  if (!table) {
    if (table.error().message.empty()) std::abort();
    return 0;
  }
  const auto types = table->gpu_types();
  for (std::size_t i = 1; i < types.size(); ++i) {
    if (!(types[i - 1] < types[i])) std::abort();
  }
  for (const auto& job : table->job_types()) {
    if (job.name.empty() || job.scale_factor < 1) std::abort();
    for (const auto type : types) {
      check_figure(table->single(job.name, job.scale_factor, type));
      check_figure(table->spread(job.name, job.scale_factor, type));
    }
  }
  return 0;
}
