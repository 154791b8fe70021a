/* SPDX-License-Identifier: MIT */
/* C API tests: clusters from real topology files (../shared/data/topologies) and from topology
 * JSON text; the importers behind hs_cluster_from_topology_text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "c_test.h"

#ifndef HETSCHED_SHARED_DIR
#  define HETSCHED_SHARED_DIR "../shared"
#endif

/* Returns the contents of `relative` under the shared data dir (caller frees), or NULL. */
static char* read_file(const char* relative, size_t* length) {
  char path[1024];
  FILE* f = NULL;
  char* text = NULL;
  long size = 0;
  snprintf(path, sizeof path, "%s/data/topologies/%s", HETSCHED_SHARED_DIR, relative);
  f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "cannot open %s\n", path);
    return NULL;
  }
  if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
  rewind(f);
  if (size > 0) text = (char*)malloc((size_t)size);
  if (text != NULL) *length = fread(text, 1, (size_t)size, f);
  fclose(f);
  return text;
}

static void test_nccl_xml(void) {
  size_t length = 0;
  char* text = read_file("nccl-topo-xml/azure-ndv4-topo.xml", &length);
  hs_cluster_options_t o;
  hs_cluster_t* c = NULL;
  const char* s = NULL;
  CHECK(text != NULL);
  if (text == NULL) return;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.node_count = 2;
  o.name_prefix = "ndv4";
  o.gpu_model = "A100-SXM4-40GB";
  CHECK_OK(hs_cluster_from_topology_text(text, length, &o, &c));
  /* Azure NDv4: 8 A100 per VM */
  CHECK(hs_cluster_node_count(c) == 2);
  CHECK(hs_cluster_gpu_count(c) == 16);
  CHECK_OK(hs_cluster_node_name(c, 1, &s));
  CHECK_STR(s, "ndv4-1");
  CHECK_OK(hs_cluster_gpu_type(c, 0, 5, &s));
  CHECK_STR(s, "A100-SXM4-40GB");
  hs_cluster_free(c);
  /* the same text cut in the middle of an element is malformed */
  c = NULL;
  CHECK_STATUS(HS_PARSE_ERROR, hs_cluster_from_topology_text(text, length / 2, &o, &c));
  CHECK(c == NULL);
  free(text);
}

static void test_nvidia_smi_file(void) {
  size_t length = 0;
  char* text = read_file("nvidia-smi-topo/hgx-h100-sxm_nccl-issue1264.txt", &length);
  hs_cluster_t* c = NULL;
  hs_packer_t* p = NULL;
  hs_decision_t* d = NULL;
  hs_gang_t g;
  hs_cluster_options_t o;
  CHECK(text != NULL);
  if (text == NULL) return;
  /* the published matrix lacks the NIC rows: refused unless partial matrices are allowed */
  CHECK_STATUS(HS_PARSE_ERROR, hs_cluster_from_topology_text(text, length, NULL, &c));
  CHECK_CONTAINS(hs_last_error(), "allow_partial");
  CHECK(c == NULL);
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.allow_partial = 1;
  CHECK_OK(hs_cluster_from_topology_text(text, length, &o, &c));
  /* one HGX H100 node: 8 GPUs */
  CHECK(hs_cluster_node_count(c) == 1);
  CHECK(hs_cluster_gpu_count(c) == 8);
  /* the packer works on an imported node too: 8 GPUs on the one node */
  CHECK_OK(hs_packer_new(c, &p));
  memset(&g, 0, sizeof g);
  g.struct_size = sizeof g;
  g.job_id = 1;
  g.tasks = 1;
  g.gpus_per_task = 8;
  CHECK_OK(hs_packer_place(p, &g, &d));
  CHECK(hs_decision_bind_count(d) == 1);
  hs_decision_free(d);
  hs_packer_free(p);
  hs_cluster_free(c);
  free(text);
}

static void test_hwloc_is_unsupported(void) {
  size_t length = 0;
  char* text = read_file("hwloc/nvidiaDGX2.xml", &length);
  hs_cluster_t* c = NULL;
  CHECK(text != NULL);
  if (text == NULL) return;
  CHECK_STATUS(HS_UNSUPPORTED, hs_cluster_from_topology_text(text, length, NULL, &c));
  CHECK_CONTAINS(hs_last_error(), "hwloc");
  free(text);
}

static void test_json(void) {
  static const char json[] =
      "{\"format\": \"hetsched-node-topology\", \"version\": 1, \"name\": \"tiny\",\n"
      " \"vertices\": [\n"
      "  {\"id\": 0, \"kind\": \"machine\", \"name\": \"tiny\", \"parent\": null, \"index\": -1},\n"
      "  {\"id\": 1, \"kind\": \"gpu\", \"name\": \"GPU0\", \"parent\": 0, \"index\": 0,\n"
      "   \"model\": \"L4\", \"uplink\": {\"kind\": \"pcie\", \"count\": 1, \"generation\": 4,\n"
      "   \"width\": 16, \"bandwidth_mb_s\": 31504}},\n"
      "  {\"id\": 2, \"kind\": \"gpu\", \"name\": \"GPU1\", \"parent\": 0, \"index\": 1,\n"
      "   \"model\": \"L4\", \"uplink\": {\"kind\": \"pcie\", \"count\": 1, \"generation\": 4,\n"
      "   \"width\": 16, \"bandwidth_mb_s\": 31504}}],\n"
      " \"links\": [], \"views\": {}}\n";
  static const char bad_kind[] =
      "{\"format\": \"hetsched-node-topology\", \"version\": 1, \"name\": \"tiny\",\n"
      " \"vertices\": [{\"id\": 0, \"kind\": \"toaster\", \"name\": \"tiny\", \"parent\": null,\n"
      " \"index\": -1}], \"links\": [], \"views\": {}}\n";
  hs_cluster_options_t o;
  hs_cluster_t* c = NULL;
  const char* s = NULL;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.node_count = 3;
  CHECK_OK(hs_cluster_from_topology_text(json, strlen(json), &o, &c));
  /* 3 nodes named after the topology, 2 L4 GPUs each */
  CHECK(hs_cluster_gpu_count(c) == 6);
  CHECK_OK(hs_cluster_node_name(c, 2, &s));
  CHECK_STR(s, "tiny-2");
  CHECK_OK(hs_cluster_gpu_type(c, 2, 1, &s));
  CHECK_STR(s, "L4");
  hs_cluster_free(c);
  c = NULL;
  CHECK_STATUS(HS_PARSE_ERROR, hs_cluster_from_topology_text(bad_kind, strlen(bad_kind), &o, &c));
  CHECK_CONTAINS(hs_last_error(), "toaster");
  CHECK(c == NULL);
}

int main(void) {
  RUN(test_nccl_xml);
  RUN(test_nvidia_smi_file);
  RUN(test_hwloc_is_unsupported);
  RUN(test_json);
  return TEST_RESULT();
}
