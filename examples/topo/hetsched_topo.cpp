// SPDX-License-Identifier: MIT
// hetsched-topo: prints a machine or cluster topology the way `nvidia-smi topo -m` does, or JSON.
//
//   hetsched-topo [--json] [--partial] [--gpu-model NAME] SOURCE
//   SOURCE: a file (hwloc XML, NCCL XML, `nvidia-smi topo -m` text or hetsched JSON, detected
//           from the content), a built-in node template (dgx-a100, ...), a built-in cluster
//           (demo, a100-100k, ...), or --discover for this machine (hwloc). --list names them.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <hetsched/topology/cluster_builder.hpp>
#include <hetsched/topology/import.hpp>
#include <hetsched/topology/json.hpp>
#include <hetsched/topology/templates.hpp>
#include <hetsched/topology/views.hpp>
#include <hetsched/version.hpp>
#ifdef HETSCHED_HAVE_HWLOC
#  include <hetsched/topology/hwloc_import.hpp>
#endif

namespace {

using namespace hetsched;

struct options {
  bool json = false;
  bool partial = false;
  bool discover = false;
  bool list = false;
  std::string gpu_model;
  std::string source;
};

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// The `nvidia-smi topo -m` matrix of a node, with the affinity columns and the legend.
void print_matrix(const node_topology& t) {
  auto text = to_nvidia_smi_topo(t);
  if (!text) {
    fmt::print("(no nvidia-smi matrix: {})\n", text.error().message);
    return;
  }
  fmt::print("{}", *text);
}

void print_node(const node_topology& t) {
  const auto& v = t.views();
  std::map<std::string, int> models;
  for (vertex_id g : t.gpus())
    ++models[std::string(t.vertex(g).model.empty() ? "unknown" : t.vertex(g).model.name())];
  std::vector<std::string> model_list;
  for (const auto& [m, n] : models) model_list.push_back(fmt::format("{}x {}", n, m));
  const std::string gpus = model_list.empty() ? std::string("0 GPUs")
                                              : fmt::format("{} GPUs ({})", t.gpus().size(),
                                                            fmt::join(model_list, ", "));
  fmt::print(
      "node topology '{}': {}, {} NICs, {} NVSwitches, {} packages, {} NUMA nodes, {} vertices, "
      "{} links\n\n",
      t.name(), gpus, t.nics().size(), t.nvswitches().size(),
      t.vertices_of(vertex_kind::package).size(), t.vertices_of(vertex_kind::numa_node).size(),
      t.vertex_count(), t.link_count());
  print_matrix(t);
  if (v.gpu_count() > 0) {
    fmt::print("\nGPU pair bandwidth (GB/s, best path):\n");
    for (std::size_t i = 0; i < v.gpu_count(); ++i) {
      std::string row = fmt::format("GPU{:<4}", i);
      for (std::size_t j = 0; j < v.gpu_count(); ++j) {
        row += i == j
                   ? fmt::format("{:>7}", "-")
                   : fmt::format("{:>7.1f}", static_cast<double>(v.bandwidth_mb_s(i, j)) / 1000.0);
      }
      fmt::print("{}\n", row);
    }
    fmt::print("\nAffinity groups:\n");
    const auto groups = v.affinity_groups();
    std::vector<std::size_t> depth(groups.size(), 0);
    for (std::size_t g = 1; g < groups.size(); ++g) depth[g] = depth[groups[g].parent] + 1;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      if (groups[g].level == affinity_level::gpu) continue;
      fmt::print("{:{}}{} [{}]\n", "", 2 * depth[g], to_string(groups[g].level),
                 fmt::join(groups[g].gpus, ","));
    }
  }
}

void print_cluster(const cluster_topology& c, bool json) {
  std::map<affinity_level, std::size_t> per_level;
  for (const auto& g : c.groups()) ++per_level[g.level];
  std::vector<std::size_t> per_template(c.templates().size(), 0);
  for (const auto& n : c.nodes()) ++per_template[n.template_index];
  if (json) {
    fmt::print(
        "{{\"format\": \"hetsched-cluster-summary\", \"version\": 1, \"name\": {}, "
        "\"nodes\": {}, \"gpus\": {},\n \"levels\": {{",
        json_string(c.name()), c.node_count(), c.gpu_count());
    bool first = true;
    for (const auto& [level, n] : per_level) {
      fmt::print("{}\"{}\": {}", first ? "" : ", ", to_string(level), n);
      first = false;
    }
    fmt::print("}},\n \"templates\": [\n");
    for (std::size_t t = 0; t < c.templates().size(); ++t) {
      fmt::print("  {{\"nodes\": {}, \"topology\": {}}}{}\n", per_template[t],
                 to_json(c.templates()[t], {.pretty = false, .include_views = true}),
                 t + 1 < c.templates().size() ? "," : "");
    }
    fmt::print(" ]}}\n");
    return;
  }
  fmt::print("cluster '{}': {} nodes, {} GPUs\n", c.name(), c.node_count(), c.gpu_count());
  for (const auto& [level, n] : per_level) fmt::print("  {:<14} {}\n", to_string(level), n);
  const auto& root = c.groups()[0];
  fmt::print("  top-level groups: {}\n", root.children.size());
  for (std::size_t t = 0; t < c.templates().size(); ++t) {
    fmt::print("\n{} nodes of template '{}':\n", per_template[t], c.templates()[t].name());
    print_node(c.templates()[t]);
  }
}

int usage(int code) {
  std::fprintf(code == 0 ? stdout : stderr,
               "usage: hetsched-topo [--json] [--partial] [--gpu-model NAME] "
               "(FILE | TEMPLATE | CLUSTER | --discover | --list)\n");
  return code;
}

result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(errc::not_found, "cannot open '{}'", path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

result<node_topology> load_file(const std::string& path, const options& opt) {
  auto text = read_file(path);
  if (!text) return std::move(text).error();
  gpu_type model;
  if (!opt.gpu_model.empty()) {
    auto parsed = gpu_type::parse(opt.gpu_model);
    if (!parsed) return std::move(parsed).error();
    model = *parsed;
  }
  topology_import_options o;
  o.name = path;
  o.gpu_model = model;
  o.allow_partial = opt.partial;
#ifdef HETSCHED_HAVE_HWLOC
  auto t = import_topology_with_hwloc(*text, o);
#else
  auto t = import_topology(*text, o);
#endif
  if (!t) return make_error(t.error().code, "'{}': {}", path, t.error().message);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json") {
      opt.json = true;
    } else if (arg == "--partial") {
      opt.partial = true;
    } else if (arg == "--discover") {
      opt.discover = true;
    } else if (arg == "--list") {
      opt.list = true;
    } else if (arg == "--gpu-model" && i + 1 < argc) {
      opt.gpu_model = argv[++i];
    } else if (arg == "--help" || arg == "-h") {
      return usage(0);
    } else if (arg == "--version") {
      fmt::print("hetsched-topo {}\n", hetsched::version());
      return 0;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "hetsched-topo: unknown option '%s'\n", arg.c_str());
      return usage(2);
    } else {
      opt.source = arg;
    }
  }
  if (opt.list) {
    fmt::print("node templates:");
    for (auto t : all_node_templates()) fmt::print(" {}", to_string(t));
    fmt::print("\nclusters: {}\n", fmt::join(builtin_cluster_names(), " "));
    return 0;
  }
  if (opt.source.empty() && !opt.discover) return usage(2);

  result<node_topology> node = make_error(errc::not_found, "no source");
  if (opt.discover) {
#ifdef HETSCHED_HAVE_HWLOC
    node = discover_local_topology({.name = "localhost"});
#else
    node = make_error(errc::failed_precondition, "hetsched-topo was built without hwloc");
#endif
  } else if (auto t = parse_node_template(opt.source)) {
    node = make_node_template(*t);
  } else if (auto c = make_builtin_cluster(opt.source); c || c.error().code != errc::not_found) {
    if (!c) {
      std::fprintf(stderr, "hetsched-topo: %s\n", c.error().message.c_str());
      return 1;
    }
    print_cluster(*c, opt.json);
    return 0;
  } else {
    std::ifstream probe(opt.source);
    if (!probe) {
      std::fprintf(stderr,
                   "hetsched-topo: '%s' is not a file, a node template or a built-in cluster "
                   "(see --list)\n",
                   opt.source.c_str());
      return 1;
    }
    node = load_file(opt.source, opt);
  }
  if (!node) {
    std::fprintf(stderr, "hetsched-topo: %s\n", node.error().message.c_str());
    return 1;
  }
  if (opt.json) {
    fmt::print("{}\n", to_json(*node));
  } else {
    print_node(*node);
  }
  return 0;
}
