#include "xlsx_package.h"

#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include <minizip/unzip.h>
#include <minizip/zip.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../util/vec.h"

enum { OUT_BUF = 1 << 18, COPY_BUF = 1 << 16, NAME_MAX_LEN = 1024 };
/* An entry whose text may pass this many bytes is deflated on a thread of
 * its own while the caller writes the text (a queue of at most QUEUE_LEN
 * blocks); a smaller one in line. */
enum { THREAD_FROM = 1 << 20, QUEUE_LEN = 8 };
/* An entry that may pass 4 GiB (compressed or not) needs ZIP64 fields
 * (overridable so that a test can make every entry a ZIP64 one). */
#ifndef TL_XLSX_ZIP32_LIMIT
#define TL_XLSX_ZIP32_LIMIT 0xF0000000ull
#endif
static const uint64_t ZIP32_LIMIT = TL_XLSX_ZIP32_LIMIT;

typedef struct block {
    char *p;
    size_t n;
} block;

struct tl_xlsx_entry {
    zipFile zf;
    struct isal_zstream z;
    uint8_t *level_buf, *out;
    uint32_t crc;
    uint64_t size;
    int failed;
    /* threaded: the deflate thread takes the text's blocks from q (a ring;
     * a block with p == NULL ends the text) and sets failed, under mu */
    int threaded;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t more, room;
    block q[QUEUE_LEN];
    size_t head, count;
};

/* Feeds n bytes (all of them, or the end of the stream when last) to the
 * deflate stream and the compressed bytes to the zip. */
static int deflate_feed(tl_xlsx_entry *e, const uint8_t *p, uint32_t n, int last)
{
    e->z.next_in = (uint8_t *)p;
    e->z.avail_in = n;
    e->z.end_of_stream = (uint16_t)(last != 0);
    for (;;) {
        e->z.next_out = e->out;
        e->z.avail_out = OUT_BUF;
        if (isal_deflate(&e->z) != COMP_OK) return -1;
        uint32_t got = OUT_BUF - e->z.avail_out;
        if (got && zipWriteInFileInZip(e->zf, e->out, got) != ZIP_OK) return -1;
        int done = last ? e->z.internal_state.state == ZSTATE_END : e->z.avail_in == 0;
        if (done) return 0;
    }
}

/* The text's bytes into the entry: CRC, size, deflate. */
static int deflate_text(tl_xlsx_entry *e, const char *p, size_t n)
{
    while (n) {
        uint32_t k = n > (1u << 30) ? 1u << 30 : (uint32_t)n;
        e->crc = crc32_gzip_refl(e->crc, (const unsigned char *)p, k);
        e->size += k;
        if (deflate_feed(e, (const uint8_t *)p, k, 0) != 0) return -1;
        p += k;
        n -= k;
    }
    return 0;
}

/* The deflate thread: the blocks in order until the end block, then the end
 * of the deflate stream. After a failure it only frees what comes. */
static void *deflate_thread(void *arg)
{
    tl_xlsx_entry *e = arg;
    int failed = 0;
    for (;;) {
        pthread_mutex_lock(&e->mu);
        while (!e->count) pthread_cond_wait(&e->more, &e->mu);
        block b = e->q[e->head];
        e->head = (e->head + 1) % QUEUE_LEN;
        e->count--;
        pthread_cond_signal(&e->room);
        pthread_mutex_unlock(&e->mu);
        if (!b.p) break;
        if (!failed && deflate_text(e, b.p, b.n) != 0) {
            failed = 1;
            pthread_mutex_lock(&e->mu);
            e->failed = 1;
            pthread_mutex_unlock(&e->mu);
        }
        free(b.p);
    }
    if (!failed && deflate_feed(e, NULL, 0, 1) != 0) {
        pthread_mutex_lock(&e->mu);
        e->failed = 1;
        pthread_mutex_unlock(&e->mu);
    }
    return NULL;
}

/* Hands a block to the deflate thread (b.p == NULL: the end); 0, or -1
 * once the thread has failed. */
static int enqueue(tl_xlsx_entry *e, block b)
{
    pthread_mutex_lock(&e->mu);
    while (e->count == QUEUE_LEN) pthread_cond_wait(&e->room, &e->mu);
    e->q[(e->head + e->count) % QUEUE_LEN] = b;
    e->count++;
    pthread_cond_signal(&e->more);
    int failed = e->failed;
    pthread_mutex_unlock(&e->mu);
    return failed ? -1 : 0;
}

int tl_xlsx_entry_write(void *entry, const char *p, size_t n)
{
    tl_xlsx_entry *e = entry;
    if (e->threaded) {
        if (!n) return 0;
        char *copy = tl_xmalloc(n);
        memcpy(copy, p, n);
        return enqueue(e, (block){copy, n});
    }
    if (!e->failed && deflate_text(e, p, n) != 0) e->failed = 1;
    return e->failed ? -1 : 0;
}

static void file_info(const unz_file_info64 *ui, zip_fileinfo *zi)
{
    memset(zi, 0, sizeof *zi);
    zi->tmz_date.tm_sec = ui->tmu_date.tm_sec;
    zi->tmz_date.tm_min = ui->tmu_date.tm_min;
    zi->tmz_date.tm_hour = ui->tmu_date.tm_hour;
    zi->tmz_date.tm_mday = ui->tmu_date.tm_mday;
    zi->tmz_date.tm_mon = ui->tmu_date.tm_mon;
    zi->tmz_date.tm_year = ui->tmu_date.tm_year;
    zi->dosDate = ui->dosDate;
    zi->internal_fa = ui->internal_fa;
    zi->external_fa = ui->external_fa;
}

/* The skeleton's (uncompressed) text of the current entry. */
static char *read_current(unzFile uf, const unz_file_info64 *ui, size_t *len)
{
    if (ui->uncompressed_size > ((uint64_t)1 << 30) || unzOpenCurrentFile(uf) != UNZ_OK) return NULL;
    size_t n = (size_t)ui->uncompressed_size;
    char *buf = tl_xmalloc(n + 1);
    size_t got = 0;
    while (got < n) {
        int k = unzReadCurrentFile(uf, buf + got, (unsigned)(n - got));
        if (k <= 0) break;
        got += (size_t)k;
    }
    unzCloseCurrentFile(uf);
    if (got != n) {
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

static int write_replaced(zipFile zf, unzFile uf, const tl_xlsx_replace *r, size_t i, void *ctx, tl_error *err,
                          const char *path)
{
    unz_file_info64 ui;
    if (unzLocateFile(uf, r->name, 1) != UNZ_OK || unzGetCurrentFileInfo64(uf, &ui, NULL, 0, NULL, 0, NULL, 0) != UNZ_OK) {
        tl_error_set(err, "%s: the workbook has no part %s", path, r->name);
        return -1;
    }
    size_t old_len = 0;
    char *old = read_current(uf, &ui, &old_len);
    if (!old) {
        tl_error_set(err, "%s: cannot read the workbook part %s", path, r->name);
        return -1;
    }
    uint64_t bound = r->bound(ctx, i, old, old_len) + old_len;
    zip_fileinfo zi;
    file_info(&ui, &zi);
    tl_xlsx_entry e;
    memset(&e, 0, sizeof e);
    e.zf = zf;
    isal_deflate_init(&e.z);
    e.z.level = 1;
    e.z.level_buf_size = ISAL_DEF_LVL1_DEFAULT;
    e.level_buf = tl_xmalloc(ISAL_DEF_LVL1_DEFAULT);
    e.z.level_buf = e.level_buf;
    e.z.gzip_flag = IGZIP_DEFLATE;
    e.out = tl_xmalloc(OUT_BUF);
    int rc = -1;
    if (zipOpenNewFileInZip2_64(zf, r->name, &zi, NULL, 0, NULL, 0, NULL, Z_DEFLATED, 1, 1,
                                bound + bound / 64 + 4096 >= ZIP32_LIMIT) != ZIP_OK) {
        tl_error_set(err, "%s: cannot add %s to the workbook", path, r->name);
    } else {
        /* a large text is deflated on a thread while fill writes it */
        if (bound >= THREAD_FROM) {
            pthread_mutex_init(&e.mu, NULL);
            pthread_cond_init(&e.more, NULL);
            pthread_cond_init(&e.room, NULL);
            e.threaded = pthread_create(&e.th, NULL, deflate_thread, &e) == 0;
            if (!e.threaded) {
                pthread_cond_destroy(&e.room);
                pthread_cond_destroy(&e.more);
                pthread_mutex_destroy(&e.mu);
            }
        }
        int filled = r->fill(ctx, i, old, old_len, &e) == 0;
        if (e.threaded) {
            (void)enqueue(&e, (block){NULL, 0});
            pthread_join(e.th, NULL);
            pthread_cond_destroy(&e.room);
            pthread_cond_destroy(&e.more);
            pthread_mutex_destroy(&e.mu);
            filled = filled && !e.failed;
        } else filled = filled && !e.failed && deflate_feed(&e, NULL, 0, 1) == 0;
        int closed = zipCloseFileInZipRaw64(zf, e.size, e.crc) == ZIP_OK;
        if (filled && closed) rc = 0;
        else tl_error_set(err, "%s: cannot write %s of the workbook (disk full?)", path, r->name);
    }
    free(e.out);
    free(e.level_buf);
    free(old);
    return rc;
}

/* The current skeleton entry into zf as it is (its compressed bytes). */
static int copy_raw(zipFile zf, unzFile uf, const char *name, const unz_file_info64 *ui)
{
    int method = 0, level = 0;
    if (unzOpenCurrentFile2(uf, &method, &level, 1) != UNZ_OK) return -1;
    zip_fileinfo zi;
    file_info(ui, &zi);
    int zip64 = ui->uncompressed_size >= ZIP32_LIMIT || ui->compressed_size >= ZIP32_LIMIT;
    int rc = zipOpenNewFileInZip2_64(zf, name, &zi, NULL, 0, NULL, 0, NULL, method, level, 1, zip64) == ZIP_OK ? 0 : -1;
    char *buf = tl_xmalloc(COPY_BUF);
    int k;
    while (rc == 0 && (k = unzReadCurrentFile(uf, buf, COPY_BUF)) != 0) {
        if (k < 0 || zipWriteInFileInZip(zf, buf, (unsigned)k) != ZIP_OK) rc = -1;
    }
    free(buf);
    unzCloseCurrentFile(uf);
    if (zipCloseFileInZipRaw64(zf, ui->uncompressed_size, ui->crc) != ZIP_OK) rc = -1;
    return rc;
}

static int is_replaced(const tl_xlsx_replace *repl, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(repl[i].name, name)) return 1;
    return 0;
}

int tl_xlsx_repack(const char *skeleton, const char *path, const tl_xlsx_replace *repl, size_t n, void *ctx,
                   tl_error *err)
{
    unzFile uf = unzOpen64(skeleton);
    if (!uf) {
        tl_error_set(err, "%s: cannot read the workbook skeleton", skeleton);
        return -1;
    }
    zipFile zf = zipOpen64(path, APPEND_STATUS_CREATE);
    if (!zf) {
        unzClose(uf);
        tl_error_set(err, "%s: cannot create", path);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) rc = write_replaced(zf, uf, &repl[i], i, ctx, err, path);
    if (rc == 0 && unzGoToFirstFile(uf) != UNZ_OK) {
        tl_error_set(err, "%s: cannot read the workbook skeleton", skeleton);
        rc = -1;
    }
    while (rc == 0) {
        unz_file_info64 ui;
        char name[NAME_MAX_LEN];
        if (unzGetCurrentFileInfo64(uf, &ui, name, sizeof name, NULL, 0, NULL, 0) != UNZ_OK) {
            tl_error_set(err, "%s: cannot read the workbook skeleton", skeleton);
            rc = -1;
            break;
        }
        if (!is_replaced(repl, n, name) && copy_raw(zf, uf, name, &ui) != 0) {
            tl_error_set(err, "%s: cannot write %s of the workbook (disk full?)", path, name);
            rc = -1;
            break;
        }
        int next = unzGoToNextFile(uf);
        if (next == UNZ_END_OF_LIST_OF_FILE) break;
        if (next != UNZ_OK) {
            tl_error_set(err, "%s: cannot read the workbook skeleton", skeleton);
            rc = -1;
        }
    }
    if (zipClose(zf, NULL) != ZIP_OK && rc == 0) {
        tl_error_set(err, "%s: cannot write the workbook (disk full?)", path);
        rc = -1;
    }
    unzClose(uf);
    return rc;
}
