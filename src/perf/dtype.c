/* dtype.c — the dtype tables of perf-model spec §2. */
#include <string.h>
#include <strings.h>

#include "perf_model.h"

static int eq(const char *a, const char *b) { return strcasecmp(a, b) == 0; }

int tl_dtype_bpe(const char *d)
{
    if (!d) return 0;
    static const char *const b8[] = {"double", "long int", NULL};
    static const char *const b4[] = {"float", "scalar", "int", NULL};
    static const char *const b2[] = {"c10::half", "c10::bfloat16", NULL};
    static const char *const b1[] = {"c10::float8_e4m3fnuz", "c10::float8_e4m3fn", "c10::float8_e5m2",
                                     "c10::float8_e8m0fnu", "unsigned char",      "signed char",
                                     "fp8",                  "c10::float4_e2m1fn_x2", "fp4", NULL};
    for (int i = 0; b8[i]; i++) if (eq(d, b8[i])) return 8;
    for (int i = 0; b4[i]; i++) if (eq(d, b4[i])) return 4;
    for (int i = 0; b2[i]; i++) if (eq(d, b2[i])) return 2;
    for (int i = 0; b1[i]; i++) if (eq(d, b1[i])) return 1;
    return 0;
}

const char *tl_dtype_precision(const char *d)
{
    if (!d) return NULL;
    if (eq(d, "float")) return "fp32";
    if (eq(d, "double")) return "fp64";
    if (eq(d, "c10::half")) return "fp16";
    if (eq(d, "c10::bfloat16")) return "bf16";
    if (eq(d, "c10::float8_e4m3fnuz") || eq(d, "c10::float8_e4m3fn") || eq(d, "unsigned char") || eq(d, "fp8"))
        return "fp8";
    /* FIX (§2.2): e5m2 is fp8, signed char is int8 */
    if (eq(d, "c10::float8_e5m2") || eq(d, "c10::float8_e5m2fnuz")) return "fp8";
    if (eq(d, "signed char")) return "int8";
    if (eq(d, "fp4") || eq(d, "mxfp4") || eq(d, "c10::float4_e2m1fn_x2")) return "fp4";
    return NULL;
}

double tl_dtype_bytes_moe(const char *d, double dflt)
{
    if (!d) return dflt;
    static const struct { const char *n; double b; } t[] = {
        {"Float8_e4m3fn", 1},   {"Float8_e4m3fnuz", 1}, {"Float8_e5m2", 1},         {"Float8_e5m2fnuz", 1},
        {"FP8", 1},             {"c10::Float8_e4m3fn", 1}, {"c10::Float8_e4m3fnuz", 1}, {"FP4", 0.5},
        {"c10::Float4_e2m1fn_x2", 0.5}, {"BFloat16", 2}, {"Float16", 2},          {"Half", 2},
        {"c10::BFloat16", 2},   {"c10::Half", 2},       {"Float32", 4},             {"Float", 4},
        {"c10::Float", 4}};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (!strcmp(d, t[i].n)) return t[i].b;
    int b = tl_dtype_bpe(d);
    return b ? b : dflt;
}
