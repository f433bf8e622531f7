/* fuzz_scan.c — libFuzzer target for the Kineto scanner and what is built on
 * it. Checks, for arbitrary bytes:
 *   1. tl_scan_buffer never crashes, leaks or trips ASan/UBSan;
 *   2. on success, the tree (with and without python functions), the GPU
 *      timeline (linked/all, with/without the micro-idle split), launcher
 *      resolution of every GPU event, fwd/bwd links and the args blob walk
 *      are memory-safe;
 *   3. chunked reading agrees with the in-memory scan: the same bytes written
 *      to a memfd and read by tl_scan_file with a read buffer of 1..64 bytes
 *      (from the first input byte) give the same return code, event count,
 *      error text (past the file name) and ts/dur/name of every event;
 *      abort() on any mismatch so libFuzzer records the input.
 * Gzip input (magic 1f 8b) still goes through tl_scan_file, to exercise the
 * decompressor, but is not compared (the buffer scanner reads it raw). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "json/kineto_scan.h"
#include "trace/timeline.h"
#include "trace/tree.h"

static int g_fd = -1;
static char g_path[64];

/* One memfd for the whole run, rewritten for every input. */
static const char *input_file(const uint8_t *data, size_t size)
{
    if (g_fd < 0) {
        g_fd = memfd_create("fuzz_scan", 0);
        if (g_fd < 0) abort();
        snprintf(g_path, sizeof g_path, "/proc/self/fd/%d", g_fd);
    }
    if (ftruncate(g_fd, 0) != 0) abort();
    size_t off = 0;
    while (off < size) {
        ssize_t n = pwrite(g_fd, data + off, size - off, (off_t)off);
        if (n <= 0) abort();
        off += (size_t)n;
    }
    return g_path;
}

static void mismatch(const char *what, size_t ev)
{
    fprintf(stderr, "fuzz_scan: buffer and chunked file scans disagree: %s (event %zu)\n", what, ev);
    abort();
}

/* The error text after "NAME:", which differs between the two scans. */
static const char *msg_tail(const tl_error *e)
{
    const char *c = strchr(e->msg, ':');
    return c ? c : e->msg;
}

static void compare_scans(const tl_event_store *a, int rca, const tl_error *ea, const tl_event_store *b,
                          int rcb, const tl_error *eb)
{
    if (rca != rcb) {
        fprintf(stderr, "buffer: %s\nfile:   %s\n", rca ? ea->msg : "ok", rcb ? eb->msg : "ok");
        mismatch("return code", 0);
    }
    if (rca != 0 && strcmp(msg_tail(ea), msg_tail(eb)) != 0) {
        fprintf(stderr, "buffer: %s\nfile:   %s\n", ea->msg, eb->msg);
        mismatch("error message", 0);
    }
    if (a->n != b->n) mismatch("event count", 0);
    for (size_t i = 0; i < a->n; i++) {
        if (a->ts[i] != b->ts[i]) mismatch("ts", i);
        if (a->dur[i] != b->dur[i]) mismatch("dur", i);
        if (a->flags[i] != b->flags[i]) mismatch("flags", i);
        uint32_t la = tl_strpool_len(&a->names, a->name[i]), lb = tl_strpool_len(&b->names, b->name[i]);
        if (la != lb || memcmp(tl_es_name(a, i), tl_es_name(b, i), la) != 0) mismatch("name", i);
    }
}

/* Walks every args blob entry (checks the varint encoding stays in bounds). */
static void walk_args(const tl_event_store *es)
{
    for (size_t i = 0; i < es->n; i++) {
        tl_arg_iter it;
        tl_arg a;
        tl_es_args_begin(es, i, &it);
        while (tl_es_args_next(&it, &a)) {
            if (a.key >= es->keys.n) abort();
            if (a.tag == TL_AV_RAW && (a.i < 0 || a.i >= (int64_t)es->values.n)) abort();
        }
        int64_t v;
        (void)tl_es_arg_int(es, i, TL_K_STREAM, &v);
    }
}

static void use_tree(const tl_event_store *es, int with_python)
{
    tl_tree t;
    tl_tree_opts o = {.with_python = with_python};
    tl_tree_build(&t, es, &o);
    uint32_t *gpu = malloc((es->n ? es->n : 1) * sizeof *gpu);
    size_t ng = 0;
    for (size_t g = 0; g < es->n; g++) {
        if (!tl_is_gpu_cat(es->cat[g])) continue;
        uint32_t l = tl_tree_launcher(&t, es, (uint32_t)g);
        if (l != TL_NOUID && l >= es->n) abort();
        gpu[ng++] = (uint32_t)g;
    }
    for (size_t u = 0; u < es->n; u++) {
        (void)tl_tree_fwd_of(&t, (uint32_t)u);
        (void)tl_tree_bwd_of(&t, (uint32_t)u);
    }
    (void)tl_busy_time(es, gpu, ng);
    tl_timeline tl;
    (void)tl_timeline_compute(es, &t, 0, -1, &tl);
    (void)tl_timeline_compute(es, &t, 1, 1000, &tl);
    free(gpu);
    tl_tree_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tl_event_store es;
    tl_error err;
    tl_es_init(&es);
    int rc = tl_scan_buffer("fuzz", (const char *)data, size, &es, &err);
    if (rc == 0) {
        walk_args(&es);
        use_tree(&es, 0);
        use_tree(&es, 1);
    }

    tl_event_store fes;
    tl_error ferr;
    tl_es_init(&fes);
    tl_scan_opts o = {.buffer_bytes = size ? (size_t)(data[0] % 64) + 1 : 1};
    int frc = tl_scan_file(input_file(data, size), &fes, &o, &ferr);
    int gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
    if (!gzip) compare_scans(&es, rc, &err, &fes, frc, &ferr);
    tl_es_free(&fes);
    tl_es_free(&es);
    return 0;
}
