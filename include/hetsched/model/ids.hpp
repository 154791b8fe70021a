// SPDX-License-Identifier: MIT
// Strong ids for every entity, and id_vector, a dense table indexed by one id type.
//
// Each id is strong_id<Tag>: an explicit wrapper over std::uint32_t with value(), defaulted
// ordering, std::hash and fmt formatting, so a node_id can never be passed where a device_id is
// expected. Ids are dense indices assigned by the object that owns the entities (cluster,
// cluster_state, topology); `invalid()` is the reserved "no id" value.
#pragma once

#include <fmt/format.h>

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include <hetsched/model/assert.hpp>

namespace hetsched {

/// A strongly typed integer id. Construction is explicit; comparison and hashing are by value.
template <typename Tag, typename Rep = std::uint32_t>
class strong_id {
 public:
  using tag_type = Tag;
  using rep_type = Rep;

  constexpr strong_id() noexcept = default;
  constexpr explicit strong_id(Rep value) noexcept : value_(value) {}

  /// Returns the reserved id that names nothing.
  [[nodiscard]] static constexpr strong_id invalid() noexcept {
    return strong_id(std::numeric_limits<Rep>::max());
  }
  /// Returns the raw integer.
  [[nodiscard]] constexpr Rep value() const noexcept { return value_; }
  /// Returns the raw integer as an index into dense tables.
  [[nodiscard]] constexpr std::size_t index() const noexcept {
    return static_cast<std::size_t>(value_);
  }
  /// Returns true unless this is invalid().
  [[nodiscard]] constexpr bool valid() const noexcept {
    return value_ != std::numeric_limits<Rep>::max();
  }

  friend constexpr auto operator<=>(strong_id, strong_id) noexcept = default;

 private:
  Rep value_ = std::numeric_limits<Rep>::max();
};

struct node_tag {};
struct device_tag {};
struct job_tag {};
struct task_tag {};
struct tenant_tag {};
struct queue_tag {};
struct cell_tag {};
struct link_tag {};
struct vertex_tag {};

using node_id = strong_id<node_tag>;      ///< A server in the cluster.
using device_id = strong_id<device_tag>;  ///< A GPU, dense over the whole cluster.
using gpu_id = device_id;                 ///< Alias: every schedulable device is a GPU.
using job_id = strong_id<job_tag>;        ///< A job (gang of tasks).
using task_id = strong_id<task_tag>;      ///< A task, dense within its job (role-major order).
using tenant_id = strong_id<tenant_tag>;  ///< A tenant (team, user group).
using queue_id = strong_id<queue_tag>;    ///< A queue or virtual cluster.
using cell_id = strong_id<cell_tag>;      ///< A HiveD cell.
using link_id = strong_id<link_tag>;      ///< A topology link.
using vertex_id = strong_id<vertex_tag>;  ///< A topology vertex inside one node topology.

/// A dense table indexed by one id type. Indexing with another id type does not compile.
template <typename Id, typename T>
class id_vector {
 public:
  using value_type = T;
  using iterator = typename std::vector<T>::iterator;
  using const_iterator = typename std::vector<T>::const_iterator;

  id_vector() = default;
  explicit id_vector(std::size_t n, const T& value = T()) : data_(n, value) {}

  [[nodiscard]] T& operator[](Id id) noexcept {
    HETSCHED_ASSERT(id.index() < data_.size(), "id out of range");
    return data_[id.index()];
  }
  [[nodiscard]] const T& operator[](Id id) const noexcept {
    HETSCHED_ASSERT(id.index() < data_.size(), "id out of range");
    return data_[id.index()];
  }
  /// Returns true if `id` indexes an element.
  [[nodiscard]] bool contains(Id id) const noexcept {
    return id.valid() && id.index() < data_.size();
  }
  /// Appends `value` and returns its id.
  Id push_back(T value) {
    data_.push_back(std::move(value));
    return Id(static_cast<typename Id::rep_type>(data_.size() - 1));
  }
  void resize(std::size_t n, const T& value = T()) { data_.resize(n, value); }
  void reserve(std::size_t n) { data_.reserve(n); }
  void clear() noexcept { data_.clear(); }

  [[nodiscard]] std::size_t size() const noexcept { return data_.size(); }
  [[nodiscard]] bool empty() const noexcept { return data_.empty(); }
  [[nodiscard]] iterator begin() noexcept { return data_.begin(); }
  [[nodiscard]] iterator end() noexcept { return data_.end(); }
  [[nodiscard]] const_iterator begin() const noexcept { return data_.begin(); }
  [[nodiscard]] const_iterator end() const noexcept { return data_.end(); }
  [[nodiscard]] const std::vector<T>& raw() const noexcept { return data_; }

  friend bool operator==(const id_vector&, const id_vector&) = default;

 private:
  std::vector<T> data_;
};

}  // namespace hetsched

template <typename Tag, typename Rep>
struct std::hash<hetsched::strong_id<Tag, Rep>> {
  std::size_t operator()(hetsched::strong_id<Tag, Rep> id) const noexcept {
    return std::hash<Rep>{}(id.value());
  }
};

template <typename Tag, typename Rep>
struct fmt::formatter<hetsched::strong_id<Tag, Rep>> : fmt::formatter<Rep> {
  template <typename FormatContext>
  auto format(hetsched::strong_id<Tag, Rep> id, FormatContext& ctx) const {
    return fmt::formatter<Rep>::format(id.value(), ctx);
  }
};
