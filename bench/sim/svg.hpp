// SPDX-License-Identifier: MIT
// A small line-plot renderer writing standalone SVG (no display, no dependencies).
#pragma once

#include <span>
#include <string>
#include <utility>
#include <vector>

namespace hetsched::simcli {

/// One line of a plot.
struct plot_line {
  std::string label;
  std::vector<std::pair<double, double>> points;  ///< (x, y), x ascending.
  bool dashed = false;
};

/// Axes and titles of a plot.
struct plot_spec {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_x = false;  ///< Logarithmic x axis (x <= 0 points are dropped).
};

/// Returns an SVG document plotting `lines` (at most ~2000 points per line are drawn).
[[nodiscard]] std::string render_svg(const plot_spec& spec, std::span<const plot_line> lines);

}  // namespace hetsched::simcli
