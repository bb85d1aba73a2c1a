// SHA-256 against the NIST FIPS 180-4 example vectors (csrc.nist.gov, "Examples with Intermediate Values": SHA256),
// and around the padding boundary where the length needs a second block.
#include "sim/base/sha256.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sim::base {
namespace {

TEST(Sha256, MatchesTheNistExamples) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),  // 56 bytes: two padding blocks
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1'000'000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, EveryLengthAroundABlockGivesADistinctDigest) {
  std::string previous;
  for (int n = 50; n <= 130; ++n) {
    const std::string d = sha256_hex(std::string(static_cast<std::size_t>(n), 'x'));
    EXPECT_EQ(d.size(), 64U);
    EXPECT_NE(d, previous) << n;
    previous = d;
  }
}

}  // namespace
}  // namespace sim::base
