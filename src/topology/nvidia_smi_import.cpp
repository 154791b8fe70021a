// SPDX-License-Identifier: MIT
// import_nvidia_smi_topo(): `nvidia-smi topo -m` text to a node_topology (a locality tree rebuilt
// by nested union-find and checked against every known cell), and detect_topology_format().
#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <hetsched/topology/import.hpp>
#include <hetsched/topology/views.hpp>

#include "detail/text.hpp"

namespace hetsched {
namespace {

using detail::shown;

constexpr bool is_blank(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

// Returns the next token of `line` at or after `pos` (empty at the end) and advances `pos`.
// Blanks and ANSI escape sequences (ESC '[' parameters final-byte) separate tokens.
std::string_view next_token(std::string_view line, std::size_t& pos) noexcept {
  auto skip_escape = [&](std::size_t& p) {
    ++p;  // ESC
    if (p < line.size() && line[p] == '[') {
      ++p;
      while (p < line.size() && !(line[p] >= 0x40 && line[p] <= 0x7E)) ++p;
      if (p < line.size()) ++p;
    }
  };
  while (pos < line.size()) {
    if (is_blank(line[pos])) {
      ++pos;
    } else if (line[pos] == '\x1b') {
      skip_escape(pos);
    } else {
      break;
    }
  }
  const std::size_t start = pos;
  while (pos < line.size() && !is_blank(line[pos]) && line[pos] != '\x1b') ++pos;
  return line.substr(start, pos - start);
}

std::vector<std::string_view> tokenize(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  for (auto t = next_token(line, pos); !t.empty(); t = next_token(line, pos)) out.push_back(t);
  return out;
}

// Returns the first token of `line`, or empty for blank lines.
std::string_view first_token(std::string_view line) noexcept {
  std::size_t pos = 0;
  return next_token(line, pos);
}

bool is_comment_or_blank(std::string_view line) noexcept {
  const auto t = first_token(line);
  return t.empty() || t.front() == '#';
}

// Iterates the lines of a text (without '\n'), counting from 1.
class line_reader {
 public:
  explicit line_reader(std::string_view text) noexcept : text_(text) {}
  bool next(std::string_view& line) noexcept {
    if (pos_ > text_.size()) return false;
    const std::size_t end = std::min(text_.find('\n', pos_), text_.size());
    line = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    ++number_;
    return true;
  }
  [[nodiscard]] std::size_t number() const noexcept { return number_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t number_ = 0;
};
bool is_relation_token(std::string_view t) {
  return t == "X" || t == "PIX" || t == "PXB" || t == "PHB" || t == "NODE" || t == "SYS" ||
         (t.size() > 2 && t.substr(0, 2) == "NV" &&
          std::all_of(t.begin() + 2, t.end(), [](char c) { return c >= '0' && c <= '9'; }));
}

std::optional<std::uint32_t> parse_index(std::string_view s, std::uint32_t max) {
  if (s.empty() || (s.size() > 1 && s.front() == '0')) return std::nullopt;
  std::uint32_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v > max) return std::nullopt;
  return v;
}

enum class affinity_column : std::uint8_t { cpu, numa, gpu_numa_id };

// One matrix cell as read from a row; `known` is false for cells of missing rows.
struct cell {
  bool known = false;
  pcie_relation pcie = pcie_relation::unknown;
  std::uint16_t nvlinks = 0;
};

// Level of a known non-NVLink relation: 1 PIX .. 5 SYS; 0 otherwise.
int level_of(const cell& c) noexcept {
  if (!c.known || c.nvlinks > 0) return 0;
  switch (c.pcie) {
    case pcie_relation::pix: return 1;
    case pcie_relation::pxb: return 2;
    case pcie_relation::phb: return 3;
    case pcie_relation::node: return 4;
    case pcie_relation::sys: return 5;
    default: return 0;
  }
}

std::string token_of(const cell& c) { return pair_relation{c.pcie, c.nvlinks}.token(); }

struct device {
  std::string header_name;
  std::string name;
  bool gpu = false;
  std::int32_t index = 0;    // GPU index or NIC index
  std::size_t row_line = 0;  // 0: no row
  std::int32_t numa = -1;
  std::string cpuset;
};

class union_find {
 public:
  explicit union_find(std::size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  std::size_t find(std::size_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void unite(std::size_t a, std::size_t b) {
    a = find(a);
    b = find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::vector<std::size_t> parent_;
};

class topo_importer {
 public:
  explicit topo_importer(const nvidia_smi_import_options& options) : options_(options) {
    if (!options.gpu_model.empty()) spec_ = find_gpu_spec(options.gpu_model);
  }

  result<node_topology> run(std::string_view text) {
    if (text.size() > max_topology_text_bytes) {
      return make_error(errc::out_of_range,
                        "nvidia-smi topo input is {} bytes, more than the limit of {}", text.size(),
                        max_topology_text_bytes);
    }
    if (options_.nvlink_generation > 5) {
      return make_error(errc::invalid_argument, "nvlink_generation {} is not 0..5",
                        options_.nvlink_generation);
    }
    line_reader lines(text);
    std::string_view line;
    bool have_header = false;
    while (lines.next(line)) {
      if (is_comment_or_blank(line)) continue;
      header_line_ = lines.number();
      HETSCHED_TRY(parse_header(line));
      have_header = true;
      break;
    }
    if (!have_header) {
      return make_error(errc::invalid_argument, "nvidia-smi topo: no header line (empty input)");
    }
    const std::size_t n = devices_.size();
    cells_.assign(n * n, cell{});
    bool in_legend = false;
    bool in_nic_legend = false;
    while (lines.next(line)) {
      const auto first = first_token(line);
      if (first.empty()) continue;
      const auto tokens = tokenize(line);
      if (tokens.size() == 2 && tokens[0] == "NIC" && tokens[1] == "Legend:") {
        in_legend = in_nic_legend = true;
        continue;
      }
      if (tokens.size() == 1 && tokens[0] == "Legend:") {
        in_legend = true;
        continue;
      }
      if (in_nic_legend) {
        HETSCHED_TRY(parse_nic_legend(tokens, lines.number()));
      } else if (!in_legend && first.front() != '#') {
        HETSCHED_TRY(parse_row(tokens, lines.number()));
      }
    }
    HETSCHED_TRY(check_names());
    HETSCHED_TRY(check_rows());
    HETSCHED_TRY(merge_cells());
    HETSCHED_TRY(check_consistency());
    return build();
  }

 private:
  template <typename... Args>
  static error line_error(errc code, std::size_t line, fmt::format_string<Args...> format,
                          Args&&... args) {
    return error{code, fmt::format("nvidia-smi topo line {}: {}", line,
                                   fmt::format(format, std::forward<Args>(args)...))};
  }

  result<void> parse_header(std::string_view line) {
    const auto tokens = tokenize(line);
    for (std::size_t i = 0; i < tokens.size();) {
      const auto t = tokens[i];
      auto next_is = [&](std::size_t k, std::string_view word) {
        return i + k < tokens.size() && tokens[i + k] == word;
      };
      if (t == "CPU" && next_is(1, "Affinity")) {
        affinity_.push_back(affinity_column::cpu);
        i += 2;
        continue;
      }
      if (t == "NUMA" && next_is(1, "Affinity")) {
        affinity_.push_back(affinity_column::numa);
        i += 2;
        continue;
      }
      if (t == "GPU" && next_is(1, "NUMA") && next_is(2, "ID")) {
        affinity_.push_back(affinity_column::gpu_numa_id);
        i += 3;
        continue;
      }
      if (!affinity_.empty()) {
        return line_error(errc::invalid_argument, header_line_,
                          "unexpected header word '{}' after the affinity columns", shown(t));
      }
      if (devices_.size() == max_import_devices) {
        return line_error(errc::out_of_range, header_line_, "more than {} device columns",
                          max_import_devices);
      }
      if (is_relation_token(t)) {
        return line_error(errc::invalid_argument, header_line_,
                          "'{}' is a matrix cell, not a device name: the header line is missing",
                          t);
      }
      HETSCHED_TRY(check_name(t, header_line_));
      device d;
      d.header_name = std::string(t);
      d.name = d.header_name;
      if (t.substr(0, 3) == "GPU") {
        const auto index = parse_index(t.substr(3), static_cast<std::uint32_t>(max_import_devices));
        if (!index) {
          return line_error(errc::invalid_argument, header_line_,
                            "device name '{}' is not GPU<n> with a plain decimal n", t);
        }
        d.gpu = true;
        d.index = static_cast<std::int32_t>(*index);
        ++gpu_count_;
      } else {
        d.index = static_cast<std::int32_t>(devices_.size() - gpu_count_);
      }
      if (!by_name_.emplace(d.header_name, devices_.size()).second) {
        return line_error(errc::already_exists, header_line_,
                          "device '{}' appears twice in the header", t);
      }
      devices_.push_back(std::move(d));
      ++i;
    }
    if (devices_.empty()) {
      return line_error(errc::invalid_argument, header_line_, "the header line names no devices");
    }
    for (const auto& d : devices_) {
      if (!d.gpu) continue;
      const auto k = static_cast<std::size_t>(d.index);
      if (k >= gpu_count_) {
        return line_error(errc::invalid_argument, header_line_,
                          "{} has index {} but the header has only {} GPUs (indices must be 0..{})",
                          d.name, d.index, gpu_count_, gpu_count_ - 1);
      }
    }
    return ok();
  }

  static result<void> check_name(std::string_view name, std::size_t line) {
    for (const char c : name) {
      if (c < 0x21 || c > 0x7E) {
        return line_error(errc::invalid_argument, line,
                          "device name contains the non-printable byte 0x{:02x}",
                          static_cast<unsigned char>(c));
      }
    }
    return ok();
  }

  result<void> parse_row(const std::vector<std::string_view>& tokens, std::size_t line) {
    const std::size_t n = devices_.size();
    HETSCHED_TRY(check_name(tokens[0], line));
    const auto it = by_name_.find(std::string(tokens[0]));
    if (it == by_name_.end()) {
      return line_error(errc::not_found, line, "row '{}' is not a device of the header (line {})",
                        tokens[0], header_line_);
    }
    const std::size_t i = it->second;
    device& d = devices_[i];
    if (d.row_line != 0) {
      return line_error(errc::already_exists, line, "second row for {} (the first is line {})",
                        d.header_name, d.row_line);
    }
    const std::size_t fields = tokens.size() - 1;
    if (fields < n || fields > n + affinity_.size()) {
      return line_error(errc::invalid_argument, line,
                        "row {} has {} fields, but the header has {} device columns and {} "
                        "affinity columns (ragged row)",
                        d.header_name, fields, n, affinity_.size());
    }
    for (std::size_t j = 0; j < n; ++j) {
      const auto t = tokens[j + 1];
      auto rel = parse_relation_token(t);
      if (!rel) {
        if ((t.front() >= '0' && t.front() <= '9') || t == "N/A") {
          return line_error(errc::invalid_argument, line,
                            "row {} has {} matrix cells before its affinity values, but the header "
                            "has {} device columns (ragged row)",
                            d.header_name, j, n);
        }
        return line_error(errc::invalid_argument, line,
                          "column {} ({}): unknown token '{}' (expected X, NV<n>, PIX, PXB, PHB, "
                          "NODE or SYS)",
                          j + 2, devices_[j].header_name, shown(t));
      }
      const bool diagonal = i == j;
      if (diagonal != (rel->pcie == pcie_relation::self)) {
        return line_error(errc::invalid_argument, line, "column {} ({}): '{}' {}", j + 2,
                          devices_[j].header_name, t,
                          diagonal ? "on the diagonal, which must be X" : "off the diagonal");
      }
      if (rel->nvlinks > 0 && !(d.gpu && devices_[j].gpu)) {
        return line_error(errc::invalid_argument, line,
                          "column {} ({}): '{}' between {} and {}, but NVLinks join GPUs only",
                          j + 2, devices_[j].header_name, t, d.header_name,
                          devices_[j].header_name);
      }
      cells_[i * n + j] = cell{true, rel->pcie, rel->nvlinks};
    }
    for (std::size_t k = n; k < fields; ++k) {
      const auto value = tokens[k + 1];
      const auto column = affinity_[k - n];
      if (value == "N/A" || column == affinity_column::gpu_numa_id) continue;
      if (column == affinity_column::cpu) {
        const bool valid = std::all_of(value.begin(), value.end(), [](char c) {
          return (c >= '0' && c <= '9') || c == ',' || c == '-';
        });
        if (!valid) {
          return line_error(errc::invalid_argument, line,
                            "CPU affinity '{}' of {} is not a CPU list", shown(value),
                            d.header_name);
        }
        d.cpuset = std::string(value);
      } else {
        const auto numa = parse_index(value, 65535);
        if (!numa) {
          return line_error(errc::invalid_argument, line,
                            "NUMA affinity '{}' of {} is not a number", shown(value),
                            d.header_name);
        }
        d.numa = static_cast<std::int32_t>(*numa);
      }
    }
    d.row_line = line;
    return ok();
  }

  result<void> parse_nic_legend(const std::vector<std::string_view>& tokens, std::size_t line) {
    if (tokens.size() != 2 || tokens[0].size() < 2 || tokens[0].back() != ':') return ok();
    const auto dev = tokens[0].substr(0, tokens[0].size() - 1);
    const auto it = by_name_.find(std::string(dev));
    if (it == by_name_.end() || devices_[it->second].gpu) {
      return line_error(errc::not_found, line,
                        "NIC Legend names '{}', which is not a NIC of the header", shown(dev));
    }
    HETSCHED_TRY(check_name(tokens[1], line));
    devices_[it->second].name = std::string(tokens[1]);
    return ok();
  }

  result<void> check_names() {
    std::map<std::string_view, std::size_t> names;
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      const auto [it, inserted] = names.emplace(devices_[i].name, i);
      if (!inserted) {
        return line_error(errc::already_exists, header_line_,
                          "devices {} and {} are both named '{}'", devices_[it->second].header_name,
                          devices_[i].header_name, devices_[i].name);
      }
    }
    return ok();
  }

  result<void> check_rows() {
    std::vector<std::string_view> missing;
    for (const auto& d : devices_) {
      if (d.row_line == 0) missing.push_back(d.header_name);
    }
    if (missing.empty() || options_.allow_partial) return ok();
    std::string list;
    for (std::size_t k = 0; k < missing.size() && k < 8; ++k) {
      if (k > 0) list += ", ";
      list += missing[k];
    }
    if (missing.size() > 8) list += ", ...";
    return make_error(
        errc::invalid_argument,
        "nvidia-smi topo: the matrix has no row for {} ({} of {} rows missing; header "
        "at line {}); set allow_partial to accept a partial matrix",
        list, missing.size(), devices_.size(), header_line_);
  }

  // Makes cells_ symmetric: a pair known from one row is copied to the other; both rows must agree.
  result<void> merge_cells() {
    const std::size_t n = devices_.size();
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = i + 1; j < n; ++j) {
        cell& a = cells_[i * n + j];
        cell& b = cells_[j * n + i];
        if (a.known && b.known) {
          if (a.pcie != b.pcie || a.nvlinks != b.nvlinks) {
            return line_error(errc::invalid_argument, devices_[i].row_line,
                              "column {} ({}) is '{}' but line {} column {} ({}) is '{}': the "
                              "matrix must be symmetric",
                              j + 2, devices_[j].header_name, token_of(a), devices_[j].row_line,
                              i + 2, devices_[i].header_name, token_of(b));
          }
        } else if (a.known) {
          b = a;
        } else if (b.known) {
          a = b;
        }
      }
    }
    return ok();
  }

  // Endpoint order: GPUs by index, then NICs in header order.
  std::vector<std::size_t> endpoint_order() const {
    std::vector<std::size_t> order(devices_.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const auto& da = devices_[a];
      const auto& db = devices_[b];
      if (da.gpu != db.gpu) return da.gpu;
      return da.index < db.index;
    });
    return order;
  }

  // Builds the four nested partitions and checks that they reproduce every known cell.
  result<void> check_consistency() {
    const std::size_t n = devices_.size();
    std::vector<union_find> uf(4, union_find(n));
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = i + 1; j < n; ++j) {
        const int level = level_of(cells_[i * n + j]);
        for (int k = level; k >= 1 && k <= 4; ++k) uf[static_cast<std::size_t>(k - 1)].unite(i, j);
      }
    }
    for (std::size_t k = 0; k < 4; ++k) {
      classes_[k].resize(n);
      for (std::size_t i = 0; i < n; ++i) classes_[k][i] = uf[k].find(i);
    }
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = i + 1; j < n; ++j) {
        const cell& c = cells_[i * n + j];
        const int level = level_of(c);
        if (level == 0) continue;
        int predicted = 5;
        for (int k = 4; k >= 1; --k) {
          if (classes_[static_cast<std::size_t>(k - 1)][i] ==
              classes_[static_cast<std::size_t>(k - 1)][j])
            predicted = k;
        }
        if (predicted != level) {
          const std::size_t line =
              devices_[i].row_line != 0 ? devices_[i].row_line : devices_[j].row_line;
          static constexpr std::array<std::string_view, 6> names{"?",   "PIX",  "PXB",
                                                                 "PHB", "NODE", "SYS"};
          return line_error(errc::invalid_argument, line,
                            "{}/{} is {}, but the other cells join the pair at {}: no PCIe tree "
                            "gives this matrix",
                            devices_[i].header_name, devices_[j].header_name, token_of(c),
                            names[static_cast<std::size_t>(predicted)]);
        }
      }
    }
    return ok();
  }

  // Splits `members` (in endpoint order) by their class at `level`, in order of first member.
  std::vector<std::vector<std::size_t>> partition(const std::vector<std::size_t>& members,
                                                  std::size_t level) const {
    std::vector<std::vector<std::size_t>> groups;
    std::map<std::size_t, std::size_t> group_of;
    for (const std::size_t m : members) {
      const auto [it, inserted] = group_of.emplace(classes_[level][m], groups.size());
      if (inserted) groups.emplace_back();
      groups[it->second].push_back(m);
    }
    return groups;
  }

  unsigned nvlink_generation() const {
    if (options_.nvlink_generation != 0) return options_.nvlink_generation;
    if (spec_ && spec_->nvlink_generation != 0) return spec_->nvlink_generation;
    unsigned most = 0;
    for (const auto& c : cells_) most = std::max<unsigned>(most, c.nvlinks);
    return most >= 13 ? 4u : most >= 7 ? 3u : 2u;
  }

  void add_device(node_topology_builder& b, std::size_t i, vertex_id parent) {
    const device& d = devices_[i];
    topo_vertex v;
    v.kind = d.gpu ? vertex_kind::gpu : vertex_kind::nic;
    v.name = d.name;
    v.parent = parent;
    v.index = d.index;
    v.numa = d.numa;
    v.cpuset = d.cpuset;
    topo_link uplink = pcie_link(0, 0);
    if (d.gpu) {
      v.model = options_.gpu_model;
      if (spec_) {
        v.memory_mib = spec_->memory_mib;
        uplink = pcie_link(spec_->pcie_generation, 16);
      }
    }
    vertex_of_[i] = b.add(std::move(v), uplink);
  }

  vertex_id add_switch(node_topology_builder& b, vertex_id parent) {
    return b.add(vertex_kind::pcie_switch, fmt::format("PCIeSwitch{}", switches_++), parent,
                 pcie_link(0, 0));
  }

  // Emits one <=NODE class below its NUMA vertex: host bridges, switches, devices.
  void add_numa_class(node_topology_builder& b, const std::vector<std::size_t>& members,
                      vertex_id numa) {
    for (const auto& phb : partition(members, 2)) {
      const vertex_id bridge = b.add(
          vertex_kind::host_bridge, fmt::format("HostBridge{}", bridges_++), numa, internal_link());
      for (const auto& pxb : partition(phb, 1)) {
        if (pxb.size() == 1) {
          add_device(b, pxb.front(), bridge);
          continue;
        }
        const vertex_id outer = add_switch(b, bridge);
        const auto pix_groups = partition(pxb, 0);
        const auto singles = static_cast<std::size_t>(std::count_if(
            pix_groups.begin(), pix_groups.end(), [](const auto& g) { return g.size() == 1; }));
        for (const auto& pix : pix_groups) {
          // Devices sit directly below `outer` when they are its only group, or the only single:
          // two singles side by side there would read as PIX.
          vertex_id parent = outer;
          if (pix_groups.size() > 1 && (pix.size() > 1 || singles > 1)) {
            parent = add_switch(b, outer);
          }
          for (const std::size_t m : pix) add_device(b, m, parent);
        }
      }
    }
  }

  result<node_topology> build() {
    const std::size_t n = devices_.size();
    const auto order = endpoint_order();
    vertex_of_.assign(n, vertex_id::invalid());

    // NUMA localities: <=NODE classes of several devices, and the NUMA id each claims.
    struct locality {
      std::vector<std::size_t> members;
      std::optional<std::int32_t> claim;
      std::int32_t numa = -1;
      std::int32_t package = -1;
    };
    std::vector<locality> localities;
    std::vector<std::size_t> alone;  // SYS to everything known
    for (auto& members : partition(order, 3)) {
      if (members.size() == 1) {
        alone.push_back(members.front());
        continue;
      }
      locality loc;
      loc.members = std::move(members);
      bool agree = true;
      for (const std::size_t m : loc.members) {
        const std::int32_t numa = devices_[m].numa;
        if (numa < 0) continue;
        if (loc.claim && *loc.claim != numa) agree = false;
        loc.claim = numa;
      }
      if (!agree) loc.claim.reset();
      localities.push_back(std::move(loc));
    }
    std::set<std::int32_t> seen;
    for (const auto& d : devices_) {
      if (d.numa >= 0) seen.insert(d.numa);
    }
    std::map<std::int32_t, std::size_t> claims;
    for (const auto& loc : localities) {
      if (loc.claim) ++claims[*loc.claim];
    }
    std::int32_t next_id = seen.empty() ? 0 : *seen.rbegin() + 1;
    std::set<std::int32_t> owned;  // NUMA ids held by exactly one locality
    for (auto& loc : localities) {
      if (loc.claim && claims[*loc.claim] == 1) {
        loc.numa = *loc.claim;
        owned.insert(loc.numa);
      } else {
        loc.numa = next_id++;
      }
      loc.package = loc.claim ? *loc.claim : loc.numa;
    }
    // Empty NUMA nodes: every reported id, and at least two when SYS cells prove two exist.
    std::vector<std::int32_t> empty_numa;  // each in the package of the same id
    for (const std::int32_t id : seen) {
      if (owned.count(id) == 0) empty_numa.push_back(id);
    }
    const bool has_sys =
        std::any_of(cells_.begin(), cells_.end(), [](const cell& c) { return level_of(c) == 5; });
    while (has_sys && localities.size() + empty_numa.size() < 2) empty_numa.push_back(next_id++);

    std::set<std::int32_t> packages;
    for (const auto& loc : localities) packages.insert(loc.package);
    packages.insert(empty_numa.begin(), empty_numa.end());

    node_topology_builder b(options_.name);
    for (const std::int32_t p : packages) {
      topo_vertex pkg;
      pkg.kind = vertex_kind::package;
      pkg.name = fmt::format("Package{}", p);
      pkg.parent = b.root();
      pkg.index = p;
      const vertex_id pkg_id = b.add(std::move(pkg), internal_link());
      auto add_numa = [&](std::int32_t id) {
        topo_vertex numa;
        numa.kind = vertex_kind::numa_node;
        numa.name = fmt::format("NUMA{}", id);
        numa.parent = pkg_id;
        numa.index = id;
        return b.add(std::move(numa), internal_link());
      };
      if (std::count(empty_numa.begin(), empty_numa.end(), p) != 0) add_numa(p);
      for (const auto& loc : localities) {
        if (loc.package == p) add_numa_class(b, loc.members, add_numa(loc.numa));
      }
    }
    for (const std::size_t m : alone) {
      const vertex_id bridge =
          b.add(vertex_kind::host_bridge, fmt::format("HostBridge{}", bridges_++), b.root(),
                internal_link());
      add_device(b, m, bridge);
    }

    const unsigned gen = nvlink_generation();
    for (std::size_t x = 0; x < n; ++x) {
      for (std::size_t y = x + 1; y < n; ++y) {
        const std::size_t i = order[x];
        const std::size_t j = order[y];
        const cell& c = cells_[i * n + j];
        if (c.known && c.nvlinks > 0) {
          b.connect(vertex_of_[i], vertex_of_[j], nvlink_link(c.nvlinks, gen));
        }
      }
    }
    return std::move(b).build();
  }

  const nvidia_smi_import_options& options_;
  std::optional<gpu_spec> spec_;
  std::size_t header_line_ = 0;
  std::vector<device> devices_;  // header order
  std::map<std::string, std::size_t> by_name_;
  std::size_t gpu_count_ = 0;
  std::vector<affinity_column> affinity_;
  std::vector<cell> cells_;                          // n*n: row i, column j
  std::array<std::vector<std::size_t>, 4> classes_;  // PIX, PXB, PHB, NODE class of each device
  std::vector<vertex_id> vertex_of_;
  std::size_t switches_ = 0;
  std::size_t bridges_ = 0;
};

// Returns the name of the root element of an XML text, skipping declarations and comments.
std::string_view xml_root_name(std::string_view text, std::size_t pos) noexcept {
  for (;;) {
    while (pos < text.size() && (is_blank(text[pos]) || text[pos] == '\n')) ++pos;
    if (pos >= text.size() || text[pos] != '<') return {};
    std::size_t end = std::string_view::npos;
    if (text.substr(pos, 4) == "<!--") {
      end = text.find("-->", pos + 4);
      if (end != std::string_view::npos) end += 3;
    } else if (text.substr(pos, 2) == "<?") {
      end = text.find("?>", pos + 2);
      if (end != std::string_view::npos) end += 2;
    } else if (text.substr(pos, 2) == "<!") {
      end = text.find('>', pos + 2);
      if (end != std::string_view::npos) end += 1;
    } else {
      const std::size_t start = pos + 1;
      std::size_t stop = start;
      while (stop < text.size() && !is_blank(text[stop]) && text[stop] != '\n' &&
             text[stop] != '>' && text[stop] != '/') {
        ++stop;
      }
      return text.substr(start, stop - start);
    }
    if (end == std::string_view::npos) return {};
    pos = end;
  }
}

}  // namespace

std::string_view to_string(topology_format format) noexcept {
  switch (format) {
    case topology_format::hwloc_xml: return "hwloc_xml";
    case topology_format::nccl_xml: return "nccl_xml";
    case topology_format::nvidia_smi_topo: return "nvidia_smi_topo";
    case topology_format::json: return "json";
    case topology_format::unknown: return "unknown";
  }
  return "unknown";
}

topology_format detect_topology_format(std::string_view text) noexcept {
  std::size_t pos = text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  while (pos < text.size() && (is_blank(text[pos]) || text[pos] == '\n')) ++pos;
  if (pos >= text.size()) return topology_format::unknown;
  if (text[pos] == '{') return topology_format::json;
  if (text[pos] == '<') {
    const auto root = xml_root_name(text, pos);
    if (root == "topology") return topology_format::hwloc_xml;
    if (root == "system") return topology_format::nccl_xml;
    return topology_format::unknown;
  }
  line_reader lines(text.substr(pos));
  std::string_view line;
  while (lines.next(line)) {
    if (is_comment_or_blank(line)) continue;
    std::size_t p = 0;
    for (auto t = next_token(line, p); !t.empty(); t = next_token(line, p)) {
      if (t == "GPU0") return topology_format::nvidia_smi_topo;
    }
    return topology_format::unknown;
  }
  return topology_format::unknown;
}

result<node_topology> import_nvidia_smi_topo(std::string_view text,
                                             const nvidia_smi_import_options& options) {
  return topo_importer(options).run(text);
}

}  // namespace hetsched
