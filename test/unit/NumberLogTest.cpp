// Unit tests of NumberLog (support/numbers/NumberLog.h): every Number comes back as it went
// in — integer or double, its value bit for bit — across the chunks of both its logs.
#include "numbers/NumberLog.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace schedc {
namespace {

bool same(const Number &a, const Number &b) {
  if (a.isInteger() != b.isInteger())
    return false;
  double x = a.asDouble(), y = b.asDouble();
  return a.isInteger() ? a.payload() == b.payload() : std::memcmp(&x, &y, sizeof x) == 0;
}

TEST(NumberLog, GivesBackEveryNumberAsItWentIn) {
  std::vector<Number> in{Number::integer(0),
                         Number::real(0.0),
                         Number::real(-0.0),
                         Number::integer(-1),
                         Number::integer(std::numeric_limits<int64_t>::min()),
                         Number::integer(std::numeric_limits<int64_t>::max()),
                         Number::real(19.90000000000001),
                         Number::real(std::numeric_limits<double>::infinity()),
                         Number::real(std::numeric_limits<double>::denorm_min())};
  std::mt19937_64 rng(7);
  while (in.size() < 5000) // past a chunk of payloads (128) and of bits (1024 numbers) several times
    in.push_back(rng() % 3
                     ? Number::integer(static_cast<int64_t>(rng()))
                     : Number::real(std::ldexp(static_cast<double>(rng() >> 11), static_cast<int>(rng() % 80) - 60)));
  NumberLog log;
  for (const Number &n : in)
    log.push_back(n);
  ASSERT_EQ(log.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i)
    ASSERT_TRUE(same(log[i], in[i])) << i << ": " << log[i].str() << " for " << in[i].str();
  EXPECT_TRUE(same(log.back(), in.back()));
}

// Whether a number is a double is kept per number: an integer after a double stays an integer
// (its string has no `.0`), and the other way round.
TEST(NumberLog, KeepsIntegersAndDoublesApart) {
  NumberLog log;
  log.push_back(Number::real(2.0));
  log.push_back(Number::integer(2));
  EXPECT_EQ(log[0].str(), "2.0");
  EXPECT_EQ(log[1].str(), "2");
}

} // namespace
} // namespace schedc
