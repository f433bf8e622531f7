/* arch.c — GPU arch files (perf-model spec §5.1–§5.3). The file is checked
 * by a strict JSON validator (RFC 8259; json.loads' NaN/Infinity are
 * refused) before tl_pv_parse reads it, so a bad file gives one line with
 * the byte offset instead of undefined behaviour. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/datadir.h"
#include "../util/vec.h"
#include "arch.h"
#include "../json/pyval.h"

enum { ARCH_MAX_BYTES = 1 << 20, JSON_MAX_DEPTH = 64 };

/* ------------------------------------------------------------ validator */

typedef struct jv {
    const char *s, *p, *end;
    const char *what;   /* first error */
} jv;

static int jv_fail(jv *v, const char *what)
{
    if (!v->what) v->what = what;
    return -1;
}

static void jv_ws(jv *v)
{
    while (v->p < v->end && (*v->p == ' ' || *v->p == '\t' || *v->p == '\n' || *v->p == '\r')) v->p++;
}

static int jv_lit(jv *v, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(v->end - v->p) < n || memcmp(v->p, lit, n) != 0) return jv_fail(v, "invalid literal");
    v->p += n;
    return 0;
}

static int jv_string(jv *v)
{
    v->p++; /* opening quote */
    while (v->p < v->end) {
        unsigned char c = (unsigned char)*v->p;
        if (c == '"') {
            v->p++;
            return 0;
        }
        if (c < 0x20) return jv_fail(v, "control character in string");
        if (c == '\\') {
            v->p++;
            if (v->p >= v->end) break;
            c = (unsigned char)*v->p;
            if (c == 'u') {
                for (int k = 1; k <= 4; k++)
                    if (v->p + k >= v->end || !isxdigit((unsigned char)v->p[k]))
                        return jv_fail(v, "invalid \\u escape in string");
                v->p += 5;
                continue;
            }
            if (!strchr("\"\\/bfnrt", c)) return jv_fail(v, "invalid escape in string");
        }
        v->p++;
    }
    return jv_fail(v, "unterminated string");
}

static int jv_number(jv *v)
{
    const char *p = v->p, *e = v->end;
    if (p < e && *p == '-') p++;
    if (p < e && *p == '0') p++;
    else if (p < e && *p >= '1' && *p <= '9')
        while (p < e && isdigit((unsigned char)*p)) p++;
    else
        return jv_fail(v, "invalid value");
    if (p < e && *p == '.') {
        p++;
        if (!(p < e && isdigit((unsigned char)*p))) return jv_fail(v, "invalid number");
        while (p < e && isdigit((unsigned char)*p)) p++;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-')) p++;
        if (!(p < e && isdigit((unsigned char)*p))) return jv_fail(v, "invalid number");
        while (p < e && isdigit((unsigned char)*p)) p++;
    }
    v->p = p;
    return 0;
}

static int jv_value(jv *v, int depth)
{
    jv_ws(v);
    if (v->p >= v->end) return jv_fail(v, "expected a value");
    char c = *v->p;
    if (c == '"') return jv_string(v);
    if (c == 't') return jv_lit(v, "true");
    if (c == 'f') return jv_lit(v, "false");
    if (c == 'n') return jv_lit(v, "null");
    if (c != '{' && c != '[') return jv_number(v);
    if (depth >= JSON_MAX_DEPTH) return jv_fail(v, "nesting too deep");
    char close = c == '{' ? '}' : ']';
    v->p++;
    jv_ws(v);
    if (v->p < v->end && *v->p == close) {
        v->p++;
        return 0;
    }
    for (;;) {
        jv_ws(v);
        if (close == '}') {
            if (v->p >= v->end || *v->p != '"') return jv_fail(v, "expected a string key");
            if (jv_string(v)) return -1;
            jv_ws(v);
            if (v->p >= v->end || *v->p != ':') return jv_fail(v, "expected ':' after key");
            v->p++;
        }
        if (jv_value(v, depth + 1)) return -1;
        jv_ws(v);
        if (v->p < v->end && *v->p == ',') {
            v->p++;
            continue;
        }
        if (v->p < v->end && *v->p == close) {
            v->p++;
            return 0;
        }
        return jv_fail(v, close == '}' ? "expected ',' or '}' in object" : "expected ',' or ']' in array");
    }
}

/* 0 when text[0..len) is one JSON value; else -1 with *off and *what. */
static int json_validate(const char *text, size_t len, size_t *off, const char **what)
{
    jv v = {text, text, text + len, NULL};
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        *off = 0;
        *what = "unexpected UTF-8 byte order mark";
        return -1;
    }
    if (jv_value(&v, 0) == 0) {
        jv_ws(&v);
        if (v.p == v.end) return 0;
        jv_fail(&v, "extra data after the JSON value");
    }
    *off = (size_t)(v.p - text);
    *what = v.what;
    return -1;
}

/* -------------------------------------------------------------- loading */

void tl_arch_free(tl_arch *a)
{
    if (!a) return;
    free(a->path);
    free(a->name);
    free(a->kind);
    free(a->source);
    free(a->host_link);
    free(a->gpu_link);
    for (size_t i = 0; i < a->n_peaks; i++) free(a->peaks[i].key);
    free(a->peaks);
    memset(a, 0, sizeof *a);
}

/* The value of key in a DICT (last occurrence, as json.loads keeps). */
static const tl_pv *dict_get(const tl_pv *d, const char *key)
{
    const tl_pv *found = NULL;
    for (size_t i = 0; i + 1 < d->n; i += 2)
        if (d->items[i].kind == TL_PV_STR && strcmp(d->items[i].s, key) == 0) found = &d->items[i + 1];
    return found;
}

static int pv_number(const tl_pv *v, double *out)
{
    switch (v->kind) {
    case TL_PV_INT: *out = (double)v->i; return 1;
    case TL_PV_BIGINT: *out = strtod(v->s, NULL); return 1;
    case TL_PV_FLOAT: *out = v->f; return 1;
    default: return 0;
    }
}

static int positive(double x) { return isfinite(x) && x > 0; }

/* An optional string member: absent or null -> NULL. */
static int get_str(const tl_pv *root, const char *key, char **out, const char *name, tl_error *err)
{
    const tl_pv *v = dict_get(root, key);
    if (!v || v->kind == TL_PV_NULL) return 0;
    if (v->kind != TL_PV_STR) {
        tl_error_set(err, "%s: \"%s\" must be a string", name, key);
        return -1;
    }
    *out = tl_xstrdup(v->s);
    return 0;
}

static int get_num(const tl_pv *root, const char *key, int need_positive, int *has, double *out,
                   const char *name, tl_error *err)
{
    const tl_pv *v = dict_get(root, key);
    if (!v || v->kind == TL_PV_NULL) return 0;
    if (!pv_number(v, out) || (need_positive ? !positive(*out) : !isfinite(*out))) {
        tl_error_set(err, "%s: \"%s\" must be a %snumber", name, key, need_positive ? "positive " : "");
        return -1;
    }
    *has = 1;
    return 0;
}

static int load_pv(const tl_pv *root, const char *name, tl_arch *a, tl_error *err)
{
    if (root->kind != TL_PV_DICT) {
        tl_error_set(err, "%s: an arch file must hold a JSON object", name);
        return -1;
    }
    if (get_str(root, "name", &a->name, name, err) || get_str(root, "kind", &a->kind, name, err) ||
        get_str(root, "source", &a->source, name, err) ||
        get_num(root, "mem_bw_gbps", 1, &a->has_mem_bw, &a->mem_bw_gbps, name, err) ||
        get_num(root, "memory_gb", 0, &a->has_memory_gb, &a->memory_gb, name, err) ||
        get_str(root, "host_link", &a->host_link, name, err) ||
        get_num(root, "host_link_gbps", 1, &a->has_host_link_bw, &a->host_link_gbps, name, err) ||
        get_str(root, "gpu_link", &a->gpu_link, name, err) ||
        get_num(root, "gpu_link_gbps", 1, &a->has_gpu_link_bw, &a->gpu_link_gbps, name, err))
        return -1;
    const tl_pv *mt = dict_get(root, "max_achievable_tflops");
    if (!mt || mt->kind == TL_PV_NULL) return 0;
    if (mt->kind != TL_PV_DICT) {
        tl_error_set(err, "%s: \"max_achievable_tflops\" must be an object", name);
        return -1;
    }
    a->peaks = tl_xcalloc(mt->n / 2 + 1, sizeof *a->peaks);
    for (size_t i = 0; i + 1 < mt->n; i += 2) {
        const char *key = mt->items[i].s;
        double x;
        if (!pv_number(&mt->items[i + 1], &x) || !positive(x)) {
            tl_error_set(err, "%s: \"max_achievable_tflops\".\"%s\" must be a positive number", name, key);
            return -1;
        }
        size_t j = 0;
        while (j < a->n_peaks && strcmp(a->peaks[j].key, key) != 0) j++;
        if (j == a->n_peaks) a->peaks[a->n_peaks++].key = tl_xstrdup(key);
        a->peaks[j].tflops = x;
    }
    return 0;
}

int tl_arch_load_text(const char *name, const char *text, size_t len, tl_arch *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    if (memchr(text, 0, len)) {
        tl_error_set(err, "%s: byte %zu: NUL byte in an arch file", name, (size_t)((const char *)memchr(text, 0, len) - text));
        return -1;
    }
    size_t off;
    const char *what;
    if (json_validate(text, len, &off, &what)) {
        tl_error_set(err, "%s: byte %zu: invalid JSON: %s", name, off, what);
        return -1;
    }
    /* tl_pv_parse needs NUL-terminated text. */
    char *copy = tl_xmalloc(len + 1);
    memcpy(copy, text, len);
    copy[len] = 0;
    tl_pv_arena *arena = tl_pv_arena_new();
    int rc = load_pv(tl_pv_parse(arena, copy), name, out, err);
    tl_pv_arena_free(arena);
    free(copy);
    if (rc) {
        tl_arch_free(out);
        return -1;
    }
    out->path = tl_xstrdup(name);
    return 0;
}

int tl_arch_load_file(const char *path, tl_arch *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) {
        tl_error_set(err, "%s: cannot open arch file: %s", path, strerror(errno));
        return -1;
    }
    char *buf = tl_xmalloc(ARCH_MAX_BYTES + 1);
    size_t n = fread(buf, 1, ARCH_MAX_BYTES + 1, f);
    int rd_err = ferror(f);
    int saved = errno;
    fclose(f);
    int rc = -1;
    if (rd_err)
        tl_error_set(err, "%s: cannot read arch file: %s", path, strerror(saved));
    else if (n > ARCH_MAX_BYTES)
        tl_error_set(err, "%s: arch file larger than %d bytes", path, ARCH_MAX_BYTES);
    else
        rc = tl_arch_load_text(path, buf, n, out, err);
    free(buf);
    return rc;
}

double tl_arch_peak(const tl_arch *arch, const char *compute_spec)
{
    if (!arch || !compute_spec) return NAN;
    for (size_t i = 0; i < arch->n_peaks; i++)
        if (strcmp(arch->peaks[i].key, compute_spec) == 0) return arch->peaks[i].tflops;
    return NAN;
}

/* ------------------------------------------------------------ platforms */

/* Accepts candidate directory c: copies its canonical path (or c itself)
 * into buf. */
static int use_dir(const char *c, char *buf, size_t cap)
{
    if (!tl_is_dir(c)) return 0;
    char *real = realpath(c, NULL);
    snprintf(buf, cap, "%s", real ? real : c);
    free(real);
    return 1;
}

int tl_arch_dir(char *buf, size_t cap)
{
    char cand[4200];
    const char *env = getenv("TRACELENS_ARCH_DIR");
    if (env && *env && use_dir(env, buf, cap)) return 0;
    if (tl_installed_dir("arch", cand, sizeof cand) && use_dir(cand, buf, cap)) return 0;
#ifdef TL_SOURCE_ARCH_DIR
    if (use_dir(TL_SOURCE_ARCH_DIR, buf, cap)) return 0;
#endif
#ifdef TL_SOURCE_LUA_DIR
    snprintf(cand, sizeof cand, "%s/../arch", TL_SOURCE_LUA_DIR);
    if (use_dir(cand, buf, cap)) return 0;
#endif
#ifdef TL_INSTALL_LUA_DIR
    snprintf(cand, sizeof cand, "%s/../arch", TL_INSTALL_LUA_DIR);
    if (use_dir(cand, buf, cap)) return 0;
#endif
    if (cap) buf[0] = 0;
    return -1;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int tl_arch_find_platform(const char *name, const char *dir, char *path, size_t cap, tl_error *err)
{
    char dbuf[4096];
    if (!dir) {
        if (tl_arch_dir(dbuf, sizeof dbuf)) {
            tl_error_set(err, "GPU platform '%s': no arch directory found (set TRACELENS_ARCH_DIR)",
                         name ? name : "");
            return -1;
        }
        dir = dbuf;
    }
    DIR *d = opendir(dir);
    if (!d) {
        tl_error_set(err, "%s: cannot open arch directory: %s", dir, strerror(errno));
        return -1;
    }
    char **stems = NULL;
    size_t n = 0, cap_stems = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len <= 5 || strcmp(de->d_name + len - 5, ".json") != 0 || de->d_name[0] == '.') continue;
        if (n == cap_stems) {
            cap_stems = cap_stems ? 2 * cap_stems : 16;
            stems = tl_xrealloc(stems, cap_stems * sizeof *stems);
        }
        stems[n] = tl_xstrdup(de->d_name);
        stems[n++][len - 5] = 0;
    }
    closedir(d);
    if (n) qsort(stems, n, sizeof *stems, cmp_str);
    const char *hit = NULL;
    if (name && *name && !strchr(name, '/')) {
        for (size_t i = 0; i < n && !hit; i++)
            if (strcmp(stems[i], name) == 0) hit = stems[i];
        for (size_t i = 0; i < n && !hit; i++)
            if (strcasecmp(stems[i], name) == 0) hit = stems[i];
    }
    int rc = 0;
    if (hit) {
        if ((size_t)snprintf(path, cap, "%s/%s.json", dir, hit) >= cap) {
            tl_error_set(err, "%s: arch path too long", dir);
            rc = -1;
        }
    } else {
        char avail[512] = "";
        size_t used = 0;
        for (size_t i = 0; i < n && used < sizeof avail; i++)
            used += (size_t)snprintf(avail + used, sizeof avail - used, "%s%s", i ? ", " : "", stems[i]);
        tl_error_set(err, "unknown GPU platform '%s' (available in %s: %s)", name ? name : "", dir,
                     n ? avail : "none");
        rc = -1;
    }
    for (size_t i = 0; i < n; i++) free(stems[i]);
    free(stems);
    return rc;
}

int tl_arch_load_platform(const char *name, const char *dir, tl_arch *out, tl_error *err)
{
    char path[4096];
    memset(out, 0, sizeof *out);
    if (tl_arch_find_platform(name, dir, path, sizeof path, err)) return -1;
    return tl_arch_load_file(path, out, err);
}

/* ------------------------------------------------------------ detection */

static int alnum(char c) { return isalnum((unsigned char)c) != 0; }

/* A word of the device name (as deviceProperties spells it, which is
 * torch.cuda.get_device_name()) -> the arch file stem. A word matches only
 * whole: "A10" is not "A100" nor "A10G", "L4" is not "L40", "B200" is not
 * "GB200", "V100-PCIE" is not "V100S-PCIE". Names seen in traces:
 * "Tesla V100-SXM2-32GB", "Tesla V100-PCIE-16GB", "NVIDIA A10", "NVIDIA L4",
 * "NVIDIA L40S", "NVIDIA GB200", "AMD Instinct MI210", "AMD Instinct MI250X". */
static const struct {
    const char *word, *platform;
} detect_words[] = {
    {"MI300X", "MI300X"}, {"MI325X", "MI325X"}, {"MI355X", "MI355X"}, {"MI210", "MI210"},
    {"MI250X", "MI250X"}, {"H100", "H100"},     {"H200", "H200"},     {"B200", "B200"},
    {"GB200", "GB200"},   {"A100", "A100"},     {"A10", "A10"},       {"L4", "L4"},
    {"L40S", "L40S"},     {"V100-SXM2", "V100-SXM2"}, {"V100-PCIE", "V100-PCIe"},
};

const char *tl_arch_detect(const char *device_name)
{
    if (!device_name) return NULL;
    for (size_t k = 0; k < sizeof detect_words / sizeof *detect_words; k++) {
        const char *w = detect_words[k].word;
        size_t len = strlen(w);
        for (const char *p = device_name; *p; p++) {
            if (p != device_name && alnum(p[-1])) continue;
            if (strncasecmp(p, w, len) == 0 && !alnum(p[len])) return detect_words[k].platform;
        }
    }
    return NULL;
}
