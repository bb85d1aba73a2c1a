// Quantities with units: every accepted form, and a clear error for every rejected one.
#include "sim/base/quantity.hpp"

#include <gtest/gtest.h>

namespace sim::base {
namespace {

using namespace literals;

TEST(Quantity, ParsesTheFormsOfTheScenarioContract) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("400 Gbit/s").value->bytes_per_s, 50e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("50 GB/s").value->bytes_per_s, 50e9);
  EXPECT_EQ(*parse_time("1.5 us").value, 1500_ns);
  EXPECT_EQ(*parse_time("10 min").value, 10_min);
  EXPECT_EQ(*parse_time("54 d").value, 54_d);
  EXPECT_DOUBLE_EQ(parse_count("15T").value->n, 15e12);
  EXPECT_DOUBLE_EQ(parse_money("2.50 USD").value->usd, 2.5);
  EXPECT_DOUBLE_EQ(parse_money("25M USD").value->usd, 25e6);
  // SI's lower-case kilo as well as K (a user trial: "300k USD" was refused where the output prints "116.7K USD").
  EXPECT_DOUBLE_EQ(parse_money("300k USD").value->usd, 300e3);
  EXPECT_DOUBLE_EQ(parse_money("300K USD").value->usd, 300e3);
  EXPECT_EQ(*parse_bytes("80 GiB").value, 80_GiB);
  EXPECT_EQ(*parse_bytes("80 GB").value, 80_GB);
  EXPECT_DOUBLE_EQ(parse_flop_rate("989 TFLOP/s").value->flops_per_s, 989e12);
  EXPECT_DOUBLE_EQ(parse_power("10.2 kW").value->watts, 10200);
  EXPECT_DOUBLE_EQ(parse_count("70.6B").value->n, 70.6e9);
  EXPECT_DOUBLE_EQ(*parse_fraction("5%").value, 0.05);
}

TEST(Quantity, AcceptsSpacingExponentsAndAliases) {
  EXPECT_EQ(*parse_time("30s").value, 30_s);
  EXPECT_EQ(*parse_time("  2 h ").value, 2_h);
  EXPECT_EQ(*parse_time("1e3 ms").value, 1_s);
  EXPECT_DOUBLE_EQ(parse_bandwidth("400 Gbps").value->bytes_per_s, 50e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1 Tbit/s").value->bytes_per_s, 125e9);
  EXPECT_DOUBLE_EQ(parse_count("1000").value->n, 1000);
}

TEST(Quantity, DimensionalValueWithoutUnitIsAnError) {
  auto p = parse_bandwidth("400");
  ASSERT_FALSE(p);
  EXPECT_NE(p.error.find("has no unit"), std::string::npos) << p.error;
  EXPECT_NE(p.error.find("Gbit/s"), std::string::npos) << "the message lists accepted units: " << p.error;
  EXPECT_FALSE(parse_time("10"));
  EXPECT_FALSE(parse_bytes("80"));
  EXPECT_FALSE(parse_money("2.50"));
}

TEST(Quantity, UnknownUnitsNameTheUnitAndTheAcceptedOnes) {
  auto p = parse_time("10 minutes");
  ASSERT_FALSE(p);
  EXPECT_NE(p.error.find("\"minutes\""), std::string::npos) << p.error;
  EXPECT_NE(p.error.find("min"), std::string::npos) << p.error;
  EXPECT_FALSE(parse_bandwidth("400 Gbits"));
  EXPECT_FALSE(parse_bytes("80 gb")) << "units are case-sensitive: gb is not GB";
  EXPECT_FALSE(parse_count("15X"));
}

TEST(Quantity, RejectsGarbageNegativeNonFiniteAndOutOfRange) {
  EXPECT_FALSE(parse_time(""));
  EXPECT_FALSE(parse_time("abc"));
  EXPECT_FALSE(parse_time("-5 s"));
  EXPECT_FALSE(parse_time("nan s"));
  EXPECT_FALSE(parse_time("inf s"));
  EXPECT_FALSE(parse_time("1e300 d"));
  EXPECT_FALSE(parse_time("300 w * 100"));
  EXPECT_FALSE(parse_bytes("1e30 B"));
  EXPECT_FALSE(parse_fraction("5 percent"));
}

TEST(Quantity, DurationsBeyondTheClockRangeAreFine) {
  auto d = parse_duration("884736 d");  // a per-GPU MTBF of a rare fault (one in 54 days on 16,384 GPUs)
  ASSERT_TRUE(d) << d.error;
  EXPECT_DOUBLE_EQ(d.value->days(), 884736);
}

TEST(Units, TransferAndComputeTimesRoundUp) {
  EXPECT_EQ(transfer_time(Bytes{1}, Bandwidth{3e9}), 1_ns) << "nothing non-empty takes 0 ns";
  EXPECT_EQ(transfer_time(Bytes{0}, Bandwidth{3e9}), 0_ns);
  EXPECT_EQ(transfer_time(1_GB, 50_GBps), 20_ms);
  EXPECT_EQ(compute_time(Flops{989e12}, FlopRate{989e12}), 1_s);
}

TEST(Quantity, FormatsForHumans) {
  EXPECT_EQ(format_time(54_d), "54.0 d");
  EXPECT_EQ(format_time(1500_ms), "1.50 s");
  EXPECT_EQ(format_bytes(80_GiB), "80.0 GiB");
  EXPECT_EQ(format_count(Count{70.55e9}), "70.5B");
  EXPECT_EQ(format_money(Money{25e6}), "25.00M USD");
}

}  // namespace
}  // namespace sim::base
