/* lsteps.c — see lsteps.h. */
#include "lsteps.h"

#include <lauxlib.h>

#include "../trace/steps.h"
#include "lfields.h"
#include "ltrace.h"

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
        tl_lset_int(L, "number", s->number);
        tl_lset_int(L, "uid", s->uid);
        tl_lset_str(L, "name", tl_es_name(&t->es, s->uid));
        tl_lset_us(L, "ts", s->ts);
        tl_lset_us(L, "wall_us", s->dur);
        tl_lset_int(L, "gpu_events", (lua_Integer)s->n_gpu);
        tl_lset_int(L, "unlinked_gpu_events", (lua_Integer)s->n_unlinked);
        tl_lset_int(L, "launches_without_gpu", (lua_Integer)s->n_launches_missing);
        if (s->n_gpu) {
            tl_lset_us(L, "gpu_start", s->gpu_start);
            tl_lset_us(L, "gpu_end", s->gpu_end);
            tl_lset_us(L, "span_us", s->gpu_end - s->gpu_start);
            tl_lset_us(L, "busy_us", s->u.busy);
            tl_lset_us(L, "idle_us", s->gpu_end - s->gpu_start - s->u.busy);
            tl_lset_us(L, "computation_us", s->u.computation);
            tl_lset_us(L, "total_comm_us", s->u.total_comm);
            tl_lset_us(L, "exposed_comm_us", s->u.exposed_comm);
            tl_lset_us(L, "total_memcpy_us", s->u.total_memcpy);
            tl_lset_us(L, "exposed_memcpy_us", s->u.exposed_memcpy);
        }
        if (s->first_launch != INT64_MIN) {
            tl_lset_us(L, "first_launch", s->first_launch);
            tl_lset_us(L, "last_launch", s->last_launch);
        }
        if (s->any_gpu_start != INT64_MIN) {
            tl_lset_us(L, "any_gpu_start", s->any_gpu_start);
            tl_lset_us(L, "any_gpu_end", s->any_gpu_end);
        }
        tl_lset_us(L, "before_trace_us", s->before_trace_ns);
        lua_pushboolean(L, s->warmup);
        lua_setfield(L, -2, "warmup");
        lua_pushboolean(L, s->partial);
        lua_setfield(L, -2, "partial");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_createtable(L, 0, 2);
    tl_lset_int(L, "outside_gpu_events", (lua_Integer)st.n_gpu_outside);
    tl_lset_us(L, "outside_gpu_us", st.gpu_outside_ns);
    tl_steps_free(&st);
    return 2;
}
