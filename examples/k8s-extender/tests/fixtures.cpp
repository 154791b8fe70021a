// SPDX-License-Identifier: MIT
// Shared helpers of the extender tests.
#include "fixtures.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <hetsched/policies/hived_config.hpp>

namespace hetsched::k8s::test {

using json = nlohmann::json;

std::string read_data(const std::string& name) {
  std::ifstream in(fmt::format("{}/{}", K8S_EXTENDER_DATA_DIR, name), std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot read fixture {}", name));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

json data_json(const std::string& name) { return json::parse(read_data(name)); }

std::unique_ptr<backend> packer_cluster() {
  auto nodes = parse_packer_cluster(data_json("packer_cluster.json"));
  if (!nodes) throw std::runtime_error(nodes.error().message);
  auto b = make_packer_backend(std::move(*nodes));
  if (!b) throw std::runtime_error(b.error().message);
  return std::move(*b);
}

std::unique_ptr<backend> hived_cluster() {
  hived::config cfg;
  cfg.cell_types = {{"PCIE", "GPU", 2, false}, {"NODE", "PCIE", 2, true}};
  cfg.physical_cells = {hived::physical_cell_spec{"NODE", "n0", "", {}},
                        hived::physical_cell_spec{"NODE", "n1", "", {}}};
  cfg.virtual_clusters = {{"a", {{"NODE", 1}}, {}}, {"b", {{"NODE", 1}}, {}}};
  auto b = make_hived_backend(cfg);
  if (!b) throw std::runtime_error(b.error().message);
  return std::move(*b);
}

std::unique_ptr<backend> hived_rows_cluster(bool cell_type_requests) {
  hived::config cfg;
  cfg.cell_types = {{"PCIE", "GPU", 2, false},
                    {"NODE", "PCIE", 2, true},
                    {"RACK", "NODE", 2, false},
                    {"ROW", "RACK", 2, false}};
  for (int r = 0; r < 2; ++r) {
    hived::physical_cell_spec row;
    row.cell_type = "ROW";
    for (int k = 0; k < 2; ++k) {
      hived::physical_cell_spec rack;
      for (int n = 0; n < 2; ++n) {
        hived::physical_cell_spec node;
        node.address = fmt::format("r{}n{}", r * 2 + k, n);
        rack.children.push_back(std::move(node));
      }
      row.children.push_back(std::move(rack));
    }
    cfg.physical_cells.push_back(std::move(row));
  }
  cfg.virtual_clusters = {{"v", {{"ROW", 1}}, {}}, {"w", {{"ROW.RACK.NODE", 2}}, {}}};
  cfg.opts.cell_type_requests = cell_type_requests;
  auto b = make_hived_backend(cfg);
  if (!b) throw std::runtime_error(b.error().message);
  return std::move(*b);
}

json gpu_pod(const std::string& name, const std::string& uid, int gpus) {
  return json{{"kind", "Pod"},
              {"apiVersion", "v1"},
              {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", uid}}},
              {"spec",
               {{"containers",
                 json::array({{{"name", "c"},
                               {"image", "busybox"},
                               {"resources",
                                {{"requests", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}})}}}};
}

json hived_pod(const std::string& name, const std::string& uid, const std::string& vc, int priority,
               int leaves) {
  json spec{{"virtualCluster", vc},
            {"priority", priority},
            {"leafCellType", "GPU"},
            {"leafCellNumber", leaves}};
  json pod = gpu_pod(name, uid, 0);
  pod["metadata"]["annotations"] =
      json{{"hivedscheduler.microsoft.com/pod-scheduling-spec", spec.dump()}};
  return pod;
}

json annotated_pod(const std::string& name, const std::string& uid, const std::string& annotation) {
  json pod = gpu_pod(name, uid, 0);
  pod["metadata"]["annotations"] =
      json{{"hivedscheduler.microsoft.com/pod-scheduling-spec", annotation}};
  return pod;
}

json args_for(const json& pod, const std::vector<std::string>& nodes) {
  return json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", nodes}};
}

json bind_for(const json& pod, const std::string& node) {
  return json{{"PodName", pod["metadata"]["name"]},
              {"PodNamespace", pod["metadata"]["namespace"]},
              {"PodUID", pod["metadata"]["uid"]},
              {"Node", node}};
}

}  // namespace hetsched::k8s::test
