// reports/junit.cpp: JUnit XML writer (schema as read by GitHub Actions test reporters, GitLab CI and Jenkins:
// testsuites > testsuite > testcase with failure/error/skipped children).
#include "reports/junit.hpp"

#include "reports/svg.hpp"

#include <cstdint>
#include <cstdio>

namespace reports {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

/// Length of the valid UTF-8 sequence at s[i] (1-4), or 0 when it is not valid UTF-8.
std::size_t utf8_length(std::string_view s, std::size_t i, std::uint32_t& cp) {
  const auto b = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;
  if (b < 0x80) {
    cp = b;
    return 1;
  }
  if ((b & 0xE0) == 0xC0) {
    n = 2;
    cp = b & 0x1F;
  } else if ((b & 0xF0) == 0xE0) {
    n = 3;
    cp = b & 0x0F;
  } else if ((b & 0xF8) == 0xF0) {
    n = 4;
    cp = b & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (c & 0x3F);
  }
  const bool overlong = (n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
  if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    std::uint32_t cp = 0;
    const std::size_t n = utf8_length(text, i, cp);
    if (n == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    // XML 1.0 Char: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]
    const bool allowed = cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
                         (cp >= 0xE000 && cp <= 0xFFFD) || cp >= 0x10000;
    if (!allowed) {
      out += kReplacement;
    } else if (n > 1) {
      out.append(text.substr(i, n));
    } else if (!append_markup_entity(out, text[i], "&apos;")) {
      out += text[i];
    }
    i += n;
  }
  return out;
}

std::string junit_xml(const std::vector<JUnitSuite>& suites, std::string_view name) {
  using Status = JUnitCase::Status;
  auto count = [](const std::vector<JUnitCase>& cases, Status s) {
    int n = 0;
    for (const auto& c : cases)
      n += c.status == s ? 1 : 0;
    return n;
  };
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  double time = 0;
  for (const auto& s : suites) {
    tests += static_cast<int>(s.cases.size());
    failures += count(s.cases, Status::Failed);
    errors += count(s.cases, Status::Error);
    skipped += count(s.cases, Status::Skipped);
    time += s.time_s;
  }
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x += "<testsuites name=\"" + xml_escape(name) + "\" tests=\"" + std::to_string(tests) + "\" failures=\"" +
       std::to_string(failures) + "\" errors=\"" + std::to_string(errors) + "\" skipped=\"" + std::to_string(skipped) +
       "\" time=\"" + num(time) + "\">\n";
  for (const auto& s : suites) {
    x += "  <testsuite name=\"" + xml_escape(s.name) + "\" tests=\"" + std::to_string(s.cases.size()) +
         "\" failures=\"" + std::to_string(count(s.cases, Status::Failed)) + "\" errors=\"" +
         std::to_string(count(s.cases, Status::Error)) + "\" skipped=\"" +
         std::to_string(count(s.cases, Status::Skipped)) + "\" time=\"" + num(s.time_s) + "\"" +
         (s.file.empty() ? "" : " file=\"" + xml_escape(s.file) + "\"") + ">\n";
    for (const auto& c : s.cases) {
      x += "    <testcase classname=\"" + xml_escape(c.classname) + "\" name=\"" + xml_escape(c.name) + "\" time=\"" +
           num(c.time_s) + "\"" + (s.file.empty() ? "" : " file=\"" + xml_escape(s.file) + "\"");
      const char* tag = c.status == Status::Failed    ? "failure"
                        : c.status == Status::Error   ? "error"
                        : c.status == Status::Skipped ? "skipped"
                                                      : nullptr;
      if (!tag && c.details.empty()) {
        x += "/>\n";
        continue;
      }
      x += ">\n";
      if (tag) {
        x += std::string("      <") + tag + " message=\"" + xml_escape(c.message) + "\"";
        x += c.details.empty() ? "/>\n" : ">" + xml_escape(c.details) + "</" + tag + ">\n";
      } else {
        x += "      <system-out>" + xml_escape(c.details) + "</system-out>\n";
      }
      x += "    </testcase>\n";
    }
    x += "  </testsuite>\n";
  }
  x += "</testsuites>\n";
  return x;
}

}  // namespace reports
