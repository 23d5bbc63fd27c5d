#include "scale_search.h"

#include <algorithm>
#include <cmath>

#include "codec_util.h"

namespace sy::dtype::codec {
namespace {

constexpr float kAllZero = 1e-15f;  // a group whose largest |x| is below this is all zero

inline int clamp(int v, int lo, int hi) {
  return std::max(lo, std::min(hi, v));
}

}  // namespace

float symmetric_scale(int n, int nmax, const float* x, int8_t* L, bool weighted_rmse,
                      const float* qw) {
  const AbsMax m = abs_max(x, n);
  if (m.abs < kAllZero) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    return 0.0f;
  }
  float iscale = -nmax / m.value;
  if (!weighted_rmse) {
    for (int i = 0; i < n; ++i)
      L[i] = (int8_t)(nmax + clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1));
    return 1 / iscale;
  }
  auto weight = [&](int i) { return qw ? qw[i] : x[i] * x[i]; };
  // Least-squares scale of the codes of one trial inverse scale: sum w x l / sum w l^2.
  auto fit = [&](float is, float& sumlx, float& suml2) {
    sumlx = suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = clamp(nearest_int(is * x[i]), -nmax, nmax - 1);
      const float w = weight(i);
      sumlx += w * x[i] * l;
      suml2 += w * l * l;
    }
  };
  auto assign = [&](float is) {
    for (int i = 0; i < n; ++i)
      L[i] = (int8_t)(nmax + clamp(nearest_int(is * x[i]), -nmax, nmax - 1));
  };
  float sumlx, suml2;
  fit(iscale, sumlx, suml2);
  assign(iscale);
  float scale = suml2 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = -(nmax + 0.1f * is) / m.value;
    fit(iscale, sumlx, suml2);
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      assign(iscale);
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

float q3_scale(int n, int nmax, const float* x, int8_t* L) {
  const AbsMax m = abs_max(x, n);
  if (m.abs < kAllZero) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    return 0.0f;
  }
  const float iscale = -nmax / m.value;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
    L[i] = (int8_t)l;
    const float w = x[i] * x[i];
    sumlx += w * x[i] * l;
    suml2 += w * l * l;
  }
  for (int sweep = 0; sweep < 5; ++sweep) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      float slx = sumlx - w * x[i] * L[i];
      if (slx <= 0) continue;
      float sl2 = suml2 - w * L[i] * L[i];
      const int l = clamp(nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
      if (l == L[i]) continue;
      slx += w * x[i] * l;
      sl2 += w * l * l;
      if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
        L[i] = (int8_t)l;
        sumlx = slx;
        suml2 = sl2;
        ++changed;
      }
    }
    if (!changed) break;
  }
  for (int i = 0; i < n; ++i) L[i] = (int8_t)(L[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

float scale_and_min(int n, int nmax, const float* x, const float* weights, uint8_t* L,
                    float* min_out, float rmin, float rdelta, int nstep, bool use_mad) {
  float min = x[0], max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    sum_w += weights[i];
    sum_x += weights[i] * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    *min_out = -min;
    return 0.0f;
  }
  auto error_of = [&](float d) { return use_mad ? std::fabs(d) : d * d; };
  float iscale = nmax / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; ++i) {
    L[i] = (uint8_t)clamp(nearest_int(iscale * (x[i] - min)), 0, nmax);
    best_error += weights[i] * error_of(scale * L[i] + min - x[i]);
  }
  if (nstep < 1) {
    *min_out = -min;
    return scale;
  }
  uint8_t trial[32];
  for (int step = 0; step <= nstep; ++step) {
    iscale = (rmin + rdelta * step + nmax) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = clamp(nearest_int(iscale * (x[i] - min)), 0, nmax);
      trial[i] = (uint8_t)l;
      const float w = weights[i];
      sum_l += w * l;
      sum_l2 += w * l * l;
      sum_xl += w * l * x[i];
    }
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (det <= 0) continue;
    float this_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
    float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
    if (this_min > 0) {  // the min is subtracted, so it may only lower values
      this_min = 0;
      this_scale = sum_xl / sum_l2;
    }
    float err = 0;
    for (int i = 0; i < n; ++i)
      err += weights[i] * error_of(this_scale * trial[i] + this_min - x[i]);
    if (err < best_error) {
      for (int i = 0; i < n; ++i) L[i] = trial[i];
      best_error = err;
      scale = this_scale;
      min = this_min;
    }
  }
  *min_out = -min;
  return scale;
}

}  // namespace sy::dtype::codec
