// Measured GEMM tables of the hardware presets (cost/GemmPresets.h), each with its source.
#include "cost/GemmPresets.h"

#include <array>

namespace schedc::cost {

namespace {

// A grid's rows: m, n and the TFLOP/s at k = 256, 512, 1024, 2048, 4096.
struct GridRow {
  double m, n;
  std::array<double, 5> tflops;
};

GemmTable fromGrid(std::initializer_list<GridRow> rows) {
  constexpr std::array<double, 5> ks{256, 512, 1024, 2048, 4096};
  std::vector<GemmPoint> points;
  for (const GridRow &row : rows)
    for (size_t i = 0; i < ks.size(); ++i)
      points.push_back({row.m, row.n, ks[i], row.tflops[i] * 1e12});
  return GemmTable(std::move(points));
}

} // namespace

// H100 SXM (sm_90): the OpenXLA authors' measured matmul table, the entries of batch 1 at
// m, n, k in 256 .. 4096 ("bf16xbf16->bf16" and "f32xf32->f32", the latter on TF32 tensor
// cores: 401.6 TFLOP/s at 4096³, six times the fp32 peak), from
// xla/service/gpu/model/matmul_interpolator_data.h (kDefaultMatmulPTable; read at
// tensorflow/tensorflow commit 372d578bb861cc5804e56d37d93aec931a59762c, third_party/xla),
// rounded to 0.1 TFLOP/s.
GemmTable h100Bf16Gemms() {
  return fromGrid({
      {256, 256, {6.5, 11.5, 19.5, 31.1, 84.3}},         {256, 512, {11.5, 22.0, 39.1, 62.4, 91.7}},
      {256, 1024, {22.7, 41.8, 72.5, 119.0, 172.3}},     {256, 2048, {41.8, 78.2, 138.1, 215.8, 285.9}},
      {256, 4096, {78.0, 138.1, 225.2, 324.6, 412.0}},   {512, 256, {11.5, 21.8, 39.3, 60.1, 91.1}},
      {512, 512, {21.6, 40.7, 71.2, 114.7, 174.5}},      {512, 1024, {43.5, 80.5, 138.7, 216.5, 309.6}},
      {512, 2048, {79.3, 143.4, 232.6, 342.4, 430.5}},   {512, 4096, {134.2, 236.3, 373.3, 522.2, 644.1}},
      {1024, 256, {22.0, 40.9, 68.3, 113.2, 169.7}},     {1024, 512, {42.9, 82.2, 141.3, 220.0, 298.9}},
      {1024, 1024, {82.0, 145.6, 236.3, 350.0, 470.1}},  {1024, 2048, {139.5, 237.6, 373.3, 524.3, 653.5}},
      {1024, 4096, {209.7, 338.9, 490.3, 634.2, 738.5}}, {2048, 256, {43.6, 77.3, 135.8, 216.1, 307.5}},
      {2048, 512, {83.9, 142.8, 235.9, 347.7, 451.2}},   {2048, 1024, {141.6, 238.4, 373.3, 523.3, 653.1}},
      {2048, 2048, {213.0, 345.5, 493.9, 632.0, 738.0}}, {2048, 4096, {299.3, 450.4, 594.2, 715.4, 753.6}},
      {4096, 256, {82.2, 137.2, 217.2, 304.7, 376.2}},   {4096, 512, {142.5, 238.8, 370.8, 521.7, 650.0}},
      {4096, 1024, {216.5, 343.7, 488.1, 632.0, 738.5}}, {4096, 2048, {304.0, 447.0, 593.2, 716.1, 758.4}},
      {4096, 4096, {392.2, 543.1, 677.4, 738.7, 783.3}},
  });
}

GemmTable h100Tf32Gemms() {
  return fromGrid({
      {256, 256, {5.7, 9.2, 14.3, 19.2, 59.2}},          {256, 512, {9.7, 15.6, 21.9, 28.6, 46.4}},
      {256, 1024, {16.8, 25.9, 40.4, 56.8, 73.1}},       {256, 2048, {32.1, 50.5, 67.7, 95.3, 119.9}},
      {256, 4096, {54.5, 79.3, 101.4, 131.5, 177.8}},    {512, 256, {9.7, 15.7, 22.5, 28.6, 79.0}},
      {512, 512, {16.9, 26.0, 39.0, 55.1, 71.9}},        {512, 1024, {32.7, 50.7, 67.6, 93.7, 120.6}},
      {512, 2048, {54.1, 79.8, 111.8, 157.3, 181.3}},    {512, 4096, {69.5, 114.0, 162.1, 225.3, 264.2}},
      {1024, 256, {17.1, 26.0, 39.7, 55.7, 69.8}},       {1024, 512, {32.4, 45.2, 68.5, 94.6, 118.5}},
      {1024, 1024, {54.0, 80.4, 107.8, 160.4, 181.6}},   {1024, 2048, {82.3, 97.6, 174.8, 224.1, 266.5}},
      {1024, 4096, {106.2, 149.5, 225.9, 269.1, 324.8}}, {2048, 256, {31.7, 45.0, 65.7, 96.0, 118.2}},
      {2048, 512, {54.6, 80.6, 107.3, 174.1, 165.5}},    {2048, 1024, {81.6, 124.5, 186.9, 254.6, 307.9}},
      {2048, 2048, {113.6, 147.7, 250.6, 329.2, 366.8}}, {2048, 4096, {143.5, 192.3, 294.6, 316.6, 383.5}},
      {4096, 256, {54.1, 78.4, 106.0, 178.7, 216.3}},    {4096, 512, {80.9, 116.7, 177.8, 259.7, 315.6}},
      {4096, 1024, {113.1, 144.7, 259.1, 335.9, 291.1}}, {4096, 2048, {132.1, 193.9, 296.9, 311.3, 384.0}},
      {4096, 4096, {184.0, 235.0, 309.0, 325.0, 401.6}},
  });
}

// A100 SXM: one published point, the maximum achievable matmul FLOP/s (bf16, CUDA 12.1)
// measured with mamf-finder.py over a scan of shapes: 267.9 TFLOP/s at 6912 x 16384 x 2048
// (S. Bekman, "Machine Learning Engineering", compute/accelerator/README.md, "Maximum
// Achievable Matmul FLOPS comparison table"). No published sweep of smaller shapes was in
// reach: below it only the roofline (Hardware::gemmRate) shapes the rate.
GemmTable a100Bf16Gemms() {
  return GemmTable({{6912, 16384, 2048, 267.9e12}});
}

} // namespace schedc::cost
