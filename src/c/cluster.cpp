// SPDX-License-Identifier: MIT
// C API: clusters from built-in templates, built-in clusters and topology text.
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include <hetsched/c/cluster.h>
#include <hetsched/model/gpu_type.hpp>
#include <hetsched/topology/cluster_builder.hpp>
#include <hetsched/topology/import.hpp>
#include <hetsched/topology/json.hpp>
#include <hetsched/topology/templates.hpp>

#include "c_internal.hpp"
#include "handles.hpp"

using hetsched::capi::fail;
using hetsched::capi::guard;
using hetsched::capi::view;

namespace {

hs_status read_options(const hs_cluster_options_t* options, hs_cluster_options_t& out) {
  out = hs_cluster_options_t{};
  out.struct_size = sizeof(hs_cluster_options_t);
  if (options == nullptr) return HS_OK;
  if (!hetsched::capi::read_struct(*options, out)) {
    return fail(HS_INVALID_ARGUMENT,
                "options->struct_size is smaller than sizeof(hs_cluster_options_t)");
  }
  return HS_OK;
}

/// Wraps a built topology into a new handle with its GPU model strings.
hs_cluster_t* make_handle(hetsched::cluster_topology topology) {
  auto handle = std::make_unique<hs_cluster>();
  for (const auto& t : topology.templates()) {
    std::vector<std::string> types;
    for (auto v : t.gpus()) types.emplace_back(t.vertex(v).model.name());
    handle->gpu_types.push_back(std::move(types));
  }
  handle->topology = std::move(topology);
  return hetsched::capi::adopt(std::move(handle));
}

/// Builds `count` nodes of `topology` with the options' prefix and racks.
hs_status build_nodes(const hetsched::node_topology& topology, const hs_cluster_options_t& o,
                      hs_cluster_t** out) {
  const std::size_t count = o.node_count == 0 ? 1 : o.node_count;
  hetsched::cluster_builder builder(topology.name());
  builder.add_nodes(topology, count, std::string(view(o.name_prefix)));
  if (o.nodes_per_rack > 0) builder.racks(o.nodes_per_rack);
  auto built = builder.build();
  if (!built) return fail(built.error());
  *out = make_handle(std::move(*built));
  return HS_OK;
}

/// Importer errors: malformed input is a parse error; size limits keep their own code.
hs_status import_failure(const hetsched::error& e) {
  if (e.code == hetsched::errc::out_of_range) return fail(e);
  // import_topology's only failed_precondition: hwloc XML, which needs the C++ hwloc target.
  if (e.code == hetsched::errc::failed_precondition) return fail(HS_UNSUPPORTED, e.message);
  return fail(HS_PARSE_ERROR, e.message);
}

hs_status check_node(const hs_cluster_t* cluster, uint32_t node) {
  if (node < cluster->topology.node_count()) return HS_OK;
  std::string message = "node index ";
  message += std::to_string(node);
  message += " is out of range (cluster has ";
  message += std::to_string(cluster->topology.node_count());
  message += " nodes)";
  return fail(HS_OUT_OF_RANGE, std::move(message));
}

}  // namespace

namespace hetsched::capi {

result<std::shared_ptr<const cluster>> model_of(const hs_cluster& c) {
  const std::lock_guard lock(c.model_mutex);
  if (!c.model) {
    auto built = to_cluster(c.topology);
    if (!built) return std::move(built).error();
    c.model = std::make_shared<const cluster>(std::move(*built));
  }
  return c.model;
}

}  // namespace hetsched::capi

extern "C" {

HS_API hs_status hs_cluster_from_template(const char* template_name,
                                          const hs_cluster_options_t* options, hs_cluster_t** out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE(template_name);
    HS_CAPI_REQUIRE(out);
    hs_cluster_options_t o;
    if (auto s = read_options(options, o); s != HS_OK) return s;
    const auto t = hetsched::parse_node_template(template_name);
    if (!t) {
      std::string message = "unknown node template '";
      message += template_name;
      message += "'; valid names:";
      for (auto known : hetsched::all_node_templates()) {
        message += ' ';
        message += hetsched::to_string(known);
      }
      return fail(HS_NOT_FOUND, std::move(message));
    }
    auto topology = hetsched::make_node_template(*t);
    if (!topology) return fail(topology.error());
    return build_nodes(*topology, o, out);
  });
}

HS_API hs_status hs_cluster_builtin(const char* name, hs_cluster_t** out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE(name);
    HS_CAPI_REQUIRE(out);
    auto built = hetsched::make_builtin_cluster(name);
    if (!built) return fail(built.error());
    *out = make_handle(std::move(*built));
    return HS_OK;
  });
}

HS_API hs_status hs_cluster_from_topology_text(const char* text, size_t length,
                                               const hs_cluster_options_t* options,
                                               hs_cluster_t** out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE(text);
    HS_CAPI_REQUIRE(out);
    hs_cluster_options_t o;
    if (auto s = read_options(options, o); s != HS_OK) return s;
    hetsched::gpu_type model;
    if (o.gpu_model != nullptr && *o.gpu_model != '\0') {
      auto parsed = hetsched::gpu_type::parse(o.gpu_model);
      if (!parsed) return fail(parsed.error());
      model = *parsed;
    }
    hetsched::topology_import_options io;
    io.name = std::string(view(o.name_prefix));
    io.gpu_model = model;
    io.allow_partial = o.allow_partial != 0;
    auto topology = hetsched::import_topology(std::string_view(text, length), io);
    if (!topology) return import_failure(topology.error());
    return build_nodes(*topology, o, out);
  });
}

HS_API void hs_cluster_free(hs_cluster_t* cluster) {
  hetsched::capi::destroy_handle(cluster, __func__, "cluster");
}

HS_API size_t hs_cluster_node_count(const hs_cluster_t* cluster) {
  return hetsched::capi::readable(cluster, __func__, "cluster") ? cluster->topology.node_count()
                                                                : 0;
}

HS_API size_t hs_cluster_gpu_count(const hs_cluster_t* cluster) {
  return hetsched::capi::readable(cluster, __func__, "cluster") ? cluster->topology.gpu_count() : 0;
}

HS_API hs_status hs_cluster_name(const hs_cluster_t* cluster, const char** out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(cluster);
    HS_CAPI_REQUIRE(out);
    *out = cluster->topology.name().c_str();
    return HS_OK;
  });
}

HS_API hs_status hs_cluster_node_name(const hs_cluster_t* cluster, uint32_t node,
                                      const char** out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(cluster);
    HS_CAPI_REQUIRE(out);
    if (auto s = check_node(cluster, node); s != HS_OK) return s;
    *out = cluster->topology.node(hetsched::node_id(node)).name.c_str();
    return HS_OK;
  });
}

HS_API hs_status hs_cluster_node_gpu_count(const hs_cluster_t* cluster, uint32_t node,
                                           uint32_t* out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(cluster);
    HS_CAPI_REQUIRE(out);
    if (auto s = check_node(cluster, node); s != HS_OK) return s;
    *out = cluster->topology.node(hetsched::node_id(node)).gpu_count;
    return HS_OK;
  });
}

HS_API hs_status hs_cluster_gpu_type(const hs_cluster_t* cluster, uint32_t node, uint32_t gpu,
                                     const char** out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(cluster);
    HS_CAPI_REQUIRE(out);
    if (auto s = check_node(cluster, node); s != HS_OK) return s;
    const auto& n = cluster->topology.node(hetsched::node_id(node));
    if (gpu >= n.gpu_count) {
      std::string message = "GPU index ";
      message += std::to_string(gpu);
      message += " is out of range (node '";
      message += n.name;
      message += "' has ";
      message += std::to_string(n.gpu_count);
      message += " GPUs)";
      return fail(HS_OUT_OF_RANGE, std::move(message));
    }
    *out = cluster->gpu_types[n.template_index][gpu].c_str();
    return HS_OK;
  });
}

HS_API hs_status hs_cluster_find_node(const hs_cluster_t* cluster, const char* name,
                                      uint32_t* out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(cluster);
    HS_CAPI_REQUIRE(name);
    HS_CAPI_REQUIRE(out);
    auto found = cluster->topology.find_node(name);
    if (!found) return fail(found.error());
    *out = found->value();
    return HS_OK;
  });
}

}  // extern "C"
