// SPDX-License-Identifier: MIT
// Resource vector arithmetic and GPU request validation.
#include <algorithm>

#include <hetsched/model/resources.hpp>

namespace hetsched {

std::int64_t resource_vector::extended_amount(std::string_view name) const noexcept {
  const auto it = extended.find(name);
  return it == extended.end() ? 0 : it->second;
}

void resource_vector::set_extended(std::string_view name, std::int64_t amount) {
  const auto it = extended.find(name);
  if (amount == 0) {
    if (it != extended.end()) extended.erase(it);
    return;
  }
  if (it != extended.end()) {
    it->second = amount;
  } else {
    extended.emplace(std::string(name), amount);
  }
}

bool resource_vector::is_zero() const noexcept {
  return milli_gpu == 0 && milli_cpu == 0 && memory_mib == 0 && gpu_memory_mib == 0 &&
         std::all_of(extended.begin(), extended.end(), [](const auto& e) { return e.second == 0; });
}

bool resource_vector::any_negative() const noexcept {
  return milli_gpu < 0 || milli_cpu < 0 || memory_mib < 0 || gpu_memory_mib < 0 ||
         std::any_of(extended.begin(), extended.end(), [](const auto& e) { return e.second < 0; });
}

resource_vector& resource_vector::operator+=(const resource_vector& other) {
  milli_gpu += other.milli_gpu;
  milli_cpu += other.milli_cpu;
  memory_mib += other.memory_mib;
  gpu_memory_mib += other.gpu_memory_mib;
  for (const auto& [name, amount] : other.extended)
    set_extended(name, extended_amount(name) + amount);
  return *this;
}

resource_vector& resource_vector::operator-=(const resource_vector& other) {
  milli_gpu -= other.milli_gpu;
  milli_cpu -= other.milli_cpu;
  memory_mib -= other.memory_mib;
  gpu_memory_mib -= other.gpu_memory_mib;
  for (const auto& [name, amount] : other.extended)
    set_extended(name, extended_amount(name) - amount);
  return *this;
}

resource_vector operator+(resource_vector a, const resource_vector& b) {
  a += b;
  return a;
}

resource_vector operator-(resource_vector a, const resource_vector& b) {
  a -= b;
  return a;
}

resource_vector operator*(resource_vector v, std::int64_t factor) {
  v.milli_gpu *= factor;
  v.milli_cpu *= factor;
  v.memory_mib *= factor;
  v.gpu_memory_mib *= factor;
  if (factor == 0) {
    v.extended.clear();
  } else {
    for (auto& entry : v.extended) entry.second *= factor;
  }
  return v;
}

bool operator<=(const resource_vector& a, const resource_vector& b) noexcept {
  if (a.milli_gpu > b.milli_gpu || a.milli_cpu > b.milli_cpu || a.memory_mib > b.memory_mib ||
      a.gpu_memory_mib > b.gpu_memory_mib) {
    return false;
  }
  // Both maps are sorted: walk them together so that keys present on one side only compare
  // against 0.
  auto ia = a.extended.begin();
  auto ib = b.extended.begin();
  while (ia != a.extended.end() || ib != b.extended.end()) {
    if (ib == b.extended.end() || (ia != a.extended.end() && ia->first < ib->first)) {
      if (ia->second > 0) return false;
      ++ia;
    } else if (ia == a.extended.end() || ib->first < ia->first) {
      if (ib->second < 0) return false;
      ++ib;
    } else {
      if (ia->second > ib->second) return false;
      ++ia;
      ++ib;
    }
  }
  return true;
}

result<void> validate(const gpu_request& request) {
  if (request.milli_per_gpu < 1 || request.milli_per_gpu > 1000) {
    return make_error(errc::out_of_range, "milli-GPU per device is {}, must be 1..1000",
                      request.milli_per_gpu);
  }
  if (request.milli_per_gpu < 1000 && request.count > 1) {
    return make_error(errc::invalid_argument,
                      "fractional GPU request of {} milli-GPU needs count 1, got {}",
                      request.milli_per_gpu, request.count);
  }
  if (request.count > max_gpus_per_task) {
    return make_error(errc::out_of_range, "GPU count {} exceeds the limit of {} per task",
                      request.count, max_gpus_per_task);
  }
  if (request.memory_mib < 0) {
    return make_error(errc::invalid_argument, "GPU memory per device is negative ({} MiB)",
                      request.memory_mib);
  }
  if (request.memory_mib > max_resource_amount) {
    return make_error(errc::out_of_range, "GPU memory per device {} MiB exceeds {} MiB",
                      request.memory_mib, max_resource_amount);
  }
  return ok();
}

result<void> validate(const extended_resources& extended) {
  for (const auto& [name, amount] : extended) {
    if (name.empty()) {
      return make_error(errc::invalid_argument, "extended resource with an empty name");
    }
    if (amount < 0) {
      return make_error(errc::invalid_argument, "extended resource '{}' is negative ({})", name,
                        amount);
    }
    if (amount > max_resource_amount) {
      return make_error(errc::out_of_range, "extended resource '{}' is {}, exceeds {}", name,
                        amount, max_resource_amount);
    }
  }
  return ok();
}

}  // namespace hetsched
