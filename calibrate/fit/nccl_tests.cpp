// calibrate/fit/nccl_tests.cpp: the parser of nccl-tests' text tables, with their bandwidth checks (the -J JSON output
// is nccl_tests_json.cpp's), and the file entry point.
#include "calibrate/fit/nccl_tests.hpp"
#include "calibrate/fit/nccl_tests_detail.hpp"

#include "sim/base/errors.hpp"
#include "sim/base/input_file.hpp"
#include "sim/base/json_reader.hpp"
#include "sim/base/printable.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <utility>

namespace calibrate::fit {
namespace nccl_detail {

// "N/A" (no data check, or no result) and nccl-tests' printed "nan"/"inf" mean: no number here.
bool not_available(std::string_view s) {
  return s == "N/A" || s == "nan" || s == "-nan" || s == "inf" || s == "-inf";
}

std::string fmt(double v) {
  std::ostringstream s;
  s.precision(6);
  s << v;
  return s.str();
}

/// nccl-tests' type names to trainsim's dtype names (others kept as printed).
std::string dtype_of(std::string_view t) {
  if (t == "float") return "fp32";
  if (t == "half") return "fp16";
  if (t == "bfloat16") return "bf16";
  if (t == "double") return "fp64";
  if (t == "f8e4m3" || t == "fp8_e4m3") return "fp8";
  return std::string(t);
}

std::string basename_of(std::string_view path) {
  const auto slash = path.find_last_of("/\\");
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

/// The op named in a file name ("allreduce_8xH100.log"), if exactly one is.
std::optional<CollectiveOp> op_from_file_name(std::string_view path) {
  static constexpr std::array<std::pair<std::string_view, CollectiveOp>, 12> kNames{{
      {"all_reduce", CollectiveOp::AllReduce},
      {"allreduce", CollectiveOp::AllReduce},
      {"all_gather", CollectiveOp::AllGather},
      {"allgather", CollectiveOp::AllGather},
      {"reduce_scatter", CollectiveOp::ReduceScatter},
      {"reducescatter", CollectiveOp::ReduceScatter},
      {"all_to_all", CollectiveOp::AllToAll},
      {"alltoall", CollectiveOp::AllToAll},
      {"send_recv", CollectiveOp::SendRecv},
      {"sendrecv", CollectiveOp::SendRecv},
      {"broadcast", CollectiveOp::Broadcast},
      {"bcast", CollectiveOp::Broadcast},
  }};
  std::string name = basename_of(path);
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::set<CollectiveOp> found;
  for (const auto& [text, op] : kNames)
    if (name.find(text) != std::string::npos) found.insert(op);
  // A name with two ops in it ("all_reduce_vs_all_gather.log") says nothing.
  if (found.size() != 1) return std::nullopt;
  return *found.begin();
}

}  // namespace nccl_detail

namespace {

using namespace nccl_detail;

using sim::base::ConfigError;
using sim::base::JsonReader;

std::vector<std::string> split_ws(std::string_view line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
      ++i;
    std::size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t')
      ++j;
    if (j > i) out.emplace_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

bool is_unsigned(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<double> to_double(std::string_view s) {
  double v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<long long> to_integer(std::string_view s) {
  long long v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

/// Which collective a section measured: the log, else --op, else the file name; a log and --op must agree.
struct OpSource {
  std::optional<CollectiveOp> from_log;
  std::string program;  // "all_reduce_perf" when the log names it
};

// ---- text ----------------------------------------------------------------------------------------------------------

/// One column group of the result table: out-of-place or in-place.
struct Group {
  bool in_place = false;
  bool error_magnitude = false;  // before nccl-tests 2.x's "#wrong" count, the column was "error": the largest error
  int time = -1, algbw = -1, busbw = -1, wrong = -1;  // token indexes
  int first = 0, last = 0;                            // token range [first, last)
};

struct Layout {
  std::vector<std::string> names;
  int size = -1, type = -1;
  std::vector<Group> groups;
  bool timestamp = false;  // the last column is "timestamp": its value is two tokens (date and time)
};

Layout parse_header(const std::vector<std::string>& names) {
  Layout l;
  l.names = names;
  for (int i = 0; i < static_cast<int>(names.size()); ++i) {
    const auto& n = names[static_cast<std::size_t>(i)];
    if (n == "size") l.size = i;
    if (n == "type") l.type = i;
    if (n == "time" || n == "cputime") {
      if (!l.groups.empty()) l.groups.back().last = i;
      Group g;
      g.time = i;
      g.first = i;
      l.groups.push_back(g);
      continue;
    }
    if (n == "timestamp") {
      l.timestamp = true;
      if (!l.groups.empty()) l.groups.back().last = i;
      continue;
    }
    if (l.groups.empty()) continue;
    auto& g = l.groups.back();
    if (n == "algbw") g.algbw = i;
    if (n == "busbw") g.busbw = i;
    if (n == "#wrong" || n == "error" || n == "wrong") g.wrong = i;
    if (n == "error") g.error_magnitude = true;
  }
  if (!l.groups.empty() && l.groups.back().last == 0) l.groups.back().last = static_cast<int>(names.size());
  // nccl-tests prints out-of-place first, then in-place (src/common.cu); a single group is out-of-place.
  if (l.groups.size() == 2) l.groups[1].in_place = true;
  return l;
}

struct TextSection {
  OpSource op;
  bool unsupported = false;
  std::map<int, std::pair<std::string, std::string>> ranks;  // rank -> (host, device)
  std::optional<int> repeated_rank;                          // a rank number listed twice
  std::string nccl;
  std::optional<Layout> layout;
  std::size_t rows = 0;
};

/// "#  Rank  0 Group  0 Pid  1234 on host device  0 [0000:04:00] NVIDIA H100 80GB HBM3" (Group is absent before
/// nccl-tests 2.13; the bus id was "[0x18]").
bool parse_rank_line(const std::vector<std::string>& t, TextSection& s) {
  // At most 9 digits: std::stoi below throws std::out_of_range beyond int (found by fuzz_nccl_tests).
  if (t.size() < 2 || t[0] != "Rank" || !is_unsigned(t[1]) || t[1].size() > 9) return false;
  std::string host, device;
  for (std::size_t i = 2; i + 1 < t.size(); ++i) {
    if (t[i] == "on" && host.empty()) host = t[i + 1];
    if (t[i] == "device") {
      std::size_t j = i + 2;  // skip the device number
      if (j < t.size() && t[j].front() == '[') {
        while (j < t.size() && t[j].back() != ']')
          ++j;
        ++j;
      }
      for (; j < t.size(); ++j)
        device += (device.empty() ? "" : " ") + t[j];
      break;
    }
  }
  const int rank = std::stoi(t[1]);
  if (s.ranks.contains(rank) && !s.repeated_rank) s.repeated_rank = rank;
  // Escaped where not valid UTF-8 (base::printable: \xNN), so that the JSON-lines records stay readable by fit (a user
  // trial: a 0xFF byte in a device name was written raw, then refused as "ill-formed UTF-8" by trainsim-calibrate fit).
  s.ranks[rank] = {sim::base::printable(host), sim::base::printable(device)};
  return true;
}

class TextParser {
 public:
  TextParser(const std::string& origin, const NcclTestsOptions& options) : origin_(origin), options_(options) {}

  ImportResult run(std::string_view text) {
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      std::string_view line = text.substr(start, end - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      ++line_no_;
      handle(line);
      start = end + 1;
    }
    finish_section();
    if (result_.records.empty())
      throw ConfigError(origin_, "",
                        "no nccl-tests result rows found; expected the table printed by e.g. all_reduce_perf (rows of "
                        "size, count, type, redop, root, time, algbw, busbw, ...)");
    return std::move(result_);
  }

 private:
  [[noreturn]] void fail(const std::string& message) const {
    throw ConfigError(origin_ + ":" + std::to_string(line_no_), "", message);
  }

  void new_section_if_used() {
    if (section_.rows == 0) return;
    finish_section();
    section_ = TextSection{};
  }

  void finish_section() {
    if (section_.unsupported && section_.rows > 0)
      result_.notes.push_back(origin_ + ": skipped " + std::to_string(section_.rows) + " rows of " +
                              section_.op.program +
                              " (trainsim models all_reduce, all_gather, reduce_scatter, "
                              "alltoall, sendrecv and broadcast)");
  }

  /// mpirun --tag-output prefixes every line with "[JOB,RANK]<stdout>:" (Open MPI's mpirun(1)).
  static std::string_view strip_mpi_tag(std::string_view line) {
    if (!line.starts_with("[")) return line;
    // "[0] " (Intel MPI's -prepend-rank, pdsh-style launchers): digits in brackets, then a space.
    if (const auto close = line.find("] ");
        close != std::string_view::npos && close > 1 &&
        line.substr(1, close - 1).find_first_not_of("0123456789") == std::string_view::npos)
      return line.substr(close + 2);
    const auto close = line.find("]<");
    if (close == std::string_view::npos) return line;
    const auto tag_end = line.find(">:", close);
    if (tag_end == std::string_view::npos) return line;
    const auto stream = line.substr(close + 2, tag_end - close - 2);
    if (stream != "stdout" && stream != "stderr" && stream != "stddiag") return line;
    const auto ids = line.substr(1, close - 1);
    if (ids.empty() || ids.find_first_not_of("0123456789,") != std::string_view::npos) return line;
    return line.substr(tag_end + 2);
  }

  void handle(std::string_view line) {
    line = strip_mpi_tag(line);
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos) return;
    if (line[first] == '#') return header(line.substr(first + 1));
    // NCCL's own log lines (NCCL_DEBUG=INFO) carry its version.
    if (auto pos = line.find("NCCL version "); pos != std::string_view::npos && line.find("INFO") != line.npos) {
      auto v = split_ws(line.substr(pos + 13));
      if (!v.empty() && section_.nccl.empty()) section_.nccl = v[0].substr(0, v[0].find('+'));
      return;
    }
    const auto tokens = split_ws(line);
    // A rank line whose '#' was lost (interleaved output of several processes) is still a rank line.
    check_rank_number(tokens);
    if (!tokens.empty() && tokens[0] == "Rank" && parse_rank_line(tokens, section_)) return check_repeated_rank();
    // So are the header lines (a user trial: a README's copy with every '#' stripped read "a result row before any
    // column header" below its header).
    if (!tokens.empty() &&
        (tokens[0] == "size" || tokens[0] == "nThread" || tokens[0] == "Collective" || tokens[0] == "nccl-tests"))
      return header(line);
    // A row starts with its size; a negative one (a misprinted or edited log) is refused there, not skipped.
    const bool negative = !tokens.empty() && tokens[0].size() > 1 && tokens[0][0] == '-' &&
                          is_unsigned(std::string_view(tokens[0]).substr(1)) && section_.layout;
    if (tokens.empty() || (!is_unsigned(tokens[0]) && !negative)) {  // other program output, warnings
      // An aborted run ("Test NCCL failure", "Test CUDA failure", "Test failure"): its rows so far are kept, but the
      // run did not finish, which may point at faulty hardware; it was imported without a word (a user trial).
      if (line.find("Test NCCL failure") != std::string_view::npos ||
          line.find("Test CUDA failure") != std::string_view::npos ||
          line.find("Test failure") != std::string_view::npos)
        result_.notes.push_back(origin_ + ":" + std::to_string(line_no_) +
                                ": the run stopped with a failure, so its table is incomplete: \"" +
                                std::string(line.substr(first, 160)) + "\"");
      return;
    }
    row(tokens);
  }

  void header(std::string_view body) {
    const auto t = split_ws(body);
    if (t.empty()) return;
    if (t[0] == "nccl-tests" && t.size() > 1 && t[1] == "version") {
      new_section_if_used();
      for (const auto& tok : t)
        if (tok.starts_with("nccl-library="))
          if (auto code = to_integer(std::string_view(tok).substr(13))) section_.nccl = nccl_version_string(*code);
      return;
    }
    if (t[0] == "Collective" && t.size() >= 4 && t[1] == "test" && t[2] == "starting:") {
      new_section_if_used();
      set_program(t[3]);
      return;
    }
    if (t[0] == "nThread") {
      new_section_if_used();
      return;
    }
    check_rank_number(t);
    if (parse_rank_line(t, section_)) return check_repeated_rank();
    if (t[0] == "size" && std::find(t.begin(), t.end(), "algbw") != t.end()) {
      new_section_if_used();
      auto layout = parse_header(t);
      if (layout.size < 0 || layout.groups.empty() || layout.groups[0].algbw < 0 || layout.groups[0].busbw < 0)
        fail("column header without size, time, algbw and busbw: \"" + std::string(body) + "\"");
      section_.layout = std::move(layout);
    }
  }

  void set_program(const std::string& program) {
    section_.op.program = basename_of(program);
    section_.op.from_log = op_of_nccl_tests_program(program);
    section_.unsupported = !section_.op.from_log.has_value();
  }

  CollectiveOp resolve_op() {
    const auto& from_log = section_.op.from_log;
    if (from_log && options_.op && *from_log != *options_.op)
      fail("the log is " + section_.op.program + " but --op says " + to_string(*options_.op));
    if (from_log) return *from_log;
    if (options_.op) return *options_.op;
    if (auto from_name = op_from_file_name(origin_)) return *from_name;
    fail(
        "cannot tell which collective this table measured: no \"# Collective test starting: X_perf\" line above it "
        "and no op in the file name; pass --op all_reduce|all_gather|reduce_scatter|all_to_all|send_recv|broadcast");
  }

  /// "Rank N" with N past the ranks a measurement may have (2^62 was skipped as no rank line at all).
  void check_rank_number(const std::vector<std::string>& t) const {
    if (t.size() < 2 || t[0] != "Rank" || !is_unsigned(t[1])) return;
    if (t[1].size() <= 9 && std::stoi(t[1]) < kMaxMeasuredRanks) return;
    fail("rank " + t[1].substr(0, 40) + " is beyond the " + std::to_string(kMaxMeasuredRanks) +
         " ranks a measurement may have");
  }

  void check_repeated_rank() const {
    if (section_.repeated_rank)
      fail("rank " + std::to_string(*section_.repeated_rank) +
           " is listed more than once: the processes ran as separate single-rank jobs (nccl-tests built without "
           "MPI=1, or started without an MPI launcher), so no table is one collective over all of them; rerun "
           "with an MPI build");
  }

  int resolve_ranks() {
    const int from_log = static_cast<int>(section_.ranks.size());
    if (from_log > kMaxMeasuredRanks)
      fail("the log lists " + std::to_string(from_log) + " ranks; at most " + std::to_string(kMaxMeasuredRanks) +
           " are supported");
    if (from_log > 0 && section_.ranks.rbegin()->first != from_log - 1) {
      const int last = section_.ranks.rbegin()->first;
      if (options_.ranks && *options_.ranks > last) return *options_.ranks;
      int missing = 0;
      while (section_.ranks.contains(missing))
        ++missing;
      fail("the log has " + std::to_string(from_log) + " rank lines up to rank " + std::to_string(last) +
           ", but none for rank " + std::to_string(missing) +
           " (a rank line lost in interleaved output?); pass --ranks N to say how many ranks ran");
    }
    if (from_log > 0 && options_.ranks && *options_.ranks != from_log)
      fail("the log lists " + std::to_string(from_log) + " ranks but --ranks says " + std::to_string(*options_.ranks));
    if (from_log > 0) return from_log;
    if (options_.ranks) return *options_.ranks;
    fail("no \"#  Rank N ... on HOST device D\" lines above this table, so the rank count is unknown; pass --ranks N");
  }

  void row(const std::vector<std::string>& t) {
    if (!section_.layout)
      fail("a result row before any column header (\"#  size  count  type ...\"): \"" + join(t) + "\"");
    ++section_.rows;
    if (section_.unsupported) return;
    const Layout& l = *section_.layout;
    const int expected = static_cast<int>(l.names.size()) + (l.timestamp ? 1 : 0);
    const int found = static_cast<int>(t.size());
    // Trace replay prints no out-of-place body (blank columns): the row is short by the first group.
    int shift = 0;
    std::size_t first_group = 0;
    if (found != expected) {
      const int g0 = l.groups.size() == 2 ? l.groups[0].last - l.groups[0].first : 0;
      if (g0 > 0 && found == expected - g0) {
        shift = g0;
        first_group = 1;
      } else {
        fail("expected " + std::to_string(expected) + " fields (" + join(l.names) + "), found " +
             std::to_string(found) + ": \"" + join(t) + "\"");
      }
    }
    // The token of header column idx in this row. In a short row the first group's columns are absent and those
    // after it shifted; a header that puts size or type among them does not fit the row (found by fuzz_nccl_tests:
    // such a header read past the row's end).
    auto cell = [&](int idx) -> const std::string& {
      int pos = idx;
      if (shift > 0 && idx >= l.groups[0].first) pos = idx < l.groups[0].last ? -1 : idx - shift;
      if (pos < 0 || pos >= found)
        fail("column '" + l.names[static_cast<std::size_t>(idx)] + "' has no value in this row of " +
             std::to_string(found) + " fields: \"" + join(t) + "\"");
      return t[static_cast<std::size_t>(pos)];
    };
    const CollectiveOp op = resolve_op();
    const int ranks = resolve_ranks();
    const std::string& size_text = cell(l.size);
    auto size = to_integer(size_text);
    if (!size || *size < 0) fail("column 'size': \"" + size_text + "\" is not a byte count");
    std::set<std::string> hosts;
    std::set<std::string> devices;
    for (const auto& [r, hd] : section_.ranks) {
      hosts.insert(hd.first);
      if (!hd.second.empty() && !devices.insert(hd.second).second) continue;
      if (devices.size() > 1)
        fail("rank " + std::to_string(r) + " ran on \"" + hd.second + "\" but rank " +
             std::to_string(section_.ranks.begin()->first) + " on \"" + section_.ranks.begin()->second.second +
             "\": one measurement is of one GPU model; split the log by GPU");
    }
    std::string date = options_.date;
    if (l.timestamp && found >= 2) date = t[t.size() - 2] + "T" + t[t.size() - 1];
    if (!date.empty() && !is_iso8601_date(date))
      fail("the timestamp \"" + date.substr(0, 60) + "\" is not an ISO 8601 date (2025-01-12T10:11:12)");
    for (std::size_t gi = first_group; gi < l.groups.size(); ++gi) {
      const Group& g = l.groups[gi];
      const char* group_name = g.in_place ? "in-place" : "out-of-place";
      auto field = [&](int idx, const char* name, bool integer) -> std::optional<double> {
        if (idx < 0) return std::nullopt;
        const std::string& s = cell(idx);
        if (not_available(s)) return std::nullopt;
        std::optional<double> v = to_double(s);
        if (integer) {
          const auto i = to_integer(s);
          v = i ? std::optional<double>(static_cast<double>(*i)) : std::nullopt;
        }
        if (!v) fail(std::string("column '") + name + "' (" + group_name + "): \"" + s + "\" is not a number or N/A");
        return v;
      };
      const auto time_us = field(g.time, "time", false);
      const auto alg = field(g.algbw, "algbw", false);
      const auto bus = field(g.busbw, "busbw", false);
      // The old "error" column holds the largest absolute error (e.g. 0e+00, 2e-03 in half precision), not a count
      // of wrong elements: it is read as a number and does not reject the row.
      std::optional<double> wrong;
      if (g.error_magnitude) {
        (void)field(g.wrong, "error", false);
      } else {
        wrong = field(g.wrong, "#wrong", true);
      }
      const std::string time_column = std::string("column 'time' (") + group_name + "): ";
      if (!time_us && !alg && !bus) {  // N/A throughout: the group did not run
        result_.notes.push_back(origin_ + ":" + std::to_string(line_no_) + ": skipped the " + group_name +
                                " result: no time, algbw or busbw (not run)");
        continue;
      }
      if (!time_us)
        fail(time_column + "\"" + cell(g.time) + "\" is not a time; every result row has one (in microseconds)");
      if (*time_us <= 0) fail(time_column + fmt(*time_us) + " us is not a positive time");
      if (*time_us / 1e6 < kMinMeasuredSeconds)
        fail(time_column + fmt(*time_us) +
             " us is shorter than any collective takes (at least 0.001 us); the column was misread");
      if (*time_us / 1e6 > kMaxMeasuredSeconds)
        fail(time_column + fmt(*time_us) +
             " us is longer than any collective takes (at most one hour); the column "
             "was misread");
      if (*size == 0) {
        result_.notes.push_back(origin_ + ":" + std::to_string(line_no_) + ": skipped the " + group_name +
                                " result of size 0 (no bytes: no bandwidth to fit)");
        continue;
      }
      if (wrong && *wrong > 0) {
        result_.notes.push_back(origin_ + ":" + std::to_string(line_no_) + ": skipped the " + group_name +
                                " result: nccl-tests found " + fmt(*wrong) + " wrong elements");
        continue;
      }
      Measurement m;
      m.kind = Kind::Collective;
      m.collective = op;
      if (l.type >= 0) m.dtype = dtype_of(cell(l.type));
      m.bytes = sim::base::Bytes{*size};
      m.ranks = ranks;
      m.nodes = options_.nodes ? *options_.nodes : hosts.empty() ? 0 : static_cast<int>(hosts.size());
      if (hosts.empty() && !options_.scope && !options_.nodes)
        fail(
            "no \"#  Rank N ... on HOST\" lines above this table, so whether the ranks span hosts is unknown; pass "
            "--nodes N (the hosts the ranks ran on), or --scope nvlink (one host) or --scope network");
      m.scope = options_.scope.value_or(m.nodes > 1 ? Scope::Network : Scope::Nvlink);
      m.in_place = g.in_place;
      m.time = sim::base::Duration{*time_us / 1e6};
      m.label = "nccl-tests " + (section_.op.program.empty() ? std::string(to_string(op)) : section_.op.program);
      if (!devices.empty()) m.device = *devices.begin();
      if (!hosts.empty()) m.host = *hosts.begin();
      m.nccl = section_.nccl;
      m.date = date;
      m.source = origin_ + ":" + std::to_string(line_no_);
      check_bandwidths(m, alg, bus, group_name);
      result_.records.push_back(std::move(m));
    }
  }

  /// nccl-tests prints algbw = size / time and busbw = algbw * factor(op, ranks), rounded to the printed digits.
  void check_bandwidths(const Measurement& m, std::optional<double> alg, std::optional<double> bus,
                        const char* group) const {
    const double computed = algbw(m).gbytes_per_s();
    if (alg && std::fabs(*alg - computed) > 0.005 * computed + 0.011)
      fail(std::string(group) + " algbw " + fmt(*alg) + " GB/s disagrees with size/time = " + fmt(computed) +
           " GB/s; the size or time column was misread");
    if (alg && bus && *alg >= 0.1) {
      const double factor = busbw_factor(m.collective, m.ranks);
      if (std::fabs(*bus - *alg * factor) > 0.01 * *alg * factor + 0.011)
        fail(std::string(group) + " busbw/algbw = " + fmt(*bus / *alg) + " but " + to_string(m.collective) + " over " +
             std::to_string(m.ranks) + " ranks has bus factor " + fmt(factor) +
             " (nccl-tests doc/PERFORMANCE.md); the rank count or op is wrong (see --ranks, --op)");
    }
  }

  static std::string join(const std::vector<std::string>& t) {
    std::string out;
    for (const auto& s : t)
      out += (out.empty() ? "" : " ") + s;
    return out;
  }

  std::string origin_;
  const NcclTestsOptions& options_;
  std::size_t line_no_ = 0;
  TextSection section_;
  ImportResult result_;
};

}  // namespace

std::optional<CollectiveOp> op_of_nccl_tests_program(std::string_view program) {
  std::string name = basename_of(program);
  for (const char* suffix : {"_perf_mpi", "_perf"})
    if (name.ends_with(suffix)) name.resize(name.size() - std::string_view(suffix).size());
  if (name == "all_reduce") return CollectiveOp::AllReduce;
  if (name == "all_gather") return CollectiveOp::AllGather;
  if (name == "reduce_scatter") return CollectiveOp::ReduceScatter;
  if (name == "alltoall") return CollectiveOp::AllToAll;
  if (name == "sendrecv") return CollectiveOp::SendRecv;
  if (name == "broadcast") return CollectiveOp::Broadcast;
  return std::nullopt;
}

std::string nccl_version_string(long code) {
  if (code <= 0) return {};
  const bool modern = code >= 10000;  // NCCL_VERSION(X,Y,Z) = X*10000 + Y*100 + Z from 2.9 on
  const long major = modern ? code / 10000 : code / 1000;
  const long minor = modern ? (code % 10000) / 100 : (code % 1000) / 100;
  const long patch = code % 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

ImportResult parse_nccl_tests_text(std::string_view text, const std::string& origin, const NcclTestsOptions& options) {
  return TextParser(origin, options).run(text);
}

ImportResult import_nccl_tests(const std::string& path, const NcclTestsOptions& options) {
  if (!options.date.empty() && !is_iso8601_date(options.date))
    throw ConfigError("--date", "",
                      "\"" + options.date.substr(0, 60) +
                          "\" is not an ISO 8601 date; write e.g. 2025-01-12 or 2025-01-12T10:11:12Z");
  const std::string text = sim::base::read_input_file(path, "an nccl-tests log");
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) throw ConfigError(path, "", "the file is empty; expected nccl-tests output");
  if (text[first] == '{') return parse_nccl_tests_json(text, path, options);
  return parse_nccl_tests_text(text, path, options);
}

}  // namespace calibrate::fit
