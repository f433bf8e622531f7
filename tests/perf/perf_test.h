/* perf_test.h — what the tests/perf/test_*.c programs share (each defines
 * tl_test_state itself):
 *  - the runner: runs their test functions in order, with an optional hook
 *    before and after each (tl_pt_arena_new / tl_pt_arena_free, say), and
 *    prints the closing "N passed, N failed" line (N test functions);
 *  - op events from JSON text: the args lists (Input Dims, Input type,
 *    Input Strides, Concrete Inputs) and other args parsed with tl_pv_parse,
 *    into the per-test arena tl_pt_arena (tl_pt_pv, tl_pt_event) or into a
 *    fixture's own arena (tl_pt_fx: the event built from one args object or
 *    from the four lists, kernel names, the result; tl_pt_run_args /
 *    tl_pt_run_lists run a class on it with tl_perf_run, tl_pt_done frees);
 *  - results as the report shows them: a param's str() or its
 *    tl_pv_str_tuple text, the param keys, "k=v|k=v", the Compute Spec;
 *  - CHECK_DBL (exact double equality), CHECK_GFLOPS (flops / 1e9) and
 *    CHECK_MB (Data Moved: has_bytes, then bytes / 1048576).
 * A renderer's text lasts until its next call or until the result is freed. */
#ifndef TL_PERF_TEST_H
#define TL_PERF_TEST_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "perf/perf_model.h"
#include "test.h"
#include "util/sbuf.h"

/* --- runner ------------------------------------------------------------- */

typedef void (*tl_perf_test_fn)(void);

/* Returns the exit status: 1 when a test failed. */
static inline int tl_perf_test_run(const tl_perf_test_fn *tests, size_t n, tl_perf_test_fn before,
                                   tl_perf_test_fn after)
{
    int passed = 0, failed = 0;
    for (size_t i = 0; i < n; i++) {
        int failures = tl_test_state.failures;
        if (before) before();
        tests[i]();
        if (after) after();
        if (tl_test_state.failures == failures) passed++;
        else failed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}

#define TL_PERF_TEST_RUN(tests, before, after) tl_perf_test_run(tests, sizeof tests / sizeof *tests, before, after)

/* --- events parsed into the per-test arena -------------------------------- */

/* The arena of tl_pt_pv / tl_pt_event: tl_pt_arena_new and tl_pt_arena_free
 * as the runner's hooks give each test a fresh one. */
static tl_pv_arena *tl_pt_arena __attribute__((unused));

static inline void tl_pt_arena_new(void) { tl_pt_arena = tl_pv_arena_new(); }

static inline void tl_pt_arena_free(void)
{
    tl_pv_arena_free(tl_pt_arena);
    tl_pt_arena = NULL;
}

/* JSON text parsed into tl_pt_arena; NULL stays NULL (the key is absent). */
static inline const tl_pv *tl_pt_pv(const char *json) { return json ? tl_pv_parse(tl_pt_arena, json) : NULL; }

/* An event from the JSON texts of its args lists and of its whole args
 * object (NULL: absent); no kernels. */
static inline tl_perf_event tl_pt_event(const char *name, const char *dims, const char *types, const char *strides,
                                        const char *concrete, const char *args)
{
    return (tl_perf_event){.name = name,
                           .dims = tl_pt_pv(dims),
                           .types = tl_pt_pv(types),
                           .strides = tl_pt_pv(strides),
                           .concrete = tl_pt_pv(concrete),
                           .args = tl_pt_pv(args)};
}

/* Result-initialises r and runs class c (bwd) on ev; the caller frees r. */
static inline int tl_pt_run(const tl_perf_class *c, const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    tl_perf_result_init(r);
    return tl_perf_run(c, ev, bwd, r);
}

/* --- fixture: an event with its own arena, and the result ----------------- */

typedef struct tl_pt_fx {
    tl_pv_arena *a;
    tl_perf_event ev;
    tl_perf_result r;
} tl_pt_fx;

/* The value of key in an args DICT, NULL when absent. */
static inline const tl_pv *tl_pt_get(const tl_pv *d, const char *key)
{
    for (size_t i = 0; d && d->kind == TL_PV_DICT && i + 1 < d->n; i += 2)
        if (tl_pv_cstr(&d->items[i]) && !strcmp(d->items[i].s, key)) return &d->items[i + 1];
    return NULL;
}

/* Runs class c (bwd) on the event `name` whose args object is the JSON text
 * args_json (the four lists read from its keys), with the kernels given.
 * tl_pt_done frees what it built, whatever it returned. */
static inline int tl_pt_run_args(tl_pt_fx *f, const tl_perf_class *c, int bwd, const char *name,
                                 const char *args_json, const char *const *kernels, size_t n_kernels)
{
    f->a = tl_pv_arena_new();
    memset(&f->ev, 0, sizeof f->ev);
    f->ev.name = name;
    f->ev.args = tl_pv_parse(f->a, args_json);
    f->ev.dims = tl_pt_get(f->ev.args, "Input Dims");
    f->ev.types = tl_pt_get(f->ev.args, "Input type");
    f->ev.strides = tl_pt_get(f->ev.args, "Input Strides");
    f->ev.concrete = tl_pt_get(f->ev.args, "Concrete Inputs");
    f->ev.kernels = kernels;
    f->ev.n_kernels = n_kernels;
    tl_perf_result_init(&f->r);
    return tl_perf_run(c, &f->ev, bwd, &f->r);
}

/* tl_pt_run_args on the args object made of the four lists' JSON texts
 * (NULL: the key is absent) and extra: more `"key": value` pairs (or NULL). */
static inline int tl_pt_run_lists_x(tl_pt_fx *f, const tl_perf_class *c, int bwd, const char *name, const char *dims,
                                    const char *types, const char *strides, const char *concrete, const char *extra)
{
    tl_sbuf j;
    tl_sb_init(&j);
    tl_sb_puts(&j, "{\"_\":0");
    if (dims) tl_sb_printf(&j, ",\"Input Dims\":%s", dims);
    if (types) tl_sb_printf(&j, ",\"Input type\":%s", types);
    if (strides) tl_sb_printf(&j, ",\"Input Strides\":%s", strides);
    if (concrete) tl_sb_printf(&j, ",\"Concrete Inputs\":%s", concrete);
    if (extra) tl_sb_printf(&j, ",%s", extra);
    tl_sb_putc(&j, '}');
    int status = tl_pt_run_args(f, c, bwd, name, j.s, NULL, 0);
    tl_sb_free(&j);
    return status;
}

static inline int tl_pt_run_lists(tl_pt_fx *f, const tl_perf_class *c, int bwd, const char *name, const char *dims,
                                  const char *types, const char *strides, const char *concrete)
{
    return tl_pt_run_lists_x(f, c, bwd, name, dims, types, strides, concrete, NULL);
}

static inline void tl_pt_done(tl_pt_fx *f)
{
    tl_perf_result_free(&f->r);
    tl_pv_arena_free(f->a);
}

/* --- results as the report shows them ------------------------------------- */

/* tl_pv_str_tuple of v: Python str() after the reference's list_to_tuple,
 * strings quoted as repr does. */
static inline const char *tl_pt_repr(const tl_pv *v)
{
    static char out[4096];
    tl_sbuf b;
    tl_sb_init(&b);
    tl_pv_str_tuple(&b, v);
    snprintf(out, sizeof out, "%s", b.s ? b.s : "");
    tl_sb_free(&b);
    return out;
}

/* A `param:` cell: str() of the value (a top-level string is its text). */
static inline const char *tl_pt_str(const tl_pv *v) { return v->kind == TL_PV_STR ? v->s : tl_pt_repr(v); }

/* str() of param key (tl_pt_str), "<absent>" when it is missing. */
static inline const char *tl_pt_param(tl_perf_result *r, const char *key)
{
    tl_perf_param *p = tl_pm_find(r, key);
    return p ? tl_pt_str(&p->value) : "<absent>";
}

/* tl_pt_repr of param key (a string quoted), "<absent>" when it is missing. */
static inline const char *tl_pt_param_repr(tl_perf_result *r, const char *key)
{
    tl_perf_param *p = tl_pm_find(r, key);
    return p ? tl_pt_repr(&p->value) : "<absent>";
}

/* The param keys in order, comma-separated. */
static inline const char *tl_pt_keys(const tl_perf_result *r)
{
    static char out[4096];
    size_t n = 0;
    out[0] = 0;
    for (int i = 0; i < r->n_params && n < sizeof out; i++)
        n += (size_t)snprintf(out + n, sizeof out - n, "%s%s", i ? "," : "", r->params[i].key);
    return out;
}

/* All params as "k=v|k=v", v as tl_pt_str. */
static inline const char *tl_pt_params(const tl_perf_result *r)
{
    static char out[4096];
    tl_sbuf b;
    tl_sb_init(&b);
    for (int i = 0; i < r->n_params; i++) {
        const tl_pv *v = &r->params[i].value;
        tl_sb_printf(&b, "%s%s=", i ? "|" : "", r->params[i].key);
        if (v->kind == TL_PV_STR) tl_sb_puts(&b, v->s);
        else tl_pv_str_tuple(&b, v);
    }
    snprintf(out, sizeof out, "%s", b.s ? b.s : "");
    tl_sb_free(&b);
    return out;
}

/* The Compute Spec: "<maf>_<precision>", "" when either is missing. */
static inline const char *tl_pt_compute_spec(const tl_perf_result *r)
{
    static char out[64];
    if (!r->maf || !r->precision) return "";
    snprintf(out, sizeof out, "%s_%s", r->maf, r->precision);
    return out;
}

/* --- checks ----------------------------------------------------------------- */

#define CHECK_DBL(a, b)                                                                              \
    do {                                                                                             \
        double a_ = (a), b_ = (b);                                                                   \
        tl_test_state.checks++;                                                                      \
        if (a_ != b_) {                                                                              \
            tl_test_state.failures++;                                                                \
            fprintf(stderr, "%s:%d: %s == %.17g, expected %.17g\n", __FILE__, __LINE__, #a, a_, b_); \
        }                                                                                            \
    } while (0)

/* GFLOPS and Data Moved (MB) of result r as the report computes them. */
#define CHECK_GFLOPS(r, g) CHECK_DBL((r)->flops / 1e9, g)
#define CHECK_MB(r, mb)                      \
    do {                                     \
        CHECK((r)->has_bytes);               \
        CHECK_DBL((r)->bytes / 1048576, mb); \
    } while (0)

#endif
