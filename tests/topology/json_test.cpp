// SPDX-License-Identifier: MIT
// Tests of the topology JSON document: template round trips, the exported views and import errors.
#include "jsonio/json.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include <hetsched/topology/json.hpp>
#include <hetsched/topology/templates.hpp>
#include <hetsched/topology/views.hpp>

#include "support/matchers.hpp"

namespace hetsched {
namespace {

using ::hetsched::testing::ErrorContains;
using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;

node_topology template_topology(node_template t) {
  auto topo = make_node_template(t);
  EXPECT_THAT(topo, IsOk()) << to_string(t);
  return topo ? *topo : node_topology();
}

// A minimal valid document; tests break one piece of it.
constexpr std::string_view minimal_document = R"({
  "format": "hetsched-node-topology", "version": 1, "name": "box",
  "vertices": [
    {"id": 0, "kind": "machine", "name": "box", "parent": null, "index": -1},
    {"id": 1, "kind": "package", "name": "Package0", "parent": 0, "index": 0,
     "uplink": {"kind": "internal", "count": 1, "generation": 0, "width": 0, "bandwidth_mb_s": 0}},
    {"id": 2, "kind": "host_bridge", "name": "HostBridge0", "parent": 1, "index": -1,
     "uplink": {"kind": "internal"}},
    {"id": 3, "kind": "gpu", "name": "GPU0", "parent": 2, "index": 0, "model": "A100-SXM4-80GB",
     "uplink": {"kind": "pcie", "count": 1, "generation": 4, "width": 16,
                "bandwidth_mb_s": 31504}},
    {"id": 4, "kind": "gpu", "name": "GPU1", "parent": 2, "index": 1,
     "uplink": {"kind": "pcie", "generation": 4, "width": 16, "bandwidth_mb_s": 31504}}
  ],
  "links": [{"a": 3, "b": 4, "kind": "nvlink", "count": 4, "generation": 3, "width": 0,
             "bandwidth_mb_s": 100000}]
})";

// Returns minimal_document with the first occurrence of `from` replaced by `to`.
std::string edited(std::string_view from, std::string_view to) {
  std::string doc(minimal_document);
  const auto at = doc.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) doc.replace(at, from.size(), to);
  return doc;
}

TEST(TopologyJson, RoundTripsEveryTemplate) {
  for (const node_template t : all_node_templates()) {
    const node_topology original = template_topology(t);
    for (const bool pretty : {true, false}) {
      topology_json_options options;
      options.pretty = pretty;
      const std::string text = to_json(original, options);
      auto imported = import_topology_json(text);
      ASSERT_THAT(imported, IsOk()) << to_string(t);
      EXPECT_TRUE(*imported == original) << to_string(t);
      EXPECT_TRUE(imported->views() == original.views()) << to_string(t);
      // Export is deterministic and a fixed point of import.
      EXPECT_EQ(to_json(*imported, options), text) << to_string(t);
    }
  }
}

TEST(TopologyJson, RoundTripsWithoutViews) {
  const node_topology original = template_topology(node_template::dgx2);
  topology_json_options options;
  options.include_views = false;
  const std::string text = to_json(original, options);
  EXPECT_EQ(text.find("\"views\""), std::string::npos);
  auto imported = import_topology_json(text);
  ASSERT_THAT(imported, IsOk());
  EXPECT_TRUE(*imported == original);
}

TEST(TopologyJson, ExportsDgxA100Relations) {
  const node_topology topo = template_topology(node_template::dgx_a100);
  auto doc = jsonio::parse_json(to_json(topo));
  ASSERT_THAT(doc, IsOk());
  EXPECT_EQ(jsonio::member((*doc), "format").get_ref<const std::string&>(),
            "hetsched-node-topology");
  EXPECT_EQ(jsonio::member((*doc), "version").get<std::int64_t>(), 1);
  const jsonio::json& views = jsonio::member((*doc), "views");
  ASSERT_TRUE(views.is_object());
  const auto& gpus = jsonio::as_array(jsonio::member(views, "gpus"));
  const auto& nics = jsonio::as_array(jsonio::member(views, "nics"));
  ASSERT_EQ(gpus.size(), 8u);
  EXPECT_EQ(gpus[0].get_ref<const std::string&>(), "GPU0");
  std::size_t mlx5_0 = nics.size();
  for (std::size_t i = 0; i < nics.size(); ++i) {
    if (nics[i].get_ref<const std::string&>() == "mlx5_0") mlx5_0 = gpus.size() + i;
  }
  ASSERT_LT(mlx5_0, gpus.size() + nics.size());
  const auto& relation = jsonio::as_array(jsonio::member(views, "relation"));
  ASSERT_EQ(relation.size(), gpus.size() + nics.size());
  // GPU0-GPU1: NV12 through the NVSwitches; GPU0-mlx5_0: PXB (same PCIe switch tree).
  EXPECT_EQ(jsonio::as_array(relation[0])[1].get_ref<const std::string&>(), "NV12");
  EXPECT_EQ(jsonio::as_array(relation[0])[0].get_ref<const std::string&>(), "X");
  EXPECT_EQ(jsonio::as_array(relation[0])[mlx5_0].get_ref<const std::string&>(), "PXB");
  EXPECT_EQ(jsonio::as_array(relation[mlx5_0])[0].get_ref<const std::string&>(), "PXB");
  // The matrices agree with the views they were written from.
  const node_views& v = topo.views();
  const auto& bandwidth = jsonio::as_array(jsonio::member(views, "bandwidth_mb_s"));
  const auto& nccl = jsonio::as_array(jsonio::member(views, "nccl_path"));
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    EXPECT_EQ(jsonio::as_array(jsonio::member(views, "gpu_numa"))[i].get<std::int64_t>(),
              v.gpu_numa(i));
    for (std::size_t j = 0; j < gpus.size(); ++j) {
      EXPECT_EQ(jsonio::as_array(bandwidth[i])[j].get<std::int64_t>(), v.bandwidth_mb_s(i, j));
      EXPECT_EQ(jsonio::as_array(nccl[i])[j].get_ref<const std::string&>(),
                to_string(v.path_type(i, j)));
    }
  }
  const auto& groups = jsonio::as_array(jsonio::member(views, "affinity_groups"));
  ASSERT_EQ(groups.size(), v.affinity_groups().size());
  EXPECT_EQ(jsonio::as_array(jsonio::member(groups[0], "gpus")).size(), 8u);
  EXPECT_TRUE(jsonio::member(groups[0], "level").is_string());
}

TEST(TopologyJson, OmitsDefaultVertexFields) {
  auto topo = import_topology_json(minimal_document);
  ASSERT_THAT(topo, IsOk());
  EXPECT_EQ(topo->vertex(vertex_id(3)).model, gpu_type("A100-SXM4-80GB"));
  EXPECT_EQ(topo->vertex(vertex_id(4)).numa, -1);
  auto doc = jsonio::parse_json(to_json(*topo));
  ASSERT_THAT(doc, IsOk());
  const auto& gpu1 = jsonio::as_array(jsonio::member((*doc), "vertices"))[4];
  // id, kind, name, parent, index, uplink: nothing else
  EXPECT_EQ(jsonio::as_object(gpu1).size(), 6u);
  EXPECT_TRUE(jsonio::as_array(jsonio::member((*doc), "vertices"))[0].contains("parent"));
  EXPECT_TRUE(
      jsonio::member(jsonio::as_array(jsonio::member((*doc), "vertices"))[0], "parent").is_null());
  EXPECT_FALSE(jsonio::as_array(jsonio::member((*doc), "vertices"))[0].contains("uplink"));
  EXPECT_EQ(jsonio::as_array(jsonio::member((*doc), "links")).size(), 1u);
}

struct bad_document {
  std::string text;
  errc code;
  const char* message;
};

TEST(TopologyJson, RejectsMalformedDocumentsNamingThePath) {
  const bad_document cases[] = {
      {"", errc::invalid_argument, "line 1, column 1: empty input"},
      {"[]", errc::invalid_argument, "(root): expected an object, got an array"},
      {edited("hetsched-node-topology", "hetsched-cluster"), errc::invalid_argument,
       "format: expected \"hetsched-node-topology\", got \"hetsched-cluster\""},
      {edited("\"version\": 1", "\"version\": 2"), errc::invalid_argument,
       "version: unsupported version 2"},
      {edited("\"version\": 1", "\"version\": 1.0"), errc::invalid_argument,
       "version: expected an integer"},
      {edited("\"name\": \"box\",\n", ""), errc::invalid_argument, "name: missing required member"},
      {edited("\"vertices\"", "\"vertexes\""), errc::invalid_argument,
       "vertices: missing required member"},
      {edited("\"links\"", "\"views\": [], \"links\""), errc::invalid_argument,
       "views: expected an object, got an array"},
      {edited("\"links\"", "\"extra\": 1, \"links\""), errc::invalid_argument,
       "extra: unknown member"},
      {edited("\"parent\": 1", "\"parent\": 3"), errc::invalid_argument,
       "vertices[2].parent: parent 3 must precede vertex 2"},
      {edited("\"parent\": 1", "\"parent\": 2"), errc::invalid_argument,
       "vertices[2].parent: parent 2 must precede vertex 2"},
      {edited("\"parent\": 1", "\"parent\": -1"), errc::out_of_range,
       "vertices[2].parent: -1 is below the minimum 0"},
      {edited("\"parent\": 1", "\"parent\": null"), errc::invalid_argument,
       "vertices[2].parent: is null"},
      {edited("\"parent\": null", "\"parent\": 0"), errc::invalid_argument,
       "vertices[0].parent: the root (vertex 0) must have a null parent"},
      {edited("\"kind\": \"host_bridge\"", "\"kind\": \"hostbridge\""), errc::invalid_argument,
       "vertices[2].kind: unknown vertex kind 'hostbridge'"},
      {edited("\"kind\": \"pcie\"", "\"kind\": \"pcix\""), errc::invalid_argument,
       "vertices[3].uplink.kind: unknown link kind 'pcix'"},
      {edited("\"kind\": \"machine\"", "\"kind\": \"package\""), errc::invalid_argument,
       "vertices[0].kind: the root (vertex 0) must be a machine"},
      {edited("\"name\": \"GPU1\", ", ""), errc::invalid_argument,
       "vertices[4].name: missing required member"},
      {edited("\"name\": \"GPU1\"", "\"name\": 7"), errc::invalid_argument,
       "vertices[4].name: expected a string, got an integer"},
      {edited("\"id\": 3", "\"id\": 4"), errc::invalid_argument,
       "vertices[3].id: is 4, but ids must equal positions (3)"},
      {edited("\"bandwidth_mb_s\": 31504}}", "\"bandwidth_mb_s\": -5}}"), errc::out_of_range,
       "vertices[3].uplink.bandwidth_mb_s: -5 is below the minimum 0"},
      {edited("\"bandwidth_mb_s\": 100000", "\"bandwidth_mb_s\": -1"), errc::out_of_range,
       "links[0].bandwidth_mb_s: -1 is below the minimum 0"},
      {edited("\"count\": 4", "\"count\": 0"), errc::out_of_range,
       "links[0].count: 0 is below the minimum 1"},
      {edited("\"width\": 16", "\"width\": 256"), errc::out_of_range,
       "vertices[3].uplink.width: 256 is above the maximum 255"},
      {edited("\"b\": 4", "\"b\": 5"), errc::not_found, "links[0].b: vertex 5 does not exist"},
      {edited("\"a\": 3", "\"a\": \"GPU0\""), errc::invalid_argument,
       "links[0].a: expected an integer, got a string"},
      {edited("\"model\": \"A100-SXM4-80GB\"", "\"model\": \"A100 SXM4\""), errc::invalid_argument,
       "vertices[3].model: "},
      {edited("\"index\": 1,", "\"index\": 1, \"numa\": -2,"), errc::out_of_range,
       "vertices[4].numa: -2 is below the minimum -1"},
      {edited("\"index\": 1,", "\"index\": 1, \"colour\": \"red\","), errc::invalid_argument,
       "vertices[4].colour: unknown member"},
      {edited("\"width\": 0, \"bandwidth_mb_s\": 0}",
              "\"width\": 0, \"bandwidth_mb_s\": 0, \"x\": 1}"),
       errc::invalid_argument, "vertices[1].uplink.x: unknown member"},
      {edited("\"index\": 1,\n     \"uplink\": {\"kind\": \"pcie\", \"generation\": 4, "
              "\"width\": 16, \"bandwidth_mb_s\": 31504}}",
              "\"index\": 1}"),
       errc::invalid_argument, "vertices[4].uplink: missing required member"},
      {edited("\"index\": -1}", "\"index\": -1, \"uplink\": {\"kind\": \"internal\"}}"),
       errc::invalid_argument, "vertices[0].uplink: the root (vertex 0) has no uplink"},
      {edited("\"uplink\": {\"kind\": \"internal\"}", "\"uplink\": []"), errc::invalid_argument,
       "vertices[2].uplink: expected an object, got an array"},
      {edited("\"links\": [", "\"links\": [1, "), errc::invalid_argument,
       "links[0]: expected an object, got an integer"},
      {edited("\"vertices\": [", "\"vertices\": [1, "), errc::invalid_argument,
       "vertices[0]: expected an object, got an integer"},
      // Builder errors come through unchanged.
      {edited("\"GPU1\"", "\"GPU0\""), errc::already_exists, "vertex name 'GPU0' is used twice"},
      {edited("\"kind\": \"nvlink\"", "\"kind\": \"ethernet\""), errc::invalid_argument,
       "network link"},
  };
  for (const auto& c : cases) {
    auto topo = import_topology_json(c.text);
    EXPECT_THAT(topo, HasErrc(c.code)) << c.message;
    EXPECT_THAT(topo, ErrorContains(c.message));
  }
}

TEST(TopologyJson, AcceptsTheMinimalDocumentAndIgnoresViews) {
  EXPECT_THAT(import_topology_json(minimal_document), IsOk());
  // Views are derived: whatever they say is ignored as long as they are an object.
  auto with_views =
      import_topology_json(edited("\"links\"", "\"views\": {\"gpus\": 7}, \"links\""));
  ASSERT_THAT(with_views, IsOk());
  EXPECT_EQ(with_views->views().relation(0, 1).token(), "NV4");
  // "links" may be omitted when there are no extra links.
  EXPECT_THAT(import_topology_json(edited(R"(,
  "links": [{"a": 3, "b": 4, "kind": "nvlink", "count": 4, "generation": 3, "width": 0,
             "bandwidth_mb_s": 100000}])",
                                          "")),
              IsOk());
}

}  // namespace
}  // namespace hetsched
