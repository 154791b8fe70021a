// SPDX-License-Identifier: MIT
// import_topology: the one entry point for topology text (format detection + its importer).
#include <utility>

#include <hetsched/topology/import.hpp>
#include <hetsched/topology/json.hpp>

namespace hetsched {

result<node_topology> import_topology(std::string_view text,
                                      const topology_import_options& options) {
  switch (detect_topology_format(text)) {
    case topology_format::nccl_xml: {
      nccl_import_options o;
      if (!options.name.empty()) o.name = options.name;
      o.gpu_model = options.gpu_model;
      return import_nccl_xml(text, o);
    }
    case topology_format::nvidia_smi_topo: {
      nvidia_smi_import_options o;
      if (!options.name.empty()) o.name = options.name;
      o.gpu_model = options.gpu_model;
      o.nvlink_generation = options.nvlink_generation;
      o.allow_partial = options.allow_partial;
      return import_nvidia_smi_topo(text, o);
    }
    case topology_format::json: return import_topology_json(text);
    case topology_format::hwloc_xml:
      if (options.hwloc == nullptr)
        return make_error(errc::failed_precondition,
                          "hwloc XML needs the hetsched::hwloc importer "
                          "(import_topology_with_hwloc); this build reads NCCL topology XML, "
                          "nvidia-smi topo -m output and hetsched topology JSON");
      return options.hwloc(text, options.name.empty() ? std::string_view("hwloc") : options.name);
    case topology_format::unknown: break;
  }
  return make_error(errc::invalid_argument,
                    "unrecognised topology text: expected hwloc XML, NCCL topology XML, "
                    "nvidia-smi topo -m output or hetsched topology JSON");
}

}  // namespace hetsched
