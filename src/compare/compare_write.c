/* compare_write.c — the comparison's outputs (compare.h): CSVs and the
 * workbook staged in private directories beside them (io/outfile.h), moved
 * into place only when everything is written. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/str.h"
#include "../io/outfile.h"
#include "../report/xlsx_writer.h"
#include "../util/sbuf.h"
#include "../util/vec.h"
#include "compare.h"

/* The Excel columns the reference hides: in the ops-group split sheets and
 * in the roofline split sheets, by the end of the column name. */
static int hide_col(void *ctx, const char *sheet, const char *col)
{
    (void)ctx;
    static const char *const ops[] = {"kernel_names", "median", "std", "min", "max", "ex_UID", NULL};
    static const char *const roof[] = {"kernel_names_first", "UID",     "median",           "std",
                                       "min",                "max",     "Input type_first", "Input Dims_first",
                                       "Input Strides_first", "Concrete Inputs_first", NULL};
    if (!strcmp(sheet, "gpu_timeline") || !strcmp(sheet, "ops_summary") || !strcmp(sheet, "kernel_summary"))
        return 0;
    int ops_group = tl_starts_with(sheet, "ops_all_") || tl_starts_with(sheet, "ops_unique_args_") ||
                    tl_starts_with(sheet, "unified_perf_summary_");
    for (const char *const *s = ops_group ? ops : roof; *s; s++)
        if (tl_ends_with(col, *s)) return 1;
    return 0;
}

static char *strip_slashes(const char *p)
{
    char *s = tl_xstrdup(p);
    size_t n = strlen(s);
    while (n > 1 && s[n - 1] == '/') s[--n] = 0;
    return s;
}

static char *parent_of(const char *p)
{
    char *s = tl_xstrdup(p);
    char *slash = strrchr(s, '/');
    if (!slash) {
        free(s);
        return NULL;
    }
    if (slash == s) slash[1] = 0;
    else *slash = 0;
    return s;
}

static int write_csvs(const tl_sheets *s, const char *dir, tl_error *err)
{
    tl_sbuf p;
    tl_sb_init(&p);
    int rc = 0;
    for (size_t i = 0; i < s->n && !rc; i++) {
        tl_sb_clear(&p);
        tl_sb_printf(&p, "%s/%s.csv", dir, s->v[i].name);
        FILE *f = fopen(p.s, "wb");
        if (!f) {
            tl_error_set(err, "%s: cannot write: %s", p.s, strerror(errno));
            rc = -1;
            break;
        }
        tl_table_write_csv(s->v[i].table, f);
        int bad = ferror(f);
        if (fclose(f) != 0 || bad) {
            tl_error_set(err, "%s: write failed: %s", p.s, strerror(errno));
            rc = -1;
        }
    }
    tl_sb_free(&p);
    return rc;
}

/* Moves the staged files into an existing directory the user named. */
static int move_files(const tl_sheets *s, const char *stage, const char *dir, tl_error *err)
{
    tl_sbuf a, b;
    tl_sb_init(&a);
    tl_sb_init(&b);
    int rc = 0;
    for (size_t i = 0; i < s->n && !rc; i++) {
        tl_sb_clear(&a);
        tl_sb_clear(&b);
        tl_sb_printf(&a, "%s/%s.csv", stage, s->v[i].name);
        tl_sb_printf(&b, "%s/%s.csv", dir, s->v[i].name);
        if (rename(a.s, b.s) != 0) {
            tl_error_set(err, "%s: cannot create: %s", b.s, strerror(errno));
            rc = -1;
        }
    }
    tl_sb_free(&a);
    tl_sb_free(&b);
    return rc;
}

static const char *base_name(const char *p)
{
    const char *slash = strrchr(p, '/');
    return slash ? slash + 1 : p;
}

/* Both outputs are staged in private directories beside them (tl_stage:
 * nothing can be planted there) and moved into place when all is written. */
int tl_compare_write(const tl_sheets *s, const tl_compare_out *o, tl_error *err)
{
    char *dir = o->csv_dir ? strip_slashes(o->csv_dir) : NULL;
    char *dir_parent = dir ? parent_of(dir) : NULL, *x_parent = o->xlsx_path ? parent_of(o->xlsx_path) : NULL;
    tl_stage cst = {0}, xst = {0};
    char *staged = NULL;
    int rc = 0;
    if (dir) {
        rc = tl_stage_open(&cst, dir_parent ? dir_parent : ".", err);
        if (!rc) {
            staged = tl_stage_path(&cst, base_name(dir));
            if (mkdir(staged, 0777) != 0) {
                tl_error_set(err, "%s: cannot create directory: %s", staged, strerror(errno));
                rc = -1;
            } else {
                rc = write_csvs(s, staged, err);
            }
        }
    }
    if (!rc && o->xlsx_path) {
        rc = tl_stage_open(&xst, x_parent ? x_parent : ".", err);
        if (!rc) {
            char *xtmp = tl_stage_path(&xst, base_name(o->xlsx_path));
            rc = tl_xlsx_write_hiding(s, xtmp, hide_col, NULL, err);
            free(xtmp);
        }
    }
    /* everything is written: move into place */
    if (!rc && dir) {
        struct stat st;
        if (!o->csv_dir_owned && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
            rc = move_files(s, staged, dir, err);
        else
            rc = tl_stage_commit(&cst, base_name(dir), dir, err);
    }
    if (!rc && o->xlsx_path) rc = tl_stage_commit(&xst, base_name(o->xlsx_path), o->xlsx_path, err);
    tl_stage_close(&cst);
    tl_stage_close(&xst);
    free(staged);
    free(dir);
    free(dir_parent);
    free(x_parent);
    return rc;
}
