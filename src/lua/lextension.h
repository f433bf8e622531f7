/* lextension.h — the Lua layer's loader of `--extension-file F` /
 * trace:report{extension = F}: the module runs in a Lua state of its own
 * (every library, the tl module, Trace and Table) and its returned table
 *   op_category       = { [name] = "GEMM", ... }   exact-name category overrides
 *   perf_models       = { [name] = {sheet =, category =, maf =, fn =}, ... }
 *   additional_sheets = function(trace, sheets) return { name = Table | {columns =, rows =} } end
 * becomes the plain callbacks of report/extension.h. Owns that state and the
 * override tables (freed by tl_extension_free). Never called from a
 * sandboxed state: its callers refuse extensions there. */
#ifndef TL_LEXTENSION_H
#define TL_LEXTENSION_H

#include "../report/extension.h"
#include "../util/error.h"

/* Loads and validates the module (a tl_extension_loader); NULL with err set (one line). */
tl_extension *tl_lua_extension_load(const char *path, tl_error *err);

#endif
