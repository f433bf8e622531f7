/* write_job.h — a report write (tl_report_write) on a thread of its own, so
 * that work on the report's tables can go on while its files are written.
 *
 * A job owns its sheet list (the tables are retained, so whoever built them
 * may drop them), copies of the output directory and base name, and the
 * thread; the tables are only read. */
#ifndef TL_WRITE_JOB_H
#define TL_WRITE_JOB_H

#include "../util/error.h"
#include "report.h"

typedef struct tl_write_job tl_write_job;

/* Starts writing s under outdir (name, csv and xlsx of o; o's other fields
 * are not used). Takes over s. Returns NULL with err set when no thread can
 * be started (s is freed then). */
tl_write_job *tl_write_job_start(tl_sheets *s, const char *outdir, const tl_report_opts *o, tl_error *err);

/* Waits for the write (the first call joins the thread); 0, or -1 with err
 * set to the write's error. */
int tl_write_job_wait(tl_write_job *j, tl_error *err);

/* Waits if still running, then frees the job and its sheets. */
void tl_write_job_free(tl_write_job *j);

#endif
