// reports/svg.cpp: inline SVG writer.
#include "reports/svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace reports {

bool append_markup_entity(std::string& out, char c, std::string_view apos) {
  switch (c) {
    case '&':
      out += "&amp;";
      return true;
    case '<':
      out += "&lt;";
      return true;
    case '>':
      out += "&gt;";
      return true;
    case '"':
      out += "&quot;";
      return true;
    case '\'':
      out += apos;
      return true;
    default:
      return false;
  }
}

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 16);
  for (char c : s)
    if (!append_markup_entity(out, c, "&#39;"))
      out += (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') ? ' ' : c;
  return out;
}

std::string svg_num(double v, int digits) {
  if (!std::isfinite(v)) return "0";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  std::string s = buf;
  // "-0.0" and "-0" print as "0": identical output for values that differ only by the sign of zero.
  bool all_zero = true;
  for (char c : s)
    if (c != '-' && c != '0' && c != '.') all_zero = false;
  if (all_zero) s = digits > 0 ? "0." + std::string(static_cast<std::size_t>(digits), '0') : "0";
  return s;
}

std::string short_num(double v) {
  if (!std::isfinite(v)) return v > 0 ? "inf" : "n/a";
  const double a = std::fabs(v);
  char buf[64];
  auto with = [&](double x, const char* suffix) {
    const double ax = std::fabs(x);
    const int digits = ax >= 100 ? 0 : ax >= 10 ? 1 : 2;
    std::snprintf(buf, sizeof buf, "%.*f", digits, x);
    std::string s = buf;
    // Drop trailing zeros of a fraction: "2.50" -> "2.5", "3.00" -> "3".
    if (s.find('.') != std::string::npos) {
      while (s.back() == '0')
        s.pop_back();
      if (s.back() == '.') s.pop_back();
    }
    if (s == "-0") s = "0";
    return s + suffix;
  };
  if (a >= 1e9) return with(v / 1e9, "G");
  if (a >= 1e6) return with(v / 1e6, "M");
  if (a >= 1e4) return with(v / 1e3, "k");
  return with(v, "");
}

std::vector<double> nice_ticks(double lo, double hi, int count) {
  std::vector<double> out;
  if (!std::isfinite(lo) || !std::isfinite(hi) || count < 1) return out;
  if (hi <= lo) return {lo};
  const double raw = (hi - lo) / count;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  const double step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
  const double first = std::ceil(lo / step - 1e-9) * step;
  for (int i = 0; i < 1000; ++i) {
    const double t = first + i * step;
    if (t > hi + step * 1e-9) break;
    out.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
  }
  return out;
}

Svg::Svg(std::string id, int width, int height, std::string title)
    : id_(std::move(id)), width_(width), height_(height), title_(std::move(title)) {}

namespace {

std::string tooltip_of(std::string_view tooltip) {
  return tooltip.empty() ? std::string() : "<title>" + html_escape(tooltip) + "</title>";
}

}  // namespace

void Svg::rect(double x, double y, double w, double h, std::string_view fill, std::string_view tooltip,
               std::string_view cls) {
  if (w < 0) {
    x += w;
    w = -w;
  }
  body_ += "<rect x=\"" + svg_num(x) + "\" y=\"" + svg_num(y) + "\" width=\"" + svg_num(w, 2) + "\" height=\"" +
           svg_num(h) + "\" fill=\"" + html_escape(fill) + "\"";
  if (!cls.empty()) body_ += " class=\"" + html_escape(cls) + "\"";
  body_ += tooltip.empty() ? "/>" : ">" + tooltip_of(tooltip) + "</rect>";
}

void Svg::line(double x1, double y1, double x2, double y2, std::string_view stroke, double width,
               std::string_view dash) {
  body_ += "<line x1=\"" + svg_num(x1) + "\" y1=\"" + svg_num(y1) + "\" x2=\"" + svg_num(x2) + "\" y2=\"" +
           svg_num(y2) + "\" stroke=\"" + html_escape(stroke) + "\" stroke-width=\"" + svg_num(width) + "\"";
  if (!dash.empty()) body_ += " stroke-dasharray=\"" + html_escape(dash) + "\"";
  body_ += "/>";
}

void Svg::polyline(const std::vector<std::pair<double, double>>& pts, std::string_view stroke, double width) {
  if (pts.empty()) return;
  body_ += "<polyline fill=\"none\" stroke=\"" + html_escape(stroke) + "\" stroke-width=\"" + svg_num(width) +
           "\" stroke-linejoin=\"round\" points=\"";
  for (std::size_t i = 0; i < pts.size(); ++i) {
    if (i > 0) body_ += ' ';
    body_ += svg_num(pts[i].first) + "," + svg_num(pts[i].second);
  }
  body_ += "\"/>";
}

void Svg::circle(double cx, double cy, double r, std::string_view fill, std::string_view tooltip) {
  body_ += "<circle cx=\"" + svg_num(cx) + "\" cy=\"" + svg_num(cy) + "\" r=\"" + svg_num(r) + "\" fill=\"" +
           html_escape(fill) + "\"";
  body_ += tooltip.empty() ? "/>" : ">" + tooltip_of(tooltip) + "</circle>";
}

void Svg::marker(double cx, double cy, double size, std::string_view fill, std::string_view tooltip) {
  const double h = size / 2;
  body_ += "<path d=\"M" + svg_num(cx - h) + " " + svg_num(cy - h) + "L" + svg_num(cx + h) + " " + svg_num(cy - h) +
           "L" + svg_num(cx) + " " + svg_num(cy + h) + "Z\" fill=\"" + html_escape(fill) + "\"";
  body_ += tooltip.empty() ? "/>" : ">" + tooltip_of(tooltip) + "</path>";
}

void Svg::text(double x, double y, std::string_view s, Anchor a, double size, std::string_view fill, bool bold,
               double rotate) {
  body_ += "<text x=\"" + svg_num(x) + "\" y=\"" + svg_num(y) + "\" font-size=\"" + svg_num(size) + "\" fill=\"" +
           html_escape(fill) + "\"";
  if (a == Anchor::Middle) body_ += " text-anchor=\"middle\"";
  if (a == Anchor::End) body_ += " text-anchor=\"end\"";
  if (bold) body_ += " font-weight=\"600\"";
  if (rotate != 0) body_ += " transform=\"rotate(" + svg_num(rotate) + " " + svg_num(x) + " " + svg_num(y) + ")\"";
  body_ += ">" + html_escape(s) + "</text>";
}

double Svg::legend(double x, double y, const std::vector<std::pair<std::string, std::string>>& label_colour) {
  for (const auto& [label, colour] : label_colour) {
    rect(x, y - 9, 10, 10, colour);
    text(x + 14, y, label, Anchor::Start, 11, "#444");
    // Approximate advance of an 11 px sans-serif label (0.6 em per character) plus spacing.
    x += 14 + 6.2 * static_cast<double>(label.size()) + 16;
  }
  return x;
}

/// Tick labels, with as many decimals as the spacing needs where short_num's rounding would repeat a label (a user
/// trial: days ticks of 113, 113.5, 114, 114.5 read "113 | 114 | 114 | 114").
std::vector<std::string> tick_labels(const std::vector<double>& ticks) {
  std::vector<std::string> out;
  for (double t : ticks)
    out.push_back(short_num(t));
  bool repeats = false;
  for (std::size_t i = 1; i < out.size(); ++i)
    repeats = repeats || out[i] == out[i - 1];
  if (!repeats || ticks.size() < 2) return out;
  const double step = std::fabs(ticks[1] - ticks[0]);
  const int digits = step > 0 ? std::clamp(static_cast<int>(std::ceil(-std::log10(step) - 1e-9)), 1, 6) : 1;
  char buf[64];
  for (std::size_t i = 0; i < ticks.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%.*f", digits, ticks[i]);
    out[i] = buf;
  }
  return out;
}

void Svg::x_axis(const Scale& s, double y, const std::vector<double>& ticks, std::string_view title,
                 std::string_view unit) {
  line(s.p0, y, s.p1, y, "#888", 1);
  const auto labels = tick_labels(ticks);
  for (std::size_t i = 0; i < ticks.size(); ++i) {
    const double x = s(ticks[i]);
    line(x, y, x, y + 4, "#888", 1);
    text(x, y + 16, labels[i] + std::string(unit), Anchor::Middle, 11, "#555");
  }
  if (!title.empty()) text((s.p0 + s.p1) / 2, y + 32, title, Anchor::Middle, 11, "#555");
}

void Svg::y_axis(const Scale& s, double x, double x_end, const std::vector<double>& ticks, std::string_view title,
                 std::string_view unit) {
  const auto labels = tick_labels(ticks);
  for (std::size_t i = 0; i < ticks.size(); ++i) {
    const double y = s(ticks[i]);
    line(x, y, x_end, y, "#e6e6e6", 1);
    text(x - 6, y + 4, labels[i] + std::string(unit), Anchor::End, 11, "#555");
  }
  line(x, s.p0, x, s.p1, "#888", 1);
  if (!title.empty()) text(x - 44, (s.p0 + s.p1) / 2, title, Anchor::Middle, 11, "#555", false, -90);
}

std::string Svg::str() const {
  const std::string w = std::to_string(width_), h = std::to_string(height_);
  return "<svg id=\"" + html_escape(id_) + "\" data-chart=\"" + html_escape(id_) + "\" viewBox=\"0 0 " + w + " " + h +
         "\" width=\"" + w + "\" height=\"" + h + "\" role=\"img\" aria-labelledby=\"" + html_escape(id_) +
         "-title\"><title id=\"" + html_escape(id_) + "-title\">" + html_escape(title_) + "</title>" + body_ + "</svg>";
}

}  // namespace reports
