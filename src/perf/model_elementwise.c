/* model_elementwise.c — unary and binary elementwise perf models
 * (perf-model spec §4.4) and the primus quantizers of §4.8, which are unary
 * models too. */
#include "model_elementwise.h"

#include <math.h>

#include "perf_util.h"

enum { MAX_DIMS = 64 };

/* list[i]; clears *ok when absent (the reference's IndexError/KeyError). */
static const tl_pv *at(const tl_pv *list, size_t i, int *ok)
{
    const tl_pv *v = tl_pv_at(list, i);
    if (!v) *ok = 0;
    return v;
}

/* A list of ints in [lo, TL_SHAPE_MAX_DIM] into out[]; 0 when it is not
 * one (or too long). */
static int ints_in(const tl_pv *list, int64_t lo, int64_t *out, size_t *n)
{
    if (!tl_pv_is_list(list) || list->n > MAX_DIMS) return 0;
    for (size_t i = 0; i < list->n; i++) {
        const tl_pv *v = &list->items[i];
        if (v->kind != TL_PV_INT || v->i < lo || v->i > TL_SHAPE_MAX_DIM) return 0;
        out[i] = v->i;
    }
    *n = list->n;
    return 1;
}

/* A shape (sizes) into out[]. */
static int shape_ints(const tl_pv *shape, int64_t *out, size_t *n) { return ints_in(shape, 0, out, n); }

/* prod(v); 0 when it leaves int64. */
static int prod_ints(const int64_t *v, size_t n, int64_t *out)
{
    int64_t p = 1;
    for (size_t i = 0; i < n; i++)
        if (__builtin_mul_overflow(p, v[i], &p)) return 0;
    *out = p;
    return 1;
}

/* ===================================================================== */
/* Unary base                                                             */
/* ===================================================================== */

/* flops = n_out; bytes = n_in·bpe(in) + n_out·bpe(out or in), None when a
 * bpe is unknown. out NULL is the reference's None. */
static int unary_metrics(tl_perf_result *r, int64_t n_in, int64_t n_out, const char *in, const char *out)
{
    int bpe_in = tl_dtype_bpe(in);
    int bpe_out = out ? tl_dtype_bpe(out) : bpe_in;
    r->flops = (double)n_out;
    if (bpe_in && bpe_out) tl_perf_set_bytes(r, (double)((__int128)n_in * bpe_in + (__int128)n_out * bpe_out));
    return tl_perf_ok(r, "vector", in);
}

/* --- aten unary ops --------------------------------------------------- */

/* copy_(dst, src, non_blocking), clamp_min(self, Scalar), pow(self, exp),
 * sigmoid(self)...: an out dtype only when D[1] is a non-empty shape. */
static int aten_unary(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    int ok = ev->types && ev->strides;
    const tl_pv *shape = at(ev->dims, 0, &ok);
    const tl_pv *in = at(ev->types, 0, &ok);
    const tl_pv *stride_in = at(ev->strides, 0, &ok);
    const tl_pv *out = NULL, *stride_out = NULL;
    if (tl_pv_nonempty(tl_pe_dim(ev, 1))) {
        out = at(ev->types, 1, &ok);
        stride_out = at(ev->strides, 1, &ok);
    }
    int64_t n;
    if (!ok || !tl_shape_numel(shape, &n)) return tl_perf_error(r, "%s: missing input args", ev->name);
    tl_pm_unary(r, shape, tl_pv_cstr(in), tl_pv_cstr(out), stride_in, stride_out);
    return unary_metrics(r, n, n, tl_pv_cstr(in), tl_pv_cstr(out));
}

const tl_perf_class tl_pc_aten_unary_elementwise = {"aten_unary_elementwise", "elementwise", NULL, "UnaryElementwise",
                                                    0, aten_unary, 0};

/* --- shape-changing unary ops: pad, upsample ------------------------- */

/* The input of a pad/upsample: shape, dtype and stride of argument 0. */
typedef struct resize_in {
    const tl_pv *shape;
    int64_t dims[MAX_DIMS];
    size_t ndim;
    const char *dtype;
    const tl_pv *stride;
} resize_in;

static int resize_read(const tl_perf_event *ev, resize_in *x)
{
    int ok = ev->types && ev->strides;
    x->shape = at(ev->dims, 0, &ok);
    x->dtype = tl_pv_cstr(at(ev->types, 0, &ok));
    x->stride = at(ev->strides, 0, &ok);
    return ok && shape_ints(x->shape, x->dims, &x->ndim);
}

/* Params and metrics of a resize: input_shape, output_shape, then the
 * extra params (padding), then the unary ones with op_shape = output shape
 * and one dtype for both sides (the reference's order: the unified
 * perf_params of timesformer's upsample_nearest1d). */
static int resize_finish(tl_perf_result *r, const tl_perf_event *ev, const resize_in *x, const int64_t *out,
                         size_t nout, const tl_pv *padding)
{
    int64_t n_in, n_out;
    if (!prod_ints(x->dims, x->ndim, &n_in) || !prod_ints(out, nout, &n_out))
        return tl_perf_error(r, "%s: element count out of range", ev->name);
    const tl_pv *out_shape = tl_pv_int_list(r->arena, out, nout);
    tl_pm_pv(r, "input_shape", x->shape);
    tl_pm_pv(r, "output_shape", out_shape);
    if (padding) tl_pm_pv(r, "padding", padding);
    tl_pm_unary(r, out_shape, x->dtype, x->dtype, x->stride, NULL);
    return unary_metrics(r, n_in, n_out, x->dtype, x->dtype);
}

/* replication_pad{1,2,3}d(input, padding): the dim at -1-i grows by
 * pad[2i] + pad[2i+1], innermost first. */
static int aten_replication_pad(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    resize_in x;
    if (!resize_read(ev, &x)) return tl_perf_error(r, "%s: missing input args", ev->name);
    const tl_pv *pad = tl_pe_literal(r, ev, 1);
    int64_t p[MAX_DIMS], out[MAX_DIMS];
    size_t np;
    if (!ints_in(pad, -TL_SHAPE_MAX_DIM, p, &np)) return tl_perf_error(r, "%s: padding is not an int list", ev->name);
    if (np / 2 > x.ndim) return tl_perf_error(r, "%s: padding longer than the input rank", ev->name);
    for (size_t i = 0; i < x.ndim; i++) out[i] = x.dims[i];
    for (size_t i = 0; i < np / 2; i++) {
        int64_t *d = &out[x.ndim - 1 - i];
        if (__builtin_add_overflow(*d, p[2 * i], d) || __builtin_add_overflow(*d, p[2 * i + 1], d))
            return tl_perf_error(r, "%s: padded size out of range", ev->name);
    }
    return resize_finish(r, ev, &x, out, x.ndim, pad);
}

const tl_perf_class tl_pc_aten_replication_pad = {"aten_replication_pad", "elementwise", NULL, "UnaryElementwise", 0,
                                                  aten_replication_pad, 0};

/* A Python int or float literal as a double (bool excluded). */
static int number(const tl_pv *v, double *out)
{
    if (v && v->kind == TL_PV_INT) *out = (double)v->i;
    else if (v && v->kind == TL_PV_FLOAT) *out = v->f;
    else return 0;
    return 1;
}

/* [FIX] the scale-factor forms of upsample_nearest: C[2] as a list
 * (`.vec`: input, output_size?, scale_factors?) or the floats C[2..] (the
 * `scales_*` overloads); spatial dim i becomes floor(in_i · scale_i). */
static int upsample_scales(tl_perf_result *r, const tl_perf_event *ev, const resize_in *x, int64_t *out)
{
    size_t nsp = x->ndim - 2;
    double scale[MAX_DIMS];
    const tl_pv *vec = tl_pe_literal(r, ev, 2);
    if (tl_pv_is_list(vec)) {
        if (vec->n != nsp) return 0;
        for (size_t i = 0; i < nsp; i++)
            if (!number(&vec->items[i], &scale[i])) return 0;
    } else {
        for (size_t i = 0; i < nsp; i++)
            if (!number(tl_pe_literal(r, ev, 2 + i), &scale[i])) return 0;
    }
    for (size_t i = 0; i < nsp; i++) {
        double d = floor((double)x->dims[2 + i] * scale[i]);
        if (!(d >= 0 && d <= (double)TL_SHAPE_MAX_DIM)) return 0;
        out[2 + i] = (int64_t)d;
    }
    return 1;
}

/* upsample_nearest{1,2,3}d(input, output_size, ...): output shape =
 * D[0][:2] + output_size. */
static int aten_upsample_nearest(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    resize_in x;
    if (!resize_read(ev, &x)) return tl_perf_error(r, "%s: missing input args", ev->name);
    int64_t out[MAX_DIMS], size[MAX_DIMS];
    size_t nlead = x.ndim < 2 ? x.ndim : 2, nsize;
    for (size_t i = 0; i < nlead; i++) out[i] = x.dims[i];
    const char *c1 = tl_pe_concrete(ev, 1);
    const tl_pv *osize = tl_py_literal(r, c1);
    if (shape_ints(osize, size, &nsize) && nlead + nsize <= MAX_DIMS) {
        for (size_t i = 0; i < nsize; i++) out[nlead + i] = size[i];
        return resize_finish(r, ev, &x, out, nlead + nsize, NULL);
    }
    int no_size = c1 && (!*c1 || (osize && osize->kind == TL_PV_NULL));
    if (no_size && x.ndim > 2 && upsample_scales(r, ev, &x, out))
        return resize_finish(r, ev, &x, out, x.ndim, NULL);
    return tl_perf_error(r, "%s: no output size or scale factors", ev->name);
}

const tl_perf_class tl_pc_aten_upsample_nearest = {"aten_upsample_nearest", "elementwise", NULL, "UnaryElementwise", 0,
                                                   aten_upsample_nearest, 0};

/* --- primus quantizers (§4.8) ----------------------------------------- */

/* quantize_fp8_tensorwise: a unary op whose output is fp8 e4m3fnuz; the
 * strides are optional. */
static int primus_quantize_fp8(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    static const char out[] = "c10::Float8_e4m3fnuz";
    int ok = ev->types != NULL;
    const tl_pv *shape = at(ev->dims, 0, &ok);
    const char *in = tl_pv_cstr(at(ev->types, 0, &ok));
    int64_t n;
    if (!ok || !tl_shape_numel(shape, &n)) return tl_perf_error(r, "%s: missing input args", ev->name);
    tl_pm_unary(r, shape, in, out, tl_pe_stride(ev, 0), NULL);
    return unary_metrics(r, n, n, in, out);
}

const tl_perf_class tl_pc_primus_turbo_quantize_fp8 = {"primus_turbo_quantize_fp8", "elementwise", NULL,
                                                       "UnaryElementwise", 0, primus_quantize_fp8, 0};

/* quantize_mxfp4_dual of an (M, N) tensor: reads it once, writes two fp4
 * copies (row- and column-wise, 2 per byte) and their e8m0 block scales
 * (one per 32 elements each way):
 *   bytes = M·N·bpe + 2·floor((M·N + 1)/2) + M·ceil(N/32) + N·ceil(M/32) */
static int primus_quantize_mxfp4_dual(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    int ok = ev->types != NULL;
    const tl_pv *shape = at(ev->dims, 0, &ok);
    const char *in = tl_pv_cstr(at(ev->types, 0, &ok));
    int64_t M, N;
    if (!ok || tl_pv_len(shape) != 2 || !tl_shape_dim(shape, 0, &M) || !tl_shape_dim(shape, 1, &N) || M < 0 || N < 0)
        return tl_perf_error(r, "%s: Input Dims[0] needs (M, N)", ev->name);
    tl_pm_unary(r, shape, in, NULL, tl_pe_stride(ev, 0), NULL);
    __int128 mn = (__int128)M * N;
    int bpe = tl_dtype_bpe(in);
    r->flops = (double)mn;
    if (bpe) {
        __int128 packed = 2 * ((mn + 1) / 2);
        __int128 scales = (__int128)M * ((N + 31) / 32) + (__int128)N * ((M + 31) / 32);
        tl_perf_set_bytes(r, (double)(mn * bpe + packed + scales));
    }
    return tl_perf_ok(r, "vector", in);
}

const tl_perf_class tl_pc_primus_turbo_quantize_mxfp4_dual = {"primus_turbo_quantize_mxfp4_dual", "elementwise", NULL,
                                                              "UnaryElementwise", 0, primus_quantize_mxfp4_dual, 0};

/* ===================================================================== */
/* Binary base                                                            */
/* ===================================================================== */

typedef struct binary {
    const tl_pv *shape1, *shape2;
    const char *dtype1, *dtype2, *dtype_out; /* dtype_out NULL: None */
    const tl_pv *stride1, *stride2, *stride_out;
} binary;

/* Right-aligned broadcast of two shapes: the product of the result, or 0
 * (ValueError) when a pair of sizes differs and neither is 1. */
static int broadcast_numel(const int64_t *a, size_t na, const int64_t *b, size_t nb, int64_t *out)
{
    size_t n = na > nb ? na : nb;
    int64_t p = 1;
    for (size_t i = 0; i < n; i++) {
        int64_t x = i < na ? a[na - 1 - i] : 1, y = i < nb ? b[nb - 1 - i] : 1;
        if (x != y && x != 1 && y != 1) return 0;
        if (__builtin_mul_overflow(p, x > y ? x : y, &p)) return 0;
    }
    *out = p;
    return 1;
}

/* Output bpe: bpe(dtype_out) when given; else max(bpe1, bpe2) when both
 * operands are tensors (non-empty shapes), bpe1 for a scalar operand. */
static int binary_bpe_out(const binary *b, int bpe1, int bpe2)
{
    if (b->dtype_out) return tl_dtype_bpe(b->dtype_out);
    if (!bpe1 || !bpe2) return 0;
    if (tl_pv_nonempty(b->shape1) && tl_pv_nonempty(b->shape2)) return bpe1 > bpe2 ? bpe1 : bpe2;
    return bpe1;
}

static int binary_run(const tl_perf_event *ev, const binary *b, tl_perf_result *r)
{
    const char *dtypes[3] = {b->dtype1, b->dtype2, b->dtype_out};
    tl_pm_pv(r, "shape_in1", b->shape1);
    tl_pm_pv(r, "shape_in2", b->shape2);
    tl_pm_str_tuple(r, "dtype_in1_in2_out", dtypes, 3);
    tl_pm_pv(r, "stride_input1", b->stride1);
    tl_pm_pv(r, "stride_input2", b->stride2);
    tl_pm_pv(r, "stride_output", b->stride_out);

    int64_t s1[MAX_DIMS], s2[MAX_DIMS], n_out;
    size_t n1d, n2d;
    if (!shape_ints(b->shape1, s1, &n1d) || !shape_ints(b->shape2, s2, &n2d))
        return tl_perf_error(r, "%s: operand shapes are not int lists", ev->name);
    if (!broadcast_numel(s1, n1d, s2, n2d, &n_out))
        return tl_perf_error(r, "%s: shapes cannot be broadcast", ev->name);
    int64_t n1, n2;
    if (!prod_ints(s1, n1d, &n1) || !prod_ints(s2, n2d, &n2))
        return tl_perf_error(r, "%s: element count out of range", ev->name);
    int bpe1 = tl_dtype_bpe(b->dtype1), bpe2 = tl_dtype_bpe(b->dtype2), bpe_out = binary_bpe_out(b, bpe1, bpe2);
    r->flops = (double)n_out;
    if (bpe1 && bpe2 && bpe_out)
        tl_perf_set_bytes(r, (double)((__int128)n1 * bpe1 + (__int128)n2 * bpe2 + (__int128)n_out * bpe_out));
    return tl_perf_ok(r, "vector", b->dtype1);
}

/* Shapes and dtypes of arguments 0 and 1 (clears *ok when one is absent). */
static binary binary_operands(const tl_perf_event *ev, int *ok)
{
    binary b = {0};
    b.shape1 = at(ev->dims, 0, ok);
    b.shape2 = at(ev->dims, 1, ok);
    b.dtype1 = tl_pv_cstr(at(ev->types, 0, ok));
    b.dtype2 = tl_pv_cstr(at(ev->types, 1, ok));
    return b;
}

/* add/mul/div(self, other[, alpha]), sigmoid_backward, threshold_backward:
 * an out dtype only when D[2] is a non-empty shape (an out tensor). */
static int aten_binary(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    int ok = ev->types && ev->strides;
    binary b = binary_operands(ev, &ok);
    b.stride1 = at(ev->strides, 0, &ok);
    b.stride2 = at(ev->strides, 1, &ok);
    if (tl_pv_nonempty(tl_pe_dim(ev, 2))) {
        b.dtype_out = tl_pv_cstr(at(ev->types, 2, &ok));
        b.stride_out = at(ev->strides, 2, &ok);
    }
    if (!ok) return tl_perf_error(r, "%s: missing input args", ev->name);
    return binary_run(ev, &b, r);
}

const tl_perf_class tl_pc_aten_binary_elementwise = {"aten_binary_elementwise", "elementwise", NULL,
                                                     "BinaryElementwise", 0, aten_binary, 0};

/* LigerSiLUMulFunction(a, b): silu(a)·b, the output dtype follows a. The
 * strides are optional. */
static int liger_silu_mul(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    int ok = ev->types != NULL;
    binary b = binary_operands(ev, &ok);
    b.stride1 = tl_pe_stride(ev, 0);
    b.stride2 = tl_pe_stride(ev, 1);
    if (!ok) return tl_perf_error(r, "%s: missing input args", ev->name);
    return binary_run(ev, &b, r);
}

const tl_perf_class tl_pc_liger_silu_mul_function = {"liger_silu_mul_function", "elementwise", NULL,
                                                     "BinaryElementwise", 0, liger_silu_mul, 0};
