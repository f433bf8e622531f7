/* The report's two plain-C interfaces (issue 14, docs/architecture.md
 * "Layers"), driven here without Lua and without TraceDiff:
 * - an extension (report/extension.h) filled by hand: its category
 *   override reaches the op sheets, its sheets hook runs last, the report
 *   frees it; an extension path with no loader is refused;
 * - the unified hook (report.h): begin gets the trace, end gets
 *   unified_perf_summary and a kernel -> row map, its sheet lands right
 *   after unified_perf_summary, its failure fails the report, and the
 *   report is the same without it. */
#include <stdlib.h>
#include <unistd.h>

#include "report/extension.h"
#include "report/report.h"
#include "test.h"
#include "trace/trace.h"
#include "util/vec.h"

/* one aten::mm launching one kernel (UIDs: 0 op, 1 launch, 2 s, 3 f, 4 kernel) */
static const char *DOC =
    "{\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":20,\"args\":{}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":12,\"dur\":1,"
    "\"args\":{\"correlation\":1}},"
    "{\"ph\":\"s\",\"id\":1,\"pid\":1,\"tid\":1,\"ts\":12,\"cat\":\"ac2g\",\"name\":\"ac2g\"},"
    "{\"ph\":\"f\",\"id\":1,\"pid\":0,\"tid\":7,\"ts\":100,\"cat\":\"ac2g\",\"name\":\"ac2g\"},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":7,\"ts\":100,\"dur\":10,"
    "\"args\":{\"correlation\":1,\"stream\":7}}"
    "]}";

/* ---------------------------------------------------- a hand-made extension */

typedef struct fake_ext {
    int *freed;
    int sheets_called;
} fake_ext;

static const char *fx_category(const void *ctx, const char *name)
{
    (void)ctx;
    return !strcmp(name, "aten::mm") ? "MyCategory" : NULL;
}

static const tl_perf_class *fx_model(const void *ctx, const char *name)
{
    (void)ctx;
    (void)name;
    return NULL;
}

static int fx_owns(const void *ctx, const tl_perf_class *cls)
{
    (void)ctx;
    (void)cls;
    return 0;
}

static int fx_run(void *ctx, const tl_perf_class *cls, const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)ctx;
    (void)cls;
    (void)ev;
    (void)bwd;
    return tl_perf_error(r, "not used");
}

static int fx_sheets(void *ctx, const tl_trace *t, struct tl_sheets *out, tl_error *err)
{
    (void)t;
    (void)err;
    fake_ext *f = ctx;
    f->sheets_called = out->n; /* the report's sheets so far */
    tl_table *tb = tl_table_new("extra");
    tl_table_add_col(tb, "x", TL_COL_I64);
    TL_GROW(out->v, out->cap, out->n + 1);
    out->v[out->n].name = tl_xstrdup("extra");
    out->v[out->n].table = tb;
    out->v[out->n].write_empty_as_newline = 0;
    out->n++;
    return 0;
}

static int fx_freed;
static fake_ext fx_state;

static void fx_free(void *ctx)
{
    fake_ext *f = ctx;
    (*f->freed)++;
}

static const tl_extension_ops fx_ops = {fx_category, fx_model, fx_owns, fx_run, fx_sheets, fx_free};

static tl_extension *fx_load(const char *path, tl_error *err)
{
    if (!strcmp(path, "bad")) {
        tl_error_set(err, "extension bad: refused");
        return NULL;
    }
    tl_extension *x = tl_xcalloc(1, sizeof *x);
    fx_state.freed = &fx_freed;
    x->ops = &fx_ops;
    x->ctx = &fx_state;
    return x;
}

/* ------------------------------------------------------- a unified hook */

typedef struct fake_hook {
    const tl_trace *begun_with;
    int ended;
    int unified_rows;
    uint32_t kernel_row; /* kernel_row[4] */
    int fail;
} fake_hook;

static void fh_begin(void *ctx, const tl_trace *t)
{
    ((fake_hook *)ctx)->begun_with = t;
}

static int fh_end(void *ctx, tl_table *unified, const uint32_t *kernel_row, tl_table **sheet, tl_error *err)
{
    fake_hook *h = ctx;
    h->ended++;
    *sheet = NULL;
    if (h->fail) {
        tl_error_set(err, "hook failed");
        return -1;
    }
    h->unified_rows = unified ? (int)unified->nrows : -1;
    h->kernel_row = kernel_row ? kernel_row[4] : 12345;
    *sheet = tl_table_new("after");
    tl_table_add_col(*sheet, "y", TL_COL_I64);
    return 0;
}

static long sheet_index(const tl_sheets *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i].name, name)) return (long)i;
    return -1;
}

void suite_report_hook(void)
{
    char path[] = "/tmp/tl_report_hook_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) return;
    CHECK(write(fd, DOC, strlen(DOC)) == (ssize_t)strlen(DOC));
    close(fd);
    tl_load_opts lo = {0};
    lo.threads = 1;
    tl_error err = {{0}};
    tl_trace *t = tl_trace_load(path, &lo, &err);
    unlink(path);
    CHECK(t != NULL);
    if (!t) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }

    /* the plain report */
    tl_report_opts o;
    tl_report_opts_default(&o);
    tl_sheets plain;
    CHECK_I64(tl_report_build(t, &o, &plain, &err), 0);
    long pu = sheet_index(&plain, "unified_perf_summary");
    CHECK(pu >= 0);

    /* an extension without a loader is refused */
    o.extension_path = "x.lua";
    tl_sheets s;
    CHECK_I64(tl_report_build(t, &o, &s, &err), -1);
    CHECK(strstr(err.msg, "extensions are not available") != NULL);
    /* a loader's error is the report's */
    o.load_extension = fx_load;
    o.extension_path = "bad";
    CHECK_I64(tl_report_build(t, &o, &s, &err), -1);
    CHECK_STR(err.msg, "extension bad: refused");

    /* the hand-made extension: its category, its sheet last, freed once */
    o.extension_path = "ok";
    fx_freed = 0;
    CHECK_I64(tl_report_build(t, &o, &s, &err), 0);
    CHECK_I64(fx_freed, 1);
    CHECK_I64(fx_state.sheets_called, (long long)plain.n);
    CHECK_I64(s.n, plain.n + 1);
    CHECK_STR(s.v[s.n - 1].name, "extra");
    long u = sheet_index(&s, "unified_perf_summary");
    CHECK(u >= 0);
    if (u >= 0) {
        const tl_table *ut = s.v[u].table;
        long c = tl_table_col(ut, "op category");
        CHECK(c >= 0 && ut->nrows == 1);
        if (c >= 0 && ut->nrows == 1) CHECK_STR(tl_table_str(ut, (size_t)c, 0), "MyCategory");
    }
    tl_sheets_free(&s);
    o.extension_path = NULL;

    /* the unified hook: begun with the trace, ended with the unified
     * table; its sheet right after unified_perf_summary */
    fake_hook h = {0};
    o.unified_hook = (tl_report_unified_hook){&h, fh_begin, fh_end, "after_unified"};
    CHECK_I64(tl_report_build(t, &o, &s, &err), 0);
    CHECK(h.begun_with == t);
    CHECK_I64(h.ended, 1);
    CHECK_I64(h.unified_rows, 1);
    CHECK_I64(h.kernel_row, 0); /* the kernel's row in unified_perf_summary */
    CHECK_I64(s.n, plain.n + 1);
    CHECK_I64(sheet_index(&s, "after_unified"), pu + 1);
    /* otherwise the same sheets, in the same order */
    for (size_t i = 0, j = 0; i < s.n && j < plain.n; i++) {
        if (!strcmp(s.v[i].name, "after_unified")) continue;
        CHECK_STR(s.v[i].name, plain.v[j].name);
        j++;
    }
    tl_sheets_free(&s);

    /* a failing hook fails the report with its error */
    fake_hook hf = {0};
    hf.fail = 1;
    o.unified_hook = (tl_report_unified_hook){&hf, fh_begin, fh_end, "after_unified"};
    CHECK_I64(tl_report_build(t, &o, &s, &err), -1);
    CHECK_STR(err.msg, "hook failed");
    CHECK_I64(hf.ended, 1);

    tl_sheets_free(&plain);
    tl_trace_release(t);
}
