#include "write_job.h"

#include <pthread.h>
#include <string.h>

#include "../util/vec.h"

struct tl_write_job {
    tl_sheets sheets;
    char *outdir, *name;
    tl_report_opts opts;
    pthread_t thread;
    int joined, rc;
    tl_error err;
};

static void *run(void *arg)
{
    tl_write_job *j = arg;
    j->rc = tl_report_write(&j->sheets, j->outdir, &j->opts, &j->err);
    return NULL;
}

tl_write_job *tl_write_job_start(tl_sheets *s, const char *outdir, const tl_report_opts *o, tl_error *err)
{
    tl_write_job *j = tl_xcalloc(1, sizeof *j);
    j->sheets = *s;
    memset(s, 0, sizeof *s);
    j->outdir = tl_xstrdup(outdir);
    j->name = o->name ? tl_xstrdup(o->name) : NULL;
    tl_report_opts_default(&j->opts);
    j->opts.csv = o->csv;
    j->opts.xlsx = o->xlsx;
    j->opts.name = j->name;
    if (pthread_create(&j->thread, NULL, run, j) != 0) {
        tl_error_set(err, "%s: cannot start a thread to write the report", outdir);
        j->joined = 1;
        tl_write_job_free(j);
        return NULL;
    }
    return j;
}

int tl_write_job_wait(tl_write_job *j, tl_error *err)
{
    if (!j->joined) {
        pthread_join(j->thread, NULL);
        j->joined = 1;
    }
    if (j->rc != 0 && err) *err = j->err;
    return j->rc;
}

void tl_write_job_free(tl_write_job *j)
{
    if (!j) return;
    tl_write_job_wait(j, NULL);
    tl_sheets_free(&j->sheets);
    free(j->outdir);
    free(j->name);
    free(j);
}
