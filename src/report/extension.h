/* extension.h — what the report sees of `--extension-file F` /
 * trace:report{extension = F} (perf-report spec §10, the reference's
 * --extension_file hooks): exact-name op categories, perf models and
 * additional sheets, as plain C callbacks. The module itself is run by the
 * Lua layer (src/lua/lextension.h), which fills a tl_extension; the report
 * never includes a Lua header. The reference's tree_postprocess_extension is
 * not supported (the tree is immutable).
 * Owns nothing but the dispatch: a tl_extension is loaded (through the
 * caller's tl_extension_loader) before any report thread starts and freed by
 * tl_extension_free. Thread rules: category and model lookups are read-only
 * and safe from any thread; run (the extension's models) is called only from
 * the one thread that builds the roofline sheets, and sheets only after it
 * ended. */
#ifndef TL_EXTENSION_H
#define TL_EXTENSION_H

#include "../perf/perf_model.h"
#include "../trace/trace.h"
#include "../util/error.h"

struct tl_sheets;

typedef struct tl_extension_ops {
    /* the extension's category of an op name (exact name), NULL: none */
    const char *(*category)(const void *ctx, const char *name);
    /* the extension's model class of an op name, NULL: none */
    const tl_perf_class *(*model)(const void *ctx, const char *name);
    /* whether cls is one of its classes */
    int (*owns)(const void *ctx, const tl_perf_class *cls);
    /* runs one of its models (in place of tl_perf_run): a failure is
     * TL_PERF_ERROR (with one warning line on stderr per op name) */
    int (*run)(void *ctx, const tl_perf_class *cls, const tl_perf_event *ev, int bwd, tl_perf_result *r);
    /* appends its additional sheets to out (sorted by name); 0, or -1 with err set */
    int (*sheets)(void *ctx, const tl_trace *t, struct tl_sheets *out, tl_error *err);
    void (*free)(void *ctx);
} tl_extension_ops;

typedef struct tl_extension {
    const tl_extension_ops *ops;
    void *ctx;
} tl_extension;

/* Loads the extension module at path; NULL with err set (one line). */
typedef tl_extension *(*tl_extension_loader)(const char *path, tl_error *err);

void tl_extension_free(tl_extension *x);

/* categorize_torch_op with the extension's exact-name categories first
 * (op_category, then the perf models' category); x may be NULL. */
const char *tl_extension_categorize(const tl_extension *x, const char *name, const char *first_kernel_name);
/* The extension's model class of an op name, or NULL (x may be NULL). */
const tl_perf_class *tl_extension_model(const tl_extension *x, const char *name);
/* Whether cls is one of x's classes (x may be NULL). */
int tl_extension_owns(const tl_extension *x, const tl_perf_class *cls);
/* Runs an extension model (in place of tl_perf_run). */
int tl_extension_run(tl_extension *x, const tl_perf_class *cls, const tl_perf_event *ev, int bwd,
                     tl_perf_result *r);
/* additional_sheets(trace): appends the sheets to out; returns 0, or -1
 * with err set. A no-op without the hook (x may be NULL). */
int tl_extension_sheets(tl_extension *x, const tl_trace *t, struct tl_sheets *out, tl_error *err);

#endif
