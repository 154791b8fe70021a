// SPDX-License-Identifier: MIT
// hwloc importer (XML buffer and live discovery) -> node_topology. The only TU that includes
// <hwloc.h>; the mapping rules are documented in hetsched/topology/hwloc_import.hpp.
#include <fmt/format.h>
#include <hwloc.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <hetsched/topology/hwloc_import.hpp>

#include "topology/hwloc_xml_guard.hpp"

namespace hetsched {
namespace {

// ---------------------------------------------------------------------------------------------
// RAII owners of hwloc resources.

struct topology_deleter {
  void operator()(hwloc_topology* topology) const noexcept { hwloc_topology_destroy(topology); }
};
using topology_ptr = std::unique_ptr<hwloc_topology, topology_deleter>;

struct distances_release {
  hwloc_topology_t topology;
  void operator()(hwloc_distances_s* d) const noexcept { hwloc_distances_release(topology, d); }
};
using distances_ptr = std::unique_ptr<hwloc_distances_s, distances_release>;

result<topology_ptr> make_topology() {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0 || raw == nullptr) {
    return make_error(errc::failed_precondition, "hwloc_topology_init failed ({})",
                      std::generic_category().message(errno));
  }
  topology_ptr topology(raw);
  // Without this the default KEEP_NONE drops PCI devices, bridges, OS devices and, with them,
  // the NVLinkBandwidth matrix, silently.
  if (hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_ALL) != 0) {
    return make_error(errc::failed_precondition, "hwloc refused the I/O type filter KEEP_ALL");
  }
  return topology;
}

std::string errno_text(int code) {
  return code == 0 ? std::string("no errno") : std::generic_category().message(code);
}

// ---------------------------------------------------------------------------------------------
// Small helpers over hwloc objects.

std::string_view str(const char* s) noexcept { return s != nullptr ? std::string_view(s) : ""; }

std::string_view info(hwloc_obj_t obj, const char* name) noexcept {
  return str(hwloc_obj_get_info_by_name(obj, name));
}

std::string list_string(hwloc_const_bitmap_t set) {
  if (set == nullptr) return {};
  const int length = hwloc_bitmap_list_snprintf(nullptr, 0, set);
  if (length <= 0) return {};
  std::string text(static_cast<std::size_t>(length) + 1, '\0');
  hwloc_bitmap_list_snprintf(text.data(), text.size(), set);
  text.resize(static_cast<std::size_t>(length));
  return text;
}

// An OS index as a vertex index; -1 when unknown or too large for the field.
std::int32_t to_index(unsigned os_index) noexcept {
  if (os_index == HWLOC_UNKNOWN_INDEX ||
      os_index > static_cast<unsigned>(std::numeric_limits<std::int32_t>::max())) {
    return -1;
  }
  return static_cast<std::int32_t>(os_index);
}

// The OS index of the only NUMA node in `obj`'s nodeset, or -1.
std::int32_t single_numa(hwloc_obj_t obj) noexcept {
  if (obj == nullptr || obj->nodeset == nullptr || hwloc_bitmap_weight(obj->nodeset) != 1) {
    return -1;
  }
  const int first = hwloc_bitmap_first(obj->nodeset);
  return first < 0 ? -1 : to_index(static_cast<unsigned>(first));
}

std::optional<std::uint64_t> parse_u64(std::string_view text) noexcept {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

using bus_key = std::tuple<unsigned, unsigned, unsigned, unsigned>;

bus_key bus_of(hwloc_obj_t pci) noexcept {
  const auto& a = pci->attr->pcidev;
  return {a.domain, a.bus, a.dev, a.func};
}

std::string bus_id_string(const hwloc_obj_attr_u::hwloc_pcidev_attr_s& a) {
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", a.domain, a.bus, a.dev, a.func);
}

bool is_bridge(hwloc_obj_t obj) noexcept { return obj->type == HWLOC_OBJ_BRIDGE; }

// The raw value of an hwloc enum field. hwloc copies numbers from the XML into its enum fields
// unchecked (bridge_type="2-1"), and loading an out-of-range enum value is undefined behaviour.
template <typename Enum>
unsigned raw_enum(const Enum& field) noexcept {
  std::underlying_type_t<Enum> value{};
  std::memcpy(&value, &field, sizeof value);
  return static_cast<unsigned>(value);
}

bool has_pci_upstream(hwloc_obj_t bridge) noexcept {
  return raw_enum(bridge->attr->bridge.upstream_type) == HWLOC_OBJ_BRIDGE_PCI;
}

// ---------------------------------------------------------------------------------------------
// OS device classification, kept in one place because hwloc 3.0 turns the OS device type into
// a bitmask and the type values already differ between 2.x files (nvml is COPROC in one file,
// the DRM card a GPU in another).

enum class osdev_role : std::uint8_t { other, compute_gpu, drm, network, openfabrics };

bool is_openfabrics_name(std::string_view name) noexcept {
  static constexpr std::array<std::string_view, 10> prefixes{
      "mlx4_", "mlx5_", "hfi1_", "qib", "bnxt_re", "irdma", "i40iw", "efa_", "qedr", "erdma"};
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](std::string_view p) { return name.starts_with(p); });
}

osdev_role role_of(hwloc_obj_t osdev) noexcept {
  const std::string_view name = str(osdev->name);
  switch (raw_enum(osdev->attr->osdev.type)) {
    case HWLOC_OBJ_OSDEV_GPU:
    case HWLOC_OBJ_OSDEV_COPROC: {
      static constexpr std::array<std::string_view, 5> prefixes{"cuda", "nvml", "opencl", "rsmi",
                                                                "ze"};
      static constexpr std::array<std::string_view, 5> backends{"CUDA", "NVML", "OpenCL", "RSMI",
                                                                "LevelZero"};
      const std::string_view subtype = str(osdev->subtype);
      const std::string_view backend = info(osdev, "Backend");
      const bool compute = std::any_of(prefixes.begin(), prefixes.end(),
                                       [&](std::string_view p) { return name.starts_with(p); }) ||
                           std::find(backends.begin(), backends.end(), subtype) != backends.end() ||
                           std::find(backends.begin(), backends.end(), backend) != backends.end();
      if (compute) {
        const std::string_view opencl_type = info(osdev, "OpenCLDeviceType");
        return opencl_type.empty() || opencl_type == "GPU" ? osdev_role::compute_gpu
                                                           : osdev_role::other;
      }
      if (name.starts_with("card") || name.starts_with("renderD")) return osdev_role::drm;
      return osdev_role::other;
    }
    case HWLOC_OBJ_OSDEV_OPENFABRICS: return osdev_role::openfabrics;
    case HWLOC_OBJ_OSDEV_NETWORK:
      return is_openfabrics_name(name) ? osdev_role::openfabrics : osdev_role::network;
    default: return osdev_role::other;
  }
}

// The OS devices below `obj` (OS devices may nest), in tree order.
void collect_osdevs(hwloc_obj_t obj, std::vector<hwloc_obj_t>& out, unsigned depth) {
  if (depth > 8) return;
  for (hwloc_obj_t c = obj->io_first_child; c != nullptr; c = c->next_sibling) {
    if (c->type != HWLOC_OBJ_OS_DEVICE) continue;
    out.push_back(c);
    collect_osdevs(c, out, depth + 1);
  }
}

// The PCI device an object stands for: itself, or the PCI parent of an OS device.
hwloc_obj_t pci_of(hwloc_obj_t obj) noexcept {
  while (obj != nullptr && obj->type == HWLOC_OBJ_OS_DEVICE) obj = obj->parent;
  return obj != nullptr && obj->type == HWLOC_OBJ_PCI_DEVICE ? obj : nullptr;
}

// ---------------------------------------------------------------------------------------------
// Links.

// PCIe link for hwloc's link speed in GB/s (lanes x per-lane payload rate, hwloc's formula). The
// widest standard width with a matching generation wins; the raw bandwidth otherwise.
topo_link pcie_from_speed(float gb_s) {
  topo_link link;
  link.kind = link_kind::pcie;
  if (!std::isfinite(gb_s) || gb_s <= 0.0F || gb_s > 1.0e6F) return link;
  const double mb_s = static_cast<double>(gb_s) * 1000.0;
  constexpr double gen3_lane = 8000.0 * 128 / 130 / 8;  // 8 GT/s, 128b/130b, in MB/s
  static constexpr std::array<double, 7> lane_mb_s{
      0.0, 250.0, 500.0, gen3_lane, 2 * gen3_lane, 4 * gen3_lane, 64000.0 * 242 / 256 / 8};
  for (unsigned width : {16U, 8U, 4U, 2U, 1U}) {
    for (unsigned gen = 1; gen < lane_mb_s.size(); ++gen) {
      if (std::abs(lane_mb_s[gen] * width - mb_s) <= 0.005 * mb_s) return pcie_link(gen, width);
    }
  }
  link.bandwidth_mb_s = std::llround(mb_s);
  return link;
}

// NCCL's inter-CPU bandwidth (src/graph/topo.cc) for a package, in MB/s; 0 if unknown.
std::int64_t smp_bandwidth_mb_s(hwloc_obj_t package, std::string_view architecture) {
  const std::string_view vendor = info(package, "CPUVendor");
  const std::string_view model_name = info(package, "CPUModel");
  const auto family = parse_u64(info(package, "CPUFamilyNumber"));
  const auto model = parse_u64(info(package, "CPUModelNumber"));
  const bool intel = vendor == "GenuineIntel" ||
                     (vendor.empty() && model_name.find("Intel") != std::string_view::npos);
  const bool amd = vendor == "AuthenticAMD" || vendor == "HygonGenuine" ||
                   (vendor.empty() && model_name.find("AMD") != std::string_view::npos);
  if (intel) {
    if (family == 6U && model) {
      if (*model >= 0xCF) return 40000;
      if (*model >= 0x8F) return 22000;
      if (*model >= 0x55) return 10000;
    }
    return 6000;
  }
  if (amd) return 16000;
  if (vendor == "CentaurHauls" || vendor == "  Shanghai  ") {
    return family == 7U && model == 0x5BU ? 9000 : 6000;
  }
  if (architecture.starts_with("ppc64") || architecture.starts_with("power")) return 32000;
  if (architecture.starts_with("aarch64") || architecture.starts_with("arm")) return 6000;
  return 0;
}

struct nvlink_rate {
  std::int64_t per_link_mb_s = 0;
  unsigned generation = 0;
};

nvlink_rate rate_for(gpu_type model, std::uint64_t value) {
  if (const auto spec = find_gpu_spec(model);
      spec && spec->nvlink_link_mb_s > 0 && spec->nvlink_generation > 0) {
    return {spec->nvlink_link_mb_s, spec->nvlink_generation};
  }
  if (value % 25000 != 0 && value % 20000 == 0) return {20000, 1};
  return {25000, 2};
}

constexpr std::uint64_t max_nvlinks_per_entry = 64;

// ---------------------------------------------------------------------------------------------
// The importer.

// A PCI device that becomes a vertex.
struct device_info {
  hwloc_obj_t obj = nullptr;
  vertex_kind kind = vertex_kind::gpu;
  bus_key bus{};
  std::optional<std::uint64_t> number;  // nvml (else cuda) number of a GPU
  hwloc_obj_t model_osdev = nullptr;    // OS device carrying GPUModel
  std::string os_name;                  // NIC: OpenFabrics or network name
  std::int32_t index = -1;
  std::string name;
};

class importer {
 public:
  importer(hwloc_topology_t topology, const hwloc_import_options& options)
      : topology_(topology), builder_(options.name) {}

  result<node_topology> run() && {
    hwloc_obj_t root = hwloc_get_root_obj(topology_);
    if (root == nullptr) return make_error(errc::invalid_argument, "hwloc topology has no root");
    builder_.vertex(builder_.root()).cpuset = list_string(root->cpuset);
    HETSCHED_TRY(add_cpu_side(root));
    // The recursion below follows the I/O tree hwloc itself built recursively (libxml2 caps XML
    // nesting at 256 levels), so its depth needs no separate limit.
    for_each_io_root([&](hwloc_obj_t io, hwloc_obj_t) { collect(io); });
    name_devices();
    for_each_io_root([&](hwloc_obj_t io, hwloc_obj_t parent) { build_io_root(io, parent); });
    HETSCHED_TRY(add_nvlinks());
    return std::move(builder_).build();
  }

 private:
  result<void> add_cpu_side(hwloc_obj_t root) {
    const int package_count = hwloc_get_nbobjs_by_type(topology_, HWLOC_OBJ_PACKAGE);
    if (package_count > 0 && static_cast<std::size_t>(package_count) > max_hwloc_packages) {
      return make_error(errc::out_of_range, "hwloc topology has {} packages; at most {} supported",
                        package_count, max_hwloc_packages);
    }
    const std::string_view architecture = info(root, "Architecture");
    std::vector<std::pair<vertex_id, std::int64_t>> packages;
    for (int i = 0; i < package_count; ++i) {
      hwloc_obj_t p = hwloc_get_obj_by_type(topology_, HWLOC_OBJ_PACKAGE, static_cast<unsigned>(i));
      if (p == nullptr) continue;
      const vertex_id id = add_cpu_vertex(p, vertex_kind::package, "Package", builder_.root());
      package_vertex_.emplace(p, id);
      packages.emplace_back(id, smp_bandwidth_mb_s(p, architecture));
    }
    for (std::size_t a = 0; a < packages.size(); ++a) {
      for (std::size_t b = a + 1; b < packages.size(); ++b) {
        const std::int64_t bw = std::min(packages[a].second, packages[b].second);
        builder_.connect(packages[a].first, packages[b].first,
                         topo_link{link_kind::smp, 1, 0, 0, bw});
      }
    }
    for (hwloc_obj_t n = hwloc_get_next_obj_by_type(topology_, HWLOC_OBJ_NUMANODE, nullptr);
         n != nullptr; n = hwloc_get_next_obj_by_type(topology_, HWLOC_OBJ_NUMANODE, n)) {
      const vertex_id id = add_cpu_vertex(n, vertex_kind::numa_node, "NUMA",
                                          package_of(n).value_or(builder_.root()));
      builder_.vertex(id).memory_mib =
          static_cast<std::int64_t>(n->attr->numanode.local_memory >> 20);
      numa_vertex_.emplace(n->os_index, id);  // the first NUMA node of an OS index wins
    }
    return ok();
  }

  // A package or NUMA vertex named <prefix><OS index> (logical index if the OS index is unknown).
  vertex_id add_cpu_vertex(hwloc_obj_t obj, vertex_kind kind, std::string_view prefix,
                           vertex_id parent) {
    topo_vertex v;
    v.kind = kind;
    v.name = fmt::format("{}{}", prefix,
                         obj->os_index == HWLOC_UNKNOWN_INDEX ? obj->logical_index : obj->os_index);
    v.parent = parent;
    v.index = to_index(obj->os_index);
    v.cpuset = list_string(obj->cpuset);
    return builder_.add(std::move(v), internal_link());
  }

  // The package vertex enclosing `obj` (itself included), if any.
  std::optional<vertex_id> package_of(hwloc_obj_t obj) const {
    for (hwloc_obj_t a = obj; a != nullptr; a = a->parent) {
      if (a->type != HWLOC_OBJ_PACKAGE) continue;
      const auto it = package_vertex_.find(a);
      if (it != package_vertex_.end()) return it->second;
    }
    return std::nullopt;
  }

  // Where an I/O subtree below the non-I/O object `obj` hangs.
  vertex_id locality_of(hwloc_obj_t obj) const {
    const std::int32_t numa = single_numa(obj);
    if (numa >= 0) {
      const auto it = numa_vertex_.find(static_cast<unsigned>(numa));
      if (it != numa_vertex_.end()) return it->second;
    }
    return package_of(obj).value_or(builder_.root());
  }

  // Calls f(io_child, non_io_parent) for every I/O child of every normal object, level by level.
  template <typename F>
  void for_each_io_root(F&& f) const {
    const int depth = hwloc_topology_get_depth(topology_);
    for (int d = 0; d < depth; ++d) {
      const unsigned n = hwloc_get_nbobjs_by_depth(topology_, d);
      for (unsigned i = 0; i < n; ++i) {
        hwloc_obj_t obj = hwloc_get_obj_by_depth(topology_, d, i);
        if (obj == nullptr) continue;
        for (hwloc_obj_t c = obj->io_first_child; c != nullptr; c = c->next_sibling) f(c, obj);
      }
    }
  }

  // Pass 1: classify the PCI devices reachable through bridges.
  void collect(hwloc_obj_t obj) {
    if (is_bridge(obj)) {
      for (hwloc_obj_t c = obj->io_first_child; c != nullptr; c = c->next_sibling) {
        collect(c);
      }
      return;
    }
    if (obj->type != HWLOC_OBJ_PCI_DEVICE) return;
    std::optional<device_info> device = classify(obj);
    if (!device) return;
    device_index_.emplace(obj, devices_.size());
    devices_.push_back(std::move(*device));
    for (hwloc_obj_t a = obj->parent; a != nullptr && is_bridge(a); a = a->parent) {
      if (!needed_bridges_.insert(a).second) break;
    }
  }

  static std::optional<device_info> classify(hwloc_obj_t pci) {
    device_info d;
    d.obj = pci;
    d.bus = bus_of(pci);
    const auto& attr = pci->attr->pcidev;
    if (str(pci->subtype) == "NVSwitch" || (attr.vendor_id == 0x10de && attr.class_id == 0x0680)) {
      d.kind = vertex_kind::nvswitch;
      return d;
    }
    std::vector<hwloc_obj_t> osdevs;
    collect_osdevs(pci, osdevs, 0);
    bool compute = false;
    bool drm = false;
    bool nic = false;
    std::string openfabrics;
    std::string network;
    int model_rank = 3;
    for (hwloc_obj_t o : osdevs) {
      const std::string_view name = str(o->name);
      switch (role_of(o)) {
        case osdev_role::compute_gpu: {
          compute = true;
          const bool nvml = name.starts_with("nvml");
          const bool cuda = name.starts_with("cuda");
          if (nvml || (cuda && !d.number)) {
            if (auto n = parse_u64(name.substr(4))) d.number = n;
          }
          const int rank = nvml ? 0 : cuda ? 1 : 2;
          if (!info(o, "GPUModel").empty() && rank < model_rank) {
            model_rank = rank;
            d.model_osdev = o;
          }
          break;
        }
        case osdev_role::drm: drm = true; break;
        case osdev_role::openfabrics:
          nic = true;
          if (openfabrics.empty()) openfabrics = std::string(name);
          break;
        case osdev_role::network:
          nic = true;
          if (network.empty()) network = std::string(name);
          break;
        case osdev_role::other: break;
      }
    }
    if (compute || (drm && attr.class_id == 0x0302)) {
      d.kind = vertex_kind::gpu;
      return d;
    }
    if (!nic) return std::nullopt;
    d.kind = vertex_kind::nic;
    d.os_name = !openfabrics.empty() ? openfabrics : network;
    return d;
  }

  // Pass 2: GPU, NVSwitch and NIC numbering.
  void name_devices() {
    std::vector<device_info*> gpus;
    std::vector<device_info*> nvswitches;
    std::vector<device_info*> nics;
    for (auto& d : devices_) {
      (d.kind == vertex_kind::gpu        ? gpus
       : d.kind == vertex_kind::nvswitch ? nvswitches
                                         : nics)
          .push_back(&d);
    }
    std::stable_sort(gpus.begin(), gpus.end(), [](const device_info* a, const device_info* b) {
      return std::make_tuple(!a->number, a->number.value_or(0), a->bus) <
             std::make_tuple(!b->number, b->number.value_or(0), b->bus);
    });
    const auto by_bus = [](const device_info* a, const device_info* b) { return a->bus < b->bus; };
    std::stable_sort(nvswitches.begin(), nvswitches.end(), by_bus);
    std::stable_sort(nics.begin(), nics.end(), by_bus);
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      gpus[i]->index = static_cast<std::int32_t>(i);
      gpus[i]->name = fmt::format("GPU{}", i);
    }
    for (std::size_t i = 0; i < nvswitches.size(); ++i) {
      nvswitches[i]->name = fmt::format("NVSwitch{}", i);
    }
    for (std::size_t i = 0; i < nics.size(); ++i) {
      nics[i]->index = static_cast<std::int32_t>(i);
      nics[i]->name = nics[i]->os_name.empty() ? fmt::format("NIC{}", i) : nics[i]->os_name;
    }
  }

  // Pass 3: vertices for the kept devices and the bridges above them.
  void build_io_root(hwloc_obj_t obj, hwloc_obj_t non_io_parent) {
    const vertex_id at = locality_of(non_io_parent);
    if (obj->type == HWLOC_OBJ_PCI_DEVICE) {
      add_device(obj, at);
      return;
    }
    if (!is_bridge(obj) || needed_bridges_.count(obj) == 0) return;
    topo_vertex v;
    v.kind = vertex_kind::host_bridge;
    v.name = fmt::format("HostBridge{}", host_bridges_++);
    v.parent = at;
    const bool root_port = has_pci_upstream(obj);
    if (root_port) v.pci_bus_id = bus_id_string(obj->attr->bridge.upstream.pci);
    v.cpuset = list_string(non_io_parent->cpuset);
    v.numa = single_numa(non_io_parent);
    const vertex_id id = builder_.add(std::move(v), internal_link());
    // A PCI bridge with no host bridge above it is a root port: its children sit at distance 2.
    for (hwloc_obj_t c = obj->io_first_child; c != nullptr; c = c->next_sibling) {
      build_below(c, id, root_port ? 2U : 1U);
    }
  }

  // `distance` counts the bridges from the host bridge down to `obj` (a root port is at 1).
  void build_below(hwloc_obj_t obj, vertex_id parent, unsigned distance) {
    if (obj->type == HWLOC_OBJ_PCI_DEVICE) {
      add_device(obj, parent);
      return;
    }
    if (!is_bridge(obj) || needed_bridges_.count(obj) == 0) return;
    vertex_id here = parent;
    if (distance % 2 == 0) {
      // An upstream port: the switch itself. Its downstream ports (odd distance) merge into it.
      topo_vertex v;
      v.kind = vertex_kind::pcie_switch;
      v.name = fmt::format("PCIeSwitch{}", switches_++);
      v.parent = parent;
      const bool pci_upstream = has_pci_upstream(obj);
      if (pci_upstream) v.pci_bus_id = bus_id_string(obj->attr->bridge.upstream.pci);
      here = builder_.add(std::move(v),
                          pci_upstream ? pcie_from_speed(obj->attr->bridge.upstream.pci.linkspeed)
                                       : pcie_from_speed(0.0F));
    }
    for (hwloc_obj_t c = obj->io_first_child; c != nullptr; c = c->next_sibling) {
      build_below(c, here, distance + 1);
    }
  }

  void add_device(hwloc_obj_t obj, vertex_id parent) {
    const auto it = device_index_.find(obj);
    if (it == device_index_.end()) return;
    const device_info& d = devices_[it->second];
    hwloc_obj_t local = hwloc_get_non_io_ancestor_obj(topology_, obj);
    topo_vertex v;
    v.kind = d.kind;
    v.name = d.name;
    v.parent = parent;
    v.index = d.index;
    v.pci_bus_id = bus_id_string(obj->attr->pcidev);
    v.numa = single_numa(local);
    if (local != nullptr) v.cpuset = list_string(local->cpuset);
    if (d.kind == vertex_kind::gpu && d.model_osdev != nullptr) {
      v.model = normalize_gpu_model(info(d.model_osdev, "GPUModel"));
      v.memory_mib = gpu_memory_mib(v.model, d.model_osdev);
    }
    const vertex_id id = builder_.add(std::move(v), pcie_from_speed(obj->attr->pcidev.linkspeed));
    device_vertex_.emplace(obj, id);
  }

  static std::int64_t gpu_memory_mib(gpu_type model, hwloc_obj_t osdev) {
    if (const auto spec = find_gpu_spec(model); spec && spec->memory_mib > 0) {
      return spec->memory_mib;
    }
    for (const char* key : {"CUDAGlobalMemorySize", "OpenCLGlobalMemorySize"}) {
      if (const auto kib = parse_u64(info(osdev, key))) {
        return static_cast<std::int64_t>(std::min<std::uint64_t>(
            *kib / 1024, static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())));
      }
    }
    return 0;
  }

  // NVLinks from the NVLinkBandwidth matrices (unidirectional MB/s, 0 = no link).
  result<void> add_nvlinks() {
    unsigned count = 0;
    if (hwloc_distances_get_by_name(topology_, "NVLinkBandwidth", &count, nullptr, 0) != 0) {
      return ok();
    }
    std::vector<hwloc_distances_s*> raw(count, nullptr);
    std::vector<distances_ptr> matrices;
    matrices.reserve(count);  // so that wrapping below cannot throw and leak a matrix
    static_cast<void>(
        hwloc_distances_get_by_name(topology_, "NVLinkBandwidth", &count, raw.data(), 0));
    for (hwloc_distances_s* d : raw) {
      if (d != nullptr) matrices.emplace_back(d, distances_release{topology_});
    }
    std::set<std::pair<vertex_id, vertex_id>> done;
    for (const distances_ptr& m : matrices) {
      const std::size_t n = m->nbobjs;
      std::vector<std::optional<vertex_id>> ends(n);
      for (std::size_t i = 0; i < n; ++i) {
        const auto it = device_vertex_.find(pci_of(m->objs[i]));
        if (it != device_vertex_.end()) ends[i] = it->second;
      }
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = i + 1; j < n; ++j) {
          const std::uint64_t value = std::max(m->values[i * n + j], m->values[j * n + i]);
          if (value == 0 || !ends[i] || !ends[j] || *ends[i] == *ends[j]) continue;
          HETSCHED_TRY(add_nvlink(*ends[i], *ends[j], value, done));
        }
      }
    }
    return ok();
  }

  result<void> add_nvlink(vertex_id a, vertex_id b, std::uint64_t value,
                          std::set<std::pair<vertex_id, vertex_id>>& done) {
    const topo_vertex& va = builder_.vertex(a);
    const topo_vertex& vb = builder_.vertex(b);
    const bool gpu_a = va.kind == vertex_kind::gpu;
    const bool gpu_b = vb.kind == vertex_kind::gpu;
    if (!gpu_a && !gpu_b) return ok();  // NVSwitch trunks: not reported by hwloc, not modelled
    if (!done.emplace(std::min(a, b), std::max(a, b)).second) return ok();
    nvlink_rate rate = rate_for(gpu_a ? va.model : vb.model, value);
    if (gpu_a && gpu_b) {
      const nvlink_rate other = rate_for(vb.model, value);
      if (other.per_link_mb_s < rate.per_link_mb_s) rate = other;
    }
    const auto per_link = static_cast<std::uint64_t>(rate.per_link_mb_s);
    if (value / per_link > max_nvlinks_per_entry) {
      return make_error(errc::out_of_range,
                        "NVLinkBandwidth between '{}' and '{}' is {} MB/s, more than {} links of "
                        "{} MB/s",
                        va.name, vb.name, value, max_nvlinks_per_entry, per_link);
    }
    const auto count = std::max<std::uint64_t>(1, (value + per_link / 2) / per_link);
    builder_.connect(a, b, nvlink_link(static_cast<unsigned>(count), rate.generation));
    return ok();
  }

  hwloc_topology_t topology_;
  node_topology_builder builder_;
  std::unordered_map<hwloc_obj_t, vertex_id> package_vertex_;
  std::unordered_map<unsigned, vertex_id> numa_vertex_;
  std::vector<device_info> devices_;
  std::unordered_map<hwloc_obj_t, std::size_t> device_index_;
  std::unordered_set<hwloc_obj_t> needed_bridges_;
  std::unordered_map<hwloc_obj_t, vertex_id> device_vertex_;
  unsigned host_bridges_ = 0;
  unsigned switches_ = 0;
};

}  // namespace

result<node_topology> import_hwloc_xml(std::string_view xml, const hwloc_import_options& options) {
  if (xml.empty()) {
    return make_error(errc::invalid_argument, "hwloc could not parse the XML buffer (it is empty)");
  }
  if (xml.size() > max_hwloc_xml_bytes) {
    return make_error(errc::out_of_range,
                      "hwloc XML buffer of {} bytes is larger than the limit of {} bytes",
                      xml.size(), max_hwloc_xml_bytes);
  }
  HETSCHED_TRY(detail::check_hwloc_xml_text(xml));
  auto topology = make_topology();
  if (!topology) return std::move(topology).error();
  // hwloc's buffer length counts a terminating NUL, as hwloc_topology_export_xmlbuffer writes it.
  const std::string buffer(xml);
  // hwloc reports no position, so when it refuses the buffer the project's XML reader and the
  // hwloc structure checks locate the line and element for the message.
  const auto where = [&](std::string_view call, int saved_errno) {
    std::string problem = detail::locate_hwloc_xml_problem(xml);
    if (problem.empty())
      problem = fmt::format("{} bytes, no malformed line or element found", xml.size());
    return fmt::format("{}; {} failed: {}", problem, call, errno_text(saved_errno));
  };
  errno = 0;
  if (hwloc_topology_set_xmlbuffer(topology->get(), buffer.c_str(),
                                   static_cast<int>(buffer.size() + 1)) != 0) {
    return make_error(errc::invalid_argument, "hwloc could not parse the XML buffer ({})",
                      where("hwloc_topology_set_xmlbuffer", errno));
  }
  errno = 0;
  if (hwloc_topology_load(topology->get()) != 0) {
    return make_error(errc::invalid_argument, "hwloc rejected the XML topology ({})",
                      where("hwloc_topology_load", errno));
  }
  return importer(topology->get(), options).run();
}

result<node_topology> discover_local_topology(const hwloc_import_options& options) {
  auto topology = make_topology();
  if (!topology) return std::move(topology).error();
#ifdef __linux__
  // The linux backend reads PCI devices from sysfs itself; the libpciaccess-based "pci"
  // component only duplicates that and leaks about 1 KB per load (LeakSanitizer, hwloc 2.9.0).
  static_cast<void>(hwloc_topology_set_components(topology->get(),
                                                  HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci"));
#endif
  errno = 0;
  if (hwloc_topology_load(topology->get()) != 0) {
    return make_error(
        errc::failed_precondition,
        "hwloc could not discover the local topology (hwloc_topology_load failed: {})",
        errno_text(errno));
  }
  return importer(topology->get(), options).run();
}

result<node_topology> import_topology_with_hwloc(std::string_view text,
                                                 topology_import_options options) {
  options.hwloc = [](std::string_view xml, std::string_view name) {
    return import_hwloc_xml(xml, {.name = std::string(name)});
  };
  return import_topology(text, options);
}

}  // namespace hetsched
