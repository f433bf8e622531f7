#include "ltrace.h"

#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "../io/source.h"
#include "../json/json_text.h"
#include "../trace/capture.h"
#include "../trace/timeline.h"
#include "../util/vec.h"
#include "host.h"
#include "lanalysis.h"
#include "lhealth.h"
#include "lgpu_stats.h"
#include "lmem_seq.h"
#include "lsteps.h"
#include "lcritical_path.h"
#include "literation.h"
#include "limits.h"
#include "lopts.h"
#include "ltable.h"

typedef struct ltrace {
    tl_trace *t;
} ltrace;

typedef struct levent {
    tl_trace *t;
    uint32_t uid;
} levent;

/* ------------------------------------------------------------ JSON -> Lua */

enum { MAX_JSON_DEPTH = 200 };

static int looks_secret(const char *k)
{
    static const char *const words[] = {"token", "secret", "password", "passwd", "apikey", "api_key",
                                        "credential", "auth", "private_key", "access_key"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        for (const char *p = k; *p; p++)
            if (strncasecmp(p, words[i], strlen(words[i])) == 0) return 1;
    return 0;
}

static const char *push_value(lua_State *L, const char *p, int depth, int redact);

static const char *push_string(lua_State *L, const char *p)
{
    /* p at the opening quote */
    size_t span = tl_json_string_span(p + 1);
    char stackbuf[256];
    char *buf = span + 4 <= sizeof stackbuf ? stackbuf : tl_xmalloc(span + 4);
    const char *after;
    size_t n = tl_json_decode_string(p + 1, buf, &after);
    lua_pushlstring(L, buf, n);
    if (buf != stackbuf) free(buf);
    return after;
}

static const char *push_number(lua_State *L, const char *p)
{
    const char *s = p;
    while (*p && !strchr(",]}: \t\r\n", *p)) p++;
    size_t n = (size_t)(p - s);
    char buf[64];
    if (n >= sizeof buf) {
        lua_pushlstring(L, s, n);
        return p;
    }
    memcpy(buf, s, n);
    buf[n] = 0;
    if (!strcmp(buf, "NaN")) lua_pushnumber(L, 0.0 / 0.0);
    else if (!strcmp(buf, "Infinity")) lua_pushnumber(L, HUGE_VAL);
    else if (!strcmp(buf, "-Infinity")) lua_pushnumber(L, -HUGE_VAL);
    else if (!lua_stringtonumber(L, buf)) lua_pushlstring(L, s, n);
    else if (lua_isinteger(L, -1) == 0 && !strpbrk(buf, ".eE")) {
        /* an integer beyond int64: keep its exact text */
        lua_pop(L, 1);
        lua_pushlstring(L, s, n);
    }
    return p;
}

static const char *push_value(lua_State *L, const char *p, int depth, int redact)
{
    p = tl_json_ws(p);
    if (*p == '"') return push_string(L, p);
    if (*p == '[' || *p == '{') {
        if (depth >= MAX_JSON_DEPTH || !lua_checkstack(L, 8)) {
            const char *end = tl_json_skip(p);
            lua_pushlstring(L, p, (size_t)(end - p));
            return end;
        }
        int obj = *p == '{';
        lua_newtable(L);
        p = tl_json_ws(p + 1);
        lua_Integer i = 1;
        while (*p != ']' && *p != '}') {
            if (obj) {
                p = push_string(L, p);
                p = tl_json_ws(p);
                p = tl_json_ws(p + 1); /* ':' */
                int secret = redact && looks_secret(lua_tostring(L, -1));
                p = push_value(L, p, depth + 1, redact);
                if (secret) {
                    lua_pop(L, 1);
                    lua_pushliteral(L, "<redacted>");
                }
                lua_rawset(L, -3);
            } else {
                p = push_value(L, p, depth + 1, redact);
                lua_rawseti(L, -2, i++);
            }
            p = tl_json_ws(p);
            if (*p == ',') p = tl_json_ws(p + 1);
        }
        return p + 1;
    }
    if (!strncmp(p, "true", 4)) {
        lua_pushboolean(L, 1);
        return p + 4;
    }
    if (!strncmp(p, "false", 5)) {
        lua_pushboolean(L, 0);
        return p + 5;
    }
    if (!strncmp(p, "null", 4)) {
        lua_pushlightuserdata(L, NULL); /* == cjson.null */
        return p + 4;
    }
    return push_number(L, p);
}

void tl_push_json(lua_State *L, const char *text, int redact)
{
    push_value(L, text, 0, redact);
}

/* -------------------------------------------------------------- handles */

tl_trace *tl_ltrace_test(lua_State *L, int idx)
{
    ltrace *h = luaL_testudata(L, idx, TL_TRACE_MT);
    return h ? h->t : NULL;
}

tl_trace *tl_ltrace_check(lua_State *L, int idx)
{
    ltrace *h = luaL_checkudata(L, idx, TL_TRACE_MT);
    if (!h->t) luaL_error(L, "trace handle is closed");
    return h->t;
}

void tl_ltrace_push(lua_State *L, tl_trace *t)
{
    ltrace *h = lua_newuserdatauv(L, sizeof *h, 1); /* uservalue 1: the cached default report */
    h->t = t;
    tl_trace_retain(t);
    luaL_setmetatable(L, TL_TRACE_MT);
}

void tl_lev_push(lua_State *L, tl_trace *t, uint32_t uid)
{
    levent *e = lua_newuserdatauv(L, sizeof *e, 0);
    e->t = t;
    e->uid = uid;
    tl_trace_retain(t);
    luaL_setmetatable(L, TL_EVENT_MT);
}

int tl_lev_test(lua_State *L, int idx, tl_trace **t, uint32_t *uid)
{
    levent *e = luaL_testudata(L, idx, TL_EVENT_MT);
    if (!e || !e->t) return 0;
    *t = e->t;
    *uid = e->uid;
    return 1;
}

/* An event view; a Lua error when it is not one or was finalized (a
 * finalizer of another object can still reach it). */
static levent *check_event(lua_State *L, int idx)
{
    levent *e = luaL_checkudata(L, idx, TL_EVENT_MT);
    if (!e->t) luaL_error(L, "event view is closed");
    return e;
}

static int trace_gc(lua_State *L)
{
    ltrace *h = luaL_checkudata(L, 1, TL_TRACE_MT);
    tl_trace_release(h->t);
    h->t = NULL;
    return 0;
}

static int event_gc(lua_State *L)
{
    levent *e = luaL_checkudata(L, 1, TL_EVENT_MT);
    tl_trace_release(e->t);
    e->t = NULL;
    return 0;
}

/* ---------------------------------------------------------- tl.load */

/* The C memory of a loaded trace (columns, args, names, tree), as charged
 * to the memory cap of a task that loads it (limits.h). */
size_t tl_ltrace_bytes(const tl_trace *t)
{
    const tl_event_store *es = &t->es;
    const tl_strpool *pools[] = {&es->names, &es->cats, &es->keys, &es->values};
    size_t b = es->cap * 51 + es->blob_cap + es->cap_idvals * sizeof *es->idvals + es->cap_seq * 12 +
               t->tree.n * 21 + t->tree.n_links * 16;
    for (int i = 0; i < 4; i++) b += pools[i]->arena_cap + (size_t)pools[i]->cap * 20 + (size_t)pools[i]->nslots * 4;
    return b;
}

int tl_l_load(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    tl_load_opts o = {0};
    if (lua_istable(L, 2)) {
        lua_getfield(L, 2, "include_call_stack");
        o.with_python = lua_toboolean(L, -1);
        lua_getfield(L, 2, "progress");
        o.progress = lua_toboolean(L, -1);
        o.threads = (int)tl_lopt_int(L, 2, "threads", 0, 0, 1024, "tl.load");
        o.max_value_mb = (int)tl_lopt_int(L, 2, "max_value_mb", 0, 1, TL_MAX_VALUE_MB_MAX, "tl.load");
        lua_getfield(L, 2, "enable_pseudo_ops");
        o.pseudo_ops = lua_toboolean(L, -1);
        lua_pop(L, 3);
    }
    /* capture_folder = DIR: the replay merged with its capture traces (capture.h) */
    const char *capdir = NULL;
    int write_details = 1;
    if (lua_istable(L, 2)) {
        if (lua_getfield(L, 2, "capture_folder") != LUA_TNIL) {
            if (lua_type(L, -1) != LUA_TSTRING) return luaL_error(L, "tl.load: capture_folder must be a string");
            capdir = lua_tostring(L, -1); /* the options table keeps it */
        }
        lua_pop(L, 1);
        write_details = tl_lopt_bool(L, 2, "write_execution_details", 1) && !tl_lua_sandboxed(L);
    }
    struct stat st; /* in a task: refused when a quarter of the file is more than the cap leaves */
    tl_limits *lim = tl_limits_of(L);
    if (lim && stat(path, &st) == 0) tl_limits_need(L, (size_t)st.st_size / 4, path);
    /* ... and so is a gzip file once a quarter of its decompressed text is
     * (a small file may expand a thousandfold: checked while it is read) */
    size_t left = lim ? tl_limits_left(lim) : SIZE_MAX;
    if (left < SIZE_MAX / 4) o.max_text_bytes = (uint64_t)left * 4;
    tl_error err = {{0}};
    tl_trace *t;
    if (capdir) {
        int pseudo = o.pseudo_ops;
        o.pseudo_ops = 0; /* the pass runs on the merged trace */
        o.with_python = 1;
        tl_capture_index ix;
        t = NULL;
        /* the capture traces read (classified, merged) keep to the same budget */
        if (tl_capture_index_load(capdir, write_details, o.max_text_bytes, &ix, &err) == 0) {
            tl_trace *replay = tl_trace_load(path, &o, &err);
            tl_capture_summary sum;
            if (replay) t = tl_trace_merge_capture(replay, capdir, &ix, pseudo, &sum, &err);
            tl_trace_release(replay);
            if (t) {
                tl_capture_summary_free(&sum);
                if (ix.note) { /* the classification could not be written: say so with the merge's notes */
                    const char *old = t->capture->notes ? t->capture->notes : "";
                    size_t len = strlen(ix.note) + strlen(old) + 2;
                    char *nn = tl_xmalloc(len);
                    snprintf(nn, len, "%s\n%s", ix.note, old);
                    free(t->capture->notes);
                    t->capture->notes = nn;
                }
            }
            tl_capture_index_free(&ix);
        }
    } else {
        t = tl_trace_load(path, &o, &err);
    }
    if (!t) {
        if (lim && o.max_text_bytes && strstr(err.msg, TL_SOURCE_TOO_LARGE)) {
            lim->out_of_memory = 1;
            return tl_limits_raise(L, "memory limit exceeded (%s%s: its decompressed text passes 4 times the %.1f MB left)",
                                   capdir ? "a capture trace of " : "", capdir ? capdir : path,
                                   (double)left / (1024.0 * 1024.0));
        }
        lua_pushstring(L, err.msg);
        return lua_error(L);
    }
    tl_ltrace_push(L, t);
    tl_trace_release(t); /* the handle holds it now */
    tl_limits_charge_object(L, -1, tl_ltrace_bytes(t), path); /* a task's cap counts it while the handle lives */
    return 1;
}

/* ----------------------------------------------------- trace methods */

static double us(int64_t ns) { return (double)ns / 1000.0; }

/* trace:capture_summary(): the capture merge's counts and notes, nil for a
 * trace that was not merged (tl.load without capture_folder). */
static int trace_capture_summary(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    const tl_capture_summary *s = t->capture;
    if (!s) {
        lua_pushnil(L);
        return 1;
    }
    lua_createtable(L, 0, 8);
#define CS(name, v) (lua_pushinteger(L, (lua_Integer)(v)), lua_setfield(L, -2, name))
    CS("graph_launches", s->n_graph_launches);
    CS("exec_roots", s->n_exec_roots);
    CS("merged", s->n_merged);
    CS("skipped", s->n_skipped);
    CS("kernels_linked", s->n_kernels_linked);
    CS("events_added", s->n_events_added);
#undef CS
    lua_pushnumber(L, s->seconds);
    lua_setfield(L, -2, "seconds");
    lua_pushboolean(L, s->failed);
    lua_setfield(L, -2, "failed");
    lua_newtable(L);
    int nn = 0;
    for (const char *w = s->notes; w && *w;) {
        const char *nl = strchr(w, '\n');
        size_t len = nl ? (size_t)(nl - w) : strlen(w);
        if (len) {
            lua_pushlstring(L, w, len);
            lua_rawseti(L, -2, ++nn);
        }
        w += len + (nl != NULL);
    }
    lua_setfield(L, -2, "notes");
    return 1;
}

static int trace_timeline(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    int unlinked = tl_lopt_bool(L, 2, "include_unlinked", 0) ? TL_UNLINKED_ALL : TL_UNLINKED_NONE;
    /* before_trace = false: not the unlinked GPU work launched before the
     * profiling window opened (tl_tree_before_trace) */
    if (unlinked && !tl_lopt_bool(L, 2, "before_trace", 1)) unlinked = TL_UNLINKED_LAUNCHED;
    /* µs -> ns: bounded so the product fits int64 (NaN and infinities refused) */
    double micro_us = tl_lopt_range(L, 2, "micro_idle_thresh_us", -1, 0, 1e12, "timeline");
    int64_t micro = micro_us >= 0 ? (int64_t)(micro_us * 1000.0 + 0.5) : -1;
    tl_timeline tlv;
    if (tl_timeline_compute(&t->es, &t->tree, unlinked, micro, &tlv) != 0) {
        if (t->tree.n_gpu == 0) {
            tl_error e;
            tl_trace_no_gpu_error(t, &e);
            return luaL_error(L, "%s", e.msg);
        }
        return luaL_error(L, "%s: no GPU events found in the trace%s", t->path,
                          unlinked ? "" : " that a launch links to (try include_unlinked=true)");
    }
    lua_createtable(L, 0, 12);
#define F(name, v) (lua_pushnumber(L, us(v)), lua_setfield(L, -2, name))
    F("total_time", tlv.total);
    F("computation_time", tlv.computation);
    F("exposed_comm_time", tlv.exposed_comm);
    F("exposed_memcpy_time", tlv.exposed_memcpy);
    F("busy_time", tlv.busy);
    F("idle_time", tlv.idle);
    F("total_comm_time", tlv.total_comm);
    F("total_memcpy_time", tlv.total_memcpy);
    if (tlv.have_micro) {
        F("micro_idle_time", tlv.micro_idle);
        F("macro_idle_time", tlv.macro_idle);
    }
#undef F
    lua_pushinteger(L, (lua_Integer)tlv.n_events);
    lua_setfield(L, -2, "num_events");
    return 1;
}

/* events{cat=, name=, pid=, tid=, within=} filter, resolved to ids once */
typedef struct evfilter {
    uint32_t cat, name, pid, tid; /* UINT32_MAX = any */
    int impossible;
    uint32_t pos;
    int has_window;        /* within = {from, to} (µs): events with ts and dur lying wholly in it */
    double from_us, to_us;
} evfilter;

static uint32_t find_idval_arg(lua_State *L, const tl_event_store *es, int idx, int *impossible)
{
    if (lua_isnil(L, idx)) return UINT32_MAX;
    uint32_t id;
    if (lua_isinteger(L, idx)) {
        id = tl_es_find_idval(es, 0, lua_tointeger(L, idx));
    } else if (lua_type(L, idx) == LUA_TSTRING) {
        size_t n;
        const char *s = lua_tolstring(L, idx, &n);
        uint32_t sid = tl_strpool_find(&es->names, s, n);
        id = sid == UINT32_MAX ? UINT32_MAX : tl_es_find_idval(es, 1, sid);
    } else {
        luaL_error(L, "pid/tid filters must be integers or strings");
        return UINT32_MAX;
    }
    if (id == UINT32_MAX) *impossible = 1;
    return id;
}

static uint32_t find_str_arg(lua_State *L, const tl_strpool *pool, int idx, int *impossible)
{
    if (lua_isnil(L, idx)) return UINT32_MAX;
    size_t n;
    const char *s = luaL_checklstring(L, idx, &n);
    uint32_t id = tl_strpool_find(pool, s, n);
    if (id == UINT32_MAX) *impossible = 1;
    return id;
}

static int events_iter(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, lua_upvalueindex(1));
    evfilter *f = lua_touserdata(L, lua_upvalueindex(2));
    const tl_event_store *es = &t->es;
    if (f->impossible) return 0;
    while (f->pos < es->n) {
        uint32_t i = f->pos++;
        if (f->cat != UINT32_MAX && es->cat_id[i] != f->cat) continue;
        if (f->name != UINT32_MAX && es->name[i] != f->name) continue;
        if (f->pid != UINT32_MAX && tl_es_pid(es, i) != f->pid) continue;
        if (f->tid != UINT32_MAX && tl_es_tid(es, i) != f->tid) continue;
        if (f->has_window) {
            /* as Lua would compare the events' ts and dur fields (µs doubles) */
            if ((es->flags[i] & (TL_F_TS | TL_F_DUR)) != (TL_F_TS | TL_F_DUR)) continue;
            double a = us(es->ts[i]), d = us(es->dur[i]);
            if (!(a >= f->from_us && a + d <= f->to_us)) continue;
        }
        tl_lev_push(L, t, i);
        return 1;
    }
    return 0;
}

static int trace_events(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    if (!lua_isnoneornil(L, 2) && !lua_istable(L, 2))
        return luaL_argerror(L, 2, "expected a filter table {cat=, name=, pid=, tid=}");
    lua_settop(L, 2);
    evfilter *f = lua_newuserdatauv(L, sizeof *f, 0);
    memset(f, 0xff, sizeof *f);
    f->impossible = 0;
    f->pos = 0;
    f->has_window = 0;
    if (lua_istable(L, 2)) {
        lua_getfield(L, 2, "cat");
        f->cat = find_str_arg(L, &t->es.cats, -1, &f->impossible);
        lua_getfield(L, 2, "name");
        f->name = find_str_arg(L, &t->es.names, -1, &f->impossible);
        lua_getfield(L, 2, "pid");
        f->pid = find_idval_arg(L, &t->es, -1, &f->impossible);
        lua_getfield(L, 2, "tid");
        f->tid = find_idval_arg(L, &t->es, -1, &f->impossible);
        lua_pop(L, 4);
        if (lua_getfield(L, 2, "within") != LUA_TNIL) {
            if (!lua_istable(L, -1)) return luaL_error(L, "events: within must be {from, to} in µs");
            lua_rawgeti(L, -1, 1);
            lua_rawgeti(L, -2, 2);
            if (!lua_isnumber(L, -2) || !lua_isnumber(L, -1)) return luaL_error(L, "events: within must be {from, to} in µs");
            f->has_window = 1;
            f->from_us = lua_tonumber(L, -2);
            f->to_us = lua_tonumber(L, -1);
            lua_pop(L, 2);
        }
        lua_pop(L, 1);
    }
    lua_pushvalue(L, 1);
    lua_insert(L, -2);
    lua_pushcclosure(L, events_iter, 2);
    return 1;
}

static int trace_node(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    lua_Integer uid = luaL_checkinteger(L, 2);
    if (uid < 0 || (size_t)uid >= t->es.n) {
        lua_pushnil(L);
        return 1;
    }
    tl_lev_push(L, t, (uint32_t)uid);
    return 1;
}

static int trace_len(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)tl_ltrace_check(L, 1)->es.n);
    return 1;
}

/* Top-level keys whose values are Kineto/PyTorch facts, safe to show. */
static int safe_top_key(const char *k)
{
    static const char *const keys[] = {
        "schemaVersion", "deviceProperties", "displayTimeUnit", "baseTimeNanoseconds", "traceName",
        "cupti_version", "cuda_runtime_version", "cuda_driver_version", "roctracer_version",
        "hip_runtime_version", "hip_driver_version", "record_shapes", "with_stack", "with_flops",
        "with_modules", "profile_memory", "trace_id", "distributedInfo"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (!strcmp(k, keys[i])) return 1;
    return 0;
}

static int trace_info(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    const tl_event_store *es = &t->es;
    lua_newtable(L);
    lua_pushstring(L, t->path);
    lua_setfield(L, -2, "path");
    lua_pushinteger(L, (lua_Integer)es->n);
    lua_setfield(L, -2, "num_events");
    lua_pushinteger(L, (lua_Integer)es->bytes);
    lua_setfield(L, -2, "json_bytes");
    lua_pushinteger(L, (lua_Integer)es->file_bytes);
    lua_setfield(L, -2, "file_bytes");
    lua_pushboolean(L, es->gzip);
    lua_setfield(L, -2, "gzip");
    lua_pushboolean(L, t->tree.gpu_only);
    lua_setfield(L, -2, "gpu_only");
    lua_pushstring(L, t->tree.link_by_external_id ? "External id" : "correlation");
    lua_setfield(L, -2, "linking_key");
    lua_pushinteger(L, (lua_Integer)t->tree.n_discarded);
    lua_setfield(L, -2, "discarded_events");
    lua_pushinteger(L, (lua_Integer)t->tree.n_gpu);
    lua_setfield(L, -2, "num_gpu_events");
    lua_pushinteger(L, (lua_Integer)t->tree.n_linked_gpu);
    lua_setfield(L, -2, "num_linked_gpu_events");
    lua_pushinteger(L, es->parts_joined + 1);
    lua_setfield(L, -2, "scan_parts");
    lua_pushnumber(L, t->load_seconds);
    lua_setfield(L, -2, "load_seconds");
    lua_pushnumber(L, t->tree_seconds);
    lua_setfield(L, -2, "tree_seconds");
    if (t->opts.pseudo_ops) { /* the pseudo-op pass ran while loading */
        const tl_pseudo_summary *ps = &t->pseudo;
        lua_createtable(L, 0, 4);
        lua_pushinteger(L, (lua_Integer)ps->n_renamed);
        lua_setfield(L, -2, "renamed");
        lua_pushinteger(L, (lua_Integer)ps->n_injected);
        lua_setfield(L, -2, "injected");
        lua_createtable(L, (int)ps->n_ext, 0);
        for (size_t i = 0; i < ps->n_ext; i++) {
            lua_createtable(L, 0, 3);
            lua_pushstring(L, ps->ext[i].name);
            lua_setfield(L, -2, "name");
            lua_pushinteger(L, (lua_Integer)ps->ext[i].injected);
            lua_setfield(L, -2, "injected");
            lua_pushboolean(L, ps->ext[i].failed);
            lua_setfield(L, -2, "failed");
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        lua_setfield(L, -2, "extensions");
        lua_newtable(L);
        int nw = 0;
        for (const char *w = ps->warnings; w && *w;) {
            const char *nl = strchr(w, '\n');
            size_t len = nl ? (size_t)(nl - w) : strlen(w);
            lua_pushlstring(L, w, len);
            lua_rawseti(L, -2, ++nw);
            w += len + (nl != NULL);
        }
        lua_setfield(L, -2, "notes");
        lua_setfield(L, -2, "pseudo_ops");
    }

    /* counts by category, time span */
    size_t ncat = es->cats.n;
    size_t *cnt = tl_xcalloc(ncat ? ncat : 1, sizeof *cnt);
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    size_t negdur = 0;
    for (size_t i = 0; i < es->n; i++) {
        cnt[es->cat_id[i]]++;
        if (es->flags[i] & TL_F_NEGDUR) negdur++;
        if (!(es->flags[i] & TL_F_TS) || es->ph[i] == 'M') continue;
        if (es->ts[i] < lo) lo = es->ts[i];
        if (tl_es_end(es, i) > hi) hi = tl_es_end(es, i);
    }
    lua_newtable(L);
    for (size_t c = 0; c < ncat; c++) {
        if (!cnt[c]) continue;
        const char *nm = tl_strpool_get(&es->cats, (uint32_t)c);
        lua_pushinteger(L, (lua_Integer)cnt[c]);
        lua_setfield(L, -2, *nm ? nm : "none");
    }
    lua_setfield(L, -2, "categories");
    free(cnt);
    lua_pushinteger(L, (lua_Integer)negdur);
    lua_setfield(L, -2, "negative_durations");
    if (lo <= hi) {
        lua_pushnumber(L, us(lo));
        lua_setfield(L, -2, "start_us");
        lua_pushnumber(L, us(hi));
        lua_setfield(L, -2, "end_us");
        lua_pushnumber(L, us(hi - lo));
        lua_setfield(L, -2, "span_us");
    }
    /* top-level keys: values of the Kineto ones, names of the others */
    lua_newtable(L);
    lua_newtable(L);
    int n_other = 0;
    for (size_t i = 0; i < es->n_top; i++) {
        const char *k = tl_strpool_get(&es->keys, es->top[i].key);
        if (safe_top_key(k)) {
            tl_push_json(L, es->top[i].raw, 1);
            lua_setfield(L, -3, k);
        } else {
            lua_pushstring(L, k);
            lua_rawseti(L, -2, ++n_other);
        }
    }
    if (es->dropped_metadata) {
        lua_pushliteral(L, "metadata");
        lua_rawseti(L, -2, ++n_other);
    }
    lua_setfield(L, -3, "other_top_level_keys");
    lua_getfield(L, -1, "deviceProperties");
    lua_setfield(L, -3, "device_properties");
    lua_setfield(L, -2, "metadata");
    return 1;
}

static int trace_tostring(lua_State *L)
{
    ltrace *h = luaL_checkudata(L, 1, TL_TRACE_MT);
    if (!h->t) lua_pushliteral(L, "trace (closed)");
    else lua_pushfstring(L, "trace %s (%d events)", h->t->path, (int)h->t->es.n);
    return 1;
}

/* ----------------------------------------------------- event methods */

static void push_idval(lua_State *L, const tl_event_store *es, uint32_t id)
{
    const tl_idval *v = &es->idvals[id];
    if (v->kind == 0) lua_pushinteger(L, v->i);
    else if (v->kind == 1 || v->kind == 3) lua_pushstring(L, tl_strpool_get(&es->names, (uint32_t)v->i));
    else lua_pushnil(L);
}

static void push_args(lua_State *L, const tl_trace *t, uint32_t uid)
{
    const tl_event_store *es = &t->es;
    lua_newtable(L);
    if (tl_es_corr(es, uid) != TL_NONE && es->ph[uid] != 's' && es->ph[uid] != 'f') {
        lua_pushinteger(L, tl_es_corr(es, uid));
        lua_setfield(L, -2, "correlation");
    }
    tl_arg_iter it;
    tl_arg a;
    tl_es_args_begin(es, uid, &it);
    while (tl_es_args_next(&it, &a)) {
        lua_pushstring(L, tl_strpool_get(&es->keys, a.key));
        if (a.tag == TL_AV_INT) lua_pushinteger(L, a.i);
        else tl_push_json(L, tl_strpool_get(&es->values, (uint32_t)a.i), 0);
        lua_rawset(L, -3);
    }
}

static void push_uid_list(lua_State *L, tl_trace *t, const uint32_t *u, size_t n)
{
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        tl_lev_push(L, t, u[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

static int ev_parent(lua_State *L)
{
    levent *e = check_event(L, 1);
    uint32_t p = e->t->tree.parent[e->uid];
    if (p == TL_NOUID) lua_pushnil(L);
    else tl_lev_push(L, e->t, p);
    return 1;
}

static int ev_children(lua_State *L)
{
    levent *e = check_event(L, 1);
    size_t n;
    const uint32_t *v = tl_tree_children(&e->t->tree, e->uid, &n);
    push_uid_list(L, e->t, v, n);
    return 1;
}

static int ev_kernels(lua_State *L)
{
    levent *e = check_event(L, 1);
    size_t n;
    const uint32_t *v = tl_tree_gpus(&e->t->tree, e->uid, &n);
    push_uid_list(L, e->t, v, n);
    return 1;
}

static int ev_launcher(lua_State *L)
{
    levent *e = check_event(L, 1);
    uint32_t l = tl_is_gpu_cat(e->t->es.cat[e->uid]) ? tl_tree_launcher(&e->t->tree, &e->t->es, e->uid) : TL_NOUID;
    if (l == TL_NOUID) lua_pushnil(L);
    else tl_lev_push(L, e->t, l);
    return 1;
}

static int ev_fwd(lua_State *L)
{
    levent *e = check_event(L, 1);
    uint32_t f = tl_tree_fwd_of(&e->t->tree, e->uid);
    if (f == TL_NOUID) lua_pushnil(L);
    else tl_lev_push(L, e->t, f);
    return 1;
}

static int ev_bwd(lua_State *L)
{
    levent *e = check_event(L, 1);
    uint32_t b = tl_tree_bwd_of(&e->t->tree, e->uid);
    if (b == TL_NOUID) lua_pushnil(L);
    else tl_lev_push(L, e->t, b);
    return 1;
}

/* The nn.Module names enclosing the event, outermost first, with a trailing
 * "_<digits>" removed ({"root"} when none) — the reference's
 * nn_module_stack; meaningful when python functions are in the tree. */
static int ev_module_stack(lua_State *L)
{
    levent *e = check_event(L, 1);
    const tl_event_store *es = &e->t->es;
    const tl_tree *tr = &e->t->tree;
    lua_newtable(L);
    int n = 0;
    for (uint32_t p = tr->parent[e->uid]; p != TL_NOUID; p = tr->parent[p]) {
        const char *nm = tl_es_name(es, p);
        if (es->cat[p] != TL_CAT_PYTHON_FUNCTION || strncmp(nm, "nn.Module:", 10) != 0) continue;
        size_t len = strlen(nm), k = len;
        while (k > 0 && nm[k - 1] >= '0' && nm[k - 1] <= '9') k--;
        if (k < len && k > 0 && nm[k - 1] == '_') len = k - 1;
        lua_pushlstring(L, nm, len);
        lua_rawseti(L, -2, ++n);
    }
    for (int i = 1, j = n; i < j; i++, j--) { /* outermost first */
        lua_rawgeti(L, -1, i);
        lua_rawgeti(L, -2, j);
        lua_rawseti(L, -3, i);
        lua_rawseti(L, -2, j);
    }
    if (n == 0) {
        lua_pushliteral(L, "root");
        lua_rawseti(L, -2, 1);
    }
    return 1;
}

static const luaL_Reg event_methods[] = {
    {"module_stack", ev_module_stack},
    {"parent", ev_parent},     {"children", ev_children}, {"kernels", ev_kernels},
    {"launcher", ev_launcher}, {"fwd", ev_fwd},           {"bwd", ev_bwd},
    {NULL, NULL}};

static int event_index(lua_State *L)
{
    levent *e = check_event(L, 1);
    const char *k = luaL_checkstring(L, 2);
    const tl_event_store *es = &e->t->es;
    uint32_t u = e->uid;
    if (!strcmp(k, "uid")) lua_pushinteger(L, u);
    else if (!strcmp(k, "name")) lua_pushstring(L, tl_es_name(es, u));
    else if (!strcmp(k, "cat")) {
        const char *c = tl_strpool_get(&es->cats, es->cat_id[u]);
        if (es->cat[u] == TL_CAT_NONE) lua_pushnil(L);
        else lua_pushstring(L, c);
    } else if (!strcmp(k, "ts")) {
        if (es->flags[u] & TL_F_TS) lua_pushnumber(L, us(es->ts[u]));
        else lua_pushnil(L);
    } else if (!strcmp(k, "dur")) {
        if (es->flags[u] & TL_F_DUR) lua_pushnumber(L, us(es->dur[u]));
        else lua_pushnil(L);
    } else if (!strcmp(k, "t_end")) {
        if (es->flags[u] & TL_F_TS) lua_pushnumber(L, us(tl_es_end(es, u)));
        else lua_pushnil(L);
    } else if (!strcmp(k, "ts_ns")) lua_pushinteger(L, es->ts[u]);
    else if (!strcmp(k, "dur_ns")) lua_pushinteger(L, es->dur[u]);
    else if (!strcmp(k, "pid")) push_idval(L, es, tl_es_pid(es, u));
    else if (!strcmp(k, "tid")) push_idval(L, es, tl_es_tid(es, u));
    else if (!strcmp(k, "ph")) {
        if (es->ph[u]) lua_pushlstring(L, (const char *)&es->ph[u], 1);
        else lua_pushnil(L);
    } else if (!strcmp(k, "args")) {
        if (es->flags[u] & TL_F_ARGS) push_args(L, e->t, u);
        else lua_pushnil(L);
    } else if (!strcmp(k, "id")) {
        if ((es->ph[u] == 's' || es->ph[u] == 'f') && tl_es_corr(es, u) != TL_NONE) lua_pushinteger(L, tl_es_corr(es, u));
        else lua_pushnil(L);
    } else {
        lua_getmetatable(L, 1);
        lua_getfield(L, -1, "methods");
        lua_getfield(L, -1, k);
    }
    return 1;
}

static int event_eq(lua_State *L)
{
    levent *a = check_event(L, 1), *b = check_event(L, 2);
    lua_pushboolean(L, a->t == b->t && a->uid == b->uid);
    return 1;
}

static int event_tostring(lua_State *L)
{
    levent *e = check_event(L, 1);
    const tl_event_store *es = &e->t->es;
    const char *c = tl_strpool_get(&es->cats, es->cat_id[e->uid]);
    lua_pushfstring(L, "event %d: %s %s", (int)e->uid, *c ? c : "(no cat)", tl_es_name(es, e->uid));
    return 1;
}

static const luaL_Reg trace_methods[] = {
    {"timeline", trace_timeline}, {"events", trace_events}, {"node", trace_node}, {"info", trace_info},
    {"table", tl_l_trace_table},  {"report", tl_l_trace_report}, {"platform", tl_l_trace_platform},
    {"multi_kernel_stats", tl_l_trace_multi_kernel_stats}, {"fusion_modules", tl_l_trace_fusion_modules},
    {"iterations", tl_l_trace_iterations}, {"capture_summary", trace_capture_summary},
    {"fusion_siblings", tl_l_trace_fusion_siblings}, {"fusion_diff_nodes", tl_l_trace_fusion_diff_nodes},
    {"kernel_slices", tl_l_trace_kernel_slices}, {"dur_us", tl_l_trace_dur_us}, {"durs_us", tl_l_trace_durs_us},
    {"check", tl_l_trace_check}, {"steps", tl_l_trace_steps}, {"unlinked_gpu", tl_l_trace_unlinked_gpu},
    {"host_calls", tl_l_trace_host_calls},
    {"idle_breakdown", tl_l_trace_idle_breakdown}, {"launch_stats", tl_l_trace_launch_stats},
    {"annotation_times", tl_l_trace_annotation_times}, {"queue_length", tl_l_trace_queue_length},
    {"kernel_sequences", tl_l_trace_kernel_sequences}, {"memcpy_summary", tl_l_trace_memcpy_summary},
    {"memory_timeline", tl_l_trace_memory_timeline},
    {"critical_path", tl_l_trace_critical_path},
    {NULL, NULL}};

void tl_lua_protect_metatable(lua_State *L, const char *name)
{
    lua_pushstring(L, name);
    lua_setfield(L, -2, "__metatable");
}

void *tl_lua_new_box(lua_State *L, size_t size, const char *mt, lua_CFunction gc)
{
    void *b = lua_newuserdatauv(L, size, 0);
    memset(b, 0, size);
    if (luaL_newmetatable(L, mt)) {
        lua_pushcfunction(L, gc);
        lua_setfield(L, -2, "__gc");
        tl_lua_protect_metatable(L, mt);
    }
    lua_setmetatable(L, -2);
    return b;
}

void tl_lua_handle_class(lua_State *L, const char *mt, const luaL_Reg *methods, lua_CFunction gc, lua_CFunction len,
                         lua_CFunction tostring)
{
    if (luaL_newmetatable(L, mt)) {
        lua_newtable(L);
        luaL_setfuncs(L, methods, 0);
        lua_setfield(L, -2, "__index");
        const luaL_Reg meta[] = {{"__gc", gc}, {"__len", len}, {"__tostring", tostring}, {NULL, NULL}};
        luaL_setfuncs(L, meta, 0);
        tl_lua_protect_metatable(L, mt);
    }
    lua_pop(L, 1);
}

void tl_ltrace_register(lua_State *L)
{
    tl_lua_handle_class(L, TL_TRACE_MT, trace_methods, trace_gc, trace_len, trace_tostring);
    if (luaL_newmetatable(L, TL_EVENT_MT)) {
        luaL_newlib(L, event_methods);
        lua_setfield(L, -2, "methods");
        static const char *const fields[] = {"uid", "name", "cat", "ph", "ts", "dur", "t_end", "ts_ns",
                                             "dur_ns", "pid", "tid", "id", "args", NULL};
        lua_newtable(L);
        for (int i = 0; fields[i]; i++) {
            lua_pushstring(L, fields[i]);
            lua_rawseti(L, -2, i + 1);
        }
        lua_setfield(L, -2, "__fields");
        lua_pushcfunction(L, event_index);
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, event_gc);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, event_eq);
        lua_setfield(L, -2, "__eq");
        lua_pushcfunction(L, event_tostring);
        lua_setfield(L, -2, "__tostring");
        tl_lua_protect_metatable(L, TL_EVENT_MT);
    }
    lua_pop(L, 1);
}
