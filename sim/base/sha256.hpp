// sim/base/sha256.hpp: SHA-256 (FIPS 180-4) of a byte string, as lowercase hex; identifies inputs across machines.
#pragma once
#include <string>
#include <string_view>

namespace sim::base {

/// The SHA-256 digest of `bytes` as 64 lowercase hex digits, as `sha256sum` prints it.
/// Source: NIST FIPS 180-4, "Secure Hash Standard", 2015, Sec. 5.1.1 (padding), 6.2 (computation).
std::string sha256_hex(std::string_view bytes);

}  // namespace sim::base
