/* model_conv.c — convolution perf models (perf-model spec §4.2): aten_conv,
 * aten_conv_bwd, ConvBias_, ConvBiasReLU_, ConvBias_Backward,
 * ConvBiasReLU_Backward; plus the Python-literal parsers of model_conv.h.
 *
 * All classes share one geometry (conv_cfg) and two formula pairs:
 * flops/bytes (forward) and flops_bwd/bytes_bwd. FIXes applied: the
 * aten::convolution bias is D[2] non-empty, the convolution_backward bias is
 * C[3] (bias_sizes) non-empty, and the bwd bias term is multiplied by bpe. */
#include "model_conv.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../util/hashmap.h"
#include "../util/sbuf.h"
#include "../util/vec.h"

/* ------------------------------------------------------------------------
 * Python literal parsing
 * ------------------------------------------------------------------------ */

/* Copies s without surrounding ASCII whitespace into buf; 0 if too long. */
static int trimmed(const char *s, char *buf, size_t cap)
{
    if (!s) return 0;
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) n--;
    if (n >= cap) return 0;
    memcpy(buf, s, n);
    buf[n] = 0;
    return 1;
}

/* Removes '_' between two digits (Python numeric strings); 0 on a misplaced one. */
static int drop_underscores(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (*p != '_') {
            *o++ = *p;
            continue;
        }
        if (p == s || !isdigit((unsigned char)p[-1]) || !isdigit((unsigned char)p[1])) return 0;
    }
    *o = 0;
    return 1;
}

int tl_lit_int(const char *s, int64_t *out)
{
    char buf[64];
    if (!trimmed(s, buf, sizeof buf) || !drop_underscores(buf)) return 0;
    const char *p = buf + (buf[0] == '+' || buf[0] == '-');
    if (!*p) return 0;
    for (const char *c = p; *c; c++)
        if (!isdigit((unsigned char)*c)) return 0;
    errno = 0;
    long long v = strtoll(buf, NULL, 10);
    if (errno == ERANGE) return 0;
    *out = v;
    return 1;
}

/* digits [. digits] [e [sign] digits], at least one mantissa digit. */
static int decimal_syntax(const char *p)
{
    int digits = 0;
    while (isdigit((unsigned char)*p)) p++, digits++;
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p)) p++, digits++;
    }
    if (!digits) return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!isdigit((unsigned char)*p)) return 0;
        while (isdigit((unsigned char)*p)) p++;
    }
    return *p == 0;
}

int tl_lit_float(const char *s, double *out)
{
    char buf[128];
    if (!trimmed(s, buf, sizeof buf) || !drop_underscores(buf)) return 0;
    const char *p = buf + (buf[0] == '+' || buf[0] == '-');
    double sign = buf[0] == '-' ? -1.0 : 1.0;
    if (!strcasecmp(p, "inf") || !strcasecmp(p, "infinity")) {
        *out = sign * INFINITY;
        return 1;
    }
    if (!strcasecmp(p, "nan")) {
        *out = NAN;
        return 1;
    }
    if (!decimal_syntax(p)) return 0;
    *out = strtod(buf, NULL);
    return 1;
}

/* Inside of a bracketed literal: is there anything but whitespace? */
static int has_content(const char *open, size_t len)
{
    for (size_t i = 1; i + 1 < len; i++)
        if (!isspace((unsigned char)open[i])) return 1;
    return 0;
}

int tl_lit_truth(const char *s, int *truth)
{
    char buf[256];
    if (!trimmed(s, buf, sizeof buf) || !*buf) return 0;
    size_t n = strlen(buf);
    if (!strcmp(buf, "True")) return *truth = 1, 1;
    if (!strcmp(buf, "False") || !strcmp(buf, "None")) return *truth = 0, 1;
    char o = buf[0], c = buf[n - 1];
    if (n >= 2 && ((o == '[' && c == ']') || (o == '(' && c == ')') || (o == '{' && c == '}'))) {
        *truth = has_content(buf, n);
        if (o == '(' && *truth) { /* "(x)" is x itself: a parenthesised scalar */
            buf[n - 1] = 0;
            if (!strchr(buf + 1, ',')) return tl_lit_truth(buf + 1, truth);
        }
        return 1;
    }
    if (n >= 2 && (o == '\'' || o == '"') && c == o) return *truth = n > 2, 1;
    const char *p = buf + (o == '+' || o == '-');
    if (!isdigit((unsigned char)*p) && *p != '.') return 0;
    double v;
    if (!tl_lit_float(buf, &v)) return 0;
    *truth = v != 0;
    return 1;
}

int tl_lit_int_tuple(const char *s, int64_t *v, size_t max, size_t *n)
{
    char outer[512], buf[512];
    *n = 0;
    if (!trimmed(s, outer, sizeof outer)) return 0;
    char *p = outer, *end = outer + strlen(outer);
    if (p < end && (*p == '[' || *p == '(')) p++;
    if (end > p && (end[-1] == ']' || end[-1] == ')')) *--end = 0;
    if (!trimmed(p, buf, sizeof buf)) return 0;
    if (!*buf) return 1;
    for (char *piece = buf;;) {
        char *comma = strchr(piece, ',');
        if (comma) *comma = 0;
        char tmp[64];
        int trailing = !comma && *n > 0 && trimmed(piece, tmp, sizeof tmp) && !*tmp;
        if (!trailing) { /* "(2,)": a trailing comma ends the tuple */
            if (*n >= max || !tl_lit_int(piece, &v[*n])) return 0;
            (*n)++;
        }
        if (!comma) return 1;
        piece = comma + 1;
    }
}

const tl_pv *tl_lit_arg(const tl_perf_event *ev, const char *key)
{
    const tl_pv *a = ev->args;
    if (!a || a->kind != TL_PV_DICT) return NULL;
    for (size_t i = 0; i + 1 < a->n; i += 2)
        if (a->items[i].kind == TL_PV_STR && !strcmp(a->items[i].s, key)) return &a->items[i + 1];
    return NULL;
}

/* ------------------------------------------------------------------------
 * Python numbers
 * ------------------------------------------------------------------------ */

static const __int128 PN_MAX = (__int128)(((unsigned __int128)1 << 127) - 1);

tl_pn tl_pn_int(int64_t v) { return (tl_pn){.i = v}; }
tl_pn tl_pn_float(double v) { return (tl_pn){.f = v, .is_f = 1}; }
double tl_pn_double(tl_pn a) { return a.is_f ? a.f : (double)a.i; }

static __int128 abs128(__int128 a) { return a < 0 ? -a : a; } /* |a| <= PN_MAX: see below */

tl_pn tl_pn_mul(tl_pn a, tl_pn b)
{
    /* ints stay within (-PN_MAX, PN_MAX], so abs128 cannot overflow */
    if (!a.is_f && !b.is_f && (b.i == 0 || abs128(a.i) <= PN_MAX / abs128(b.i))) return (tl_pn){.i = a.i * b.i};
    return tl_pn_float(tl_pn_double(a) * tl_pn_double(b));
}

tl_pn tl_pn_add(tl_pn a, tl_pn b)
{
    if (!a.is_f && !b.is_f && (b.i >= 0 ? a.i <= PN_MAX - b.i : a.i >= -PN_MAX - b.i)) return (tl_pn){.i = a.i + b.i};
    return tl_pn_float(tl_pn_double(a) + tl_pn_double(b));
}

tl_pn tl_pn_sub(tl_pn a, tl_pn b)
{
    if (!b.is_f) b.i = -b.i; /* b.i > -PN_MAX always holds */
    else b.f = -b.f;
    return tl_pn_add(a, b);
}

int tl_pn_eq(tl_pn a, tl_pn b) { return a.is_f || b.is_f ? tl_pn_double(a) == tl_pn_double(b) : a.i == b.i; }

int tl_pn_floordiv(tl_pn a, tl_pn b, tl_pn *out)
{
    if (!a.is_f && !b.is_f) {
        if (b.i == 0) return 0;
        __int128 q = a.i / b.i;
        if (a.i % b.i != 0 && (a.i < 0) != (b.i < 0)) q--;
        *out = (tl_pn){.i = q};
        return 1;
    }
    double x = tl_pn_double(a), y = tl_pn_double(b), fl;
    if (y == 0) return 0;
    double mod = fmod(x, y), div = (x - mod) / y; /* CPython's float floor division */
    if (mod != 0 && (y < 0) != (mod < 0)) div -= 1.0;
    if (div != 0) {
        fl = floor(div);
        if (div - fl > 0.5) fl += 1.0;
    } else {
        fl = copysign(0.0, x / y);
    }
    *out = tl_pn_float(fl);
    return 1;
}

int tl_pn_int64(tl_pn a, int64_t *out)
{
    if (a.is_f || a.i > INT64_MAX || a.i < INT64_MIN) return 0;
    *out = (int64_t)a.i;
    return 1;
}

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
        if (!tl_lit_int_tuple(s ? s : "", t[i]->v, MAX_DIMS, &t[i]->n) || !expand(t[i], c->nd, dflt[i]))
            return tl_perf_error(r, "convolution: bad int tuple %s in Concrete Inputs[%d]", s ? s : "", at[i]);
    }
    const char *tr = tl_pe_concrete(ev, (size_t)L->ci + 3), *g = tl_pe_concrete(ev, (size_t)L->ci + 5);
    if (!tl_lit_truth(tr, &c->transposed)) return tl_perf_error(r, "convolution: transposed is not a literal");
    if (!tl_lit_int(g, &c->groups)) return tl_perf_error(r, "convolution: groups is not an int");
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
            if (!tl_lit_int(s, &t[i]->v[0])) return tl_perf_error(r, "%s: bad int %s", ev->name, s);
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

static int parse_bias(const tl_perf_event *ev, const conv_layout *L)
{
    if (L->bias == BIAS_ALWAYS) return 1;
    if (L->bias == BIAS_DIMS) return tl_pv_len(ev->dims) > 2 && tl_pv_nonempty(tl_pe_dim(ev, 2));
    const char *s = tl_pe_concrete(ev, 3); /* bias_sizes: an int list literal */
    char c0 = 0;
    if (s) while (isspace((unsigned char)*s)) s++;
    if (s) c0 = *s;
    int truth = 0;
    return (c0 == '[' || c0 == '(') && tl_lit_truth(s, &truth) && truth;
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
    c->bias = parse_bias(ev, L);
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
    tl_pn input_grad = flops_of(&c->out, &c->w, &c->x, 0, !c->transposed);
    tl_pn weight_grad = c->transposed ? flops_of(&tout, &tx, &tw, 0, 0) : flops_of(&tx, &tout, &tw, 0, 0);
    tl_pn f = ADD(input_grad, weight_grad);
    return c->bias ? ADD(f, prod(&c->out)) : f;
}

static tl_pn bytes_fwd(const conv_cfg *c, int bpe)
{
    tl_pn n = ADD(ADD(prod(&c->x), prod(&c->w)), tl_pn_int(c->bias ? c->out.d[1] : 0));
    return MUL(ADD(n, prod(&c->out)), tl_pn_int(bpe));
}

static tl_pn bytes_bwd(const conv_cfg *c, int bpe)
{
    tl_pn b = MUL(ADD(ADD(prod(&c->out), prod(&c->w)), prod(&c->x)), tl_pn_int(bpe));
    b = ADD(b, b); /* bytes(out, w, x) + bytes(out, x, w) */
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
 * ConvBias_ forward inputs by Sequence number
 * ------------------------------------------------------------------------ */

static pthread_mutex_t seq_mu = PTHREAD_MUTEX_INITIALIZER;
static tl_map seq_map;      /* (seq, 0) -> index into seq_txt */
static char **seq_txt;      /* JSON [dims, types, strides, concrete] */
static size_t seq_n, seq_cap;

static int seq_of(const tl_perf_event *ev, int64_t *seq) { return tl_pv_int(tl_lit_arg(ev, "Sequence number"), seq); }

static void seq_put(const tl_perf_event *ev)
{
    int64_t seq;
    if (!seq_of(ev, &seq)) return;
    tl_sbuf b;
    tl_sb_init(&b);
    const tl_pv *parts[4] = {ev->dims, ev->types, ev->strides, ev->concrete};
    tl_sb_putc(&b, '[');
    for (int i = 0; i < 4; i++) {
        if (i) tl_sb_putc(&b, ',');
        tl_pv_to_json(&b, parts[i]);
    }
    tl_sb_putc(&b, ']');
    pthread_mutex_lock(&seq_mu);
    if (!seq_map.cap) tl_map_init(&seq_map, 64);
    uint32_t at = tl_map_get(&seq_map, (uint64_t)seq, 0);
    if (at == UINT32_MAX) {
        if (seq_n == seq_cap) {
            seq_cap = seq_cap ? 2 * seq_cap : 64;
            seq_txt = tl_xrealloc(seq_txt, seq_cap * sizeof *seq_txt);
        }
        at = (uint32_t)seq_n++;
        tl_map_put(&seq_map, (uint64_t)seq, 0, at);
    } else {
        free(seq_txt[at]);
    }
    seq_txt[at] = tl_sb_take(&b);
    pthread_mutex_unlock(&seq_mu);
    tl_sb_free(&b);
}

/* The remembered forward inputs, parsed into a; NULL when unknown. */
static const tl_pv *seq_get(int64_t seq, tl_pv_arena *a)
{
    const tl_pv *v = NULL;
    pthread_mutex_lock(&seq_mu);
    uint32_t at = seq_map.cap ? tl_map_get(&seq_map, (uint64_t)seq, 0) : UINT32_MAX;
    if (at != UINT32_MAX) v = tl_pv_parse(a, seq_txt[at]);
    pthread_mutex_unlock(&seq_mu);
    return v;
}

void tl_conv_seq_cache_clear(void)
{
    pthread_mutex_lock(&seq_mu);
    for (size_t i = 0; i < seq_n; i++) free(seq_txt[i]);
    free(seq_txt);
    if (seq_map.cap) tl_map_free(&seq_map);
    memset(&seq_map, 0, sizeof seq_map);
    seq_txt = NULL;
    seq_n = seq_cap = 0;
    pthread_mutex_unlock(&seq_mu);
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
    int st = run_layout(ev, &fused_fwd, bwd, r);
    if (st == TL_PERF_OK) seq_put(ev);
    return st;
}

/* The backward op has no shapes of its own: it takes the forward's. */
static int fn_conv_bias_backward(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    int64_t seq;
    if (!seq_of(ev, &seq)) return tl_perf_error(r, "%s: no Sequence number", ev->name);
    tl_pv_arena *a = tl_pv_arena_new();
    const tl_pv *fwd = seq_get(seq, a);
    int st;
    if (!fwd) {
        st = tl_perf_error(r, "%s: no forward op with Sequence number %lld", ev->name, (long long)seq);
    } else {
        tl_perf_event f = {.name = ev->name,
                           .dims = tl_pv_at(fwd, 0),
                           .types = tl_pv_at(fwd, 1),
                           .strides = tl_pv_at(fwd, 2),
                           .concrete = tl_pv_at(fwd, 3),
                           .args = ev->args};
        st = run_layout(&f, &fused_bwd, 1, r); /* params are deep-copied into r */
    }
    tl_pv_arena_free(a);
    return st;
}

const tl_perf_class tl_pc_aten_conv = {"aten_conv", "CONV_fwd", "CONV_bwd", "CONV", 1, fn_aten_conv};
const tl_perf_class tl_pc_aten_conv_bwd = {"aten_conv_bwd", "CONV_bwd", "CONV_bwd", "CONV", 1, fn_aten_conv_bwd};
const tl_perf_class tl_pc_ConvBias_ = {"ConvBias_", "CONV_fwd", "CONV_bwd", "CONV", 1, fn_conv_bias};
const tl_perf_class tl_pc_ConvBiasReLU_ = {"ConvBiasReLU_", "CONV_fwd", "CONV_bwd", "CONV", 1, fn_conv_bias};
const tl_perf_class tl_pc_ConvBias_Backward = {"ConvBias_Backward", "CONV_bwd", "CONV_bwd", "CONV", 1,
                                               fn_conv_bias_backward};
const tl_perf_class tl_pc_ConvBiasReLU_Backward = {"ConvBiasReLU_Backward", "CONV_bwd", "CONV_bwd", "CONV", 1,
                                                   fn_conv_bias_backward};
