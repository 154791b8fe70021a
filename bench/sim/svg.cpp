// SPDX-License-Identifier: MIT
// SVG line plots.
#include "svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace hetsched::simcli {
namespace {

constexpr const char* palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '&') {
      out += "&amp;";
    } else {
      out += c;
    }
  }
  return out;
}

std::string tick_label(double v) {
  const double a = std::fabs(v);
  if (a >= 1e6) return fmt::format("{:.3g}M", v / 1e6);
  if (a >= 1e4) return fmt::format("{:.3g}k", v / 1e3);
  return fmt::format("{:.3g}", v);
}

}  // namespace

std::string render_svg(const plot_spec& spec, std::span<const plot_line> lines) {
  constexpr double width = 820;
  constexpr double height = 480;
  constexpr double left = 80;
  constexpr double right = 200;
  constexpr double top = 40;
  constexpr double bottom = 60;
  const double pw = width - left - right;
  const double ph = height - top - bottom;
  double x0 = std::numeric_limits<double>::max();
  double x1 = std::numeric_limits<double>::lowest();
  double y0 = 0;
  double y1 = std::numeric_limits<double>::lowest();
  const auto tx = [&](double x) { return spec.log_x ? std::log10(x) : x; };
  for (const plot_line& l : lines) {
    for (const auto& [x, y] : l.points) {
      if (spec.log_x && x <= 0) continue;
      x0 = std::min(x0, tx(x));
      x1 = std::max(x1, tx(x));
      y0 = std::min(y0, y);
      y1 = std::max(y1, y);
    }
  }
  if (x0 > x1) {
    x0 = 0;
    x1 = 1;
  }
  if (x1 - x0 < 1e-12) x1 = x0 + 1;
  if (y1 <= y0) y1 = y0 + 1;
  y1 *= 1.05;
  const auto px = [&](double x) { return left + (tx(x) - x0) / (x1 - x0) * pw; };
  const auto py = [&](double y) { return top + ph - (y - y0) / (y1 - y0) * ph; };

  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n",
      width, height);
  s += fmt::format("<text x=\"{}\" y=\"22\" font-size=\"15\" text-anchor=\"middle\">{}</text>\n",
                   left + pw / 2, escape(spec.title));
  s += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\"/>\n", left,
      top, pw, ph);
  for (int i = 0; i <= 5; ++i) {
    const double fy = y0 + (y1 - y0) * i / 5.0;
    const double yy = py(fy);
    s += fmt::format(
        "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n<text x=\"{}\" "
        "y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
        left, yy, left + pw, yy, left - 6, yy + 4, tick_label(fy));
    const double fx = x0 + (x1 - x0) * i / 5.0;
    const double xx = left + (fx - x0) / (x1 - x0) * pw;
    const double shown = spec.log_x ? std::pow(10.0, fx) : fx;
    s += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#ddd\"/>\n<text "
        "x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
        xx, top, xx, top + ph, xx, top + ph + 16, tick_label(shown));
  }
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", left + pw / 2,
                   height - 18, escape(spec.x_label + (spec.log_x ? " (log scale)" : "")));
  s += fmt::format(
      "<text x=\"18\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {})\">{}</text>\n",
      top + ph / 2, top + ph / 2, escape(spec.y_label));
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const plot_line& l = lines[i];
    const char* color = palette[i % std::size(palette)];
    const std::size_t stride = std::max<std::size_t>(1, l.points.size() / 2000);
    std::string pts;
    for (std::size_t k = 0; k < l.points.size(); k += stride) {
      const auto& [x, y] = l.points[k];
      if (spec.log_x && x <= 0) continue;
      pts += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
    }
    if (!l.points.empty() && (l.points.size() - 1) % stride != 0) {
      const auto& [x, y] = l.points.back();
      if (!spec.log_x || x > 0) pts += fmt::format("{:.1f},{:.1f}", px(x), py(y));
    }
    s += fmt::format(
        "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\"{} points=\"{}\"/>\n", color,
        l.dashed ? " stroke-dasharray=\"6,4\"" : "", pts);
    const double ly = top + 14 + 18 * static_cast<double>(i);
    s += fmt::format(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\"{}/>\n"
        "<text x=\"{}\" y=\"{}\">{}</text>\n",
        left + pw + 12, ly, left + pw + 36, ly, color, l.dashed ? " stroke-dasharray=\"6,4\"" : "",
        left + pw + 42, ly + 4, escape(l.label));
  }
  s += "</svg>\n";
  return s;
}

}  // namespace hetsched::simcli
