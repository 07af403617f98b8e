// Activation quantization for the quantized matrix products: fp32 rows become 8-bit blocks
// (Q8_0, Q8_1 or Q8_K, by the weight type) before the integer dot products, exactly as ggml's CPU
// backend does on an AVX2/AVX-512 machine, so that Sluice lands where llama.cpp does on a
// quantized GGUF file.
//
// ggml has two roundings for Q8_0/Q8_1: its scalar reference (id = 1 / (amax / 127), roundf:
// half away from zero) and its x86 SIMD path (id = 127 / amax, round to nearest even). The
// reference logits were made on an AVX-512 build, so the SIMD rounding is the one used here.
// Q8_K has one rounding on x86 (the reference: iscale = -127 / max, where max is the first
// element of largest magnitude, to nearest even). ggml's 4-row packed Q8_K quantizer (used for
// repacked Q4_K/Q2_K weights) picks the sign of iscale differently only when +amax and -amax
// both occur in a block; that tie is not reproduced.
//
// Results are bit-identical for every instruction set (every step is exact or one IEEE
// operation; the file is built with -ffp-contract=off).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/core/quant_blocks.h"

namespace sluice {

// The activation blocks a weight type's dot product takes (activation_block_type in
// cpu_quant_operands.h says which).
enum class ActivationBlockType : uint8_t { Q8_0, Q8_1, Q8_K };

// Returns the elements per block of an activation type (32 or 256).
int64_t activation_block_elements(ActivationBlockType type);

// x[n] -> y[n / 32]: d = fp16(amax / 127), q = round_to_nearest_even(x * (127 / amax)).
// Precondition: n is a multiple of 32.
void quantize_row_q8_0(const float* x, quant::BlockQ8_0* y, int64_t n);

// As quantize_row_q8_0, plus s = fp16(d * sum(q)) with the unrounded d. Precondition: n % 32 == 0.
void quantize_row_q8_1(const float* x, quant::BlockQ8_1* y, int64_t n);

// x[n] -> y[n / 256]: iscale = -127 / max (max: the first element of largest |x|),
// q = min(127, round_to_nearest_even(iscale * x)), d = 1 / iscale, bsums = sums of 16.
// Precondition: n is a multiple of 256.
void quantize_row_q8_K(const float* x, quant::BlockQ8_K* y, int64_t n);

}  // namespace sluice
