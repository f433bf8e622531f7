/* capture_classify.c — the capture index of a capture folder (inference
 * spec §1.4): DIR/execution_details.json read (and trusted) when present,
 * else each capture trace classified (batch size, FULL/PIECEWISE) and the
 * file written as the reference writes it (json.dump, indent 2). See
 * capture.h. */
#include "capture.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../io/outfile.h"
#include "../json/json_text.h"
#include "../json/kineto_scan.h"
#include "../util/hashmap.h"
#include "../util/sbuf.h"
#include "../util/vec.h"

enum { MAX_DEPTH = 64 };

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* ------------------------------------------------ a small JSON reader */

/* Validates one JSON value at p (after whitespace); returns the position
 * after it or NULL. Depth-limited (the file is small and ours to trust
 * only once it parses). */
static const char *json_check(const char *p, const char *end, int depth)
{
    if (depth > MAX_DEPTH || p >= end) return NULL;
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        int obj = *p == '{';
        p = tl_json_ws(p + 1);
        if (p < end && *p == close) return p + 1;
        for (;;) {
            if (obj) {
                if (p >= end || *p != '"') return NULL;
                p = json_check(p, end, depth + 1);
                if (!p) return NULL;
                p = tl_json_ws(p);
                if (p >= end || *p != ':') return NULL;
                p = tl_json_ws(p + 1);
            }
            p = json_check(p, end, depth + 1);
            if (!p) return NULL;
            p = tl_json_ws(p);
            if (p < end && *p == ',') {
                p = tl_json_ws(p + 1);
                continue;
            }
            return p < end && *p == close ? p + 1 : NULL;
        }
    }
    if (*p == '"') {
        for (p++; p < end && *p != '"'; p++) {
            if ((unsigned char)*p < 0x20) return NULL;
            if (*p == '\\') {
                p++;
                if (p >= end) return NULL;
                if (*p == 'u') {
                    for (int k = 1; k <= 4; k++)
                        if (p + k >= end || !strchr("0123456789abcdefABCDEF", p[k]) || !p[k]) return NULL;
                    p += 4;
                } else if (!strchr("\"\\/bfnrt", *p) || !*p) {
                    return NULL;
                }
            }
        }
        return p < end ? p + 1 : NULL;
    }
    static const char *const words[] = {"true", "false", "null"};
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(words[i]);
        if ((size_t)(end - p) >= n && !strncmp(p, words[i], n)) return p + n;
    }
    const char *s = p;
    if (*p == '-') p++;
    if (p >= end || !is_digit(*p)) return NULL;
    if (*p == '0') p++;
    else
        while (p < end && is_digit(*p)) p++;
    if (p < end && *p == '.') {
        p++;
        if (p >= end || !is_digit(*p)) return NULL;
        while (p < end && is_digit(*p)) p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || !is_digit(*p)) return NULL;
        while (p < end && is_digit(*p)) p++;
    }
    return p > s ? p : NULL;
}

/* A decoded JSON string at p (the opening quote); malloc'd. */
static char *json_str(const char *p, const char **after)
{
    size_t span = tl_json_string_span(p + 1);
    char *s = tl_xmalloc(span + 4);
    size_t n = tl_json_decode_string(p + 1, s, after);
    s[n] = 0;
    return s;
}

/* A JSON integer (Python int) at p that fits a long; 0 otherwise. */
static int json_int(const char *p, long *out)
{
    const char *q = p;
    int neg = *q == '-';
    if (neg) q++;
    if (!is_digit(*q)) return 0;
    long v = 0;
    for (; is_digit(*q); q++) {
        if (v > (LONG_MAX - 9) / 10) return 0;
        v = v * 10 + (*q - '0');
    }
    if (*q == '.' || *q == 'e' || *q == 'E') return 0;
    *out = neg ? -v : v;
    return 1;
}

static void index_push(tl_capture_index *ix, const char *file, long bs, const char *mode, size_t *cap)
{
    TL_GROW(ix->v, *cap, ix->n + 1);
    ix->v[ix->n].file = tl_xstrdup(file);
    ix->v[ix->n].batch_size = bs;
    ix->v[ix->n].mode = mode ? tl_xstrdup(mode) : NULL;
    ix->n++;
}

/* execution_details.json: a list of {"file", "batch_size", "mode"}. An
 * entry without a string "file" is an error (the reference fails on it);
 * a batch size that is not an integer becomes -1 and a mode that is not a
 * string NULL (the merge skips such entries, as the reference does). */
static int read_details(const char *path, tl_capture_index *ix, tl_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        tl_error_set(err, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    tl_sbuf b;
    tl_sb_init(&b);
    char chunk[65536];
    size_t got;
    int toobig = 0;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        tl_sb_putn(&b, chunk, got);
        if (b.len > (64u << 20)) {
            toobig = 1;
            break;
        }
    }
    int rerr = ferror(f);
    fclose(f);
    if (rerr || toobig) {
        tl_error_set(err, "%s: %s", path, toobig ? "corrupt execution_details.json (larger than 64 MB)" : "read error");
        tl_sb_free(&b);
        return -1;
    }
    tl_sb_putc(&b, 0);
    const char *text = b.s, *end = b.s + b.len - 1;
    if (strlen(text) != b.len - 1) {
        tl_error_set(err, "%s: corrupt execution_details.json (a NUL byte)", path);
        tl_sb_free(&b);
        return -1;
    }
    const char *p = tl_json_ws(text);
    const char *after = json_check(p, end, 0);
    if (!after || *tl_json_ws(after)) {
        tl_error_set(err, "%s: corrupt execution_details.json (not valid JSON)", path);
        tl_sb_free(&b);
        return -1;
    }
    if (*p != '[') {
        tl_error_set(err, "%s: corrupt execution_details.json (expected a list of {file, batch_size, mode})", path);
        tl_sb_free(&b);
        return -1;
    }
    size_t cap = 0;
    p = tl_json_ws(p + 1);
    size_t k = 0;
    while (*p != ']') {
        if (*p != '{') {
            tl_error_set(err, "%s: corrupt execution_details.json (entry %zu is not an object)", path, k);
            goto fail;
        }
        char *file = NULL, *mode = NULL;
        long bs = -1;
        int has_file = 0;
        p = tl_json_ws(p + 1);
        while (*p != '}') {
            const char *q;
            char *key = json_str(p, &q);
            p = tl_json_ws(tl_json_ws(q) + 1);
            if (!strcmp(key, "file")) {
                free(file);
                file = NULL;
                has_file = *p == '"';
                if (has_file) file = json_str(p, &q);
            } else if (!strcmp(key, "batch_size")) {
                long v;
                bs = json_int(p, &v) && v >= 0 ? v : -1;
            } else if (!strcmp(key, "mode")) {
                free(mode);
                mode = *p == '"' ? json_str(p, &q) : NULL;
            }
            free(key);
            p = tl_json_ws(tl_json_skip(p));
            if (*p == ',') p = tl_json_ws(p + 1);
        }
        if (!has_file || !file || !*file || strchr(file, '/') || !strcmp(file, ".") || !strcmp(file, "..")) {
            tl_error_set(err, "%s: corrupt execution_details.json (entry %zu has no \"file\" name of a file in the folder)",
                         path, k);
            free(file);
            free(mode);
            goto fail;
        }
        index_push(ix, file, bs, mode, &cap);
        free(file);
        free(mode);
        k++;
        p = tl_json_ws(p + 1);
        if (*p == ',') p = tl_json_ws(p + 1);
    }
    tl_sb_free(&b);
    return 0;
fail:
    tl_sb_free(&b);
    tl_capture_index_free(ix);
    return -1;
}

/* ------------------------------------------------------ classification */

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && !strcmp(s + n - m, suf);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* re.match(r"vllm/v1/worker/gpu_model_runner\.py\(\d+\): _dummy_run", s) */
static int is_dummy_run(const char *s)
{
    static const char pre[] = "vllm/v1/worker/gpu_model_runner.py(";
    if (strncmp(s, pre, sizeof pre - 1)) return 0;
    s += sizeof pre - 1;
    if (!is_digit(*s)) return 0;
    while (is_digit(*s)) s++;
    return !strncmp(s, "): _dummy_run", 13);
}

/* re.match(r"capture_(\d+)_(.*)", s): batch (saturated) and mode (up to a newline). */
static int capture_annotation(const char *s, long *bs, char **mode)
{
    if (strncmp(s, "capture_", 8)) return 0;
    s += 8;
    if (!is_digit(*s)) return 0;
    long v = 0;
    for (; is_digit(*s); s++) v = v > (LONG_MAX - 9) / 10 ? LONG_MAX : v * 10 + (*s - '0');
    if (*s != '_') return 0;
    s++;
    if (mode) {
        size_t n = strcspn(s, "\n");
        *mode = tl_xmalloc(n + 1);
        memcpy(*mode, s, n);
        (*mode)[n] = 0;
    }
    if (bs) *bs = v;
    return 1;
}

/* The most common first dimension of the cpu_ops' Input Dims entries whose
 * first element is an integer (ties: first seen); -1 when there is none. */
static long common_first_dim(const tl_event_store *es)
{
    tl_map ix;
    tl_map_init(&ix, 256);
    TL_VEC(long) val = {0};
    TL_VEC(size_t) cnt = {0};
    for (size_t e = 0; e < es->n; e++) {
        if (es->cat[e] != TL_CAT_CPU_OP) continue;
        int isint;
        uint32_t vid = tl_es_arg_raw(es, e, TL_K_INPUT_DIMS, &isint);
        if (vid == UINT32_MAX) continue;
        const char *p = tl_json_ws(tl_strpool_get(&es->values, vid));
        if (*p != '[') continue;
        p = tl_json_ws(p + 1);
        while (*p && *p != ']') {
            if (*p == '[') {
                const char *q = tl_json_ws(p + 1);
                long v;
                if (json_int(q, &v)) {
                    uint32_t k = tl_map_get(&ix, (uint64_t)v, 0);
                    if (k == UINT32_MAX) {
                        k = (uint32_t)val.n;
                        tl_map_put(&ix, (uint64_t)v, 0, k);
                        TL_PUSH(val, v);
                        TL_PUSH(cnt, 0);
                    }
                    cnt.v[k]++;
                }
            }
            p = tl_json_ws(tl_json_skip(p));
            if (*p == ',') p = tl_json_ws(p + 1);
        }
    }
    long best = -1;
    size_t bc = 0;
    for (size_t k = 0; k < val.n; k++)
        if (cnt.v[k] > bc) {
            bc = cnt.v[k];
            best = val.v[k];
        }
    free(val.v);
    free(cnt.v);
    tl_map_free(&ix);
    return best;
}

static int classify_file(const char *dir, const char *file, tl_capture_index *ix, size_t *cap, tl_error *err)
{
    size_t plen = strlen(dir) + strlen(file) + 2;
    char *path = tl_xmalloc(plen);
    snprintf(path, plen, "%s/%s", dir, file);
    tl_event_store es;
    tl_es_init(&es);
    tl_scan_opts so = {0};
    so.max_text_bytes = ix->max_text_bytes;
    int rc = tl_scan_file(path, &es, &so, err);
    free(path);
    if (rc != 0) {
        tl_es_free(&es);
        return -1;
    }
    size_t n_dummy = 0, n_ann = 0, n_begin = 0;
    long first_bs = -1;
    char *first_mode = NULL;
    for (size_t e = 0; e < es.n; e++) {
        const char *nm = tl_es_name(&es, e);
        if (is_dummy_run(nm)) n_dummy++;
        if (es.cat[e] == TL_CAT_USER_ANNOTATION && capture_annotation(nm, NULL, NULL)) {
            if (!n_ann) capture_annotation(nm, &first_bs, &first_mode);
            n_ann++;
        }
        if (es.cat[e] == TL_CAT_CUDA_RUNTIME && strstr(nm, "StreamBeginCapture")) n_begin++;
    }
    if (n_ann && n_ann == n_dummy) {
        index_push(ix, file, first_bs, first_mode, cap);
    } else {
        index_push(ix, file, common_first_dim(&es), n_begin <= 1 ? "FULL" : "PIECEWISE", cap);
    }
    free(first_mode);
    tl_es_free(&es);
    return 0;
}

/* Python's json.dumps of a str (ensure_ascii): \uXXXX for what is not
 * printable ASCII; bytes that are not UTF-8 as lone surrogates, as
 * os.listdir's surrogateescape names come out. */
static void put_pystr_json(tl_sbuf *b, const char *s)
{
    tl_sb_putc(b, '"');
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p;
        uint32_t cp;
        int len = 1;
        if (c < 0x80) cp = c;
        else if ((c & 0xE0) == 0xC0 && (p[1] & 0xC0) == 0x80 && c >= 0xC2) cp = ((c & 0x1F) << 6) | (p[1] & 0x3F), len = 2;
        else if ((c & 0xF0) == 0xE0 && (p[1] & 0xC0) == 0x80 && (p[2] & 0xC0) == 0x80) {
            cp = ((c & 0x0F) << 12) | ((p[1] & 0x3F) << 6) | (p[2] & 0x3F), len = 3;
            if (cp < 0x800 || (cp >= 0xD800 && cp < 0xE000)) cp = 0xDC00 | c, len = 1;
        } else if ((c & 0xF8) == 0xF0 && (p[1] & 0xC0) == 0x80 && (p[2] & 0xC0) == 0x80 && (p[3] & 0xC0) == 0x80) {
            cp = ((c & 0x07) << 18) | ((p[1] & 0x3F) << 12) | ((p[2] & 0x3F) << 6) | (p[3] & 0x3F), len = 4;
            if (cp < 0x10000 || cp > 0x10FFFF) cp = 0xDC00 | c, len = 1;
        } else cp = 0xDC00 | c;
        p += len;
        switch (cp) {
        case '"': tl_sb_puts(b, "\\\""); continue;
        case '\\': tl_sb_puts(b, "\\\\"); continue;
        case '\n': tl_sb_puts(b, "\\n"); continue;
        case '\r': tl_sb_puts(b, "\\r"); continue;
        case '\t': tl_sb_puts(b, "\\t"); continue;
        case '\b': tl_sb_puts(b, "\\b"); continue;
        case '\f': tl_sb_puts(b, "\\f"); continue;
        default: break;
        }
        if (cp >= 0x20 && cp < 0x7F) tl_sb_putc(b, (char)cp);
        else if (cp < 0x10000) tl_sb_printf(b, "\\u%04x", cp);
        else {
            uint32_t v = cp - 0x10000;
            tl_sb_printf(b, "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
        }
    }
    tl_sb_putc(b, '"');
}

/* The text json.dump(list, f, indent=2) writes. */
static char *details_text(const tl_capture_index *ix)
{
    tl_sbuf b;
    tl_sb_init(&b);
    if (!ix->n) {
        tl_sb_puts(&b, "[]");
        return tl_sb_take(&b);
    }
    tl_sb_puts(&b, "[\n");
    for (size_t i = 0; i < ix->n; i++) {
        tl_sb_puts(&b, "  {\n    \"file\": ");
        put_pystr_json(&b, ix->v[i].file);
        tl_sb_puts(&b, ",\n    \"batch_size\": ");
        if (ix->v[i].batch_size < 0) tl_sb_puts(&b, "null");
        else tl_sb_printf(&b, "%ld", ix->v[i].batch_size);
        tl_sb_puts(&b, ",\n    \"mode\": ");
        put_pystr_json(&b, ix->v[i].mode ? ix->v[i].mode : "");
        tl_sb_puts(&b, i + 1 < ix->n ? "\n  },\n" : "\n  }\n");
    }
    tl_sb_puts(&b, "]");
    return tl_sb_take(&b);
}

static int write_details(const char *path, const tl_capture_index *ix, tl_error *err)
{
    tl_outfile o;
    if (tl_outfile_open(&o, path, err) != 0) return -1;
    char *text = details_text(ix);
    fputs(text, o.f);
    free(text);
    return tl_outfile_commit(&o, err);
}

int tl_capture_index_load(const char *dir, int write, uint64_t max_text_bytes, tl_capture_index *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    out->max_text_bytes = max_text_bytes;
    struct stat st;
    if (stat(dir, &st) != 0) {
        tl_error_set(err, "%s: capture folder: %s", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        tl_error_set(err, "%s: capture folder: not a directory", dir);
        return -1;
    }
    size_t plen = strlen(dir) + 32;
    char *details = tl_xmalloc(plen);
    snprintf(details, plen, "%s/execution_details.json", dir);
    if (stat(details, &st) == 0) {
        int rc = read_details(details, out, err);
        free(details);
        return rc;
    }
    DIR *d = opendir(dir);
    if (!d) {
        tl_error_set(err, "%s: capture folder: %s", dir, strerror(errno));
        free(details);
        return -1;
    }
    TL_VEC(char *) files = {0};
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!ends_with(de->d_name, ".json") && !ends_with(de->d_name, ".json.gz")) continue;
        size_t fl = strlen(dir) + strlen(de->d_name) + 2;
        char *fp = tl_xmalloc(fl);
        snprintf(fp, fl, "%s/%s", dir, de->d_name);
        int reg = stat(fp, &st) == 0 && S_ISREG(st.st_mode);
        free(fp);
        if (reg) TL_PUSH(files, tl_xstrdup(de->d_name));
    }
    closedir(d);
    int rc = 0;
    if (!files.n) {
        tl_error_set(err, "%s: capture folder holds no capture traces (*.json, *.json.gz) and no execution_details.json",
                     dir);
        rc = -1;
    }
    if (files.n) qsort(files.v, files.n, sizeof *files.v, cmp_str);
    size_t cap = 0;
    for (size_t i = 0; i < files.n && rc == 0; i++) rc = classify_file(dir, files.v[i], out, &cap, err);
    for (size_t i = 0; i < files.n; i++) free(files.v[i]);
    free(files.v);
    if (rc != 0) {
        tl_capture_index_free(out);
        free(details);
        return -1;
    }
    out->classified = 1;
    if (write) {
        tl_error werr = {{0}};
        if (write_details(details, out, &werr) != 0) {
            /* the classification stands; the folder could not take the file */
            size_t nl = strlen(werr.msg) + 64;
            out->note = tl_xmalloc(nl);
            snprintf(out->note, nl, "execution_details.json not written: %s", werr.msg);
        } else {
            out->written = 1;
        }
    }
    free(details);
    return 0;
}

void tl_capture_index_free(tl_capture_index *ix)
{
    for (size_t i = 0; i < ix->n; i++) {
        free(ix->v[i].file);
        free(ix->v[i].mode);
    }
    free(ix->v);
    free(ix->note);
    memset(ix, 0, sizeof *ix);
}
