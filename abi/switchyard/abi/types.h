/* Switchyard plugin ABI: shared types. C99, no C++ types cross this boundary.
 *
 * Rules (see docs in ABI.md once written):
 *  - Every struct that crosses starts with `uint32_t struct_size`, set by whoever fills it.
 *    A reader only touches fields that struct_size covers; fields are appended, never moved.
 *  - Handles are opaque. Whoever creates an object releases it.
 *  - Fallible calls return sy_status; the message is read with the handle's last_error(). */
#ifndef SWITCHYARD_ABI_TYPES_H
#define SWITCHYARD_ABI_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Packed ABI version: major in the high 16 bits, minor in the low 16. */
#define SY_ABI_VERSION_MAJOR 1
#define SY_ABI_VERSION_MINOR 6
#define SY_MAKE_VERSION(major, minor) ((uint32_t)(((uint32_t)(major) << 16) | ((uint32_t)(minor))))
#define SY_VERSION_MAJOR(v) ((uint32_t)(v) >> 16)
#define SY_VERSION_MINOR(v) ((uint32_t)(v) & 0xffffu)
#define SY_ABI_VERSION SY_MAKE_VERSION(SY_ABI_VERSION_MAJOR, SY_ABI_VERSION_MINOR)

#if defined(_WIN32)
#define SY_EXPORT __declspec(dllexport)
#else
#define SY_EXPORT __attribute__((visibility("default")))
#endif

typedef enum sy_status {
  SY_OK = 0,
  SY_ERR_INVALID_ARG = 1,
  SY_ERR_NOT_FOUND = 2,
  SY_ERR_UNSUPPORTED = 3,
  SY_ERR_OUT_OF_MEMORY = 4,
  SY_ERR_DEVICE = 5,
  SY_ERR_CANCELLED = 6,
  SY_ERR_UNAVAILABLE = 7,
  SY_ERR_VERSION = 8,
  SY_ERR_INTERNAL = 9,
  SY_STATUS_FORCE_32BIT = 0x7fffffff
} sy_status;

/* Element types; values equal ggml's type ids so GGUF tensors map one to one. */
typedef enum sy_dtype {
  SY_DTYPE_F32 = 0,
  SY_DTYPE_F16 = 1,
  SY_DTYPE_Q8_0 = 8,
  SY_DTYPE_I32 = 26,
  SY_DTYPE_BF16 = 30,
  /* ---- since 1.3: ggml's quantised block types (layouts in ggml-common.h) ---- */
  SY_DTYPE_Q4_0 = 2,
  SY_DTYPE_Q4_1 = 3,
  SY_DTYPE_Q5_0 = 6,
  SY_DTYPE_Q5_1 = 7,
  SY_DTYPE_Q2_K = 10,
  SY_DTYPE_Q3_K = 11,
  SY_DTYPE_Q4_K = 12,
  SY_DTYPE_Q5_K = 13,
  SY_DTYPE_Q6_K = 14,
  SY_DTYPE_IQ4_NL = 20,
  SY_DTYPE_IQ4_XS = 23,
  /* ---- since 1.6 ---- */
  SY_DTYPE_MXFP4 = 39, /* OCP microscaling FP4: 32 E2M1 values and one E8M0 scale (gpt-oss) */
  SY_DTYPE_FORCE_32BIT = 0x7fffffff
} sy_dtype;

/* One configuration parameter, passed as text; the plugin parses what it needs. */
typedef struct sy_param {
  const char* key;
  const char* value;
} sy_param;

typedef enum sy_log_level {
  SY_LOG_TRACE = 0,
  SY_LOG_DEBUG = 1,
  SY_LOG_INFO = 2,
  SY_LOG_WARN = 3,
  SY_LOG_ERROR = 4,
  SY_LOG_LEVEL_FORCE_32BIT = 0x7fffffff
} sy_log_level;

#ifdef __cplusplus
}
#endif
#endif
