// SPDX-License-Identifier: MIT
// The umbrella header names every public header of the core (hwloc_import.hpp excepted).
#include <gtest/gtest.h>

#include <string>

#include <hetsched/hetsched.hpp>

TEST(Umbrella, ExposesTheVersionAndTheModel) {
  EXPECT_EQ(std::string(hetsched::version()), "0.1.0");
  EXPECT_EQ(HETSCHED_VERSION, 100);
  const auto topo = hetsched::make_node_template(hetsched::node_template::dgx_a100);
  ASSERT_TRUE(topo.has_value());
  EXPECT_EQ(hetsched::to_node_spec(*topo, "n").devices.size(), 8u);
}
