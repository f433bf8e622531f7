/* model_ext.h — the extension perf models of perf-model spec §4.9 (quant,
 * activations, RoPE, RMSNorm extensions, custom collectives, mHC, misc),
 * except the GEMM-category and InferenceAttention classes (model_gemm /
 * model_attention) and the §4.8 primus quantizers (model_elementwise).
 *
 * Also the strict argument accessors (tl_px_*) shared by the extension
 * families (model_ext.c, model_moe.c, model_triton.c): reading a missing
 * index or a non-int dim behaves like the reference's IndexError /
 * TypeError, i.e. the model fails with TL_PERF_ERROR. */
#ifndef TL_MODEL_EXT_H
#define TL_MODEL_EXT_H

#include "perf_model.h"

/* --- strict accessors --------------------------------------------------- */
/* A parse in progress: the first failure is kept, later reads return 0 /
 * NULL, and tl_px_done() turns a failure into TL_PERF_ERROR. Negative
 * indices count from the end, as in Python. */
typedef struct tl_px {
    const tl_perf_event *ev;
    tl_perf_result *r;
    int bad;
    char why[96];
} tl_px;

void tl_px_init(tl_px *p, const tl_perf_event *ev, tl_perf_result *r);
/* Records the first failure (printf-style); always returns 0. */
int tl_px_fail(tl_px *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 0 when the parse is clean, else sets r's TL_PERF_ERROR and returns it. */
int tl_px_done(tl_px *p);

/* Input Dims[i] as a list (a shape); NULL + failure when absent. */
const tl_pv *tl_px_shape(tl_px *p, long i);
/* Input Dims[i][j] as an int. */
int64_t tl_px_dim(tl_px *p, long i, long j);
/* `a, b, ... = Input Dims[i]`: exactly n ints, else failure. */
void tl_px_unpack(tl_px *p, long i, int64_t *out, size_t n);
/* Input type[i] text ("" stays ""); NULL + failure when absent or not text. */
const char *tl_px_type(tl_px *p, long i);
/* Concrete Inputs[i] text; NULL + failure when absent or not text. */
const char *tl_px_concrete(tl_px *p, long i);
/* Input Strides[i] (NULL, no failure, when the key or entry is absent). */
const tl_pv *tl_px_stride(tl_px *p, long i);
/* `x[i]` of a list value with Python's negative index; NULL when out of range. */
const tl_pv *tl_pv_item(const tl_pv *list, long i);

/* Input type[i] when present and non-empty, else NULL (the "if present" reads). */
const char *tl_px_type_opt(const tl_perf_event *ev, long i);
/* Input Dims[i] when present and non-empty, else NULL. */
const tl_pv *tl_px_shape_opt(const tl_perf_event *ev, long i);
/* args[key] (the whole args dict), NULL when absent. */
const tl_pv *tl_px_arg(const tl_perf_event *ev, const char *key);

/* Python int(text): optional blanks and sign, digits with single '_'
 * separators. Returns 1 and sets *out on success (int64 range only). */
int tl_py_int(const char *s, int64_t *out);
/* Python math.ceil(a / b) for b != 0 on exact integers. */
int64_t tl_ceil_div(int64_t a, int64_t b);
/* Python a // b (floor division) for b != 0. */
int64_t tl_floor_div(int64_t a, int64_t b);

/* --- classes -------------------------------------------------------------- */
/* activations, elementwise / UnaryElementwise */
extern const tl_perf_class tl_pc_aiter_silu_and_mul;
extern const tl_perf_class tl_pc_sgl_kernel_silu_and_mul;
extern const tl_perf_class tl_pc_aiter_gelu_and_mul;
extern const tl_perf_class tl_pc_aiter_gelu_tanh_and_mul;
/* GroupQuant */
extern const tl_perf_class tl_pc_per_group_quant;
extern const tl_perf_class tl_pc_vllm_triton_per_token_group_quant_fp8;
extern const tl_perf_class tl_pc_fused_flatten_mxfp4_quant;
extern const tl_perf_class tl_pc_sglang_quant_dynamic_mxfp4_quant;
extern const tl_perf_class tl_pc_fused_dynamic_mx_quant_moe_sort_hip;
extern const tl_perf_class tl_pc_aiter_fused_dynamic_mxfp4_quant_moe_sort_hip;
extern const tl_perf_class tl_pc_aiter_dynamic_per_group_scaled_quant_fp4;
/* RoPE_fwd (sheets RoPE and FusedRoPE) */
extern const tl_perf_class tl_pc_aiter_rope_cached_positions_2c_fwd_impl;
extern const tl_perf_class tl_pc_sgl_kernel_rotary_embedding;
extern const tl_perf_class tl_pc_aiter_fused_qk_rope_cat_and_cache_mla;
extern const tl_perf_class tl_pc_fused_qk_rope_concat_and_cache_mla;
/* RMSNorm */
extern const tl_perf_class tl_pc_aiter_rms_norm;
extern const tl_perf_class tl_pc_aiter_rmsnorm;
extern const tl_perf_class tl_pc_aiter_rmsnorm2d_fwd_with_add_ck;
extern const tl_perf_class tl_pc_aiter_rmsnorm2d_fwd_with_dynamicquant_ck;
extern const tl_perf_class tl_pc_aiter_rmsnorm_quant;
extern const tl_perf_class tl_pc_vllm_rocm_aiter_rmsnorm_fp8_group_quant;
extern const tl_perf_class tl_pc_vllm_rocm_aiter_rmsnorm_with_add_fp8_group_quant;
extern const tl_perf_class tl_pc_vllm_rocm_aiter_triton_add_rmsnorm_pad;
extern const tl_perf_class tl_pc_fused_rms_mxfp4_quant;
/* CustomCollective */
extern const tl_perf_class tl_pc_aiter_fused_allreduce_rmsnorm;
extern const tl_perf_class tl_pc_aiter_fused_allreduce_rmsnorm_;
extern const tl_perf_class tl_pc_custom_ar_all_reduce;
extern const tl_perf_class tl_pc_custom_ar_qr_all_reduce;
extern const tl_perf_class tl_pc_sgl_kernel_all_reduce_reg;
extern const tl_perf_class tl_pc_sgl_kernel_qr_all_reduce;
extern const tl_perf_class tl_pc_aiter_reduce_scatter;
extern const tl_perf_class tl_pc_aiter_all_gather_reg;
extern const tl_perf_class tl_pc_sgl_kernel_reg_all_gather_into_tensor;
/* mHC */
extern const tl_perf_class tl_pc_mhc_post;
extern const tl_perf_class tl_pc_mhc_pre_gemm_sqrsum;
extern const tl_perf_class tl_pc_mhc_pre_big_fuse_rmsnorm;
extern const tl_perf_class tl_pc_mhc_fused_post_pre_gemm_sqrsum;
/* elementwise / sheet elementwise */
extern const tl_perf_class tl_pc_mixed_sample_outer_exponential;

#endif
