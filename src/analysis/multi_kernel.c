#include "multi_kernel.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "../trace/copies.h"
#include "../trace/timeline.h"
#include "../util/vec.h"

int tl_mk_direction(const char *name)
{
    size_t n = strlen(name);
    char *s = tl_xmalloc(n + 1);
    for (size_t i = 0; i <= n; i++) s[i] = (char)tolower((unsigned char)name[i]);
    int d = tl_copy_direction(s, 0); /* PtoP names by their Device -> Device words */
    free(s);
    return d == TL_CP_D2H ? TL_MK_D2H : d == TL_CP_H2D ? TL_MK_H2D : d == TL_CP_D2D ? TL_MK_D2D : TL_MK_OTHER;
}

static void durs_init(tl_mk_durs *d)
{
    memset(d, 0, sizeof *d);
    d->max_uid = TL_NOUID;
    d->all_int = 1;
}

static void durs_add(tl_mk_durs *d, const tl_event_store *es, uint32_t u)
{
    d->count++;
    d->sum_us += (double)es->dur[u] / 1000.0;
    d->sum_ns += es->dur[u];
    if (!(es->flags[u] & TL_F_DUR_INT)) d->all_int = 0;
    if (d->max_uid == TL_NOUID || es->dur[u] > es->dur[d->max_uid]) d->max_uid = u;
}

/* An event that carries bytes: its duration joins the time those bytes took. */
static void timed_bytes(tl_mk_dir *dir, const tl_event_store *es, uint32_t u)
{
    dir->n_bytes++;
    if (es->dur[u] > 0) dir->bytes_ns += es->dur[u];
}

/* args.bytes of a memcpy: Python adds `bytes or 0`, so only truthy values count. */
static void add_bytes(tl_mk_dir *dir, const tl_event_store *es, uint32_t u)
{
    if (!(es->flags[u] & TL_F_ARGS)) return;
    int64_t v;
    if (tl_es_arg_int(es, u, TL_K_BYTES, &v)) {
        if (v) {
            dir->bytes_i += v;
            dir->any_bytes = 1;
            timed_bytes(dir, es, u);
        }
        return;
    }
    int is_int;
    uint32_t raw = tl_es_arg_raw(es, u, TL_K_BYTES, &is_int);
    if (raw == UINT32_MAX) return;
    const char *txt = tl_strpool_get(&es->values, raw);
    char *end;
    double f = strtod(txt, &end);
    if (end == txt || *end || f == 0) return; /* not a number (or 0): adds nothing */
    dir->bytes_f += f;
    dir->bytes_float = 1;
    dir->any_bytes = 1;
    timed_bytes(dir, es, u);
}

/* Inserts u into the top list (dur descending; an equal dur goes after the
 * ones already there, as a stable sort keeps them). */
static void top_add(tl_multi_kernel *m, const tl_event_store *es, uint32_t u)
{
    size_t pos = m->n_top;
    while (pos > 0 && es->dur[m->top[pos - 1]] < es->dur[u]) pos--;
    if (pos >= TL_MK_TOP) return;
    size_t last = m->n_top < TL_MK_TOP ? m->n_top : TL_MK_TOP - 1;
    memmove(m->top + pos + 1, m->top + pos, (last - pos) * sizeof *m->top);
    m->top[pos] = u;
    if (m->n_top < TL_MK_TOP) m->n_top++;
}

void tl_multi_kernel_compute(const tl_trace *t, tl_multi_kernel *m)
{
    const tl_event_store *es = &t->es;
    memset(m, 0, sizeof *m);
    m->all_int = 1;
    for (int d = 0; d < TL_MK_NDIR; d++) durs_init(&m->dir[d].d);
    durs_init(&m->comm);

    /* every GPU event, linked or not (analysis-layer §3.5): the timeline's bucket rule */
    size_t cnt[3];
    uint8_t *bk = tl_xmalloc(es->n + 1);
    m->n_gpu = tl_gpu_buckets(es, &t->tree, 1, NULL, 0, bk, cnt);
    /* per names id: 1 + direction of a memcpy name; 0 = not yet */
    uint8_t *mdir = tl_xcalloc(es->names.n + 1, 1);
    for (size_t i = 0; i < es->n; i++) {
        uint8_t b = bk[i];
        if (b == 0xff) continue;
        uint32_t nm = es->name[i];
        if ((es->flags[i] & (TL_F_TS_INT | TL_F_DUR_INT)) != (TL_F_TS_INT | TL_F_DUR_INT)) m->all_int = 0;
        if (b == TL_B_MEMCPY) {
            if (!mdir[nm]) mdir[nm] = (uint8_t)(1 + tl_mk_direction(tl_es_name(es, i)));
            tl_mk_dir *d = &m->dir[mdir[nm] - 1];
            durs_add(&d->d, es, (uint32_t)i);
            add_bytes(d, es, (uint32_t)i);
            m->n_memcpy++;
        } else if (b == TL_B_COMM) {
            durs_add(&m->comm, es, (uint32_t)i);
            top_add(m, es, (uint32_t)i);
        }
    }
    free(mdir);
    if (!m->n_gpu) {
        free(bk);
        return;
    }

    tl_unions u;
    tl_bucket_unions(es, bk, m->n_gpu, -1, &u);
    free(bk);
    m->total_ns = u.total;
    m->computation = (tl_mk_len){u.computation, u.n_comp};
    m->total_comm = (tl_mk_len){u.total_comm, u.n_comm};
    m->total_memcpy = (tl_mk_len){u.total_memcpy, u.n_memcpy};
    m->exposed_comm = (tl_mk_len){u.exposed_comm, u.n_exposed_comm};
    m->exposed_memcpy = (tl_mk_len){u.exposed_memcpy, u.n_exposed_memcpy};
}
