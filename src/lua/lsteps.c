/* lsteps.c — see lsteps.h. */
#include "lsteps.h"

#include <lauxlib.h>

#include "../trace/steps.h"
#include "ltrace.h"

static void set_us(lua_State *L, const char *k, int64_t ns)
{
    lua_pushnumber(L, (lua_Number)ns / 1000.0);
    lua_setfield(L, -2, k);
}

static void set_int(lua_State *L, const char *k, lua_Integer v)
{
    lua_pushinteger(L, v);
    lua_setfield(L, -2, k);
}

/* trace:steps() -> steps, {outside_gpu_events =, outside_gpu_us =} */
int tl_l_trace_steps(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    tl_steps st;
    tl_steps_compute(t, &st);
    if (!lua_checkstack(L, 8)) {
        tl_steps_free(&st);
        return luaL_error(L, "stack overflow (trace:steps)");
    }
    lua_createtable(L, (int)st.n, 0);
    for (size_t i = 0; i < st.n; i++) {
        const tl_step *s = &st.v[i];
        lua_createtable(L, 0, 24);
        set_int(L, "number", s->number);
        set_int(L, "uid", s->uid);
        lua_pushstring(L, tl_es_name(&t->es, s->uid));
        lua_setfield(L, -2, "name");
        set_us(L, "ts", s->ts);
        set_us(L, "wall_us", s->dur);
        set_int(L, "gpu_events", (lua_Integer)s->n_gpu);
        set_int(L, "unlinked_gpu_events", (lua_Integer)s->n_unlinked);
        set_int(L, "launches_without_gpu", (lua_Integer)s->n_launches_missing);
        if (s->n_gpu) {
            set_us(L, "gpu_start", s->gpu_start);
            set_us(L, "gpu_end", s->gpu_end);
            set_us(L, "span_us", s->gpu_end - s->gpu_start);
            set_us(L, "busy_us", s->u.busy);
            set_us(L, "idle_us", s->gpu_end - s->gpu_start - s->u.busy);
            set_us(L, "computation_us", s->u.computation);
            set_us(L, "total_comm_us", s->u.total_comm);
            set_us(L, "exposed_comm_us", s->u.exposed_comm);
            set_us(L, "total_memcpy_us", s->u.total_memcpy);
            set_us(L, "exposed_memcpy_us", s->u.exposed_memcpy);
        }
        lua_pushboolean(L, s->warmup);
        lua_setfield(L, -2, "warmup");
        lua_pushboolean(L, s->partial);
        lua_setfield(L, -2, "partial");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_createtable(L, 0, 2);
    set_int(L, "outside_gpu_events", (lua_Integer)st.n_gpu_outside);
    set_us(L, "outside_gpu_us", st.gpu_outside_ns);
    tl_steps_free(&st);
    return 2;
}
