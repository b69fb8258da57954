// GemmPresets — the measured GEMM tables (cost/GemmTable.h) the hardware presets carry;
// each definition states where its numbers come from (GemmPresets.cpp).
#pragma once

#include "cost/GemmTable.h"

namespace schedc::cost {

GemmTable h100Bf16Gemms();
GemmTable h100Tf32Gemms();

} // namespace schedc::cost
