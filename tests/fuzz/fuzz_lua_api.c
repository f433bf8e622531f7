/* fuzz_lua_api.c — libFuzzer target for the Lua-facing C API, seen from a
 * sandboxed state as a tl.parallel task (a rule, an analyzer) gets it: the
 * capped allocator of src/lua/limits.h (a memory limit chosen by the first
 * input byte, 4 MB to 256 MB) and a deadline, tl_host_fill_state with
 * .sandboxed = 1. The driver fuzz_lua_api.lua, run in that state, reads the
 * rest of the input as a program: each step calls a method of a value in its
 * pool (two small traces, their report Tables, an event view, a regex, the
 * tl module, and whatever the calls returned) with arguments made from the
 * bytes (integers and floats at their extremes, NaN and infinities, strings,
 * nil, booleans, tables with lying __len / failing __index metamethods,
 * callbacks that raise or collect garbage, values of the wrong type), under
 * pcall. Any outcome but a crash, a sanitizer report, a leak (LeakSanitizer),
 * or a reference count of the shared trace and Tables left changed after the
 * state is closed (checked here: abort) is fine. The trace file,
 * fuzz_lua_api_trace.json, is copied into a memfd and loaded from there once
 * (twice: with and without python functions); the report Tables are built
 * once. */
#include <lauxlib.h>
#include <lua.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lua/host.h"
#include "lua/limits.h"
#include "lua/ltable.h"
#include "lua/ltrace.h"
#include "report/report.h"
#include "util/clock.h"

#ifndef FUZZ_DIR
#error "FUZZ_DIR (the tests/fuzz directory) is set by CMakeLists.txt"
#endif

/* Set once by LLVMFuzzerInitialize, read-only afterwards. */
static tl_trace *trace_a, *trace_b;
static char trace_path[64];
static tl_sheets sheets;
static char *driver;
static size_t driver_len;
static int refs_a, refs_b;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fuzz_lua_api: cannot open %s\n", path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "fuzz_lua_api: cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
    buf[n] = 0;
    *len = (size_t)n;
    return buf;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    driver = read_all(FUZZ_DIR "/fuzz_lua_api.lua", &driver_len);
    /* the trace is read from a copy in memory (a memfd, named by its
     * /proc/self/fd path): should a write from the sandbox ever get
     * through, it cannot touch the source tree (the driver names the
     * trace's path among its strings), and nothing is left behind */
    size_t tn;
    char *text = read_all(FUZZ_DIR "/fuzz_lua_api_trace.json", &tn);
    int fd = memfd_create("fuzz_lua_api_trace", 0);
    if (fd < 0 || write(fd, text, tn) != (ssize_t)tn) {
        perror("fuzz_lua_api: memfd");
        exit(1);
    }
    free(text);
    snprintf(trace_path, sizeof trace_path, "/proc/self/fd/%d", fd);
    tl_error err;
    tl_load_opts oa = {.with_python = 1, .threads = 1}, ob = {.threads = 1};
    trace_a = tl_trace_load(trace_path, &oa, &err);
    if (trace_a) trace_b = tl_trace_load(trace_path, &ob, &err);
    if (!trace_a || !trace_b) {
        fprintf(stderr, "fuzz_lua_api: %s\n", err.msg);
        exit(1);
    }
    tl_report_opts ro;
    tl_report_opts_default(&ro);
    if (tl_report_build(trace_a, &ro, &sheets, &err) != 0) {
        fprintf(stderr, "fuzz_lua_api: %s\n", err.msg);
        exit(1);
    }
    refs_a = atomic_load(&trace_a->refs);
    refs_b = atomic_load(&trace_b->refs);
    return 0;
}

typedef struct input {
    const uint8_t *data;
    size_t size;
} input;

/* Protected: the sandbox, then the driver with (input, trace, trace2,
 * sheets, path of the trace file). */
static int run(lua_State *L)
{
    input *in = lua_touserdata(L, 1);
    tl_state_opts so = {.sandboxed = 1, .jobs = 2};
    tl_host_fill_state(L, &so);
    if (luaL_loadbufferx(L, driver, driver_len, "=fuzz_lua_api.lua", "t") != LUA_OK) return lua_error(L);
    lua_pushlstring(L, (const char *)in->data, in->size);
    tl_ltrace_push(L, trace_a);
    tl_ltrace_push(L, trace_b);
    lua_createtable(L, 0, (int)sheets.n + 1);
    lua_createtable(L, (int)sheets.n, 0);
    for (size_t i = 0; i < sheets.n; i++) {
        lua_pushstring(L, sheets.v[i].name);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "__order");
    for (size_t i = 0; i < sheets.n; i++) {
        tl_table_retain(sheets.v[i].table);
        tl_ltable_push(L, sheets.v[i].table);
        lua_setfield(L, -2, sheets.v[i].name);
    }
    lua_pushstring(L, trace_path);
    lua_call(L, 5, 0);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    static const size_t caps[] = {4u << 20, 16u << 20, 64u << 20, 256u << 20};
    tl_limits *lim = tl_limits_new(NULL, tl_now_s(), 3, caps[data[0] & 3]);
    if (!lim) return 0;
    lua_State *L = lua_newstate(tl_limits_alloc, lim);
    if (!L) {
        tl_limits_release(lim);
        return 0;
    }
    tl_limits_install_hook(L);
    input in = {data + 1, size - 1};
    lua_pushcfunction(L, run);
    lua_pushlightuserdata(L, &in);
    if (lua_pcall(L, 1, 0, 0) != LUA_OK && getenv("FUZZ_LUA_API_VERBOSE"))
        fprintf(stderr, "fuzz_lua_api: driver stopped: %s\n", lua_tostring(L, -1));
    lua_close(L);
    tl_limits_release(lim);
    /* every handle the state made is gone: the shared objects are back to
     * the references this harness holds */
    if (atomic_load(&trace_a->refs) != refs_a || atomic_load(&trace_b->refs) != refs_b) {
        fprintf(stderr, "fuzz_lua_api: a trace reference leaked (refs %d/%d, expected %d/%d)\n",
                atomic_load(&trace_a->refs), atomic_load(&trace_b->refs), refs_a, refs_b);
        abort();
    }
    for (size_t i = 0; i < sheets.n; i++)
        if (atomic_load(&sheets.v[i].table->refs) != 1) {
            fprintf(stderr, "fuzz_lua_api: a reference to Table %s leaked (refs %d)\n", sheets.v[i].name,
                    atomic_load(&sheets.v[i].table->refs));
            abort();
        }
    return 0;
}
