/* sheet_steps.c — see sheet_steps.h. */
#include "sheet_steps.h"

#include "../trace/steps.h"

static double ms(int64_t ns) { return (double)ns / 1e6; }

tl_table *tl_sheet_step_breakdown(const tl_trace *t)
{
    tl_steps st;
    tl_steps_compute(t, &st);
    if (!st.n) {
        tl_steps_free(&st);
        return NULL;
    }
    tl_table *tb = tl_table_new("step_breakdown");
    size_t c_step = tl_table_add_col(tb, "step", TL_COL_I64);
    size_t c_name = tl_table_add_col(tb, "name", TL_COL_STR);
    size_t c_status = tl_table_add_col(tb, "status", TL_COL_STR);
    size_t c_wall = tl_table_add_col(tb, "wall_time_ms", TL_COL_F64);
    size_t c_span = tl_table_add_col(tb, "gpu_span_ms", TL_COL_F64);
    size_t c_busy = tl_table_add_col(tb, "busy_time_ms", TL_COL_F64);
    size_t c_comp = tl_table_add_col(tb, "computation_time_ms", TL_COL_F64);
    size_t c_comm = tl_table_add_col(tb, "total_comm_time_ms", TL_COL_F64);
    size_t c_xcomm = tl_table_add_col(tb, "exposed_comm_time_ms", TL_COL_F64);
    size_t c_mem = tl_table_add_col(tb, "total_memcpy_time_ms", TL_COL_F64);
    size_t c_xmem = tl_table_add_col(tb, "exposed_memcpy_time_ms", TL_COL_F64);
    size_t c_idle = tl_table_add_col(tb, "idle_time_ms", TL_COL_F64);
    size_t c_pct = tl_table_add_col(tb, "busy_percent", TL_COL_F64);
    size_t c_n = tl_table_add_col(tb, "gpu_events", TL_COL_I64);
    size_t c_unl = tl_table_add_col(tb, "unlinked_gpu_events", TL_COL_I64);
    for (size_t i = 0; i < st.n; i++) {
        const tl_step *s = &st.v[i];
        size_t r = tl_table_add_row(tb);
        tl_table_set_i64(tb, c_step, r, s->number);
        tl_table_set_str(tb, c_name, r, tl_es_name(&t->es, s->uid));
        tl_table_set_str(tb, c_status, r, s->partial ? "partial" : s->warmup ? "warm-up" : "steady");
        tl_table_set_f64(tb, c_wall, r, ms(s->dur));
        tl_table_set_i64(tb, c_n, r, (int64_t)s->n_gpu);
        tl_table_set_i64(tb, c_unl, r, (int64_t)s->n_unlinked);
        if (!s->n_gpu) continue; /* no GPU figures */
        int64_t span = s->gpu_end - s->gpu_start;
        tl_table_set_f64(tb, c_span, r, ms(span));
        tl_table_set_f64(tb, c_busy, r, ms(s->u.busy));
        tl_table_set_f64(tb, c_comp, r, ms(s->u.computation));
        tl_table_set_f64(tb, c_comm, r, ms(s->u.total_comm));
        tl_table_set_f64(tb, c_xcomm, r, ms(s->u.exposed_comm));
        tl_table_set_f64(tb, c_mem, r, ms(s->u.total_memcpy));
        tl_table_set_f64(tb, c_xmem, r, ms(s->u.exposed_memcpy));
        tl_table_set_f64(tb, c_idle, r, ms(span - s->u.busy));
        tl_table_set_f64(tb, c_pct, r, span > 0 ? (double)s->u.busy / (double)span * 100.0 : 0.0);
    }
    tl_steps_free(&st);
    return tb;
}
