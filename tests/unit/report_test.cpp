// The cost/risk report: seven charts with stable ids, escaping of every user string (HTML, Markdown, CSV), the
// Content-Security-Policy and no external loads, RFC 4180 CSV, Markdown table shape, the recommendation rules,
// determinism, FNV-1a test vectors, the histogram CDF accessor, atomic writes, and `trainsim run --out` end to end.
#include "reports/charts.hpp"
#include "reports/report.hpp"
#include "reports/svg.hpp"
#include "sim/base/atomic_file.hpp"
#include "sim/base/errors.hpp"
#include "sim/cli/app.hpp"
#include "sim/cli/report_input.hpp"
#include "tests/support/cli.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/resource.h>
#include <unistd.h>

namespace reports {
namespace {

namespace fs = std::filesystem;
using sim::base::Time;

const std::string kXss = "<script>alert(1)</script>";

Time seconds(double s) {
  return Time::from_seconds(s);
}

/// A hand-made input: two pipeline stages, a few failures, a 100-trial time histogram, two tornado rows.
ReportInput sample_input() {
  ReportInput in;
  in.scenario_name = "demo-70b";
  in.scenario_source = "scenarios/demo.json";
  in.description = "A demo scenario";
  in.trainsim_version = "9.9.9";
  in.hashes = {{"scenario file", "FNV-1a-64", hex64(fnv1a64("{}"))}};
  in.seed = 42;
  in.effective_config_json = "{\n  \"name\": \"demo-70b\"\n}";
  in.facts = {{"model", "llama3-70b"}, {"cluster", "1024 GPUs"}};
  in.gpus = 1024;
  auto& st = in.step;
  st.fidelity = "replica";
  st.step_time = seconds(10);
  st.tokens_per_s = 800000;
  st.mfu = 0.45;
  st.hfu = 0.5;
  st.breakdown.compute = seconds(7);
  st.breakdown.tp_exposed = seconds(1.5);
  st.breakdown.pp_bubble = seconds(1);
  st.breakdown.dp_exposed = seconds(0.5);
  st.memory = {4, 8, 1, 20, 2, 35, 79.6};
  for (int gpu : {0, 8})
    for (int mb = 0; mb < 4; ++mb) {
      st.timeline.push_back({gpu, 0, "F" + std::to_string(mb), seconds(mb + gpu / 8.0), seconds(mb + gpu / 8.0 + 0.4)});
      st.timeline.push_back({gpu, 0, "B" + std::to_string(mb), seconds(5 + mb), seconds(5.8 + mb)});
      st.timeline.push_back({gpu, 1, "all-reduce", seconds(mb + 0.4), seconds(mb + 0.5)});
    }
  st.timeline.push_back({0, 3, "grad reduce", seconds(9), seconds(9.5)});
  auto& r = in.run;
  r.trials = 100;
  r.seed = 42;
  r.work = "steps";
  r.failure_free_days = 100;
  r.time_to_train_days = {104, 102, 104, 107, 109};
  r.goodput = {0.95, 0.93, 0.95, 0.97, 0};
  r.interruptions_mean = 12;
  r.causes = {{"faulty_gpu", "crash", 8, 900}, {"switch", "crash", 3, 400}, {"hang_bug", "hang", 1, 100}};
  r.job_mtbf_h = 200;
  r.lost_gpu_hours_mean = 1400;
  r.checkpoint.policy = "daly";
  r.checkpoint.interval_s = 1800;
  r.accounting = {
      104 * 86400.0, 99 * 86400.0, 0.5 * 86400.0, 0.5 * 86400.0, 1 * 86400.0, 2 * 86400.0, 0, 1 * 86400.0, 0};
  r.time_to_train_hist = sim::results::Histogram::log_spaced(100, 200, 200);
  for (int i = 0; i < 100; ++i)
    r.time_to_train_hist.add(101 + i * 0.08);
  r.sample_timeline = {
      {seconds(86400 * 3), "crash", "faulty_gpu"}, {seconds(86400 * 3 + 300), "detected", "faulty_gpu"},
      {seconds(86400 * 3 + 900), "restart", ""},   {seconds(86400 * 3 + 1500), "resume", ""},
      {seconds(86400 * 40), "hang", "hang_bug"},   {seconds(86400 * 40 + 600), "detected", "hang_bug"},
      {seconds(86400 * 40 + 1900), "resume", ""},  {seconds(86400 * 104), "finished", ""}};
  auto& c = in.cost;
  c.mean_usd = 6.4e6;
  c.p50_usd = 6.39e6;
  c.p90_usd = 6.6e6;
  c.burn_usd_per_hour = 2560;
  c.failures_usd_mean = 3500;
  c.per_failure_mean_usd = 290;
  c.per_failure_usd = {{"faulty_gpu", 280}, {"switch", 330}, {"hang_bug", 250}};
  c.p_deadline_miss = 0.02;
  in.deadline_days = 110;
  in.sensitivity = {{"failure rates", 6.3e6, 6.5e6, 103, 105, NAN, NAN}, {"price", 5.1e6, 7.7e6, 104, 104, NAN, NAN}};
  in.sources = {"Narayanan et al. SC21"};
  return in;
}

/// The <svg ...>...</svg> element with the given id ("" when absent).
std::string svg_of(const std::string& html, const std::string& id) {
  const auto start = html.find("<svg id=\"" + id + "\"");
  if (start == std::string::npos) return "";
  const auto end = html.find("</svg>", start);
  return html.substr(start, end == std::string::npos ? std::string::npos : end + 6 - start);
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size()))
    ++n;
  return n;
}

/// Drawn shapes of a chart.
int shapes(const std::string& svg) {
  return count(svg, "<rect") + count(svg, "<line") + count(svg, "<polyline") + count(svg, "<path") +
         count(svg, "<circle");
}

/// Unescaped pipes of a Markdown table row.
int cells(const std::string& line) {
  int n = 0;
  for (std::size_t i = 0; i < line.size(); ++i)
    if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) ++n;
  return n;
}

/// RFC 4180 records (CRLF-separated, quoted fields may hold commas, quotes and line breaks).
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quoted) {
      if (ch == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        field += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      rows.back().push_back(field);
      field.clear();
    } else if (ch == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      rows.back().push_back(field);
      field.clear();
      rows.emplace_back();
      ++i;
    } else {
      field += ch;
    }
  }
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

/// A fresh, empty directory for one test.
fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("trainsim-report-test-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(ReportHtml, HasTheSevenChartsWithStableIdsAndContent) {
  const std::string html = render_html(sample_input());
  ASSERT_EQ(chart_ids().size(), 7U);
  for (const auto& id : chart_ids()) {
    const std::string svg = svg_of(html, id);
    ASSERT_FALSE(svg.empty()) << id;
    EXPECT_NE(svg.find("data-chart=\"" + id + "\""), std::string::npos) << id;
    EXPECT_GE(shapes(svg), 4) << id;
  }
  // The Gantt chart draws every forward and backward pass of both stages; the tornado both rows.
  EXPECT_GE(count(svg_of(html, "pipeline-timeline"), "class=\"op\""), 16);
  EXPECT_NE(svg_of(html, "sensitivity-tornado").find("failure rates"), std::string::npos);
  EXPECT_NE(svg_of(html, "time-to-train-cdf").find("deadline 110.0 d"), std::string::npos);
}

TEST(ReportHtml, HasTheCspMetaNoScriptsAndNoExternalLoads) {
  const std::string html = render_html(sample_input());
  EXPECT_NE(html.find("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
                      "'unsafe-inline'; img-src data:\">"),
            std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  for (const char* load : {"src=\"http", "href=\"http", "src='http", "href='http", "url(", "@import", "<link", "<img"})
    EXPECT_EQ(html.find(load), std::string::npos) << load;
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_NE(html.find("@media print"), std::string::npos);
}

TEST(ReportHtml, BottomLineComesFirstWithTheRecommendation) {
  const std::string html = render_html(sample_input());
  const auto bottom = html.find("id=\"bottom-line\"");
  ASSERT_NE(bottom, std::string::npos);
  EXPECT_LT(bottom, html.find("<svg"));
  for (const char* s : {"Time to train", "p50 104.0 d", "p90 107.0 d", "p50 $6.39M", "p90 $6.60M", "P(miss deadline)",
                        "2.0%", "P(exceed budget)", "Cost of failures", "$3500", "Recommended action"})
    EXPECT_NE(html.find(s), std::string::npos) << s;
  EXPECT_NE(html.find("id=\"effective-config\""), std::string::npos);
}

TEST(ReportHtml, NotesFollowTheRecommendationInBothRenderings) {
  // An assumption that moves the answer (e.g. MoE routing taken as balanced) is shown under the recommended action,
  // escaped like every other string.
  ReportInput in = sample_input();
  EXPECT_EQ(render_html(in).find("class=\"note\""), std::string::npos) << "no notes, no box";
  in.notes.push_back("MoE routing is taken as <balanced>");
  const std::string html = render_html(in);
  const auto note = html.find("<p class=\"note\"><strong>Note:</strong> MoE routing is taken as &lt;balanced&gt;</p>");
  ASSERT_NE(note, std::string::npos);
  EXPECT_GT(note, html.find("id=\"recommendation\""));
  EXPECT_LT(note, html.find("<svg"));
  EXPECT_NE(render_markdown(in).find("**Note:** MoE routing is taken as"), std::string::npos);
}

TEST(ReportEscaping, ScriptInEveryUserStringRendersAsTextInHtml) {
  auto in = sample_input();
  in.scenario_name = kXss;
  in.description = kXss + "\"'&";
  in.scenario_source = kXss;
  in.facts.emplace_back(kXss, kXss);
  in.run.causes.push_back({kXss, "crash", 1, 50});
  in.cost.per_failure_usd.emplace_back(kXss, 50);
  in.run.sample_timeline.insert(in.run.sample_timeline.begin(), {seconds(86400), "crash", kXss});
  in.sensitivity.push_back({kXss, 6e6, 6.8e6, 100, 108, NAN, NAN});
  in.effective_config_json = "{\"name\": \"" + kXss + "\"}";
  in.hashes.push_back({kXss, kXss, kXss});
  const std::string html = render_html(in);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("alert(1)</"), std::string::npos);
  EXPECT_NE(html.find("<h1>&lt;script&gt;alert(1)&lt;/script&gt;</h1>"), std::string::npos);
  EXPECT_NE(html.find("&quot;&#39;&amp;"), std::string::npos);
}

TEST(ReportEscaping, ScriptNameRendersAsTextInMarkdown) {
  auto in = sample_input();
  in.scenario_name = kXss;
  in.run.causes.push_back({kXss, "crash", 20, 5000});
  const std::string md = render_markdown(in);
  EXPECT_EQ(md.find("<script"), std::string::npos);
  EXPECT_NE(md.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
}

TEST(ReportEscaping, MarkdownEscapesPipesBackticksAndHtml) {
  EXPECT_EQ(markdown_escape("a|b`c"), "a\\|b\\`c");
  EXPECT_EQ(markdown_escape("<b>&"), "&lt;b&gt;&amp;");
  EXPECT_EQ(markdown_escape("two\nlines"), "two lines");
  EXPECT_EQ(markdown_escape("cc @octocat"), "cc &#64;octocat") << "no mention from a scenario's text in a PR comment";
  EXPECT_EQ(html_escape("<a href='x'>\"&\"</a>"), "&lt;a href=&#39;x&#39;&gt;&quot;&amp;&quot;&lt;/a&gt;");
}

TEST(ReportMarkdown, TablesHaveOneCellCountPerTable) {
  auto in = sample_input();
  in.run.causes.push_back({"pipe|in`name", "crash", 20, 5000});
  const std::string md = render_markdown(in);
  std::istringstream lines(md);
  std::string line;
  int tables = 0, width = -1;
  while (std::getline(lines, line)) {
    if (line.empty() || line.front() != '|') {
      width = -1;
      continue;
    }
    if (width < 0) {
      ++tables;
      width = cells(line);
      continue;
    }
    EXPECT_EQ(cells(line), width) << line;
  }
  EXPECT_EQ(tables, 4) << md;  // bottom line, risk, step breakdown, failure causes
  EXPECT_NE(md.find("pipe\\|in\\`name"), std::string::npos);
  EXPECT_NE(md.find("**Recommended action:**"), std::string::npos);
}

TEST(ReportCsv, OneHeaderAndOneValueRowWithRfc4180Quoting) {
  auto in = sample_input();
  in.scenario_name = "a,\"b\"\r\nc";
  in.scenario_source = "=HYPERLINK(\"x\")";
  const std::string csv = render_csv(in);
  EXPECT_EQ(csv.substr(csv.size() - 2), "\r\n");
  EXPECT_NE(csv.find("\"a,\"\"b\"\"\\x0d\\x0ac\""), std::string::npos) << "control bytes escaped (issue 22)";
  const auto rows = parse_csv(csv);
  ASSERT_EQ(rows.size(), 2U) << csv;
  EXPECT_EQ(rows[0], csv_columns());
  ASSERT_EQ(rows[1].size(), rows[0].size());
  EXPECT_EQ(rows[1][0], "a,\"b\"\\x0d\\x0ac");
  EXPECT_EQ(rows[1][1], "'=HYPERLINK(\"x\")");  // a formula in a text cell is defused
  auto col = [&](const std::string& name) {
    for (std::size_t i = 0; i < rows[0].size(); ++i)
      if (rows[0][i] == name) return rows[1][i];
    return std::string("<missing column>");
  };
  EXPECT_EQ(col("cost_p50_usd"), "6390000");
  EXPECT_EQ(col("p_deadline_miss"), "0.02");
  EXPECT_EQ(col("p_budget_overrun"), "");  // no budget: undefined, empty
  EXPECT_EQ(col("time_to_train_p90_days"), "107");
  EXPECT_EQ(csv_field("plain"), "plain");
}

TEST(ReportDeterminism, SameInputGivesSameBytes) {
  const auto a = sample_input(), b = sample_input();
  EXPECT_EQ(render_html(a), render_html(b));
  EXPECT_EQ(render_markdown(a), render_markdown(b));
  EXPECT_EQ(render_csv(a), render_csv(b));
}

TEST(ReportRecommendation, RisksAtTheP90TheLargerStepLossAndItsLargestPart) {
  // Three cases of a user trial: "proceed" with an 18.5% chance of missing the deadline (the rule fired above 20%); an
  // MoE step losing 33% to expert-parallel all-to-alls told to shrink its 18% bubble; owned hardware told to lower
  // "the price per GPU-hour".
  auto in = sample_input();
  in.cost.p_deadline_miss = 0.185;
  EXPECT_EQ(recommend(in).rule, "deadline-risk");
  EXPECT_NE(recommend(in).action.find("fires above 10%"), std::string::npos) << recommend(in).action;
  in.cost.p_budget_overrun = 0.5;
  EXPECT_NE(recommend(in).action.find("The budget is at risk too"), std::string::npos) << recommend(in).action;
  in.cost.p_deadline_miss = 0.0;
  in.cost.pricing = "owned";
  EXPECT_EQ(recommend(in).rule, "budget-risk");
  EXPECT_EQ(recommend(in).action.find("price per GPU-hour"), std::string::npos) << recommend(in).action;
  in.cost.p_budget_overrun = 0.0;
  in.step.breakdown.pp_bubble = seconds(1.8);   // 18% of a 10 s step
  in.step.breakdown.ep_exposed = seconds(3.3);  // 33%
  EXPECT_EQ(recommend(in).rule, "exposed-comm");
  EXPECT_NE(recommend(in).action.find("expert-parallel all-to-alls"), std::string::npos) << recommend(in).action;
  in.step.breakdown.ep_exposed = seconds(0);
  EXPECT_EQ(recommend(in).rule, "pipeline-bubble");
  in.step.breakdown.pp_bubble = seconds(0);
  EXPECT_EQ(recommend(in).rule, "proceed");
  EXPECT_NE(recommend(in).action.find("over 10% of trials"), std::string::npos) << recommend(in).action;
}

TEST(ReportRecommendation, RulesFireInTheDocumentedOrder) {
  auto in = sample_input();
  EXPECT_EQ(recommend(in).rule, "proceed");
  in.step.breakdown.pp_bubble = seconds(2);  // 20% of a 10 s step
  EXPECT_EQ(recommend(in).rule, "pipeline-bubble");
  in.run.goodput.p50 = 0.85;
  EXPECT_EQ(recommend(in).rule, "failures");
  EXPECT_NE(recommend(in).action.find("faulty_gpu"), std::string::npos);
  in.run.accounting.checkpoint_s = 0.1 * in.run.accounting.wall_s;
  EXPECT_EQ(recommend(in).rule, "checkpoint-cost");
  in.cost.p_budget_overrun = 0.3;
  EXPECT_EQ(recommend(in).rule, "budget-risk");
  in.cost.p_deadline_miss = 0.25;
  EXPECT_EQ(recommend(in).rule, "deadline-risk");
  // The step loses 20% to its bubble and the budget is at risk too: the layout first, and more GPUs are not said to
  // fix the cost (a user trial: "Add GPUs" for a 405B run losing 29% to its bubble, over budget as well).
  const auto action = recommend(in).action;
  EXPECT_EQ(action.find("Fix the layout before adding GPUs (trainsim plan searches the layouts of these GPUs): "
                        "shrink the pipeline bubble (20.0% of the step)"),
            0u)
      << action;
  EXPECT_NE(action.find("Then add GPUs or relax the deadline: there is a 25% chance"), std::string::npos) << action;
  EXPECT_NE(action.find("More GPUs shorten the run but do not lower its cost"), std::string::npos) << action;
  in.step.breakdown.pp_bubble = seconds(0);
  in.cost.p_budget_overrun = 0.0;
  EXPECT_EQ(recommend(in).action.find("Add GPUs or relax the deadline"), 0u) << recommend(in).action;
  EXPECT_EQ(recommend(in).action.find("More GPUs"), std::string::npos) << recommend(in).action;
  in.run.accounting.waiting_for_repair_s = 0.6 * in.run.accounting.wall_s;
  in.run.on_spares_exhausted = "wait";
  EXPECT_EQ(recommend(in).rule, "waiting");
  EXPECT_NE(recommend(in).action.find("or allow elastic shrinking"), std::string::npos) << recommend(in).action;
  // Shrinking on already: the advice is not to turn it on (a user trial saw both side by side).
  in.run.on_spares_exhausted = "shrink";
  EXPECT_EQ(recommend(in).action.find("allow elastic shrinking"), std::string::npos) << recommend(in).action;
  EXPECT_NE(recommend(in).action.find("elastic shrinking is on"), std::string::npos) << recommend(in).action;
  // A price missing: "proceed" is not said of costs without compute (a user trial: GB300 without a price, "Proceed
  // ... p90 cost $144"); the time rules still come first (a review: a certain deadline miss was hidden behind it).
  in.unpriced = true;
  in.unpriced_reason = "the hardware profile gb300-nvl72 has no price";
  EXPECT_EQ(recommend(in).rule, "waiting");
  auto plain = sample_input();  // where "proceed" would be said
  plain.unpriced = true;
  plain.unpriced_reason = in.unpriced_reason;
  EXPECT_EQ(recommend(plain).rule, "unpriced");
  EXPECT_NE(recommend(plain).action.find("gb300-nvl72 has no price"), std::string::npos) << recommend(plain).action;
  in.run.never_finished = 3;
  EXPECT_EQ(recommend(in).rule, "never-finishes");
  // Stalled waiting for repaired nodes: spares or shrinking, not faster restarts (a user trial: both still never
  // finished, shrinking finished in 2.9 d).
  EXPECT_NE(recommend(in).action.find("waits 60.0% of its wall time for repaired nodes; add spare nodes"),
            std::string::npos)
      << recommend(in).action;
  in.run.accounting.waiting_for_repair_s = 0;
  EXPECT_NE(recommend(in).action.find("shorten restarts"), std::string::npos) << recommend(in).action;
}

TEST(ReportRecommendation, AGivenCheckpointIntervalIsPointedAtDalysOptimum) {
  // Lost work above 5% of the wall time under a given interval: the action names the optimum and what the given one
  // costs; under Daly's own interval it does not.
  auto in = sample_input();
  in.run.accounting.lost_work_s = 0.2 * in.run.accounting.wall_s;
  in.run.checkpoint.policy = "daly";
  // At Daly's interval only cheaper checkpoints help (a user trial got "Checkpoint less often" there, and following
  // it made the run 3.4% longer).
  EXPECT_EQ(recommend(in).rule, "checkpoint-cost");
  EXPECT_EQ(recommend(in).action.find("Make checkpoints cheaper"), 0u) << recommend(in).action;
  EXPECT_NE(recommend(in).action.find("asynchronous checkpoints"), std::string::npos) << recommend(in).action;
  EXPECT_EQ(recommend(in).action.find("Daly's optimum"), std::string::npos);
  in.run.checkpoint.async = true;
  EXPECT_NE(recommend(in).action.find("a faster snapshot"), std::string::npos) << recommend(in).action;
  in.run.checkpoint.policy = "fixed";
  in.run.checkpoint.interval_s = 3 * 3600;
  in.run.checkpoint.optimum_interval_s = 396;
  in.run.checkpoint.wall_vs_optimum = 0.052;
  EXPECT_EQ(recommend(in).rule, "lost-work");
  EXPECT_NE(recommend(in).action.find("Daly's optimum for this job is every 6.6 min (the given 3.0 h makes the "
                                      "expected wall time 5.2% longer"),
            std::string::npos)
      << recommend(in).action;
}

// Goodput under 90% with no single share over 5%: the advice follows where the time goes, not the costliest cause
// alone (a user trial: "faster detection and restart or more spares" where those took 0.8% of the wall time and
// checkpoint writes and redone work 9.4%).
TEST(ReportRecommendation, FailuresAdviceFollowsWhereTheTimeGoes) {
  auto in = sample_input();
  in.run.goodput.p50 = 0.895;
  auto& a = in.run.accounting;
  a.checkpoint_s = 0.045 * a.wall_s;
  a.lost_work_s = 0.049 * a.wall_s;
  a.detection_s = 0.003 * a.wall_s;
  a.restart_s = 0.005 * a.wall_s;
  a.degraded_s = 0;
  EXPECT_EQ(recommend(in).rule, "failures");
  EXPECT_NE(recommend(in).action.find("checkpoint writes and redone work take 9.4% of the wall time"),
            std::string::npos)
      << recommend(in).action;
  EXPECT_EQ(recommend(in).action.find("spares"), std::string::npos) << recommend(in).action;
  a.checkpoint_s = a.lost_work_s = 0.01 * a.wall_s;
  a.restart_s = 0.04 * a.wall_s;
  EXPECT_NE(recommend(in).action.find("faster detection and restart pay off first"), std::string::npos)
      << recommend(in).action;
  a.waiting_for_repair_s = 0.06 * a.wall_s;
  EXPECT_NE(recommend(in).action.find("more spares pay off first"), std::string::npos) << recommend(in).action;
  EXPECT_NE(recommend(in).action.find("the costliest cause is faulty_gpu"), std::string::npos) << recommend(in).action;
  // Degraded running lost mostly to fail-slow GPUs: spares are not the lever (a review).
  a.waiting_for_repair_s = 0;
  a.degraded_s = 0.06 * a.wall_s;
  in.run.causes = {{"slow_gpu", "straggler", 5, 5000}, {"faulty_gpu", "crash", 2, 300}};
  EXPECT_NE(recommend(in).action.find("reliability.detection.straggler"), std::string::npos) << recommend(in).action;
  EXPECT_EQ(recommend(in).action.find("more spares"), std::string::npos) << recommend(in).action;
}

TEST(ReportHtml, TheCheckpointsRowNamesDalysOptimumBesideAGivenInterval) {
  auto in = sample_input();
  in.run.checkpoint.policy = "fixed";
  in.run.checkpoint.interval_s = 3 * 3600;
  in.run.checkpoint.optimum_interval_s = 396;
  in.run.checkpoint.wall_vs_optimum = 0.052;
  const std::string html = render_html(in);
  EXPECT_NE(html.find("fixed, every 3.0 h, write"), std::string::npos);
  EXPECT_NE(html.find("Daly&#39;s optimum 6.6 min (the given interval&#39;s expected wall time is 5.2% longer)"),
            std::string::npos);
  in.run.checkpoint.policy = "daly";
  EXPECT_EQ(render_html(in).find("Daly&#39;s optimum 6.6 min"), std::string::npos);
}

TEST(ReportHash, Fnv1a64MatchesPublishedTestVectors) {
  // draft-eastlake-fnv, test vectors for FNV-1a 64.
  EXPECT_EQ(hex64(fnv1a64("")), "cbf29ce484222325");
  EXPECT_EQ(hex64(fnv1a64("a")), "af63dc4c8601ec8c");
  EXPECT_EQ(hex64(fnv1a64("foobar")), "85944171f73967e8");
}

TEST(ReportSvg, NumbersAndTicks) {
  EXPECT_EQ(svg_num(-0.0), "0.0");
  EXPECT_EQ(svg_num(1.25, 1), "1.2");
  EXPECT_EQ(short_num(2.5), "2.5");
  EXPECT_EQ(short_num(6.4e6), "6.4M");
  EXPECT_EQ(nice_ticks(0, 10, 5), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  // Half-day ticks past 100 days kept their half (a user trial read "113 | 114 | 114 | 114").
  EXPECT_EQ(tick_labels({113, 113.5, 114, 114.5}), (std::vector<std::string>{"113.0", "113.5", "114.0", "114.5"}));
  EXPECT_EQ(tick_labels({0, 2, 4}), (std::vector<std::string>{"0", "2", "4"}));
}

TEST(ReportCharts, ACutTimelineEndsTheJobLaneWhereTheRecordingStops) {
  // Cut inside the second stop (after its detection): that stop is not drawn as lasting to the end of the run, and
  // the axis says from which day nothing was recorded.
  auto in = sample_input();
  auto& ev = in.run.sample_timeline;
  ev.erase(ev.begin() + 6);  // the second stop's resume
  ev.insert(ev.begin() + 6, {seconds(86400 * 40 + 700), "timeline_truncated", ""});
  const std::string svg = detail::chart_failure_timeline(in);
  std::size_t stops = 0;
  for (std::size_t at = svg.find("stopped day"); at != std::string::npos; at = svg.find("stopped day", at + 1))
    ++stops;
  EXPECT_EQ(stops, 1u) << svg;
  EXPECT_NE(svg.find("events after day 40.0 not recorded"), std::string::npos);
}

TEST(ReportFiles, WrittenAtomicallyWithNoTemporaryLeftBehind) {
  const auto dir = temp_dir("atomic");
  const auto in = sample_input();
  const auto paths = sim::cli::write_report_files((dir / "out").string(), in, "{}\n");
  ASSERT_EQ(paths.size(), 4U);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir / "out"))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"report.html", "result.csv", "result.json", "summary.md"}));
  EXPECT_EQ(read(dir / "out" / "report.html"), render_html(in));
  EXPECT_EQ(read(dir / "out" / "result.csv"), render_csv(in));
  fs::remove_all(dir);
}

TEST(ReportFiles, FailedWriteLeavesTheOldFileWholeAndNoTemporary) {
  const auto dir = temp_dir("failed");
  // A file-size limit of 1 byte (RLIMIT_FSIZE, which binds root too) makes the temporary's write fail with EFBIG
  // before the rename, as a full disk or an interrupted writer would.
  const fs::path target = dir / "report.html";
  { std::ofstream(target) << "old complete report"; }
  struct rlimit old_limit {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit tiny = old_limit;
  tiny.rlim_cur = 1;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &tiny), 0);
  bool threw = false;
  try {
    sim::base::write_file_atomic(target.string(), "new report");
  } catch (const sim::base::ConfigError&) {
    threw = true;
  }
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_TRUE(threw);
  EXPECT_EQ(read(target), "old complete report");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  // Without write permission on the folder (meaningless for root, who may write anyway).
  if (::geteuid() != 0) {
    const fs::path ro = dir / "ro";
    fs::create_directories(ro);
    { std::ofstream(ro / "report.html") << "old"; }
    fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
    EXPECT_THROW(sim::base::write_file_atomic((ro / "report.html").string(), "new"), sim::base::ConfigError);
    fs::permissions(ro, fs::perms::owner_all);
    EXPECT_EQ(read(ro / "report.html"), "old");
  }
  fs::remove_all(dir);
}

TEST(ReportCli, RunOutWritesTheFourFilesWithEveryChart) {
  const auto dir = temp_dir("cli");
  const auto o =
      support::trainsim({"run", support::kDefaultScenario, "--trials", "20", "--out", dir.string(), "--json"});
  ASSERT_EQ(o.code, sim::cli::kExitOk) << o.err;
  for (const char* f : {"report.html", "summary.md", "result.json", "result.csv"})
    EXPECT_TRUE(fs::is_regular_file(dir / f)) << f;
  const std::string html = read(dir / "report.html");
  for (const auto& id : chart_ids())
    EXPECT_GE(shapes(svg_of(html, id)), 4) << id;
  // The pipeline chart comes from the replica timeline: every stage's forward and backward passes.
  EXPECT_GE(count(svg_of(html, "pipeline-timeline"), "class=\"op\""), 4 * 2 * 8);
  EXPECT_EQ(read(dir / "result.json"), o.out);  // the contract JSON, as printed
  EXPECT_GE(count(svg_of(html, "sensitivity-tornado"), "<rect"), 4);
  EXPECT_EQ(parse_csv(read(dir / "result.csv")).size(), 2U);
  fs::remove_all(dir);
}

TEST(ReportCli, ScenarioNamedScriptRendersAsText) {
  const auto dir = temp_dir("xss");
  const auto o = support::trainsim(
      {"run", support::kDefaultScenario, "--trials", "8", "--set", "name=" + kXss, "--out", dir.string()});
  ASSERT_EQ(o.code, sim::cli::kExitOk) << o.err;
  const std::string html = read(dir / "report.html"), md = read(dir / "summary.md");
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(md.find("<script"), std::string::npos);
  EXPECT_NE(md.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace reports
