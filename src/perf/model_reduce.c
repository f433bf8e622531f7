/* model_reduce.c — aten reductions (perf-model spec §4.5): sum, mean,
 * max, min, norm, linalg_norm, std, var, logsumexp, cumsum, cumprod, amin,
 * amax. */
#include "model_reduce.h"

#include <string.h>

#include "perf_util.h"

enum { MAX_DIMS = 64 };

/* mean / max / min / norm when the name holds the word (in that order),
 * else sum; it does not change the numbers. */
static const char *reduce_type(const char *name)
{
    static const char *const words[] = {"mean", "max", "min", "norm"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (name && strstr(name, words[i])) return words[i];
    return "sum";
}

/* [FIX] the reduced dims from the parsed Concrete Inputs: keepdim is the
 * last bool of C[1:], dim the nearest int or int list before it. NULL (a
 * full reduction) when there is no bool or no dim. */
static const tl_pv *reduce_dims(tl_perf_result *r, const tl_perf_event *ev)
{
    size_t n = tl_pv_len(ev->concrete), keep = 0;
    for (size_t i = n; i-- > 1;) {
        const tl_pv *v = tl_pe_literal(r, ev, i);
        if (v && v->kind == TL_PV_BOOL) {
            keep = i;
            break;
        }
    }
    for (size_t i = keep; i-- > 1;) {
        const tl_pv *v = tl_pe_literal(r, ev, i);
        if (tl_py_is_int(v) || tl_py_is_int_list(v)) return v;
    }
    return NULL;
}

/* Elements left after reducing `dims` (an int or int list) of shape (a
 * valid shape); keepdim does not change the count. Out-of-range dims and
 * an empty dim list mean a full reduction. 0 when the count leaves int64
 * (a zero-size shape with huge other dims). */
static int elems_after(const tl_pv *shape, const tl_pv *dims, int64_t *out)
{
    size_t ndim = tl_pv_len(shape), nd = tl_pv_is_list(dims) ? dims->n : 1;
    *out = 1;
    if (!dims || nd == 0 || ndim > MAX_DIMS) return 1;
    char reduced[MAX_DIMS] = {0};
    for (size_t i = 0; i < nd; i++) {
        const tl_pv *d = tl_pv_is_list(dims) ? &dims->items[i] : dims;
        if (d->kind != TL_PV_INT || d->i < -(int64_t)ndim || d->i >= (int64_t)ndim) return 1;
        reduced[d->i < 0 ? d->i + (int64_t)ndim : d->i] = 1;
    }
    for (size_t i = 0; i < ndim; i++)
        if (!reduced[i] && __builtin_mul_overflow(*out, shape->items[i].i, out)) return 0;
    return 1;
}

static int output_elems(tl_perf_result *r, const tl_perf_event *ev, int64_t n_in, int64_t *out)
{
    *out = n_in;
    if (ev->name && (strstr(ev->name, "cumsum") || strstr(ev->name, "cumprod"))) return 1;
    if (tl_pv_nonempty(tl_pe_dim(ev, 1))) return 1; /* max.other / min.other: elementwise */
    return elems_after(tl_pe_dim(ev, 0), reduce_dims(r, ev), out);
}

/* args["Output type"][0] when that key holds a non-empty list, else None. */
static const char *output_dtype(const tl_perf_event *ev)
{
    const tl_pv *t = tl_pe_arg(ev, "Output type");
    return tl_pv_cstr(tl_pv_at(t, 0));
}

static int aten_reduce(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd; /* flops_bwd = in; bytes_bwd = out·bpe_out + in·bpe_in: the same numbers */
    int64_t n_in = 0, n_out = 0;
    const char *dtypes[2] = {NULL, NULL};
    if (tl_pv_len(ev->dims) > 0) {
        if (!tl_shape_numel(tl_pe_dim(ev, 0), &n_in) || !tl_pv_at(ev->types, 0))
            return tl_perf_error(r, "%s: Input Dims[0]/Input type[0] missing", ev->name);
        if (!output_elems(r, ev, n_in, &n_out)) return tl_perf_error(r, "%s: output size out of range", ev->name);
        dtypes[0] = tl_pe_type(ev, 0);
        dtypes[1] = output_dtype(ev);
    }
    tl_pm_int(r, "num_input_elems", n_in);
    tl_pm_int(r, "num_output_elems", n_out);
    tl_pm_str_tuple(r, "dtype_in_out", dtypes, 2);
    tl_pm_str(r, "reduce_type", reduce_type(ev->name));

    int bpe_in = tl_dtype_bpe(dtypes[0]);
    int bpe_out = dtypes[1] ? tl_dtype_bpe(dtypes[1]) : bpe_in;
    r->flops = (double)n_in;
    if (bpe_in && bpe_out) tl_perf_set_bytes(r, (double)((__int128)n_in * bpe_in + (__int128)n_out * bpe_out));
    return tl_perf_ok(r, "vector", dtypes[0]);
}

const tl_perf_class tl_pc_aten_reduce = {"aten_reduce", "reduce", NULL, "Reduce", 1, aten_reduce, 0};
