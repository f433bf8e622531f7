/* model_norm.c — batch, layer, group, instance and RMS norms and their
 * backward ops, and primus' fused LN + modulate (perf-model spec §4.6).
 * Optional weight/bias presence is tested as "non-empty shape at the
 * schema-correct index" [FIX]. */
#include "model_norm.h"

#include <string.h>

#include "perf_util.h"

enum { MAX_MASK = 16 };

/* The parsed parameters every norm shares (the base class's). */
typedef struct norm {
    const tl_pv *shape;  /* op_shape */
    const char *dtype;   /* T_in; the output dtype is None (same bpe) */
    const tl_pv *stride; /* stride_input */
    int64_t E;           /* prod(op_shape) */
    int c_float;         /* num_channels is a float (GroupNormBwd) */
    int64_t C;
    double Cf;
    int has_bias, is_affine, is_training;
    int has_mask; /* output_mask is a param */
    int mask[MAX_MASK];
    size_t n_mask;
} norm;

#define NORM_CAT "NORM_fwd", "NORM_bwd", "Normalization"
#define NORM_BWD_CAT "NORM_bwd", "NORM_bwd", "Normalization"

/* --- parsing ---------------------------------------------------------- */

/* op_shape, dtype and stride of argument idx (the stride is optional). */
static int norm_input(const tl_perf_event *ev, size_t idx, norm *n)
{
    memset(n, 0, sizeof *n);
    n->shape = tl_pe_dim(ev, idx);
    n->dtype = tl_pe_type(ev, idx);
    n->stride = tl_pe_stride(ev, idx);
    return tl_pv_at(ev->types, idx) && tl_shape_numel(n->shape, &n->E);
}

/* num_channels = op_shape[1]. */
static int channels_dim1(norm *n) { return tl_shape_dim(n->shape, 1, &n->C); }

/* num_channels = prod(literal C[i]), the normalized_shape. */
static int channels_literal(tl_perf_result *r, const tl_perf_event *ev, size_t i, norm *n)
{
    return tl_shape_numel(tl_pe_literal(r, ev, i), &n->C);
}

/* output_mask = [bool(x) for x in literal C[i]]. */
static int mask_literal(tl_perf_result *r, const tl_perf_event *ev, size_t i, norm *n)
{
    n->has_mask = 1;
    return tl_py_literal_bools(r, tl_pe_concrete(ev, i), n->mask, MAX_MASK, &n->n_mask);
}

/* Optional tensor i is present: a non-empty shape [FIX]. */
static int present(const tl_perf_event *ev, size_t i) { return tl_pv_nonempty(tl_pe_dim(ev, i)); }

/* Optional weight at argument w and bias at w + 1. */
static void affine_at(const tl_perf_event *ev, size_t w, norm *n)
{
    n->is_affine = present(ev, w);
    n->has_bias = present(ev, w + 1);
}

/* is_training from the literal of C[i] [FIX] ("False" is False); the
 * argument must exist. */
static int training_literal(tl_perf_result *r, const tl_perf_event *ev, size_t i, int *out)
{
    if (!tl_pv_at(ev->concrete, i)) return 0;
    *out = tl_py_literal_truth(r, tl_pe_concrete(ev, i));
    return 1;
}

/* --- params and metrics ----------------------------------------------- */

static void norm_params(tl_perf_result *r, const norm *n)
{
    const char *dtypes[2] = {n->dtype, NULL};
    tl_pm_pv(r, "op_shape", n->shape);
    tl_pm_str_tuple(r, "dtype_in_out", dtypes, 2);
    tl_pm_pv(r, "stride_input", n->stride);
    tl_pm_none(r, "stride_output");
    if (n->c_float) tl_pm_float(r, "num_channels", n->Cf);
    else tl_pm_int(r, "num_channels", n->C);
    tl_pm_bool(r, "has_bias", n->has_bias);
    tl_pm_bool(r, "is_affine", n->is_affine);
    tl_pm_bool(r, "is_training", n->is_training);
    if (n->has_mask) { /* a Python list in the reference (§4.6): [True], not (True,) */
        tl_pm_bool_tuple(r, "output_mask", n->mask, n->n_mask < MAX_MASK ? n->n_mask : MAX_MASK);
        tl_perf_param *p = tl_pm_find(r, "output_mask");
        if (p && p->value.kind == TL_PV_LIST) p->value.pylist = 1;
    }
}

static int norm_done(tl_perf_result *r, const norm *n)
{
    return tl_perf_ok(r, "vector", n->dtype);
}

/* Forward: flops = 3C + (3E if training) + 3C + 2E; bytes = 2E·bpe +
 * W·C·bpe with W = 2 + affine + (affine and bias) + 2·training. */
static int norm_fwd(tl_perf_result *r, const norm *n)
{
    __int128 E = n->E, C = n->C;
    r->flops = (double)(3 * C + (n->is_training ? 3 * E : 0) + 3 * C + 2 * E);
    int bpe = tl_dtype_bpe(n->dtype);
    if (bpe) {
        int W = 2 + (n->is_affine ? 1 : 0) + (n->is_affine && n->has_bias ? 1 : 0) + (n->is_training ? 2 : 0);
        tl_perf_set_bytes(r, (double)(E * bpe + E * bpe + W * C * bpe));
    }
    return norm_done(r, n);
}

/* Backward (epc = E / C, a float):
 *   flops = C·((3 if not training) + 4·epc + (5·epc if mask[0] and
 *           training) + (2·epc if not mask[0]))
 *   bytes = E·bpe + E·bpe·(2 if mask[0] and training else 1)
 *           + (C·bpe if training) + (if affine: C·bpe + (if training:
 *           C·bpe·(2 if bias else 1))) */
static int norm_bwd(tl_perf_result *r, const norm *n, const char *name)
{
    int m0 = 1; /* no output_mask: every gradient is wanted */
    if (n->has_mask) {
        if (n->n_mask < 1) return tl_perf_error(r, "%s: output_mask is empty", name);
        m0 = n->mask[0];
    }
    double C = n->c_float ? n->Cf : (double)n->C;
    if (C == 0) return tl_perf_error(r, "%s: num_channels is 0", name);
    double epc = (double)n->E / C;
    double sum = (n->is_training ? 0 : 3) + 4 * epc;
    if (m0 && n->is_training) sum += 5 * epc;
    if (!m0) sum += 2 * epc;
    r->flops = C * sum;

    int bpe = tl_dtype_bpe(n->dtype);
    if (bpe) {
        __int128 ebytes = (__int128)n->E * bpe + (__int128)n->E * bpe * (m0 && n->is_training ? 2 : 1);
        int kb = n->has_bias ? 2 : 1;
        if (!n->c_float) {
            __int128 cb = (__int128)n->C * bpe;
            tl_perf_set_bytes(r, (double)(ebytes + (n->is_training ? cb : 0) +
                                          (n->is_affine ? cb + (n->is_training ? cb * kb : 0) : 0)));
        } else {
            double cb = n->Cf * bpe, b = (double)ebytes;
            if (n->is_training) b += cb;
            if (n->is_affine) b += cb + (n->is_training ? cb * kb : 0);
            tl_perf_set_bytes(r, b);
        }
    }
    return norm_done(r, n);
}

/* Runs the base formulas: forward unless bwd. */
static int norm_run(tl_perf_result *r, const norm *n, int bwd, const char *name)
{
    norm_params(r, n);
    return bwd ? norm_bwd(r, n, name) : norm_fwd(r, n);
}

static int bad_args(tl_perf_result *r, const tl_perf_event *ev)
{
    return tl_perf_error(r, "%s: missing or malformed input args", ev->name);
}

/* --- BatchNorm -------------------------------------------------------- */

/* batch_norm(input, weight?, bias?, running_mean?, running_var?, training,
 * momentum, eps, ...). The bwd metrics are not implemented. */
static int batch_norm(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    norm n;
    if (!norm_input(ev, 0, &n) || !channels_dim1(&n) || !training_literal(r, ev, 5, &n.is_training))
        return bad_args(r, ev);
    affine_at(ev, 1, &n);
    return norm_run(r, &n, 0, ev->name);
}

const tl_perf_class tl_pc_BatchNorm = {"BatchNorm", NORM_CAT, 0, batch_norm, 0};

/* native_batch_norm_backward(grad_out, input, weight?, running_mean?,
 * running_var?, save_mean?, save_invstd?, train, eps, output_mask);
 * cudnn_/miopen_ (input, grad_out, weight, ...) are inference-only here.
 * flops()/bytes() are the backward formulas. */
static int batch_norm_bwd(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    const char *name = ev->name ? ev->name : "";
    int vendor = strstr(name, "cudnn_batch_norm_backward") || strstr(name, "miopen_batch_norm_backward");
    norm n;
    if (!norm_input(ev, vendor ? 0 : 1, &n) || !channels_dim1(&n)) return bad_args(r, ev);
    if (!vendor && !training_literal(r, ev, 7, &n.is_training)) return bad_args(r, ev);
    n.is_affine = present(ev, 2);
    n.has_bias = 1;
    n.has_mask = 1;
    n.n_mask = 1;
    n.mask[0] = vendor || tl_pe_dim(ev, 0) != NULL; /* has_output */
    return norm_run(r, &n, 1, ev->name);
}

const tl_perf_class tl_pc_BatchNormBwd = {"BatchNormBwd", NORM_BWD_CAT, 1, batch_norm_bwd, 0};

/* --- LayerNorm -------------------------------------------------------- */

/* layer_norm(input, normalized_shape, weight?, bias?, eps, ...). */
static int layer_norm(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    norm n;
    if (!norm_input(ev, 0, &n) || !channels_literal(r, ev, 1, &n)) return bad_args(r, ev);
    affine_at(ev, 2, &n);
    n.is_training = 1;
    return norm_run(r, &n, bwd, ev->name);
}

const tl_perf_class tl_pc_LayerNorm = {"LayerNorm", NORM_CAT, 1, layer_norm, 0};

/* native_layer_norm_backward(grad_out, input, normalized_shape, mean,
 * rstd, weight?, bias?, output_mask): affine and bias from the mask. */
static int layer_norm_bwd(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    norm n;
    if (!norm_input(ev, 1, &n) || !channels_literal(r, ev, 2, &n) || !mask_literal(r, ev, 7, &n) || n.n_mask < 3)
        return bad_args(r, ev);
    n.is_affine = n.mask[1];
    n.has_bias = n.mask[2];
    n.is_training = 1;
    return norm_run(r, &n, 1, ev->name);
}

const tl_perf_class tl_pc_LayerNormBwd = {"LayerNormBwd", NORM_BWD_CAT, 1, layer_norm_bwd, 0};

/* --- GroupNorm -------------------------------------------------------- */

/* group_norm(input, num_groups, weight?, bias?, eps, cudnn_enabled) and
 * the miopen_/cudnn_ names; native_group_norm(input, weight?, bias?, N, C,
 * HxW, group, eps); aiter::_groupnorm_run keeps the reference rule (its
 * schema is not established): affine when D[2] exists, bias always. */
static int group_norm(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    norm n;
    if (!norm_input(ev, 0, &n) || !channels_dim1(&n)) return bad_args(r, ev);
    const char *name = ev->name ? ev->name : "";
    if (!strcmp(name, "aten::native_group_norm")) {
        affine_at(ev, 1, &n);
    } else if (!strcmp(name, "aiter::_groupnorm_run")) {
        if (!tl_pe_dim(ev, 2)) return bad_args(r, ev);
        n.is_affine = 1;
        n.has_bias = 1;
    } else {
        affine_at(ev, 2, &n);
    }
    n.is_training = 1;
    return norm_run(r, &n, bwd, ev->name);
}

const tl_perf_class tl_pc_GroupNorm = {"GroupNorm", NORM_CAT, 1, group_norm, 0};

/* native_group_norm_backward(grad_out, input, mean, rstd, weight?, N, C,
 * HxW, group, output_mask): num_channels = C / group, a float. */
static int group_norm_bwd(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    norm n;
    int64_t groups;
    if (!norm_input(ev, 1, &n) || !channels_dim1(&n) || !tl_py_literal_int(r, tl_pe_concrete(ev, 8), &groups) ||
        !mask_literal(r, ev, 9, &n))
        return bad_args(r, ev);
    if (groups == 0) return tl_perf_error(r, "%s: group is 0", ev->name);
    n.c_float = 1;
    n.Cf = (double)n.C / (double)groups;
    n.is_affine = present(ev, 4);
    n.has_bias = 1;
    n.is_training = 1;
    return norm_run(r, &n, 1, ev->name);
}

const tl_perf_class tl_pc_GroupNormBwd = {"GroupNormBwd", NORM_BWD_CAT, 1, group_norm_bwd, 0};

/* --- InstanceNorm ----------------------------------------------------- */

/* instance_norm(input, weight?, bias?, running_mean?, running_var?,
 * use_input_stats, momentum, eps, cudnn_enabled). */
static int instance_norm(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    norm n;
    if (!norm_input(ev, 0, &n) || !channels_dim1(&n) || !training_literal(r, ev, 5, &n.is_training))
        return bad_args(r, ev);
    affine_at(ev, 1, &n);
    return norm_run(r, &n, bwd, ev->name);
}

const tl_perf_class tl_pc_InstanceNorm = {"InstanceNorm", NORM_CAT, 1, instance_norm, 0};

/* Not modelled by the reference: no row. */
static int instance_norm_bwd(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)ev;
    (void)bwd;
    return tl_perf_not_implemented(r);
}

const tl_perf_class tl_pc_InstanceNormBwd = {"InstanceNormBwd", NORM_BWD_CAT, 0, instance_norm_bwd, 0};

/* --- RMSNorm ---------------------------------------------------------- */

/* _fused_rms_norm(input, normalized_shape, weight?, eps). rows = E / C:
 *   flops = rows·(2C + 2) + E·(2 if affine else 1)
 *   bytes = 2E·bpe + (C·bpe if affine)
 * The bwd metrics are the base formulas. */
static int rms_norm(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    norm n;
    if (!norm_input(ev, 0, &n) || !channels_literal(r, ev, 1, &n)) return bad_args(r, ev);
    n.is_affine = present(ev, 2);
    if (bwd) return norm_run(r, &n, 1, ev->name);
    norm_params(r, &n);
    if (n.C == 0) return tl_perf_error(r, "%s: normalized size is 0", ev->name);
    double rows = (double)n.E / (double)n.C;
    r->flops = rows * (double)(2 * (__int128)n.C + 2) + (double)((__int128)n.E * (n.is_affine ? 2 : 1));
    int bpe = tl_dtype_bpe(n.dtype);
    if (bpe) tl_perf_set_bytes(r, (double)((__int128)n.E * bpe * 2 + (n.is_affine ? (__int128)n.C * bpe : 0)));
    return norm_done(r, &n);
}

const tl_perf_class tl_pc_RMSNorm = {"RMSNorm", NORM_CAT, 1, rms_norm, 0};

/* _fused_rms_norm_backward(grad_out, input, normalized_shape, rstd,
 * weight?, output_mask):
 *   flops = (E if affine) + E + (6E if mask[0]) + (if mask[1] and affine:
 *           E + (E if rows > 1))
 *   bytes = 3E·bpe + (2C·bpe if affine)
 * flops()/bytes() and the bwd metrics are the same. */
static int rms_norm_bwd(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    norm n;
    if (!norm_input(ev, 1, &n) || !channels_literal(r, ev, 2, &n) || !mask_literal(r, ev, 5, &n) || n.n_mask < 2)
        return bad_args(r, ev);
    n.is_affine = present(ev, 4);
    norm_params(r, &n);
    if (n.C == 0) return tl_perf_error(r, "%s: normalized size is 0", ev->name);
    __int128 E = n.E, f = (n.is_affine ? E : 0) + E;
    if (n.mask[0]) f += 6 * E;
    if (n.mask[1] && n.is_affine) f += E + ((double)n.E / (double)n.C > 1 ? E : 0);
    r->flops = (double)f;
    int bpe = tl_dtype_bpe(n.dtype);
    if (bpe) tl_perf_set_bytes(r, (double)(E * bpe + 2 * E * bpe + (n.is_affine ? 2 * (__int128)n.C * bpe : 0)));
    return norm_done(r, &n);
}

const tl_perf_class tl_pc_RMSNormBwd = {"RMSNormBwd", NORM_BWD_CAT, 1, rms_norm_bwd, 0};

/* --- primus fused LN + modulate --------------------------------------- */

/* x = D[0] = [T, B, H]: LN over H without its own affine, then x·(1 +
 * scale) + shift with per-(B, H) scale and shift; fp32 mean/rstd per
 * (T, B) row.
 *   forward:  flops = 12E; bytes = 2E·bpe + 2·B·H·bpe + 2·T·B·4
 *   backward: flops = 15E; bytes = 2E·bpe + 2·B·T·4 + E·bpe + 2·B·H·bpe + B·H·bpe */
static int fused_ln_modulate_run(const tl_perf_event *ev, tl_perf_result *r, int backward)
{
    norm n;
    int64_t T, B;
    if (!norm_input(ev, 0, &n) || tl_pv_len(n.shape) != 3 || !tl_shape_dim(n.shape, 0, &T) ||
        !tl_shape_dim(n.shape, 1, &B) || !tl_shape_dim(n.shape, 2, &n.C))
        return bad_args(r, ev);
    n.is_training = 1;
    norm_params(r, &n);
    __int128 E = n.E, BH = (__int128)B * n.C, stats = 2 * (__int128)T * B * 4;
    r->flops = (double)((backward ? 15 : 12) * E);
    int bpe = tl_dtype_bpe(n.dtype);
    if (bpe) tl_perf_set_bytes(r, (double)(2 * E * bpe + 2 * BH * bpe + stats + (backward ? E * bpe + BH * bpe : 0)));
    return norm_done(r, &n);
}

static int fused_ln_modulate(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    return fused_ln_modulate_run(ev, r, 0);
}

static int fused_ln_modulate_bwd(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    return fused_ln_modulate_run(ev, r, 1);
}

const tl_perf_class tl_pc_FusedLnModulate = {"FusedLnModulate", NORM_CAT, 0, fused_ln_modulate, 0};
const tl_perf_class tl_pc_FusedLnModulateBackward = {"FusedLnModulateBackward", NORM_BWD_CAT, 0,
                                                     fused_ln_modulate_bwd, 0};
