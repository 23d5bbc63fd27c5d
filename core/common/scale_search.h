// The scale searches of ggml's K-quant reference quantizers (internal to switchyard_common).
// Each picks a scale (and for the asymmetric formats a min) for a group of n values and writes
// the codes L; they follow ggml's arithmetic exactly, so the chosen codes and therefore the bytes
// match llama-quantize's.
#pragma once

#include <cstdint>

namespace sy::dtype::codec {

// Symmetric codes L in [0, 2 * nmax) for x ~ scale * (L - nmax). weighted_rmse (ggml's
// rmse_type 1) refines the scale over 18 trial inverse scales by least squares weighted with
// x^2 (or with qw when given); otherwise it is max / -nmax. Returns the scale.
float symmetric_scale(int n, int nmax, const float* x, int8_t* L, bool weighted_rmse,
                      const float* qw);

// Q3_K's variant: the first guess is refined by moving one code at a time (5 sweeps) while the
// x^2-weighted fit improves. Codes in [0, 2 * nmax). Returns the scale.
float q3_scale(int n, int nmax, const float* x, int8_t* L);

// Asymmetric codes L in [0, nmax] for x ~ scale * L - min, the scale and min fitted by
// weighted least squares over nstep + 1 trial grids (iscale = (rmin + rdelta * step + nmax) /
// range). use_mad: minimise the weighted absolute rather than squared error. Returns the scale;
// *min_out receives the (non-negative) min.
float scale_and_min(int n, int nmax, const float* x, const float* weights, uint8_t* L,
                    float* min_out, float rmin, float rdelta, int nstep, bool use_mad);

}  // namespace sy::dtype::codec
