/* SPDX-License-Identifier: MIT */
/* C API tests: errors, version, clusters from templates, built-in clusters and topology text. */
#include <stdint.h>
#include <string.h>

#include "c_test.h"

static void test_version_and_status_names(void) {
  CHECK(hs_api_version() == HS_API_VERSION);
  CHECK(strlen(hs_version()) >= 5); /* "0.1.0" */
  CHECK_STR(hs_status_name(HS_NOT_FOUND), "HS_NOT_FOUND");
  CHECK_STR(hs_status_name(HS_PARSE_ERROR), "HS_PARSE_ERROR");
  CHECK_STR(hs_defer_reason_name(HS_DEFER_FRAGMENTED), "fragmented");
}

static void test_template_cluster(void) {
  hs_cluster_options_t o;
  hs_cluster_t* c = NULL;
  const char* s = NULL;
  uint32_t n = 0;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.node_count = 4;
  o.nodes_per_rack = 2;
  o.name_prefix = "a100";
  CHECK_OK(hs_cluster_from_template("dgx-a100", &o, &c));
  CHECK(hs_last_error()[0] == '\0');
  /* 4 DGX A100 nodes of 8 A100-SXM4-80GB each */
  CHECK(hs_cluster_node_count(c) == 4);
  CHECK(hs_cluster_gpu_count(c) == 32);
  CHECK_OK(hs_cluster_node_name(c, 2, &s));
  CHECK_STR(s, "a100-2");
  CHECK_OK(hs_cluster_node_gpu_count(c, 3, &n));
  CHECK(n == 8);
  CHECK_OK(hs_cluster_gpu_type(c, 1, 7, &s));
  CHECK_STR(s, "A100-SXM4-80GB");
  CHECK_OK(hs_cluster_find_node(c, "a100-3", &n));
  CHECK(n == 3);
  /* out of range and unknown names fail and leave *out alone */
  n = 42;
  CHECK_STATUS(HS_OUT_OF_RANGE, hs_cluster_node_gpu_count(c, 4, &n));
  CHECK(n == 42);
  CHECK_CONTAINS(hs_last_error(), "node index 4");
  CHECK_STATUS(HS_OUT_OF_RANGE, hs_cluster_gpu_type(c, 0, 8, &s));
  CHECK_STATUS(HS_NOT_FOUND, hs_cluster_find_node(c, "nope-9", &n));
  CHECK_CONTAINS(hs_last_error(), "nope-9");
  CHECK(n == 42);
  hs_cluster_free(c);
}

static void test_template_errors(void) {
  hs_cluster_t* c = NULL;
  hs_cluster_options_t o;
  CHECK_STATUS(HS_NOT_FOUND, hs_cluster_from_template("dgx-9000", NULL, &c));
  CHECK_CONTAINS(hs_last_error(), "dgx-9000");
  CHECK_CONTAINS(hs_last_error(), "hgx-h100");
  CHECK(c == NULL);
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_cluster_from_template(NULL, NULL, &c));
  CHECK_CONTAINS(hs_last_error(), "template_name");
  CHECK_CONTAINS(hs_last_error(), "hs_cluster_from_template");
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_cluster_from_template("dgx2", NULL, NULL));
  CHECK_CONTAINS(hs_last_error(), "'out'");
  memset(&o, 0, sizeof o);
  o.struct_size = 4; /* too small for this version */
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_cluster_from_template("dgx2", &o, &c));
  CHECK_CONTAINS(hs_last_error(), "struct_size");
  CHECK(c == NULL);
  /* a NULL handle counts as empty */
  CHECK(hs_cluster_node_count(NULL) == 0);
  hs_cluster_free(NULL);
}

static void test_builtin_cluster(void) {
  hs_cluster_t* c = NULL;
  const char* s = NULL;
  CHECK_OK(hs_cluster_builtin("demo", &c));
  /* demo: 4 DGX A100 + 2 HGX H100 (8 GPUs) + 2 DGX-2 (16 GPUs) = 8 nodes, 80 GPUs */
  CHECK(hs_cluster_node_count(c) == 8);
  CHECK(hs_cluster_gpu_count(c) == 80);
  CHECK_OK(hs_cluster_gpu_type(c, 4, 0, &s));
  CHECK_STR(s, "H100-SXM5-80GB");
  CHECK_OK(hs_cluster_gpu_type(c, 7, 15, &s));
  CHECK_STR(s, "V100-SXM3-32GB");
  hs_cluster_free(c);
  CHECK_STATUS(HS_NOT_FOUND, hs_cluster_builtin("moon-base", &c));
  CHECK_CONTAINS(hs_last_error(), "moon-base");
}

static const char topo_text[] =
    "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\n"
    "GPU0\t X \tNV4\tPIX\tSYS\t0-15\t0\n"
    "GPU1\tNV4\t X \tSYS\tPIX\t16-31\t1\n"
    "GPU2\tPIX\tSYS\t X \tNV4\t0-15\t0\n"
    "GPU3\tSYS\tPIX\tNV4\t X \t16-31\t1\n";

static void test_topology_text(void) {
  hs_cluster_options_t o;
  hs_cluster_t* c = NULL;
  const char* s = NULL;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.node_count = 3;
  o.name_prefix = "box";
  o.gpu_model = "A40";
  CHECK_OK(hs_cluster_from_topology_text(topo_text, strlen(topo_text), &o, &c));
  /* 3 nodes of the 4-GPU matrix */
  CHECK(hs_cluster_node_count(c) == 3);
  CHECK(hs_cluster_gpu_count(c) == 12);
  CHECK_OK(hs_cluster_node_name(c, 1, &s));
  CHECK_STR(s, "box-1");
  CHECK_OK(hs_cluster_gpu_type(c, 2, 3, &s));
  CHECK_STR(s, "A40");
  hs_cluster_free(c);
}

static void test_topology_text_errors(void) {
  static const char ragged[] = "\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV4\n";
  static const char bogus[] = "\tGPU0\tGPU1\nGPU0\t X \tWARP9\nGPU1\tWARP9\t X \n";
  static const char hwloc[] = "<?xml version=\"1.0\"?>\n<topology version=\"2.0\"></topology>\n";
  static const char json[] = "{\"format\": \"hetsched-node-topology\", \"version\": 99}";
  hs_cluster_t* c = NULL;
  CHECK_STATUS(HS_PARSE_ERROR, hs_cluster_from_topology_text(ragged, strlen(ragged), NULL, &c));
  CHECK_STATUS(HS_PARSE_ERROR, hs_cluster_from_topology_text(bogus, strlen(bogus), NULL, &c));
  CHECK_CONTAINS(hs_last_error(), "WARP9");
  CHECK_STATUS(HS_PARSE_ERROR, hs_cluster_from_topology_text("hello", 5, NULL, &c));
  CHECK_STATUS(HS_PARSE_ERROR, hs_cluster_from_topology_text(json, strlen(json), NULL, &c));
  CHECK_STATUS(HS_UNSUPPORTED, hs_cluster_from_topology_text(hwloc, strlen(hwloc), NULL, &c));
  CHECK(c == NULL);
  /* a successful call clears the last error */
  CHECK_OK(hs_cluster_builtin("demo", &c));
  CHECK_STR(hs_last_error(), "");
  hs_cluster_free(c);
}

int main(void) {
  RUN(test_version_and_status_names);
  RUN(test_template_cluster);
  RUN(test_template_errors);
  RUN(test_builtin_cluster);
  RUN(test_topology_text);
  RUN(test_topology_text_errors);
  return TEST_RESULT();
}
