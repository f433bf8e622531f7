/* compare_write.c — the comparison's outputs (compare.h): CSVs staged in a
 * sibling temporary directory and the workbook under a temporary name, both
 * moved into place only when everything is written. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/str.h"
#include "../report/outfile.h"
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

static void rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    tl_sbuf p;
    tl_sb_init(&p);
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        tl_sb_clear(&p);
        tl_sb_printf(&p, "%s/%s", dir, e->d_name);
        unlink(p.s);
    }
    tl_sb_free(&p);
    closedir(d);
    rmdir(dir);
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

static int make_parent(const char *path, tl_error *err)
{
    char *parent = parent_of(path);
    int rc = parent ? tl_mkdirs(parent, err) : 0;
    free(parent);
    return rc;
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

int tl_compare_write(const tl_sheets *s, const tl_compare_out *o, tl_error *err)
{
    long pid = (long)getpid();
    char *dir = o->csv_dir ? strip_slashes(o->csv_dir) : NULL;
    tl_sbuf stage, old, xtmp;
    tl_sb_init(&stage);
    tl_sb_init(&old);
    tl_sb_init(&xtmp);
    int rc = 0, staged = 0, xlsx_written = 0;
    if (dir) {
        tl_sb_printf(&stage, "%s.tmp-%ld", dir, pid);
        tl_sb_printf(&old, "%s.old-%ld", dir, pid);
        rc = make_parent(dir, err);
        if (!rc) {
            rm_tree(stage.s);
            if (mkdir(stage.s, 0777) != 0) {
                tl_error_set(err, "%s: cannot create directory: %s", stage.s, strerror(errno));
                rc = -1;
            } else {
                staged = 1;
                rc = write_csvs(s, stage.s, err);
            }
        }
    }
    if (!rc && o->xlsx_path) {
        tl_sb_printf(&xtmp, "%s.tmp-%ld", o->xlsx_path, pid);
        rc = make_parent(o->xlsx_path, err);
        if (!rc) {
            xlsx_written = 1;
            rc = tl_xlsx_write_hiding(s, xtmp.s, hide_col, NULL, err);
        }
    }
    /* everything is written: move into place */
    if (!rc && dir) {
        struct stat st;
        int exists = stat(dir, &st) == 0;
        if (exists && !S_ISDIR(st.st_mode)) {
            tl_error_set(err, "%s: exists and is not a directory", dir);
            rc = -1;
        } else if (!exists) {
            if (rename(stage.s, dir) != 0) {
                tl_error_set(err, "%s: cannot create: %s", dir, strerror(errno));
                rc = -1;
            } else {
                staged = 0;
            }
        } else if (o->csv_dir_owned) {
            if (rename(dir, old.s) != 0 || rename(stage.s, dir) != 0) {
                tl_error_set(err, "%s: cannot replace: %s", dir, strerror(errno));
                rename(old.s, dir);
                rc = -1;
            } else {
                staged = 0;
                rm_tree(old.s);
            }
        } else {
            rc = move_files(s, stage.s, dir, err);
        }
    }
    if (!rc && o->xlsx_path && rename(xtmp.s, o->xlsx_path) != 0) {
        tl_error_set(err, "%s: cannot create: %s", o->xlsx_path, strerror(errno));
        rc = -1;
    }
    if (staged) rm_tree(stage.s);
    if (rc && xlsx_written) unlink(xtmp.s);
    tl_sb_free(&stage);
    tl_sb_free(&old);
    tl_sb_free(&xtmp);
    free(dir);
    return rc;
}
