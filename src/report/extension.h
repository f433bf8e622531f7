/* extension.h — `--extension-file F` / trace:report{extension = F}: a Lua
 * module whose returned table adds to one report (perf-report spec §10,
 * the reference's --extension_file hooks):
 *   op_category       = { [name] = "GEMM", ... }   exact-name category overrides
 *   perf_models       = { [name] = {sheet =, category =, maf =, fn =}, ... }
 *   additional_sheets = function(trace) return { name = Table | {columns =, rows =} } end
 * The reference's tree_postprocess_extension is not supported (the tree is
 * immutable). Owns its own lua_State and the per-report override tables,
 * built before any report thread starts. Thread rules: the category lookups
 * and tl_extension_model are read-only and safe from any thread;
 * tl_extension_run (the Lua models) is called only from the one thread that
 * builds the roofline sheets, and tl_extension_sheets only after it ended. */
#ifndef TL_EXTENSION_H
#define TL_EXTENSION_H

#include "../perf/perf_model.h"
#include "../trace/trace.h"
#include "../util/error.h"

typedef struct tl_extension tl_extension;
struct tl_sheets;

/* Loads and validates the module; NULL with err set (one line). */
tl_extension *tl_extension_load(const char *path, tl_error *err);
void tl_extension_free(tl_extension *x);

/* categorize_torch_op with the extension's exact-name categories first
 * (op_category, then the perf models' category); x may be NULL. */
const char *tl_extension_categorize(const tl_extension *x, const char *name, const char *first_kernel_name);
/* The extension's model class of an op name, or NULL (x may be NULL). */
const tl_perf_class *tl_extension_model(const tl_extension *x, const char *name);
/* Whether cls is one of x's classes. */
int tl_extension_owns(const tl_extension *x, const tl_perf_class *cls);
/* Runs an extension model (in place of tl_perf_run). A Lua error or a bad
 * result is TL_PERF_ERROR, with one warning line on stderr per op name. */
int tl_extension_run(tl_extension *x, const tl_perf_class *cls, const tl_perf_event *ev, int bwd,
                     tl_perf_result *r);
/* additional_sheets(trace): appends the sheets (sorted by name) to out;
 * returns 0, or -1 with err set. A no-op without the hook. */
int tl_extension_sheets(tl_extension *x, const tl_trace *t, struct tl_sheets *out, tl_error *err);

#endif
