/* lextension.c — the Lua side of `--extension-file F` / trace:report{extension = F}
 * (lextension.h): runs the module in a Lua state of its own and hands the
 * report its categories, models and sheets hook as the plain callbacks of
 * report/extension.h. Owns that state and the override tables. */
#include "lextension.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../perf/perf_model.h"
#include "../report/report.h"
#include "../util/sbuf.h"
#include "../util/vec.h"
#include "host.h"
#include "ltable.h"
#include "ltrace.h"

typedef struct ext_cat {
    char *name, *category;
} ext_cat;

typedef struct ext_model {
    char *name;
    char *category; /* NULL: the built-in categorisation */
    char *sheet;
    const char *maf; /* static "matrix" / "vector" or NULL */
    int fnref;
    int warned;
    tl_perf_class cls;
} ext_model;

typedef struct lext {
    lua_State *L;
    const char *path;
    ext_cat *cats; /* sorted by name */
    size_t ncats, capcats;
    ext_model *models; /* sorted by name; cls addresses are stable once loaded */
    size_t nmodels, capmodels;
    int sheets_ref;
    char **keys; /* interned param keys (a result keeps pointers to them) */
    size_t nkeys, capkeys;
    char prec[64];
} lext;

static int stub_fn(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)ev;
    (void)bwd;
    return tl_perf_error(r, "an extension model runs only inside its report");
}

/* One line: newlines and tabs become spaces. */
static void one_line(char *s)
{
    for (; *s; s++)
        if (*s == '\n' || *s == '\r' || *s == '\t') *s = ' ';
}

static int by_cat_name(const void *a, const void *b)
{
    return strcmp(((const ext_cat *)a)->name, ((const ext_cat *)b)->name);
}

static int by_model_name(const void *a, const void *b)
{
    return strcmp(((const ext_model *)a)->name, ((const ext_model *)b)->name);
}

static void set_cat(lext *x, const char *name, const char *cat)
{
    for (size_t i = 0; i < x->ncats; i++)
        if (!strcmp(x->cats[i].name, name)) {
            free(x->cats[i].category);
            x->cats[i].category = tl_xstrdup(cat);
            return;
        }
    TL_GROW(x->cats, x->capcats, x->ncats + 1);
    x->cats[x->ncats].name = tl_xstrdup(name);
    x->cats[x->ncats].category = tl_xstrdup(cat);
    x->ncats++;
}

static int is_family(const char *s)
{
    for (const char *const *f = tl_sheet_families(); *f; f++)
        if (!strcmp(*f, s)) return 1;
    return 0;
}

/* Field k of the table at idx as an optional string ("what" names it in errors). */
static const char *opt_string(lua_State *L, int idx, const char *k, const char *what)
{
    int ty = lua_getfield(L, idx, k);
    if (ty == LUA_TNIL) {
        lua_pop(L, 1);
        return NULL;
    }
    if (ty != LUA_TSTRING) luaL_error(L, "%s.%s must be a string, not a %s", what, k, lua_typename(L, ty));
    const char *s = lua_tostring(L, -1);
    lua_pop(L, 1); /* the table still holds the string */
    return s;
}

static void read_model(lua_State *L, lext *x, const char *name, int idx)
{
    char what[300];
    snprintf(what, sizeof what, "perf_models[\"%s\"]", name);
    if (!lua_istable(L, idx)) luaL_error(L, "%s must be a table, not a %s", what, luaL_typename(L, idx));
    const char *sheet = opt_string(L, idx, "sheet", what);
    const char *cat = opt_string(L, idx, "category", what);
    const char *maf = opt_string(L, idx, "maf", what);
    if (!sheet) luaL_error(L, "%s.sheet is missing (a perf sheet family: GEMM, UnaryElementwise, ...)", what);
    if (!is_family(sheet)) {
        tl_sbuf b;
        tl_sb_init(&b);
        for (const char *const *f = tl_sheet_families(); *f; f++) tl_sb_printf(&b, "%s%s", b.len ? " " : "", *f);
        lua_pushstring(L, b.s ? b.s : "");
        tl_sb_free(&b);
        luaL_error(L, "%s.sheet \"%s\" is not a perf sheet family (one of: %s)", what, sheet, lua_tostring(L, -1));
    }
    const char *m = NULL;
    if (maf) {
        if (!strcmp(maf, "matrix")) m = "matrix";
        else if (!strcmp(maf, "vector")) m = "vector";
        else luaL_error(L, "%s.maf must be \"matrix\" or \"vector\", not \"%s\"", what, maf);
    }
    if (lua_getfield(L, idx, "fn") != LUA_TFUNCTION) luaL_error(L, "%s.fn must be a function", what);
    TL_GROW(x->models, x->capmodels, x->nmodels + 1);
    ext_model *e = &x->models[x->nmodels++];
    memset(e, 0, sizeof *e);
    e->fnref = LUA_NOREF;
    e->name = tl_xstrdup(name);
    e->sheet = tl_xstrdup(sheet);
    e->category = cat ? tl_xstrdup(cat) : NULL;
    e->maf = m;
    e->fnref = luaL_ref(L, LUA_REGISTRYINDEX);
}

/* Protected: fills the state, runs the module, reads its table into x. */
static int load_main(lua_State *L)
{
    lext *x = lua_touserdata(L, 1);
    const char *dir = lua_tostring(L, 2);
    tl_state_opts so = {0};
    so.script_dir = dir;
    tl_host_fill_state(L, &so);
    tl_ltrace_register(L);
    tl_ltable_register(L);
    if (luaL_loadfilex(L, x->path, "t") != LUA_OK) return lua_error(L);
    lua_call(L, 0, 1);
    int m = lua_gettop(L);
    if (!lua_istable(L, m)) return luaL_error(L, "the module must return a table, not a %s", luaL_typename(L, m));
    lua_pushnil(L);
    while (lua_next(L, m)) {
        const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
        if (!k) return luaL_error(L, "the module's table has a non-string key");
        if (!strcmp(k, "tree_postprocess") || !strcmp(k, "tree_postprocess_extension"))
            return luaL_error(L, "%s is not supported: the call tree is immutable in tracelens", k);
        if (strcmp(k, "op_category") && strcmp(k, "perf_models") && strcmp(k, "additional_sheets"))
            return luaL_error(L, "unknown field '%s' (expected op_category, perf_models, additional_sheets)", k);
        lua_pop(L, 1);
    }
    /* perf model categories first: op_category overrides them */
    int ty = lua_getfield(L, m, "perf_models");
    if (ty != LUA_TNIL) {
        if (ty != LUA_TTABLE) return luaL_error(L, "perf_models must be a table, not a %s", lua_typename(L, ty));
        int pm = lua_gettop(L);
        lua_pushnil(L);
        while (lua_next(L, pm)) {
            if (lua_type(L, -2) != LUA_TSTRING) return luaL_error(L, "perf_models has a non-string key");
            read_model(L, x, lua_tostring(L, -2), lua_gettop(L));
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
    for (size_t i = 0; i < x->nmodels; i++)
        if (x->models[i].category) set_cat(x, x->models[i].name, x->models[i].category);
    ty = lua_getfield(L, m, "op_category");
    if (ty != LUA_TNIL) {
        if (ty != LUA_TTABLE) return luaL_error(L, "op_category must be a table, not a %s", lua_typename(L, ty));
        int oc = lua_gettop(L);
        lua_pushnil(L);
        while (lua_next(L, oc)) {
            if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
                return luaL_error(L, "op_category must map op names to category strings");
            set_cat(x, lua_tostring(L, -2), lua_tostring(L, -1));
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
    ty = lua_getfield(L, m, "additional_sheets");
    if (ty != LUA_TNIL && ty != LUA_TFUNCTION)
        return luaL_error(L, "additional_sheets must be a function, not a %s", lua_typename(L, ty));
    if (ty == LUA_TFUNCTION) x->sheets_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    else lua_pop(L, 1);
    return 0;
}

static void lext_free(void *ctx);

static lext *lext_load(const char *path, tl_error *err)
{
    lext *x = tl_xcalloc(1, sizeof *x);
    x->path = path;
    x->sheets_ref = LUA_NOREF;
    x->L = luaL_newstate();
    if (!x->L) {
        tl_error_set(err, "extension %s: cannot create a Lua state", path);
        free(x);
        return NULL;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    else snprintf(dir, sizeof dir, ".");
    lua_pushcfunction(x->L, load_main);
    lua_pushlightuserdata(x->L, x);
    lua_pushstring(x->L, dir);
    if (lua_pcall(x->L, 2, 0, 0) != LUA_OK) {
        const char *m = lua_tostring(x->L, -1);
        tl_error_set(err, "extension %s: %s", path, m ? m : "error");
        one_line(err->msg);
        lext_free(x);
        return NULL;
    }
    if (x->ncats) qsort(x->cats, x->ncats, sizeof *x->cats, by_cat_name);
    if (x->nmodels) qsort(x->models, x->nmodels, sizeof *x->models, by_model_name);
    for (size_t i = 0; i < x->nmodels; i++) {
        ext_model *e = &x->models[i];
        e->cls = (tl_perf_class){.name = e->name,
                                 .category = e->category ? e->category : "other",
                                 .sheet = e->sheet,
                                 .fn = stub_fn};
    }
    return x;
}

static void lext_free(void *ctx)
{
    lext *x = ctx;
    if (!x) return;
    if (x->L) lua_close(x->L);
    for (size_t i = 0; i < x->ncats; i++) {
        free(x->cats[i].name);
        free(x->cats[i].category);
    }
    free(x->cats);
    for (size_t i = 0; i < x->nmodels; i++) {
        free(x->models[i].name);
        free(x->models[i].sheet);
        free(x->models[i].category);
    }
    free(x->models);
    for (size_t i = 0; i < x->nkeys; i++) free(x->keys[i]);
    free(x->keys);
    free(x);
}

/* The exact-name category of an op name (op_category, then the models'), or NULL. */
static const char *lext_category(const void *ctx, const char *name)
{
    const lext *x = ctx;
    if (name && x->ncats) {
        ext_cat key = {(char *)name, NULL};
        const ext_cat *c = bsearch(&key, x->cats, x->ncats, sizeof *x->cats, by_cat_name);
        if (c) return c->category;
    }
    return NULL;
}

static ext_model *find_model(const lext *x, const char *name)
{
    if (!x || !name || !x->nmodels) return NULL;
    ext_model key;
    key.name = (char *)name;
    return bsearch(&key, x->models, x->nmodels, sizeof *x->models, by_model_name);
}

static const tl_perf_class *lext_model(const void *ctx, const char *name)
{
    const lext *x = ctx;
    ext_model *m = find_model(x, name);
    return m ? &m->cls : NULL;
}

static int lext_owns(const void *ctx, const tl_perf_class *cls)
{
    const lext *x = ctx;
    return x && x->nmodels && cls && cls->fn == stub_fn;
}

/* ------------------------------------------------------------ models */

static void push_pv(lua_State *L, const tl_pv *v)
{
    if (!v) {
        lua_pushnil(L);
        return;
    }
    tl_sbuf b;
    tl_sb_init(&b);
    tl_pv_to_json(&b, v);
    tl_push_json(L, b.s ? b.s : "null", 0);
    tl_sb_free(&b);
}

static const char *intern_key(lext *x, const char *k)
{
    for (size_t i = 0; i < x->nkeys; i++)
        if (!strcmp(x->keys[i], k)) return x->keys[i];
    TL_GROW(x->keys, x->capkeys, x->nkeys + 1);
    return x->keys[x->nkeys++] = tl_xstrdup(k);
}

/* The param value at the top of the stack. */
static void read_param(lua_State *L, lext *x, tl_perf_result *r, const char *key)
{
    const char *k = intern_key(x, key);
    switch (lua_type(L, -1)) {
    case LUA_TNIL: tl_pm_none(r, k); break;
    case LUA_TBOOLEAN: tl_pm_bool(r, k, lua_toboolean(L, -1)); break;
    case LUA_TNUMBER:
        if (lua_isinteger(L, -1)) tl_pm_int(r, k, (int64_t)lua_tointeger(L, -1));
        else tl_pm_float(r, k, lua_tonumber(L, -1));
        break;
    case LUA_TSTRING: tl_pm_str(r, k, lua_tostring(L, -1)); break;
    case LUA_TTABLE: {
        /* raw length and raw reads: no metamethod runs while v is held */
        size_t n = (size_t)lua_rawlen(L, -1);
        if (n > 4096) luaL_error(L, "param '%s': a list of %I entries (at most 4096)", key, (lua_Integer)n);
        int all_int = 1, all_str = 1;
        for (size_t i = 1; i <= n; i++) {
            lua_rawgeti(L, -1, (lua_Integer)i);
            all_int &= lua_isinteger(L, -1);
            all_str &= lua_type(L, -1) == LUA_TSTRING;
            lua_pop(L, 1);
        }
        if (!all_int && !all_str) luaL_error(L, "param '%s': a list must hold only integers or only strings", key);
        if (all_int) {
            int64_t *v = tl_xmalloc((n + 1) * sizeof *v);
            for (size_t i = 1; i <= n; i++) {
                lua_rawgeti(L, -1, (lua_Integer)i);
                v[i - 1] = (int64_t)lua_tointeger(L, -1);
                lua_pop(L, 1);
            }
            tl_pm_int_tuple(r, k, v, n);
            free(v);
        } else {
            const char **v = tl_xmalloc((n + 1) * sizeof *v);
            for (size_t i = 1; i <= n; i++) {
                lua_rawgeti(L, -1, (lua_Integer)i);
                v[i - 1] = lua_tostring(L, -1);
                lua_pop(L, 1); /* the list still holds the string */
            }
            tl_pm_str_tuple(r, k, v, n);
            free(v);
        }
        break;
    }
    default: luaL_error(L, "param '%s' is a %s (expected a number, string, boolean, nil or list)", key,
                        luaL_typename(L, -1));
    }
}

static int num_field(lua_State *L, int idx, const char *k, double *out, int required)
{
    int ty = lua_getfield(L, idx, k);
    if (ty == LUA_TNIL && !required) {
        lua_pop(L, 1);
        return 0;
    }
    if (ty != LUA_TNUMBER) return luaL_error(L, "result.%s must be a number, not a %s", k, lua_typename(L, ty));
    *out = lua_tonumber(L, -1);
    lua_pop(L, 1);
    if (!isfinite(*out) || *out < 0) return luaL_error(L, "result.%s must be a finite number >= 0", k);
    return 1;
}

/* Protected: calls the model and reads its result into r. */
static int run_main(lua_State *L)
{
    lext *x = lua_touserdata(L, 1);
    ext_model *m = lua_touserdata(L, 2);
    const tl_perf_event *ev = lua_touserdata(L, 3);
    tl_perf_result *r = lua_touserdata(L, 4);
    lua_settop(L, 0);
    lua_rawgeti(L, LUA_REGISTRYINDEX, m->fnref);
    lua_createtable(L, 0, 7);
    lua_pushstring(L, ev->name);
    lua_setfield(L, -2, "name");
    push_pv(L, ev->dims);
    lua_setfield(L, -2, "input_dims");
    push_pv(L, ev->types);
    lua_setfield(L, -2, "input_type");
    push_pv(L, ev->strides);
    lua_setfield(L, -2, "input_strides");
    push_pv(L, ev->concrete);
    lua_setfield(L, -2, "concrete_inputs");
    push_pv(L, ev->args);
    lua_setfield(L, -2, "args");
    lua_createtable(L, (int)ev->n_kernels, 0);
    for (size_t i = 0; i < ev->n_kernels; i++) {
        lua_pushstring(L, ev->kernels[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "kernels");
    lua_call(L, 1, 1);
    if (!lua_istable(L, 1)) return luaL_error(L, "returned a %s, not a table", luaL_typename(L, 1));
    num_field(L, 1, "flops", &r->flops, 1);
    r->has_bytes = num_field(L, 1, "bytes", &r->bytes, 0);
    const char *p = opt_string(L, 1, "precision", "result");
    if (p) snprintf(x->prec, sizeof x->prec, "%s", p);
    r->precision = p ? x->prec : NULL;
    r->maf = m->maf;
    int ty = lua_getfield(L, 1, "params");
    if (ty != LUA_TNIL) {
        if (ty != LUA_TTABLE) return luaL_error(L, "result.params must be a list of {key, value}");
        lua_Integer n = (lua_Integer)lua_rawlen(L, 2); /* raw: __len could claim any size */
        if (n > TL_PERF_MAX_PARAMS) return luaL_error(L, "result.params has more than %d entries", TL_PERF_MAX_PARAMS);
        for (lua_Integer i = 1; i <= n; i++) {
            if (lua_geti(L, 2, i) != LUA_TTABLE || lua_geti(L, -1, 1) != LUA_TSTRING)
                return luaL_error(L, "result.params[%d] must be {key, value} with a string key", (int)i);
            const char *key = lua_tostring(L, -1);
            lua_geti(L, -2, 2);
            read_param(L, x, r, key);
            lua_pop(L, 3);
        }
    }
    r->status = TL_PERF_OK;
    return 0;
}

static int lext_run(void *ctx, const tl_perf_class *cls, const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    lext *x = ctx;
    if (bwd) return tl_perf_not_implemented(r);
    ext_model *m = find_model(x, ev->name);
    if (!m || &m->cls != cls) return tl_perf_error(r, "no extension model for %s", ev->name);
    lua_State *L = x->L;
    lua_settop(L, 0);
    lua_pushcfunction(L, run_main);
    lua_pushlightuserdata(L, x);
    lua_pushlightuserdata(L, m);
    lua_pushlightuserdata(L, (void *)ev);
    lua_pushlightuserdata(L, r);
    if (lua_pcall(L, 4, 0, 0) != LUA_OK) {
        const char *msg = lua_tostring(L, -1);
        /* a failed model is the reference's model exception: no metrics */
        tl_perf_result_free(r);
        tl_perf_result_init(r);
        tl_perf_error(r, "%s", msg ? msg : "error");
        if (!m->warned) {
            m->warned = 1;
            char line[400];
            snprintf(line, sizeof line, "%s", msg ? msg : "error");
            one_line(line);
            fprintf(stderr, "tracelens: warning: extension %s: perf model for '%s' failed: %s (its rows are left out "
                            "of the perf sheets)\n", x->path, ev->name, line);
        }
    }
    lua_settop(L, 0);
    return r->status;
}

/* ------------------------------------------------------------ sheets */

static int valid_sheet_name(const char *s)
{
    size_t n = strlen(s);
    if (!n || n > 31 || s[0] == '.') return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
              *s == '-' || *s == '.'))
            return 0;
    return 1;
}

/* The cell of column c (name cname) in the row table at idx, pushed. */
static int push_cell(lua_State *L, int idx, lua_Integer c, const char *cname)
{
    int ty = lua_geti(L, idx, c);
    if (ty == LUA_TNIL) {
        lua_pop(L, 1);
        ty = lua_getfield(L, idx, cname);
    }
    return ty;
}

/* {columns = {...}, rows = {{...}, ...}} at idx -> a Table userdata pushed. */
static void plain_to_table(lua_State *L, int idx, const char *name)
{
    if (lua_getfield(L, idx, "columns") != LUA_TTABLE)
        luaL_error(L, "additional_sheets: sheet '%s' must be a Table or {columns = {...}, rows = {...}}", name);
    int cols = lua_gettop(L);
    if (lua_getfield(L, idx, "rows") != LUA_TTABLE && !lua_isnil(L, -1))
        luaL_error(L, "additional_sheets: sheet '%s': rows must be a list of rows", name);
    int rows = lua_gettop(L);
    /* raw lengths: a __len metamethod could claim any size */
    lua_Integer nc = (lua_Integer)lua_rawlen(L, cols), nr = lua_isnil(L, rows) ? 0 : (lua_Integer)lua_rawlen(L, rows);
    if (nc < 1) luaL_error(L, "additional_sheets: sheet '%s' has no columns", name);
    tl_table *t = tl_table_new(name);
    tl_ltable_push(L, t); /* owned by Lua until the caller retains it */
    int ud = lua_gettop(L);
    for (lua_Integer r = 1; r <= nr; r++) {
        if (lua_geti(L, rows, r) != LUA_TTABLE)
            luaL_error(L, "additional_sheets: sheet '%s': row %d is not a table", name, (int)r);
        lua_pop(L, 1);
        tl_table_add_row(t);
    }
    for (lua_Integer c = 1; c <= nc; c++) {
        if (lua_geti(L, cols, c) != LUA_TSTRING)
            luaL_error(L, "additional_sheets: sheet '%s': column %d has no name", name, (int)c);
        const char *cn = lua_tostring(L, -1);
        if (tl_table_col(t, cn) >= 0) luaL_error(L, "additional_sheets: sheet '%s': column '%s' twice", name, cn);
        /* the column's type: integers, numbers, booleans, or text */
        int all_int = 1, all_num = 1, all_bool = 1;
        for (lua_Integer r = 1; r <= nr; r++) {
            lua_geti(L, rows, r);
            int ty = push_cell(L, -1, c, cn);
            if (ty != LUA_TNIL) {
                all_int &= lua_isinteger(L, -1);
                all_num &= ty == LUA_TNUMBER;
                all_bool &= ty == LUA_TBOOLEAN;
                if (ty != LUA_TNUMBER && ty != LUA_TBOOLEAN && ty != LUA_TSTRING)
                    luaL_error(L, "additional_sheets: sheet '%s': row %d, column '%s' is a %s", name, (int)r, cn,
                               lua_typename(L, ty));
            }
            lua_pop(L, 2);
        }
        tl_coltype type = all_int ? TL_COL_I64 : all_num ? TL_COL_F64 : all_bool ? TL_COL_BOOL : TL_COL_STR;
        if (nr == 0) type = TL_COL_STR;
        size_t col = tl_table_add_col(t, cn, type);
        for (lua_Integer r = 1; r <= nr; r++) {
            lua_geti(L, rows, r);
            int ty = push_cell(L, -1, c, cn);
            size_t row = (size_t)(r - 1);
            if (ty == LUA_TNIL) tl_table_set_null(t, col, row);
            else if (type == TL_COL_I64) tl_table_set_i64(t, col, row, (int64_t)lua_tointeger(L, -1));
            else if (type == TL_COL_F64) tl_table_set_f64(t, col, row, lua_tonumber(L, -1));
            else if (type == TL_COL_BOOL) tl_table_set_bool(t, col, row, lua_toboolean(L, -1));
            else if (ty == LUA_TBOOLEAN) tl_table_set_str(t, col, row, lua_toboolean(L, -1) ? "True" : "False");
            else tl_table_set_str(t, col, row, lua_tostring(L, -1));
            lua_pop(L, 2);
        }
        lua_pop(L, 1);
    }
    lua_pushvalue(L, ud);
}

static int by_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Protected: runs the hook and appends its sheets to out. */
static int sheets_main(lua_State *L)
{
    lext *x = lua_touserdata(L, 1);
    tl_trace *t = lua_touserdata(L, 2);
    tl_sheets *out = lua_touserdata(L, 3);
    lua_settop(L, 0);
    lua_rawgeti(L, LUA_REGISTRYINDEX, x->sheets_ref);
    tl_ltrace_push(L, t);
    /* the sheets of this report so far (its options, its extension), so a
     * hook needs no second, default-option report from trace:table() */
    lua_createtable(L, 0, (int)out->n);
    for (size_t i = 0; i < out->n; i++) {
        tl_table_retain(out->v[i].table);
        tl_ltable_push(L, out->v[i].table);
        lua_setfield(L, -2, out->v[i].name);
    }
    lua_call(L, 2, 1);
    if (lua_isnil(L, 1)) return 0;
    if (!lua_istable(L, 1)) return luaL_error(L, "additional_sheets returned a %s, not a table", luaL_typename(L, 1));
    /* the names, sorted (a Lua table has no order) */
    lua_newtable(L); /* 2: list of names */
    lua_Integer n = 0;
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        if (lua_type(L, -2) != LUA_TSTRING) return luaL_error(L, "additional_sheets: a sheet name is not a string");
        lua_pop(L, 1);
        lua_pushvalue(L, -1);
        lua_rawseti(L, 2, ++n);
    }
    const char **names = lua_newuserdatauv(L, ((size_t)n + 1) * sizeof *names, 0); /* 3 */
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, 2, i);
        names[i - 1] = lua_tostring(L, -1);
        lua_pop(L, 1); /* list 2 keeps the strings */
    }
    qsort(names, (size_t)n, sizeof *names, by_str);
    for (lua_Integer i = 0; i < n; i++) {
        const char *name = names[i];
        if (!valid_sheet_name(name))
            return luaL_error(L, "additional_sheets: bad sheet name '%s' (1-31 characters: letters, digits, _ - .)",
                              name);
        for (size_t j = 0; j < out->n; j++)
            if (!strcasecmp(out->v[j].name, name))
                return luaL_error(L, "additional_sheets: sheet '%s' already exists in the report", name);
        lua_getfield(L, 1, name);
        int v = lua_gettop(L);
        tl_table *tb = tl_ltable_test(L, v);
        if (!tb) {
            if (!lua_istable(L, v))
                return luaL_error(L, "additional_sheets: sheet '%s' is a %s (expected a Table or {columns, rows})",
                                  name, luaL_typename(L, v));
            plain_to_table(L, v, name);
            tb = tl_ltable_test(L, -1);
        }
        tl_table_retain(tb);
        TL_GROW(out->v, out->cap, out->n + 1);
        out->v[out->n].name = tl_xstrdup(name);
        out->v[out->n].table = tb;
        out->v[out->n].write_empty_as_newline = 0;
        out->n++;
        lua_settop(L, 3);
    }
    return 0;
}

static int lext_sheets(void *ctx, const tl_trace *t, tl_sheets *out, tl_error *err)
{
    lext *x = ctx;
    if (!x || x->sheets_ref == LUA_NOREF) return 0;
    lua_State *L = x->L;
    lua_settop(L, 0);
    lua_pushcfunction(L, sheets_main);
    lua_pushlightuserdata(L, x);
    lua_pushlightuserdata(L, (void *)t);
    lua_pushlightuserdata(L, out);
    if (lua_pcall(L, 3, 0, 0) != LUA_OK) {
        const char *m = lua_tostring(L, -1);
        tl_error_set(err, "extension %s: %s", x->path, m ? m : "error");
        one_line(err->msg);
        lua_settop(L, 0);
        return -1;
    }
    lua_settop(L, 0);
    return 0;
}

static const tl_extension_ops lext_ops = {lext_category, lext_model, lext_owns, lext_run, lext_sheets, lext_free};

tl_extension *tl_lua_extension_load(const char *path, tl_error *err)
{
    lext *x = lext_load(path, err);
    if (!x) return NULL;
    tl_extension *e = tl_xcalloc(1, sizeof *e);
    e->ops = &lext_ops;
    e->ctx = x;
    return e;
}
