#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <isa-l/igzip_lib.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/vec.h"

enum { CHUNK = 1 << 20, NCHUNK = 4, INBUF = 1 << 18, NSPARE = 16 };

typedef struct chunk {
    char *data;
    size_t len;
} chunk;

struct tl_source {
    char *path;
    int fd;
    int gzip;
    uint64_t size;

    /* producer side (reader thread) */
    struct inflate_state inf;
    uint8_t *in;
    int members;
    uint64_t max_bytes, produced; /* the cap on decompressed bytes (0 = none), and so far */

    /* ring: chunks of chunk_bytes, inflated by the thread, which starts at
     * the first read or take (so the chunk size can be set before) */
    size_t chunk_bytes, pad;  /* each buffer holds chunk_bytes + pad, the pad zero after the data */
    pthread_t thread;
    int thread_started, thread_failed;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    chunk ring[NCHUNK];
    unsigned head, tail;  /* tail - head chunks are full */
    int done;             /* producer finished (eof or error) */
    int failed;
    int stop;             /* consumer asks producer to stop */
    tl_error perr;
    /* buffers handed back (tl_source_give), for the slots whose buffer was
     * taken (tl_source_take) */
    char *spare[NSPARE];
    int n_spare;

    /* consumer side */
    size_t cur_off;       /* offset into ring[head % NCHUNK] */
};

static int read_full(int fd, uint8_t *buf, size_t cap, size_t *got)
{
    size_t n = 0;
    while (n < cap) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    *got = n;
    return 0;
}

static long produce_gzip(tl_source *s, char *out)
{
    struct inflate_state *st = &s->inf;
    st->next_out = (uint8_t *)out;
    st->avail_out = (uint32_t)s->chunk_bytes;
    while (st->avail_out > 0) {
        if (st->block_state == ISAL_BLOCK_FINISH) {
            /* end of one member: more input that starts a new member? */
            if (st->avail_in == 0) {
                size_t got;
                if (read_full(s->fd, s->in, INBUF, &got) < 0) goto rerr;
                st->next_in = s->in;
                st->avail_in = (uint32_t)got;
                if (got == 0) break; /* clean end of file */
            }
            if (st->avail_in >= 2 && st->next_in[0] == 0x1f && st->next_in[1] == 0x8b) {
                uint8_t *ni = st->next_in;
                uint32_t ai = st->avail_in;
                uint8_t *no = st->next_out;
                uint32_t ao = st->avail_out;
                isal_inflate_reset(st);
                st->crc_flag = ISAL_GZIP;
                st->next_in = ni;
                st->avail_in = ai;
                st->next_out = no;
                st->avail_out = ao;
                s->members++;
                continue;
            }
            /* trailing bytes that are all zero (padding) are tolerated */
            for (uint32_t i = 0; i < st->avail_in; i++)
                if (st->next_in[i] != 0) {
                    tl_error_set(&s->perr, "%s: byte %llu: unexpected data after the end of the gzip stream",
                                 s->path, (unsigned long long)st->total_out);
                    return -1;
                }
            st->avail_in = 0;
            continue;
        }
        int in_eof = 0;
        if (st->avail_in == 0) {
            size_t got;
            if (read_full(s->fd, s->in, INBUF, &got) < 0) goto rerr;
            st->next_in = s->in;
            st->avail_in = (uint32_t)got;
            in_eof = got == 0;
        }
        /* at the end of the input the decoder may still hold decoded bytes
         * that did not fit the last output (it reads input ahead): the
         * stream is truncated only when it gives none */
        uint32_t room = st->avail_out;
        int rc = isal_inflate(st);
        if (rc >= 0 && in_eof && st->avail_out == room && st->block_state != ISAL_BLOCK_FINISH) {
            tl_error_set(&s->perr,
                         "%s: truncated gzip stream: the compressed data ends before the end of member %d "
                         "(after %llu decompressed bytes)",
                         s->path, s->members, (unsigned long long)(st->total_out));
            return -1;
        }
        if (rc < 0) {
            const char *why = rc == ISAL_INCORRECT_CHECKSUM ? "checksum mismatch"
                              : rc == ISAL_INVALID_WRAPPER  ? "invalid gzip header"
                              : rc == ISAL_UNSUPPORTED_METHOD ? "unsupported compression method"
                                                              : "corrupt deflate data";
            tl_error_set(&s->perr, "%s: corrupt gzip stream (%s) after %llu decompressed bytes", s->path,
                         why, (unsigned long long)st->total_out);
            return -1;
        }
    }
    long n = (long)(s->chunk_bytes - st->avail_out);
    s->produced += (uint64_t)n;
    if (s->max_bytes && s->produced > s->max_bytes) {
        tl_error_set(&s->perr, "%s: decompressed data past %llu bytes, " TL_SOURCE_TOO_LARGE, s->path,
                     (unsigned long long)s->max_bytes);
        return -1;
    }
    return n;
rerr:
    tl_error_set(&s->perr, "%s: read error: %s", s->path, strerror(errno));
    return -1;
}

static void *producer(void *arg)
{
    tl_source *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        while (s->tail - s->head == NCHUNK && !s->stop) pthread_cond_wait(&s->cv, &s->mu);
        int stop = s->stop;
        chunk *c = &s->ring[s->tail % NCHUNK];
        if (!stop && !c->data && s->n_spare) c->data = s->spare[--s->n_spare];
        pthread_mutex_unlock(&s->mu);
        if (stop) break;
        if (!c->data) c->data = tl_xmalloc(s->chunk_bytes + s->pad); /* its buffer was taken, none handed back yet */

        long n = produce_gzip(s, c->data); /* the thread runs for gzip input only */
        memset(c->data + (n > 0 ? (size_t)n : s->chunk_bytes - s->inf.avail_out), 0, s->pad);

        pthread_mutex_lock(&s->mu);
        if (n < 0) {
            /* the bytes decoded before the error are data like the others:
             * the reader sees them, then the error (so the first error in
             * byte order is reported, whatever the chunk size) */
            size_t part = s->chunk_bytes - s->inf.avail_out;
            if (part > 0) {
                c->len = part;
                s->tail++;
            }
            s->failed = 1;
            s->done = 1;
        } else if (n == 0) {
            s->done = 1;
        } else {
            c->len = (size_t)n;
            s->tail++;
        }
        int fin = s->done;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        if (fin) break;
    }
    return NULL;
}

tl_source *tl_source_open(const char *path, tl_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        tl_error_set(err, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat stt;
    if (fstat(fd, &stt) < 0 || S_ISDIR(stt.st_mode)) {
        tl_error_set(err, "%s: is a directory, expected a trace file (.json or .json.gz)", path);
        close(fd);
        return NULL;
    }
    if (!S_ISREG(stt.st_mode) && !S_ISFIFO(stt.st_mode) && !S_ISCHR(stt.st_mode)) {
        tl_error_set(err, "%s: not a regular file", path);
        close(fd);
        return NULL;
    }
    tl_source *s = tl_xcalloc(1, sizeof *s);
    s->path = tl_xstrdup(path);
    s->fd = fd;
    s->size = (uint64_t)stt.st_size;
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);

    /* sniff the magic bytes without consuming them */
    uint8_t magic[2];
    ssize_t r = pread(fd, magic, 2, 0);
    s->gzip = (r == 2 && magic[0] == 0x1f && magic[1] == 0x8b);
    if (s->gzip) {
        s->in = tl_xmalloc(INBUF);
        isal_inflate_init(&s->inf);
        s->inf.crc_flag = ISAL_GZIP;
        s->members = 1;
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->chunk_bytes = CHUNK;
    return s; /* plain files are read straight into the caller's buffer */
}

void tl_source_set_chunk(tl_source *s, size_t bytes, size_t pad)
{
    if (!s->gzip || s->thread_started || bytes == 0 || bytes > UINT32_MAX || pad > 4096) return;
    s->chunk_bytes = bytes;
    s->pad = pad;
}

void tl_source_set_max_bytes(tl_source *s, uint64_t max)
{
    if (s->gzip && !s->thread_started) s->max_bytes = max;
}

/* gzip: starts the thread that inflates ahead, once; -1 with err filled
 * when it cannot start. */
static int start_producer(tl_source *s, tl_error *err)
{
    if (s->thread_started) return 0;
    if (!s->thread_failed) {
        for (int i = 0; i < NCHUNK; i++) s->ring[i].data = tl_xmalloc(s->chunk_bytes + s->pad);
        if (pthread_create(&s->thread, NULL, producer, s) == 0) {
            s->thread_started = 1;
            return 0;
        }
        s->thread_failed = 1;
    }
    tl_error_set(err, "%s: cannot start the thread that decompresses the gzip stream", s->path);
    return -1;
}

/* With mu held: waits for a full chunk; 1 when there is one, 0 at the end
 * of the data, -1 after the producer's error (err filled). */
static int wait_chunk(tl_source *s, tl_error *err)
{
    while (s->tail == s->head && !s->done) pthread_cond_wait(&s->cv, &s->mu);
    if (s->tail != s->head) return 1;
    if (!s->failed) return 0;
    *err = s->perr;
    return -1;
}

long tl_source_take(tl_source *s, char **buf, tl_error *err)
{
    *buf = NULL;
    if (!s->gzip || s->cur_off != 0) {
        tl_error_set(err, "%s: internal error: whole chunks are taken from the start of a gzip stream only", s->path);
        return -1;
    }
    if (start_producer(s, err) != 0) return -1;
    pthread_mutex_lock(&s->mu);
    int got = wait_chunk(s, err);
    long n = 0;
    if (got > 0) {
        chunk *c = &s->ring[s->head % NCHUNK];
        *buf = c->data;
        n = (long)c->len;
        c->data = NULL; /* the producer finds another buffer for this slot */
        s->head++;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return got < 0 ? -1 : n;
}

void tl_source_give(tl_source *s, char *buf)
{
    if (!buf) return;
    pthread_mutex_lock(&s->mu);
    if (s->n_spare < NSPARE) {
        s->spare[s->n_spare++] = buf;
        buf = NULL;
    }
    pthread_mutex_unlock(&s->mu);
    free(buf);
}

long tl_source_read(tl_source *s, char *buf, size_t cap, tl_error *err)
{
    size_t n = 0;
    if (!s->gzip) {
        if (read_full(s->fd, (uint8_t *)buf, cap, &n) < 0) {
            tl_error_set(err, "%s: read error: %s", s->path, strerror(errno));
            return -1;
        }
        return (long)n;
    }
    if (start_producer(s, err) != 0) return -1;
    while (n < cap) {
        pthread_mutex_lock(&s->mu);
        int got = wait_chunk(s, err);
        if (got <= 0) {
            pthread_mutex_unlock(&s->mu);
            if (got < 0 && n == 0) return -1;
            break; /* the bytes copied first; the error (it stays) at the next call */
        }
        chunk *c = &s->ring[s->head % NCHUNK];
        pthread_mutex_unlock(&s->mu);

        size_t take = c->len - s->cur_off;
        if (take > cap - n) take = cap - n;
        memcpy(buf + n, c->data + s->cur_off, take);
        n += take;
        s->cur_off += take;
        if (s->cur_off == c->len) {
            s->cur_off = 0;
            pthread_mutex_lock(&s->mu);
            s->head++;
            pthread_cond_broadcast(&s->cv);
            pthread_mutex_unlock(&s->mu);
        }
    }
    return (long)n;
}

int tl_source_seek(tl_source *s, uint64_t off, tl_error *err)
{
    if (s->gzip || lseek(s->fd, (off_t)off, SEEK_SET) < 0) {
        tl_error_set(err, "%s: cannot seek to byte %llu", s->path, (unsigned long long)off);
        return -1;
    }
    return 0;
}

long tl_source_pread(tl_source *s, char *buf, size_t cap, uint64_t off)
{
    if (s->gzip) return -1;
    ssize_t n = pread(s->fd, buf, cap, (off_t)off);
    return (long)n;
}

int tl_source_is_gzip(const tl_source *s) { return s->gzip; }
uint64_t tl_source_file_size(const tl_source *s) { return s->size; }
void tl_source_close(tl_source *s)
{
    if (!s) return;
    if (s->thread_started) {
        pthread_mutex_lock(&s->mu);
        s->stop = 1;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->thread, NULL);
    }
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    for (int i = 0; i < NCHUNK; i++) free(s->ring[i].data);
    for (int i = 0; i < s->n_spare; i++) free(s->spare[i]);
    free(s->in);
    close(s->fd);
    free(s->path);
    free(s);
}
