// SPDX-License-Identifier: MIT
// import_nccl_xml(): NCCL topology XML (NCCL_TOPO_FILE format) to a node_topology.
#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <hetsched/topology/import.hpp>

#include "detail/text.hpp"
#include "topology/xml_reader.hpp"

namespace hetsched {
namespace {

using detail::shown;
using detail::xml_element;

constexpr std::uint32_t class_nvswitch = 0x068000;
constexpr std::uint32_t class_cpu = 0x068001;  // NCCL: NVLink to the CPU (POWER9)
constexpr std::uint64_t max_numa_id = 65535;
constexpr std::uint64_t max_gpu_dev = 65535;
constexpr std::uint64_t max_nvlinks = 255;

template <typename... Args>
error element_error(errc code, const xml_element& e, fmt::format_string<Args...> format,
                    Args&&... args) {
  return error{code, fmt::format("NCCL XML line {}: <{}>: {}", e.line, e.name,
                                 fmt::format(format, std::forward<Args>(args)...))};
}

error unknown_element(const xml_element& child, const xml_element& parent) {
  return element_error(errc::invalid_argument, child,
                       "unknown or misplaced element inside <{}> (line {})", parent.name,
                       parent.line);
}
// Parses a decimal or 0x-prefixed hexadecimal unsigned integer of at most `max`.
std::optional<std::uint64_t> parse_uint(std::string_view s, std::uint64_t max) {
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s.remove_prefix(2);
    base = 16;
  }
  if (s.empty() || s.front() == '+' || s.front() == '-') return std::nullopt;
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || ptr != s.data() + s.size() || v > max) return std::nullopt;
  return v;
}

// Returns a required attribute parsed as an unsigned integer.
result<std::uint64_t> uint_attribute(const xml_element& e, std::string_view name,
                                     std::uint64_t max) {
  const std::string* value = e.attribute(name);
  if (value == nullptr) {
    return element_error(errc::invalid_argument, e, "missing required attribute '{}'", name);
  }
  auto v = parse_uint(*value, max);
  if (!v) {
    return element_error(errc::invalid_argument, e, "attribute {}=\"{}\" is not a number in 0..{}",
                         name, shown(*value), max);
  }
  return *v;
}

// Returns an optional attribute parsed as an unsigned integer, nullopt if absent.
result<std::optional<std::uint64_t>> optional_uint(const xml_element& e, std::string_view name,
                                                   std::uint64_t max) {
  if (e.attribute(name) == nullptr) return std::optional<std::uint64_t>{};
  auto v = uint_attribute(e, name, max);
  if (!v) return std::move(v).error();
  return std::optional<std::uint64_t>{*v};
}

std::optional<std::uint32_t> parse_hex_digits(std::string_view s, std::size_t max_digits) {
  if (s.empty() || s.size() > max_digits) return std::nullopt;
  std::uint32_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

struct bus_id {
  std::uint64_t key = 0;
  std::string text;  // canonical "dddd:bb:dd.f"
};

// Parses a PCI address "domain:bus:device.function" (hex; domain up to 8 digits).
std::optional<bus_id> parse_bus_id(std::string_view s) {
  const auto c1 = s.find(':');
  const auto c2 = s.find(':', c1 == std::string_view::npos ? c1 : c1 + 1);
  const auto dot = s.find('.');
  if (c1 == std::string_view::npos || c2 == std::string_view::npos ||
      dot == std::string_view::npos || dot < c2) {
    return std::nullopt;
  }
  const auto domain = parse_hex_digits(s.substr(0, c1), 8);
  const auto bus = parse_hex_digits(s.substr(c1 + 1, c2 - c1 - 1), 2);
  const auto device = parse_hex_digits(s.substr(c2 + 1, dot - c2 - 1), 2);
  const auto function = parse_hex_digits(s.substr(dot + 1), 1);
  if (!domain || !bus || !device || !function || *device > 0x1f || *function > 7) {
    return std::nullopt;
  }
  bus_id id;
  id.key = (std::uint64_t{*domain} << 16) | (std::uint64_t{*bus} << 8) |
           (std::uint64_t{*device} << 3) | *function;
  id.text = fmt::format("{:04x}:{:02x}:{:02x}.{:x}", *domain, *bus, *device, *function);
  return id;
}

result<std::uint32_t> class_attribute(const xml_element& e, std::string_view name) {
  const std::string* value = e.attribute(name);
  if (value == nullptr) {
    return element_error(errc::invalid_argument, e, "missing required attribute '{}'", name);
  }
  const std::string_view s = *value;
  std::optional<std::uint32_t> v;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    v = parse_hex_digits(s.substr(2), 6);
  }
  if (!v) {
    return element_error(errc::invalid_argument, e,
                         "attribute {}=\"{}\" is not a PCI class such as 0x030200", name, shown(s));
  }
  return *v;
}

// PCIe generation from NCCL's link_speed ("16 GT/s", "16.0 GT/s PCIe", "Unknown"); 0 if unknown.
result<unsigned> pcie_generation(const xml_element& e) {
  const std::string* value = e.attribute("link_speed");
  if (value == nullptr || value->empty() || *value == "Unknown") return 0u;
  std::string_view s = *value;
  const auto space = s.find(' ');
  const std::string_view number = s.substr(0, space);
  const std::string_view rest = space == std::string_view::npos ? "" : s.substr(space);
  static constexpr std::array<std::pair<std::string_view, unsigned>, 11> speeds{{{"2.5", 1},
                                                                                 {"5", 2},
                                                                                 {"5.0", 2},
                                                                                 {"8", 3},
                                                                                 {"8.0", 3},
                                                                                 {"16", 4},
                                                                                 {"16.0", 4},
                                                                                 {"32", 5},
                                                                                 {"32.0", 5},
                                                                                 {"64", 6},
                                                                                 {"64.0", 6}}};
  if (rest == " GT/s" || rest == " GT/s PCIe") {
    for (const auto& [text, gen] : speeds) {
      if (number == text) return gen;
    }
  }
  return element_error(errc::invalid_argument, e,
                       "unknown link_speed \"{}\" (expected e.g. \"16 GT/s\")", shown(s));
}

// Converts NCCL's affinity mask (comma-separated 32-bit hex words, most significant first, e.g.
// "00000000,000fffff") into a CPU list ("0-19"), the form topo_vertex::cpuset documents.
result<std::string> affinity_to_cpu_list(const xml_element& cpu, const std::string& mask) {
  std::vector<bool> bits;  // bit 0 = CPU 0
  std::size_t end = mask.size();
  while (true) {
    const std::size_t comma = mask.rfind(',', end == 0 ? 0 : end - 1);
    const std::size_t begin = (comma == std::string::npos || end == 0) ? 0 : comma + 1;
    const std::string_view word(mask.data() + begin, end - begin);
    if (word.empty() || word.size() > 8) {
      return element_error(errc::invalid_argument, cpu,
                           "affinity \"{}\" is not a mask of comma-separated 32-bit hex words",
                           shown(mask));
    }
    std::uint32_t value = 0;
    for (char c : word) {
      const int digit = detail::hex_digit_value(c);
      if (digit < 0) {
        return element_error(errc::invalid_argument, cpu,
                             "affinity \"{}\" is not a mask of comma-separated 32-bit hex words",
                             shown(mask));
      }
      value = (value << 4) | static_cast<std::uint32_t>(digit);
    }
    for (unsigned b = 0; b < 32; ++b) bits.push_back(((value >> b) & 1u) != 0);
    if (begin == 0) break;
    end = begin - 1;
  }
  std::string list;
  for (std::size_t i = 0; i < bits.size();) {
    if (!bits[i]) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j + 1 < bits.size() && bits[j + 1]) ++j;
    if (!list.empty()) list += ',';
    list += i == j ? fmt::format("{}", i) : fmt::format("{}-{}", i, j);
    i = j + 1;
  }
  return list;
}

// NCCL's inter-CPU bandwidth (GB/s) in MB/s; 0 if the CPU is not recognised.
result<std::int64_t> inter_cpu_mb_s(const xml_element& cpu) {
  const std::string* arch = cpu.attribute("arch");
  const std::string* vendor = cpu.attribute("vendor");
  if (arch == nullptr) return std::int64_t{0};
  if (*arch == "ppc64") return std::int64_t{32000};
  if (*arch == "arm64" || *arch == "aarch64") return std::int64_t{6000};
  if (*arch != "x86_64" || vendor == nullptr) return std::int64_t{0};
  auto family = optional_uint(cpu, "familyid", 0xffff);
  if (!family) return std::move(family).error();
  auto model = optional_uint(cpu, "modelid", 0xffff);
  if (!model) return std::move(model).error();
  const std::uint64_t f = family->value_or(0);
  const std::uint64_t m = model->value_or(0);
  if (*vendor == "GenuineIntel") {
    if (f == 6 && m >= 0xCF) return std::int64_t{40000};  // Emerald Rapids
    if (f == 6 && m >= 0x8F) return std::int64_t{22000};  // Sapphire Rapids
    if (f == 6 && m >= 0x55) return std::int64_t{10000};  // Skylake and later
    return std::int64_t{6000};                            // Broadwell
  }
  if (*vendor == "AuthenticAMD") return std::int64_t{16000};
  if (*vendor == "CentaurHauls" || *vendor == "  Shanghai  ") {
    return std::int64_t{f == 7 && m == 0x5B ? 9000 : 6000};  // Zhaoxin (Yongfeng 9)
  }
  return std::int64_t{0};
}

unsigned nvlink_generation_of_sm(std::uint64_t sm) {
  if (sm >= 100) return 5;
  if (sm >= 90) return 4;
  if (sm >= 80) return 3;
  if (sm >= 70) return 2;
  if (sm >= 60) return 1;
  return 0;
}

struct nvlink_ref {
  std::uint32_t tclass = 0;
  std::optional<bus_id> target;
  std::uint64_t count = 0;
  const xml_element* element = nullptr;
};

struct gpu_record {
  vertex_id v;
  bus_id bus;
  std::optional<std::uint64_t> dev;
  std::uint64_t sm = 0;
  const xml_element* element = nullptr;
  std::vector<nvlink_ref> nvlinks;
};

struct nic_record {
  vertex_id v;
  std::optional<std::uint64_t> bus;  // absent for a <nic> directly below a <cpu>
  std::string name;
  std::string port;
};

class nccl_importer {
 public:
  explicit nccl_importer(const nccl_import_options& options)
      : options_(options), builder_(options.name) {
    if (!options.gpu_model.empty()) spec_ = find_gpu_spec(options.gpu_model);
  }

  result<node_topology> run(std::string_view xml) {
    if (xml.size() > max_topology_text_bytes) {
      return make_error(errc::out_of_range, "NCCL XML input is {} bytes, more than the limit of {}",
                        xml.size(), max_topology_text_bytes);
    }
    auto root = detail::parse_xml(xml);
    if (!root) return error{root.error().code, "NCCL " + root.error().message};
    if (root->name != "system") {
      return element_error(errc::invalid_argument, *root, "the root element must be <system>");
    }
    for (const auto& child : root->children) {
      if (child.name != "cpu") return unknown_element(child, *root);
      if (packages_.size() == max_import_devices) {
        return element_error(errc::out_of_range, child, "more than {} <cpu> elements",
                             max_import_devices);
      }
      HETSCHED_TRY(add_cpu(child));
    }
    if (gpus_.size() + nics_.size() > max_import_devices) {
      return make_error(errc::out_of_range,
                        "NCCL XML has {} GPUs and NICs, more than the limit of {}",
                        gpus_.size() + nics_.size(), max_import_devices);
    }
    if (packages_.empty()) {
      return element_error(errc::invalid_argument, *root, "no <cpu> element");
    }
    HETSCHED_TRY(number_gpus());
    number_nics();
    HETSCHED_TRY(add_nvlinks());
    for (std::size_t i = 0; i < packages_.size(); ++i) {
      for (std::size_t j = i + 1; j < packages_.size(); ++j) {
        const std::int64_t a = packages_[i].second;
        const std::int64_t b = packages_[j].second;
        const std::int64_t bw = a > 0 && b > 0 ? std::min(a, b) : std::max(a, b);
        builder_.connect(packages_[i].first, packages_[j].first,
                         topo_link{link_kind::smp, 1, 0, 0, bw});
      }
    }
    return std::move(builder_).build();
  }

 private:
  result<void> add_cpu(const xml_element& cpu) {
    auto numa_id = uint_attribute(cpu, "numaid", max_numa_id);
    if (!numa_id) return std::move(numa_id).error();
    const auto [it, inserted] = numa_lines_.try_emplace(*numa_id, cpu.line);
    if (!inserted) {
      return element_error(errc::already_exists, cpu,
                           "numaid {} is already used by the <cpu> at line {}", *numa_id,
                           it->second);
    }
    auto bw = inter_cpu_mb_s(cpu);
    if (!bw) return std::move(bw).error();
    const std::string* affinity = cpu.attribute("affinity");
    const auto index = static_cast<std::int32_t>(*numa_id);

    topo_vertex package;
    package.kind = vertex_kind::package;
    package.name = fmt::format("Package{}", index);
    package.parent = builder_.root();
    package.index = index;
    std::string cpu_list;
    if (affinity != nullptr) {
      auto list = affinity_to_cpu_list(cpu, *affinity);
      if (!list) return std::move(list).error();
      cpu_list = std::move(*list);
    }
    package.cpuset = cpu_list;
    topo_vertex numa = package;
    const vertex_id package_id = builder_.add(std::move(package), internal_link());
    numa.kind = vertex_kind::numa_node;
    numa.name = fmt::format("NUMA{}", index);
    numa.parent = package_id;
    const vertex_id numa_id_v = builder_.add(std::move(numa), internal_link());
    packages_.emplace_back(package_id, *bw);

    cpu_place place{numa_id_v, index, cpu_list};
    for (const auto& child : cpu.children) {
      if (child.name == "pci") {
        HETSCHED_TRY(add_pci(child, place, numa_id_v, true));
      } else if (child.name == "nic") {
        vertex_id bridge = vertex_id::invalid();
        HETSCHED_TRY(add_nic(child, place, std::nullopt, pcie_link(0, 0), [&] {
          if (!bridge.valid()) bridge = add_host_bridge(numa_id_v);
          return bridge;
        }));
      } else {
        return unknown_element(child, cpu);
      }
    }
    return ok();
  }

  struct cpu_place {
    vertex_id numa;
    std::int32_t numa_index;
    std::string cpuset;
  };

  vertex_id add_host_bridge(vertex_id numa) {
    return builder_.add(vertex_kind::host_bridge, fmt::format("HostBridge{}", bridges_++), numa,
                        internal_link());
  }

  topo_vertex device(vertex_kind kind, std::string name, vertex_id parent, const cpu_place& place) {
    topo_vertex v;
    v.kind = kind;
    v.name = std::move(name);
    v.parent = parent;
    v.numa = place.numa_index;
    v.cpuset = place.cpuset;
    return v;
  }

  result<void> add_pci(const xml_element& pci, const cpu_place& place, vertex_id parent,
                       bool top_level) {
    const std::string* bus_text = pci.attribute("busid");
    if (bus_text == nullptr) {
      return element_error(errc::invalid_argument, pci, "missing required attribute 'busid'");
    }
    auto bus = parse_bus_id(*bus_text);
    if (!bus) {
      return element_error(errc::invalid_argument, pci,
                           "busid \"{}\" is not a PCI address dddd:bb:dd.f", shown(*bus_text));
    }
    auto cls = class_attribute(pci, "class");
    if (!cls) return std::move(cls).error();
    auto gen = pcie_generation(pci);
    if (!gen) return std::move(gen).error();
    auto width = optional_uint(pci, "link_width", 32);
    if (!width) return std::move(width).error();
    const topo_link uplink = pcie_link(*gen, static_cast<unsigned>(width->value_or(0)));
    const auto [seen, inserted] = bus_lines_.try_emplace(bus->key, pci.line);
    if (!inserted) {
      return element_error(errc::already_exists, pci, "busid {} is already used at line {}",
                           bus->text, seen->second);
    }
    if (top_level) parent = add_host_bridge(parent);

    if ((*cls >> 16) == 0x03) return add_gpu(pci, place, parent, uplink, std::move(*bus));
    if ((*cls >> 16) == 0x02) {
      const xml_element* nic = nullptr;
      for (const auto& child : pci.children) {
        if (child.name != "nic" || nic != nullptr) return unknown_element(child, pci);
        nic = &child;
      }
      if (nic == nullptr || nic->children.empty()) {
        add_nic_vertex(nic_record{vertex_id::invalid(), bus->key, {}, {}}, parent, uplink, place,
                       *bus);
        if (nic == nullptr) return ok();
      }
      return add_nic(*nic, place, *bus, uplink, [parent] { return parent; });
    }
    if (*cls == class_nvswitch) {
      if (!pci.children.empty()) return unknown_element(pci.children.front(), pci);
      topo_vertex v =
          device(vertex_kind::nvswitch, fmt::format("nvswitch@{}", bus->text), parent, place);
      v.pci_bus_id = bus->text;
      v.numa = -1;
      v.cpuset.clear();
      pci_nvswitches_.push_back(builder_.add(std::move(v), uplink));
      return ok();
    }
    // A PCIe bridge (0x0604xx), or any other class, which NCCL also treats as a PCI switch.
    topo_vertex sw;
    sw.kind = vertex_kind::pcie_switch;
    sw.name = fmt::format("PCIeSwitch{}", switches_++);
    sw.parent = parent;
    sw.pci_bus_id = bus->text;
    const vertex_id sw_id = builder_.add(std::move(sw), uplink);
    for (const auto& child : pci.children) {
      if (child.name != "pci") return unknown_element(child, pci);
      HETSCHED_TRY(add_pci(child, place, sw_id, false));
    }
    return ok();
  }

  result<void> add_gpu(const xml_element& pci, const cpu_place& place, vertex_id parent,
                       const topo_link& uplink, bus_id bus) {
    gpu_record rec;
    rec.element = &pci;
    const xml_element* gpu = nullptr;
    for (const auto& child : pci.children) {
      if (child.name != "gpu" || gpu != nullptr) return unknown_element(child, pci);
      gpu = &child;
    }
    if (gpu != nullptr) {
      rec.element = gpu;
      auto dev = optional_uint(*gpu, "dev", max_gpu_dev);
      if (!dev) return std::move(dev).error();
      rec.dev = *dev;
      auto sm = optional_uint(*gpu, "sm", 10000);
      if (!sm) return std::move(sm).error();
      rec.sm = sm->value_or(0);
      for (const auto& child : gpu->children) {
        if (child.name == "c2c") {
          if (!child.children.empty()) return unknown_element(child.children.front(), child);
          continue;  // chip-to-chip link to the CPU (Grace); not part of the PCIe/NVLink model
        }
        if (child.name != "nvlink") return unknown_element(child, *gpu);
        if (!child.children.empty()) return unknown_element(child.children.front(), child);
        nvlink_ref link;
        link.element = &child;
        auto count = uint_attribute(child, "count", max_nvlinks);
        if (!count) return std::move(count).error();
        if (*count == 0) {
          return element_error(errc::invalid_argument, child, "count must be at least 1");
        }
        link.count = *count;
        auto tclass = class_attribute(child, "tclass");
        if (!tclass) return std::move(tclass).error();
        link.tclass = *tclass;
        if ((link.tclass >> 16) == 0x03) {
          const std::string* target = child.attribute("target");
          if (target == nullptr) {
            return element_error(errc::invalid_argument, child,
                                 "missing required attribute 'target'");
          }
          link.target = parse_bus_id(*target);
          if (!link.target) {
            return element_error(errc::invalid_argument, child,
                                 "target \"{}\" is not a PCI address dddd:bb:dd.f", shown(*target));
          }
        }
        rec.nvlinks.push_back(std::move(link));
      }
    }
    topo_vertex v = device(vertex_kind::gpu, fmt::format("gpu@{}", bus.text), parent, place);
    v.pci_bus_id = bus.text;
    v.model = options_.gpu_model;
    if (spec_) v.memory_mib = spec_->memory_mib;
    rec.v = builder_.add(std::move(v), uplink);
    rec.bus = std::move(bus);
    gpus_.push_back(std::move(rec));
    return ok();
  }

  template <typename BridgeFn>
  result<void> add_nic(const xml_element& nic, const cpu_place& place, std::optional<bus_id> bus,
                       const topo_link& uplink, BridgeFn bridge) {
    for (const auto& net : nic.children) {
      if (net.name != "net") return unknown_element(net, nic);
      if (!net.children.empty()) return unknown_element(net.children.front(), net);
      auto speed = optional_uint(net, "speed", std::uint64_t{1} << 40);
      if (!speed) return std::move(speed).error();
      nic_record rec;
      if (bus) rec.bus = bus->key;
      if (const std::string* name = net.attribute("name")) rec.name = *name;
      if (const std::string* port = net.attribute("port")) rec.port = *port;
      const vertex_id v =
          add_nic_vertex(std::move(rec), bridge(), uplink, place, bus ? *bus : bus_id{});
      builder_.vertex(v).speed_mb_s = static_cast<std::int64_t>(speed->value_or(0) / 8);
    }
    return ok();
  }

  vertex_id add_nic_vertex(nic_record rec, vertex_id parent, const topo_link& uplink,
                           const cpu_place& place, const bus_id& bus) {
    topo_vertex v = device(vertex_kind::nic, fmt::format("nic#{}", nics_.size()), parent, place);
    v.pci_bus_id = bus.text;
    rec.v = builder_.add(std::move(v), uplink);
    nics_.push_back(std::move(rec));
    return nics_.back().v;
  }

  result<void> number_gpus() {
    const auto with_dev = static_cast<std::size_t>(std::count_if(
        gpus_.begin(), gpus_.end(), [](const gpu_record& g) { return g.dev.has_value(); }));
    std::vector<std::size_t> order(gpus_.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    if (with_dev == gpus_.size()) {
      std::vector<std::size_t> by_dev(gpus_.size(), gpus_.size());
      for (std::size_t i = 0; i < gpus_.size(); ++i) {
        const auto dev = *gpus_[i].dev;
        if (dev >= gpus_.size()) {
          return element_error(errc::invalid_argument, *gpus_[i].element,
                               "dev {} is out of range: {} GPUs must use dev 0..{}", dev,
                               gpus_.size(), gpus_.size() - 1);
        }
        auto& slot = by_dev[static_cast<std::size_t>(dev)];
        if (slot != gpus_.size()) {
          return element_error(errc::already_exists, *gpus_[i].element,
                               "dev {} is already used by the GPU at line {}", dev,
                               gpus_[slot].element->line);
        }
        slot = i;
      }
      order = std::move(by_dev);
    } else if (with_dev != 0) {
      const auto missing = std::find_if(gpus_.begin(), gpus_.end(),
                                        [](const gpu_record& g) { return !g.dev.has_value(); });
      return element_error(errc::invalid_argument, *missing->element,
                           "GPU {} has no dev attribute while other GPUs have one",
                           missing->bus.text);
    } else {
      std::sort(order.begin(), order.end(),
                [&](std::size_t a, std::size_t b) { return gpus_[a].bus.key < gpus_[b].bus.key; });
    }
    std::vector<gpu_record> ordered;
    ordered.reserve(gpus_.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      ordered.push_back(std::move(gpus_[order[i]]));
      auto& v = builder_.vertex(ordered.back().v);
      v.index = static_cast<std::int32_t>(i);
      v.name = fmt::format("GPU{}", i);
    }
    gpus_ = std::move(ordered);
    return ok();
  }

  void number_nics() {
    std::vector<std::size_t> order(nics_.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const auto ka = nics_[a].bus ? *nics_[a].bus : ~std::uint64_t{0};
      const auto kb = nics_[b].bus ? *nics_[b].bus : ~std::uint64_t{0};
      return ka < kb;
    });
    std::map<std::string, std::size_t> name_count;
    for (const auto& n : nics_) ++name_count[n.name];
    for (std::size_t i = 0; i < order.size(); ++i) {
      const auto& rec = nics_[order[i]];
      auto& v = builder_.vertex(rec.v);
      v.index = static_cast<std::int32_t>(i);
      if (rec.name.empty()) {
        v.name = fmt::format("NIC{}", i);
      } else if (name_count[rec.name] > 1 && !rec.port.empty()) {
        v.name = rec.name + ":" + rec.port;  // ports of one adapter share its name
      } else {
        v.name = rec.name;
      }
    }
  }

  unsigned generation_of(const gpu_record& g) const {
    if (g.sm != 0) return nvlink_generation_of_sm(g.sm);
    return spec_ ? spec_->nvlink_generation : 0u;
  }

  result<void> add_nvlinks() {
    std::map<std::uint64_t, std::size_t> gpu_by_bus;
    for (std::size_t i = 0; i < gpus_.size(); ++i) gpu_by_bus.emplace(gpus_[i].bus.key, i);
    std::map<std::pair<std::size_t, std::size_t>, std::pair<std::uint64_t, const xml_element*>>
        directed;
    std::vector<std::uint64_t> to_switch(gpus_.size(), 0);
    for (std::size_t i = 0; i < gpus_.size(); ++i) {
      for (const auto& link : gpus_[i].nvlinks) {
        if ((link.tclass >> 16) == 0x03) {
          const auto it = gpu_by_bus.find(link.target->key);
          if (it == gpu_by_bus.end()) continue;  // peer not in the file: NCCL skips it too
          if (it->second == i) {
            return element_error(errc::invalid_argument, *link.element, "NVLink from {} to itself",
                                 gpus_[i].bus.text);
          }
          auto& d = directed[{i, it->second}];
          d.first += link.count;
          d.second = link.element;
          if (d.first > max_nvlinks) {
            return element_error(errc::out_of_range, *link.element, "more than {} NVLinks to {}",
                                 max_nvlinks, link.target->text);
          }
        } else if (link.tclass != class_cpu) {
          to_switch[i] += link.count;
          if (to_switch[i] > max_nvlinks) {
            return element_error(errc::out_of_range, *link.element,
                                 "more than {} NVLinks to NVSwitches", max_nvlinks);
          }
        }
      }
    }
    for (const auto& [pair, info] : directed) {
      const auto [a, b] = pair;
      const auto back = directed.find({b, a});
      if (back != directed.end()) {
        if (a > b) continue;  // handled from the lower GPU
        if (back->second.first != info.first) {
          return element_error(
              errc::invalid_argument, *info.second,
              "{} lists {} NVLinks to {} but the <nvlink> at line {} lists {} back",
              gpus_[a].bus.text, info.first, gpus_[b].bus.text, back->second.second->line,
              back->second.first);
        }
      }
      const unsigned gen = std::max(generation_of(gpus_[a]), generation_of(gpus_[b]));
      builder_.connect(gpus_[std::min(a, b)].v, gpus_[std::max(a, b)].v,
                       nvlink_link(static_cast<unsigned>(info.first), gen));
    }
    const bool any_switch =
        std::any_of(to_switch.begin(), to_switch.end(), [](std::uint64_t c) { return c > 0; });
    std::size_t next_switch = 0;
    if (any_switch) {
      const vertex_id nvs =
          builder_.add(vertex_kind::nvswitch, "NVSwitch0", builder_.root(), internal_link());
      next_switch = 1;
      for (std::size_t i = 0; i < gpus_.size(); ++i) {
        if (to_switch[i] == 0) continue;
        builder_.connect(gpus_[i].v, nvs,
                         nvlink_link(static_cast<unsigned>(to_switch[i]), generation_of(gpus_[i])));
      }
    }
    for (const vertex_id v : pci_nvswitches_) {
      builder_.vertex(v).name = fmt::format("NVSwitch{}", next_switch++);
    }
    return ok();
  }

  const nccl_import_options& options_;
  std::optional<gpu_spec> spec_;
  node_topology_builder builder_;
  std::vector<std::pair<vertex_id, std::int64_t>> packages_;  // package and inter-CPU MB/s
  std::map<std::uint64_t, std::size_t> numa_lines_;
  std::map<std::uint64_t, std::size_t> bus_lines_;
  std::vector<gpu_record> gpus_;
  std::vector<nic_record> nics_;
  std::vector<vertex_id> pci_nvswitches_;
  std::size_t bridges_ = 0;
  std::size_t switches_ = 0;
};

}  // namespace

result<node_topology> import_nccl_xml(std::string_view xml, const nccl_import_options& options) {
  return nccl_importer(options).run(xml);
}

}  // namespace hetsched
