/* model_conv.c — convolution perf models (perf-model spec §4.2): aten_conv,
 * aten_conv_bwd, ConvBias_, ConvBiasReLU_, ConvBias_Backward,
 * ConvBiasReLU_Backward.
 *
 * All classes share one geometry (conv_cfg) and two formula pairs:
 * flops/bytes (forward) and flops_bwd/bytes_bwd. FIXes applied: the
 * aten::convolution bias is D[2] non-empty, the convolution_backward bias is
 * output_mask[2] (C[10]), or without a parseable output_mask bias_sizes
 * (C[3]) non-empty with no zero entry, and the bwd bias term is multiplied
 * by bpe, and convolution_backward counts only the gradients its
 * output_mask (C[10]) asks for (input grad, weight grad; both when it is
 * absent or unparseable). */
#include "model_conv.h"

#include <math.h>
#include <string.h>

#include "perf_util.h"


/* ------------------------------------------------------------------------
 * Geometry
 * ------------------------------------------------------------------------ */

enum { MAX_DIMS = 8 };

typedef struct shape {
    int64_t d[MAX_DIMS];
    int n;
} shape;

typedef struct tuple {
    int64_t v[MAX_DIMS];
    size_t n;
} tuple;

typedef struct conv_cfg {
    shape x, w, out;
    int nd;
    tuple stride, pad, dil, outpad;
    int transposed, bias;
    int grad_input, grad_weight; /* backward: the gradients computed (output_mask) */
    int64_t groups;
    const char *dtype; /* the input's type: element size and precision */
} conv_cfg;

enum { BIAS_DIMS, BIAS_SIZES, BIAS_ALWAYS };

/* Where a class finds its arguments. */
typedef struct conv_layout {
    int xi;        /* Input Dims / type / Strides index of the input; the weight follows */
    int ci;        /* Concrete Inputs index of stride; padding, dilation, transposed,
                    * output_padding and groups follow (aten forms) */
    int fused;     /* ConvBias_ forms: int stride / padding at C[3] / C[4], nothing else */
    int bias;      /* BIAS_* */
    int bwd_work;  /* flops()/bytes() are the backward formulas */
} conv_layout;

static int read_shape(const tl_pv *v, shape *s)
{
    if (!tl_pv_is_list(v) || v->n > MAX_DIMS) return 0;
    s->n = (int)v->n;
    for (int i = 0; i < s->n; i++)
        if (!tl_pv_int(&v->items[i], &s->d[i])) return 0;
    return 1;
}

static tl_pn prod_from(const shape *s, int from)
{
    tl_pn p = tl_pn_int(1);
    for (int i = from; i < s->n; i++) p = tl_pn_mul(p, tl_pn_int(s->d[i]));
    return p;
}

static tl_pn prod(const shape *s) { return prod_from(s, 0); }

/* t(s): the first two entries swapped. */
static shape swap01(shape s)
{
    if (s.n >= 2) {
        int64_t t = s.d[0];
        s.d[0] = s.d[1];
        s.d[1] = t;
    }
    return s;
}

/* An empty tuple takes the default, a 1-tuple is repeated over the spatial dims. */
static int expand(tuple *t, int nd, int64_t dflt)
{
    if (t->n == 0 || t->n == 1) {
        int64_t v = t->n ? t->v[0] : dflt;
        for (int i = 0; i < nd; i++) t->v[i] = v;
        t->n = (size_t)nd;
    }
    return t->n >= (size_t)nd;
}

static int same_str(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

/* stride / padding / dilation / output_padding texts of aten::convolution(_backward). */
static int parse_aten_args(const tl_perf_event *ev, const conv_layout *L, conv_cfg *c, tl_perf_result *r)
{
    tuple *t[4] = {&c->stride, &c->pad, &c->dil, &c->outpad};
    const int at[4] = {L->ci, L->ci + 1, L->ci + 2, L->ci + 4};
    const int64_t dflt[4] = {1, 0, 1, 0};
    for (int i = 0; i < 4; i++) {
        const char *s = tl_pe_concrete(ev, (size_t)at[i]);
        if (!tl_py_int_tuple(s ? s : "", t[i]->v, MAX_DIMS, &t[i]->n) || !expand(t[i], c->nd, dflt[i]))
            return tl_perf_error(r, "convolution: bad int tuple %s in Concrete Inputs[%d]", s ? s : "", at[i]);
    }
    const char *tr = tl_pe_concrete(ev, (size_t)L->ci + 3), *g = tl_pe_concrete(ev, (size_t)L->ci + 5);
    if (!tl_py_truth(tr, &c->transposed)) return tl_perf_error(r, "convolution: transposed is not a literal");
    if (!tl_py_int(g, &c->groups)) return tl_perf_error(r, "convolution: groups is not an int");
    return TL_PERF_OK;
}

/* ConvBias_: stride = int(C[3]), padding = int(C[4]), repeated; the rest fixed. */
static int parse_fused_args(const tl_perf_event *ev, conv_cfg *c, tl_perf_result *r)
{
    tuple *t[2] = {&c->stride, &c->pad};
    for (int i = 0; i < 2; i++) {
        const char *s = tl_pe_concrete(ev, 3 + (size_t)i);
        t[i]->n = 0;
        if (s && *s) {
            if (!tl_py_int(s, &t[i]->v[0])) return tl_perf_error(r, "%s: bad int %s", ev->name, s);
            t[i]->n = 1;
        }
        expand(t[i], c->nd, i == 0 ? 1 : 0);
    }
    c->dil.n = c->outpad.n = 0;
    expand(&c->dil, c->nd, 1);
    expand(&c->outpad, c->nd, 0);
    c->transposed = 0;
    c->groups = 1;
    return TL_PERF_OK;
}

/* The gradients convolution_backward computes. [FIX] output_mask (C[10])
 * decides when it parses: entry 0 the input grad, 1 the weight grad, 2 the
 * bias grad (a missing entry: not computed). The reference ignores it and
 * always counts both the input and the weight grad (ResNet's first
 * convolution, whose input needs no gradient, records [False, True,
 * False]). When C[10] is absent or unparseable both are counted and the bias
 * grad is computed when bias_sizes (C[3]) is a non-empty list with no zero
 * entry (the corrected §4.2 rule). A bias-less convolution records
 * bias_sizes [0] and output_mask [True, True, False]: no bias. */
static int backward_grads(const tl_perf_event *ev, conv_cfg *c, tl_perf_result *r)
{
    int mask[3] = {0, 0, 0};
    size_t n = 0;
    const char *m = tl_pe_concrete(ev, 10);
    if (m && tl_py_literal_bools(r, m, mask, 3, &n)) {
        c->grad_input = n >= 1 && mask[0];
        c->grad_weight = n >= 2 && mask[1];
        return n >= 3 && mask[2];
    }
    const tl_pv *sizes = tl_py_literal(r, tl_pe_concrete(ev, 3));
    if (!tl_pv_is_list(sizes) || sizes->n == 0) return 0;
    for (size_t i = 0; i < sizes->n; i++)
        if (!tl_pv_nonempty(&sizes->items[i])) return 0; /* a zero (or None) size */
    return 1;
}

static int parse_bias(const tl_perf_event *ev, const conv_layout *L, conv_cfg *c, tl_perf_result *r)
{
    if (L->bias == BIAS_ALWAYS) return 1;
    if (L->bias == BIAS_DIMS) return tl_pv_len(ev->dims) > 2 && tl_pv_nonempty(tl_pe_dim(ev, 2));
    return backward_grads(ev, c, r);
}

/* out_i per spatial dim: float division then truncation (or the transposed formula). */
static int out_dim(const conv_cfg *c, int i, int64_t *out)
{
    tl_pn x = tl_pn_int(c->x.d[2 + i]), km1 = tl_pn_sub(tl_pn_int(c->w.d[2 + i]), tl_pn_int(1));
    tl_pn s = tl_pn_int(c->stride.v[i]), p2 = tl_pn_mul(tl_pn_int(2), tl_pn_int(c->pad.v[i]));
    tl_pn dk = tl_pn_mul(tl_pn_int(c->dil.v[i]), km1), one = tl_pn_int(1);
    if (c->transposed) {
        tl_pn o = tl_pn_sub(tl_pn_mul(tl_pn_sub(x, one), s), p2);
        return tl_pn_int64(tl_pn_add(tl_pn_add(tl_pn_add(o, dk), tl_pn_int(c->outpad.v[i])), one), out);
    }
    if (c->stride.v[i] == 0) return 0;
    double q = tl_pn_double(tl_pn_sub(tl_pn_sub(tl_pn_add(x, p2), dk), one)) / (double)c->stride.v[i] + 1.0;
    if (!(fabs(q) < 9.2e18)) return 0;
    *out = (int64_t)q;
    return 1;
}

static int output_shape(conv_cfg *c, tl_perf_result *r)
{
    if (c->w.n < c->nd + 2) return tl_perf_error(r, "convolution: filter has %d dims", c->w.n);
    c->out.n = c->nd + 2;
    c->out.d[0] = c->x.d[0];
    c->out.d[1] = c->transposed ? c->w.d[1] : c->w.d[0];
    for (int i = 0; i < c->nd; i++)
        if (!out_dim(c, i, &c->out.d[2 + i])) return tl_perf_error(r, "convolution: bad output size (stride 0?)");
    return TL_PERF_OK;
}

static int parse_conv(const tl_perf_event *ev, const conv_layout *L, conv_cfg *c, tl_perf_result *r)
{
    memset(c, 0, sizeof *c);
    size_t xi = (size_t)L->xi;
    if (!read_shape(tl_pe_dim(ev, xi), &c->x) || !read_shape(tl_pe_dim(ev, xi + 1), &c->w))
        return tl_perf_error(r, "%s: input/filter shapes missing", ev->name);
    if (c->x.n < 3 || c->x.n > 5) return tl_perf_error(r, "%s: unsupported input rank %d", ev->name, c->x.n);
    c->nd = c->x.n - 2;
    c->dtype = tl_pe_type(ev, xi);
    if (!same_str(c->dtype, tl_pe_type(ev, xi + 1)))
        return tl_perf_error(r, "%s: input and weight dtypes differ", ev->name);
    int st = L->fused ? parse_fused_args(ev, c, r) : parse_aten_args(ev, L, c, r);
    if (st) return st;
    c->grad_input = c->grad_weight = 1;
    c->bias = parse_bias(ev, L, c, r);
    return output_shape(c, r);
}

static void add_params(const tl_perf_event *ev, const conv_layout *L, const conv_cfg *c, tl_perf_result *r)
{
    size_t xi = (size_t)L->xi;
    char nd[8] = "conv1d";
    nd[4] = (char)('0' + c->nd);
    const char *dt[2] = {tl_pe_type(ev, xi), tl_pe_type(ev, xi + 1)};
    tl_pm_str(r, "convNd", nd);
    tl_pm_pv(r, "input_shape", tl_pe_dim(ev, xi));
    tl_pm_pv(r, "filter_shape", tl_pe_dim(ev, xi + 1));
    tl_pm_str_tuple(r, "dtype_input_weight", dt, 2);
    tl_pm_pv(r, "input_stride", tl_pe_stride(ev, xi));
    tl_pm_pv(r, "weight_stride", tl_pe_stride(ev, xi + 1));
    tl_pm_bool(r, "bias", c->bias);
    tl_pm_int_tuple(r, "stride", c->stride.v, c->stride.n);
    tl_pm_int_tuple(r, "padding", c->pad.v, c->pad.n);
    tl_pm_int_tuple(r, "dilation", c->dil.v, c->dil.n);
    tl_pm_bool(r, "transposed_conv", c->transposed);
    tl_pm_int_tuple(r, "output_padding", c->outpad.v, c->outpad.n);
    tl_pm_int(r, "groups", c->groups);
}

/* ------------------------------------------------------------------------
 * Formulas
 * ------------------------------------------------------------------------ */

#define MUL tl_pn_mul
#define ADD tl_pn_add

static tl_pn flops_of(const shape *x, const shape *w, const shape *out, int bias, int transposed)
{
    tl_pn f = MUL(MUL(transposed ? prod(x) : prod(out), tl_pn_int(2)), prod_from(w, 1));
    return bias ? ADD(f, prod(out)) : f;
}

static tl_pn flops_fwd(const conv_cfg *c) { return flops_of(&c->x, &c->w, &c->out, c->bias, c->transposed); }

static tl_pn flops_bwd(const conv_cfg *c)
{
    shape tx = swap01(c->x), tw = swap01(c->w), tout = swap01(c->out);
    tl_pn f = tl_pn_int(0);
    if (c->grad_input) f = flops_of(&c->out, &c->w, &c->x, 0, !c->transposed);
    if (c->grad_weight)
        f = ADD(f, c->transposed ? flops_of(&tout, &tx, &tw, 0, 0) : flops_of(&tx, &tout, &tw, 0, 0));
    return c->bias ? ADD(f, prod(&c->out)) : f;
}

static tl_pn bytes_fwd(const conv_cfg *c, int bpe)
{
    tl_pn n = ADD(ADD(prod(&c->x), prod(&c->w)), tl_pn_int(c->bias ? c->out.d[1] : 0));
    return MUL(ADD(n, prod(&c->out)), tl_pn_int(bpe));
}

static tl_pn bytes_bwd(const conv_cfg *c, int bpe)
{
    /* bytes(out, w, x) for the input grad, bytes(out, x, w) for the weight grad */
    tl_pn one = MUL(ADD(ADD(prod(&c->out), prod(&c->w)), prod(&c->x)), tl_pn_int(bpe));
    tl_pn b = MUL(one, tl_pn_int(c->grad_input + c->grad_weight));
    if (!c->bias) return b;
    return ADD(b, MUL(ADD(prod(&c->out), tl_pn_int(c->out.d[1])), tl_pn_int(bpe))); /* FIX: times bpe */
}

static void fill_metrics(const conv_cfg *c, int bwd_work, tl_perf_result *r)
{
    int bpe = tl_dtype_bpe(c->dtype);
    r->flops = tl_pn_double(bwd_work ? flops_bwd(c) : flops_fwd(c));
    r->has_bytes = bpe != 0;
    if (bpe) r->bytes = tl_pn_double(bwd_work ? bytes_bwd(c, bpe) : bytes_fwd(c, bpe));
    r->maf = "matrix";
    r->precision = tl_dtype_precision(c->dtype);
}

static int run_layout(const tl_perf_event *ev, const conv_layout *L, int bwd, tl_perf_result *r)
{
    conv_cfg c;
    int st = parse_conv(ev, L, &c, r);
    if (st) return st;
    add_params(ev, L, &c, r);
    fill_metrics(&c, bwd || L->bwd_work, r);
    return r->status = TL_PERF_OK;
}

/* ------------------------------------------------------------------------
 * Classes
 * ------------------------------------------------------------------------ */

static const conv_layout aten_fwd = {0, 3, 0, BIAS_DIMS, 0};
static const conv_layout aten_bwd = {1, 4, 0, BIAS_SIZES, 1};
static const conv_layout fused_fwd = {0, 3, 1, BIAS_ALWAYS, 0};
static const conv_layout fused_bwd = {0, 3, 1, BIAS_ALWAYS, 1};

static int fn_aten_conv(const tl_perf_event *ev, int bwd, tl_perf_result *r) { return run_layout(ev, &aten_fwd, bwd, r); }

static int fn_aten_conv_bwd(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    return run_layout(ev, &aten_bwd, bwd, r);
}

static int fn_conv_bias(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    return run_layout(ev, &fused_fwd, bwd, r);
}

/* The backward op has no shapes of its own: it takes those of its forward,
 * the ConvBias_ / ConvBiasReLU_ op of the same Sequence number
 * (ev->seq_forward); without one flops and bytes are None: a failure. */
static int fn_conv_bias_backward(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    const tl_perf_event *fwd = ev->seq_forward;
    if (!fwd) return tl_perf_error(r, "%s: no forward op with its Sequence number", ev->name);
    tl_perf_event f = {.name = ev->name,
                       .dims = fwd->dims,
                       .types = fwd->types,
                       .strides = fwd->strides,
                       .concrete = fwd->concrete,
                       .args = ev->args};
    return run_layout(&f, &fused_bwd, 1, r);
}

const tl_perf_class tl_pc_aten_conv = {"aten_conv", "CONV_fwd", "CONV_bwd", "CONV", 1, fn_aten_conv, 0};
const tl_perf_class tl_pc_aten_conv_bwd = {"aten_conv_bwd", "CONV_bwd", "CONV_bwd", "CONV", 1, fn_aten_conv_bwd, 0};
const tl_perf_class tl_pc_ConvBias_ = {"ConvBias_", "CONV_fwd", "CONV_bwd", "CONV", 1, fn_conv_bias, 0};
const tl_perf_class tl_pc_ConvBiasReLU_ = {"ConvBiasReLU_", "CONV_fwd", "CONV_bwd", "CONV", 1, fn_conv_bias, 0};
const tl_perf_class tl_pc_ConvBias_Backward = {"ConvBias_Backward", "CONV_bwd", "CONV_bwd", "CONV", 1,
                                               fn_conv_bias_backward, 1};
const tl_perf_class tl_pc_ConvBiasReLU_Backward = {"ConvBiasReLU_Backward", "CONV_bwd", "CONV_bwd", "CONV", 1,
                                                   fn_conv_bias_backward, 1};
