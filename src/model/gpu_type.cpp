// SPDX-License-Identifier: MIT
// The GPU model catalogue and model-name normalisation.
#include <array>
#include <string>

#include <hetsched/model/gpu_type.hpp>

namespace hetsched {
namespace {

// Sorted by name. Memory in MiB; NVLink per-link bandwidth as hwloc reports it.
constexpr std::array<gpu_spec, 25> catalogue{{
    {gpu_type("A10-24GB"), 24576, 86, 0, 0, 4, 0},
    {gpu_type("A100-PCIE-40GB"), 40960, 80, 3, 12, 4, 25000},
    {gpu_type("A100-PCIE-80GB"), 81920, 80, 3, 12, 4, 25000},
    {gpu_type("A100-SXM4-40GB"), 40960, 80, 3, 12, 4, 25000},
    {gpu_type("A100-SXM4-80GB"), 81920, 80, 3, 12, 4, 25000},
    {gpu_type("B200-SXM-180GB"), 184320, 100, 5, 18, 6, 50000},
    {gpu_type("H100-PCIE-80GB"), 81920, 90, 4, 18, 5, 25000},
    {gpu_type("H100-SXM5-80GB"), 81920, 90, 4, 18, 5, 25000},
    {gpu_type("H200-SXM5-141GB"), 144384, 90, 4, 18, 5, 25000},
    {gpu_type("K40m"), 11520, 35, 0, 0, 3, 0},
    {gpu_type("K80"), 12288, 37, 0, 0, 3, 0},
    {gpu_type("L4-24GB"), 23034, 89, 0, 0, 4, 0},
    {gpu_type("L40S-48GB"), 46068, 89, 0, 0, 4, 0},
    {gpu_type("MI250X"), 131072, 0, 0, 0, 4, 0},
    {gpu_type("MI300X"), 196608, 0, 0, 0, 5, 0},
    {gpu_type("P100-PCIE-16GB"), 16384, 60, 0, 0, 3, 0},
    {gpu_type("P100-SXM2-16GB"), 16384, 60, 1, 4, 3, 20000},
    {gpu_type("RTX-4090"), 24564, 89, 0, 0, 4, 0},
    {gpu_type("RTX-8000"), 49152, 75, 2, 2, 3, 25000},
    {gpu_type("T4-16GB"), 15360, 75, 0, 0, 3, 0},
    {gpu_type("V100-PCIE-16GB"), 16384, 70, 0, 0, 3, 0},
    {gpu_type("V100-PCIE-32GB"), 32768, 70, 0, 0, 3, 0},
    {gpu_type("V100-SXM2-16GB"), 16384, 70, 2, 6, 3, 25000},
    {gpu_type("V100-SXM2-32GB"), 32768, 70, 2, 6, 3, 25000},
    {gpu_type("V100-SXM3-32GB"), 32768, 70, 2, 6, 3, 25000},
}};

constexpr bool catalogue_sorted() {
  for (std::size_t i = 1; i < catalogue.size(); ++i) {
    if (!(catalogue[i - 1].type < catalogue[i].type)) return false;
  }
  return true;
}
static_assert(catalogue_sorted(), "the GPU catalogue must stay sorted by name");

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

std::string_view strip_prefix(std::string_view s, std::string_view prefix) {
  if (s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix) {
    s.remove_prefix(prefix.size());
  }
  return s;
}

}  // namespace

result<gpu_type> gpu_type::parse(std::string_view name) {
  if (!is_valid_name(name)) {
    return make_error(errc::invalid_argument,
                      "invalid GPU type name '{}': expected 1 to {} characters of [A-Za-z0-9._-]",
                      name, max_length);
  }
  return gpu_type(name);
}

std::span<const gpu_spec> known_gpu_specs() noexcept { return catalogue; }

std::optional<gpu_spec> find_gpu_spec(gpu_type type) noexcept {
  const auto* it =
      std::lower_bound(catalogue.begin(), catalogue.end(), type,
                       [](const gpu_spec& s, const gpu_type& t) { return s.type < t; });
  if (it == catalogue.end() || it->type != type) return std::nullopt;
  return *it;
}

gpu_type normalize_gpu_model(std::string_view model) {
  while (!model.empty() && model.front() == ' ') model.remove_prefix(1);
  while (!model.empty() && model.back() == ' ') model.remove_suffix(1);
  for (std::string_view prefix :
       {"NVIDIA ", "Tesla ", "GeForce ", "Quadro ", "AMD ", "Instinct "}) {
    model = strip_prefix(model, prefix);
  }
  for (std::string_view prefix : {"Tesla ", "GeForce ", "Quadro ", "Instinct "}) {
    model = strip_prefix(model, prefix);
  }
  std::string name;
  for (char c : model) {
    if (c == ' ') {
      if (!name.empty() && name.back() != '-') name.push_back('-');
    } else if (name_char(c)) {
      name.push_back(c);
    }
  }
  while (!name.empty() && name.back() == '-') name.pop_back();
  if (name.empty()) return {};
  // The longest catalogue name that prefixes the result at a '-' boundary wins, so that vendor
  // suffixes such as "-H" (DGX-2H) map to the base model.
  const gpu_spec* best = nullptr;
  for (const auto& spec : catalogue) {
    std::string_view n = spec.type.name();
    if (name.size() >= n.size() && std::string_view(name).substr(0, n.size()) == n &&
        (name.size() == n.size() || name[n.size()] == '-') &&
        (best == nullptr || n.size() > best->type.name().size())) {
      best = &spec;
    }
  }
  if (best != nullptr) return best->type;
  if (name.size() > gpu_type::max_length) name.resize(gpu_type::max_length);
  return gpu_type(name);
}

}  // namespace hetsched
