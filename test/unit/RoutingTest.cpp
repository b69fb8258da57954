// The real backends' mixture-of-experts layer (backend/Experts.h): the fixed router's
// copies reach every expert evenly and each once, a whole layer's mask is its slices'
// masks put together, and the masked kernel computes the sum of a row's experts; the byte
// model counts the token copies the cpu backend holds.
#include "backend/Experts.h"
#include "cpu/Kernels.h"
#include "sim/Bytes.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <map>
#include <set>

using namespace schedc;
using backend::Routing;

namespace {
Routing routing(int64_t experts, int64_t topK, int64_t tokens, int64_t units) {
  return Routing{.experts = experts, .topK = topK, .tokens = tokens, .units = units};
}
} // namespace

TEST(Routing, EveryCopyReachesOneSliceAndTheExpertsEvenly) {
  for (auto [experts, topK, slices] : {std::tuple{4, 2, 2}, {4, 1, 4}, {8, 2, 2}, {6, 3, 3}, {2, 2, 1}}) {
    const Routing r = routing(experts, topK, 12, 24);
    std::set<std::pair<int64_t, int64_t>> seen; // (token, choice)
    std::map<int64_t, int64_t> perExpert;
    for (int64_t s = 0; s < slices; ++s) {
      std::vector<Routing::Copy> copies = r.copiesTo(s, slices);
      EXPECT_EQ(static_cast<int64_t>(copies.size()), 12 * topK / slices);
      EXPECT_EQ(r.copiesPerSlice(slices), static_cast<int64_t>(copies.size()));
      for (const Routing::Copy &c : copies) {
        EXPECT_TRUE(seen.insert({c.token, c.choice}).second);
        EXPECT_EQ(r.sliceOf(c.expert, slices), s);
        ++perExpert[c.expert];
      }
    }
    EXPECT_EQ(static_cast<int64_t>(seen.size()), 12 * topK);
    for (auto [expert, rows] : perExpert)
      EXPECT_EQ(rows, 12 * topK / experts) << "expert " << expert;
    for (int64_t t = 0; t < 12; ++t) { // a token's experts are distinct
      std::set<int64_t> mine;
      for (int64_t j = 0; j < topK; ++j)
        mine.insert(r.expertOf(t, j));
      EXPECT_EQ(static_cast<int64_t>(mine.size()), topK);
    }
  }
}

TEST(Routing, WholeMaskIsTheSlicesMasksTogether) {
  const Routing r = routing(4, 2, 8, 8);
  const int64_t slices = 2, per = r.units / slices;
  std::vector<float> whole = r.wholeMask(8, 0, r.units), together(whole.size(), 0.0f);
  for (int64_t s = 0; s < slices; ++s) {
    std::vector<Routing::Copy> copies = r.copiesTo(s, slices);
    std::vector<float> mask = r.copiesMask(copies, static_cast<int64_t>(copies.size()), s * per, per);
    for (size_t i = 0; i < copies.size(); ++i)
      for (int64_t u = 0; u < per; ++u)
        together[copies[i].token * r.units + s * per + u] += mask[i * per + u];
  }
  EXPECT_EQ(whole, together);
  EXPECT_EQ(std::count(whole.begin(), whole.end(), 1.0f), 8 * 2 * r.unitsPerExpert()); // k experts a row
}

TEST(Routing, MaskedLayerIsTheSumOfEachRowsExperts) {
  const int64_t h = 8, units = backend::innerUnits(h), tokens = 4;
  const Routing r = routing(4, 2, tokens, units);
  std::vector<float> x(tokens * h), w(h * h);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = 0.05f * static_cast<float>(i % 11) - 0.25f;
  std::vector<float> mask = r.wholeMask(tokens, 0, units);
  std::vector<float> y = cpu::forward(x, tokens, w.data(), units, h, false, mask.data());
  const int64_t unit = backend::unitElements(h), per = r.unitsPerExpert();
  for (int64_t t = 0; t < tokens; ++t) {
    std::vector<float> row(x.begin() + t * h, x.begin() + (t + 1) * h), sum(h, 0.0f);
    for (int64_t j = 0; j < r.topK; ++j) { // expert e alone: its units of the weight
      int64_t e = r.expertOf(t, j);
      std::vector<float> out = cpu::forward(row, 1, w.data() + e * per * unit, per, h, false);
      for (int64_t i = 0; i < h; ++i)
        sum[i] += out[i];
    }
    for (int64_t i = 0; i < h; ++i)
      EXPECT_NEAR(y[t * h + i], sum[i], 1e-6) << "token " << t;
  }
  std::vector<float> dense = cpu::forward(x, tokens, w.data(), units, h, false);
  EXPECT_NE(dense, y);
}

TEST(Routing, WhatTheRealLayerCannotTake) {
  backend::Dims d;
  d.hidden = 16;
  d.tokens = 8;
  EXPECT_EQ(backend::routingOf(d, 0, 2).routing.experts, 2); // one expert a slice
  EXPECT_EQ(backend::routingOf(d, 0, 1).error, "");
  d.experts = 6;
  EXPECT_EQ(backend::routingOf(d, 3, 2).error,
            "layer 3's 8 inner units (--hidden / 2) do not divide among its 6 experts; give --hidden a multiple of 12");
  d.experts = 8;
  d.tokens = 6;
  d.topK = 2;
  EXPECT_EQ(backend::routingOf(d, 0, 1).error, ""); // a whole layer needs no balance
  EXPECT_NE(backend::routingOf(d, 0, 2).error.find("give --tokens a multiple of 4"), std::string::npos);
}

TEST(Routing, BytesCountTheTokenCopies) {
  sim::ByteModel m;
  m.hidden = 16;
  m.tokens = 8;
  m.topK = 2;
  sim::Value routed;
  routed.kind = sim::Kind::Activation;
  routed.split = sim::Split::Routed;
  routed.batches = sim::makeSet(sim::IntSet::range(0, 2));
  EXPECT_EQ(m.elements(routed), 2.0 * 8 * 16 * 2);
  sim::Value dispatched = routed;
  dispatched.split = sim::Split::Dispatched;
  dispatched.total = 4;
  EXPECT_EQ(m.elements(dispatched), 2.0 * 8 * 16 * 2 / 4);
  sim::Value whole = routed;
  whole.split = sim::Split::None;
  EXPECT_EQ(m.elements(whole), 2.0 * 8 * 16);
}
