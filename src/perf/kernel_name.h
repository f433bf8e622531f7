/* kernel_name.h — GEMM kernel-name parsing (perf-model spec §8): the
 * transpose flags (and, for ROCm Tensile names, the macro tile) a GEMM
 * kernel's name encodes. The GEMM models store the first parsed name's
 * transpose tuple as `param: transpose`; nothing else depends on it. */
#ifndef TL_KERNEL_NAME_H
#define TL_KERNEL_NAME_H

#include <stddef.h>
#include <stdint.h>

enum { TL_KN_NONE = -1 }; /* Python None for a flag or a tile size */

typedef struct tl_gemm_kname {
    int trans_a, trans_b;         /* 1 True, 0 False, TL_KN_NONE */
    int64_t mt_m, mt_n, depth_u;  /* Tensile MT<m>x<n>x<u>; TL_KN_NONE if absent (always for nvjet) */
} tl_gemm_kname;

/* Parses one kernel name: ROCm Tensile (`C???_A???_B???` anywhere) or an
 * NVIDIA name starting with `nvjet`. Returns 1 when recognised. */
int tl_kname_parse_gemm(const char *name, tl_gemm_kname *out);

/* The first of names[0..n) that parses (the reference's "first wins");
 * returns its index, or -1 when none parses. */
long tl_kname_first_gemm(const char *const *names, size_t n, tl_gemm_kname *out);

#endif
