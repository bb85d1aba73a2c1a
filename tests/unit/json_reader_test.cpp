// The strict JSON reader: one pass collects every problem, each naming the file, the path, what was found and
// what is accepted.
#include "sim/base/json_reader.hpp"

#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>

namespace sim::base {
namespace {

using namespace literals;

std::vector<Diagnostic> read_all(std::string_view text, auto body) {
  JsonDocument doc = JsonDocument::parse_text(text, "t.json");
  Diagnostics diag("t.json");
  JsonReader r = doc.root(diag);
  body(r);
  r.finish();
  return diag.items();
}

TEST(JsonReader, ReadsTypedFieldsAndQuantities) {
  int tp = 0;
  Time t;
  Bandwidth bw;
  std::string name;
  bool sp = false;
  auto d = read_all(R"({"tp": 8, "t": "10 min", "bw": "400 Gbit/s", "name": "x", "sp": true})", [&](JsonReader& r) {
    r.required("tp", tp, Range::at_least(1));
    r.required("t", t);
    r.required("bw", bw);
    r.required("name", name);
    r.optional("sp", sp);
  });
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(tp, 8);
  EXPECT_EQ(t, 10_min);
  EXPECT_DOUBLE_EQ(bw.bytes_per_s, 50e9);
  EXPECT_EQ(name, "x");
  EXPECT_TRUE(sp);
}

TEST(JsonReader, CollectsEveryProblemInOnePass) {
  int tp = 1;
  int pp = 1;
  Time t;
  auto d = read_all(R"({"tp": "8", "pp": 0, "t": 30, "pipline": 2})", [&](JsonReader& r) {
    r.required("tp", tp);
    r.required("pp", pp, Range::at_least(1));
    r.required("t", t);
    r.optional("pipeline", pp);
    r.required("dp", pp);
  });
  ASSERT_EQ(d.size(), 5u);
  EXPECT_EQ(d[0].path, "/tp");
  EXPECT_NE(d[0].message.find("expected an integer, found \"8\" (a string)"), std::string::npos) << d[0].message;
  EXPECT_EQ(d[1].path, "/pp");
  EXPECT_NE(d[1].message.find("at least 1"), std::string::npos) << d[1].message;
  EXPECT_EQ(d[2].path, "/t");
  EXPECT_NE(d[2].message.find("has no unit"), std::string::npos) << d[2].message;
  EXPECT_EQ(d[3].path, "/dp");
  EXPECT_NE(d[3].message.find("missing required field"), std::string::npos);
  EXPECT_NE(d[4].message.find("unknown key \"pipline\" (did you mean \"pipeline\"?)"), std::string::npos)
      << d[4].message;
  EXPECT_EQ(tp, 1) << "a bad value leaves the output unchanged";
}

TEST(JsonReader, NestedPathsAreJsonPointers) {
  auto d = read_all(R"({"cluster": {"network": {"nic_bandwidth": "400"}}})", [&](JsonReader& r) {
    auto c = r.required_object("cluster");
    auto n = c->required_object("network");
    Bandwidth bw;
    n->required("nic_bandwidth", bw);
  });
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].to_string().substr(0, 38), "t.json: /cluster/network/nic_bandwidth");
}

TEST(JsonReader, EnumsListTheAcceptedValuesWithASuggestion) {
  std::string rec;
  auto d = read_all(R"({"recompute": "selectiv"})", [&](JsonReader& r) {
    r.required_enum("recompute", rec, {"none", "selective", "full"});
  });
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].message.find("did you mean \"selective\""), std::string::npos) << d[0].message;
  EXPECT_NE(d[0].message.find("\"full\""), std::string::npos) << d[0].message;
}

TEST(JsonReader, IntegersMustBeWholeAndFit) {
  int a = 0;
  std::int64_t b = 0;
  auto d = read_all(R"({"a": 2.5, "b": 9223372036854775808})", [&](JsonReader& r) {
    r.required("a", a);
    r.required("b", b);
  });
  ASSERT_GE(d.size(), 2u);
  EXPECT_NE(d[0].message.find("expected an integer"), std::string::npos);
  EXPECT_NE(d[1].message.find("is out of range; expected an integer from -9223372036854775808 to 9223372036854775807"),
            std::string::npos)
      << d[1].message;
  // A whole number beyond uint64 reaches the reader as a double: out of range, not "expected an integer". Whole
  // bounds are written as integers (a user trial read "between 1 and 1.04858e+06").
  int c = 0, e = 0, seed = 0, count = 0;
  d = read_all(R"({"c": 99999999999999999999, "e": -6144, "seed": 1e30, "count": 5000000000})", [&](JsonReader& r) {
    r.required("c", c);
    r.required("e", e, Range::between(1, 1 << 20));
    r.required("seed", seed, Range::at_least(0));
    r.required("count", count, Range::positive());
  });
  ASSERT_EQ(d.size(), 4u);
  EXPECT_NE(d[0].message.find("is out of range; expected an integer from -2147483648 to 2147483647"), std::string::npos)
      << d[0].message;
  EXPECT_NE(d[1].message.find("between 1 and 1048576"), std::string::npos) << d[1].message;
  // Beyond the type, a key with bounds of its own states them, not the type's negative half (a tester's trial).
  EXPECT_NE(d[2].message.find("expected an integer from 0 to 2147483647"), std::string::npos) << d[2].message;
  EXPECT_NE(d[3].message.find("expected an integer from 1 to 2147483647"), std::string::npos) << d[3].message;
}

TEST(JsonDocument, NumbersBeyondDoubleRangeAreRejectedAtParse) {
  EXPECT_THROW(JsonDocument::parse_text(R"({"c": 1e400})", "t.json"), ConfigError);
  EXPECT_THROW(JsonDocument::parse_text(R"({"c": NaN})", "t.json"), ConfigError);
  EXPECT_THROW(JsonDocument::parse_text(R"({"c": Infinity})", "t.json"), ConfigError);
}

TEST(JsonDocument, RejectsBrokenFilesWithTheirName) {
  support::TempDir dir;
  auto expect_error = [](const std::string& path, const std::string& fragment) {
    try {
      JsonDocument::parse_file(path);
      ADD_FAILURE() << "no error for " << path;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_error(dir.write("empty.json", ""), "empty");
  expect_error(dir.write("trunc.json", R"({"a": [1, 2)"), "invalid JSON");
  expect_error(dir.write("dup.json", R"({"a": 1, "a": 2})"), "duplicate key \"a\"");
  expect_error(dir.write("utf8.json", "{\"a\": \"\xff\xfe\"}"), "invalid JSON");
  expect_error(dir.write("deep.json", std::string(1000, '[') + std::string(1000, ']')), "nesting deeper");
  expect_error((dir.path() / "missing.json").string(), "no such file");
  expect_error(dir.path().string(), "is a directory");
}

TEST(JsonDocument, SetOverridesDottedPathsAsJsonOrString) {
  JsonDocument doc = JsonDocument::parse_text(R"({"parallel": {"tp": 8}, "model": "llama3-70b"})", "t.json");
  doc.set("parallel.tp", "4");
  doc.set("cluster.network.nic_bandwidth", "200 Gbit/s");
  Diagnostics diag("t.json");
  JsonReader r = doc.root(diag);
  int tp = 0;
  r.required_object("parallel")->required("tp", tp);
  Bandwidth bw;
  r.required_object("cluster")->required_object("network")->required("nic_bandwidth", bw);
  EXPECT_EQ(tp, 4);
  EXPECT_DOUBLE_EQ(bw.bytes_per_s, 25e9);
  EXPECT_THROW(doc.set("model.layers", "2"), ConfigError) << "model is a string, not an object";
  EXPECT_THROW(doc.set("a..b", "2"), ConfigError);
}

TEST(DidYouMean, SuggestsOnlyCloseWords) {
  EXPECT_EQ(did_you_mean("pipline", {"pipeline", "tp"}), "pipeline");
  EXPECT_EQ(did_you_mean("zzzzzz", {"pipeline", "tp"}), "");
}

}  // namespace
}  // namespace sim::base
