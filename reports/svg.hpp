// reports/svg.hpp: a small writer of inline SVG charts (shapes, text, axes) with every string escaped.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace reports {

/// Escapes text for HTML/SVG content and attribute values: & < > " ' become entities (OWASP XSS Prevention Cheat
/// Sheet, rule #1 and #2). Control characters other than tab and newline become spaces.
std::string html_escape(std::string_view s);
/// Appends the entity of a markup character (& < > " and ', the apostrophe as `apos`: "&#39;" for HTML, "&apos;"
/// for XML) and returns true; returns false and appends nothing for any other character. Shared by html_escape and
/// reports::xml_escape, which differ only in the apostrophe and in what they do with other characters.
bool append_markup_entity(std::string& out, char c, std::string_view apos);

/// A number for SVG coordinates: fixed-point with `digits` decimals, "-0" written as "0", non-finite as "0".
std::string svg_num(double v, int digits = 1);

/// Text for an axis tick or a label: up to 3 significant digits ("0.25", "12.5", "187", "1.2k", "3.4M").
std::string short_num(double v);

/// A linear map from data to pixels.
struct Scale {
  double d0 = 0, d1 = 1;  // data domain
  double p0 = 0, p1 = 1;  // pixel range
  double operator()(double v) const { return d1 == d0 ? p0 : p0 + (v - d0) * (p1 - p0) / (d1 - d0); }
};

/// "Nice" tick values covering [lo, hi] with about `count` steps of 1, 2 or 5 x 10^k (Heckbert, "Nice numbers for
/// graph labels", Graphics Gems, 1990).
std::vector<double> nice_ticks(double lo, double hi, int count);
/// The axis labels of `ticks`: short_num's, with the decimals their spacing needs where two would read the same.
std::vector<std::string> tick_labels(const std::vector<double>& ticks);

/// One chart: an <svg> element with a stable id and data-chart attribute, a viewBox (so it scales to the page width),
/// an accessible title, and shapes appended in drawing order. Coordinates are in viewBox pixels.
class Svg {
 public:
  Svg(std::string id, int width, int height, std::string title);

  void rect(double x, double y, double w, double h, std::string_view fill, std::string_view tooltip = {},
            std::string_view cls = {});
  void line(double x1, double y1, double x2, double y2, std::string_view stroke, double width = 1,
            std::string_view dash = {});
  /// A polyline through (x, y) pixel pairs.
  void polyline(const std::vector<std::pair<double, double>>& pts, std::string_view stroke, double width = 2);
  void circle(double cx, double cy, double r, std::string_view fill, std::string_view tooltip = {});
  /// A downward triangle marker centred on (cx, cy).
  void marker(double cx, double cy, double size, std::string_view fill, std::string_view tooltip = {});
  enum class Anchor { Start, Middle, End };
  void text(double x, double y, std::string_view s, Anchor a = Anchor::Start, double size = 12,
            std::string_view fill = "#333", bool bold = false, double rotate = 0);
  /// A legend row of coloured squares and labels starting at (x, y); returns the x after the last entry.
  double legend(double x, double y, const std::vector<std::pair<std::string, std::string>>& label_colour);
  /// Horizontal axis at pixel y with ticks and labels from `s` (data ticks `ticks`), and an optional title.
  void x_axis(const Scale& s, double y, const std::vector<double>& ticks, std::string_view title = {},
              std::string_view unit = {});
  /// Vertical axis at pixel x with grid lines to x_end.
  void y_axis(const Scale& s, double x, double x_end, const std::vector<double>& ticks, std::string_view title = {},
              std::string_view unit = {});

  int width() const { return width_; }
  int height() const { return height_; }
  std::string str() const;

 private:
  std::string id_;
  int width_, height_;
  std::string title_;
  std::string body_;
};

}  // namespace reports
