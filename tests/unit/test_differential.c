/* test_differential.c — the Kineto scanner against an independent JSON parser
 * (jansson). Every document is loaded twice, with tl_scan_file and with
 * jansson (gzip decompressed here with zlib), and for every element of
 * traceEvents, in order, the test checks:
 *   - ph; cat (a missing or non-string cat is TL_CAT_NONE with the empty
 *     string, a string is classified as the core does); name (a non-string
 *     name keeps its JSON text);
 *   - pid/tid: int, string, absent/null, or any other value as text (int 7,
 *     "7" and 7.0 are different identities), and one idval never stands for
 *     two different values;
 *   - ts/dur: integers exactly x1000 ns, reals within 1 ns plus half an ulp
 *     of the double (scaled to ns); a negative dur is 0 with TL_F_NEGDUR;
 *   - the flow id of ph s/f (in `corr`);
 *   - every args key: TL_AV_INT equals jansson's integer, TL_AV_RAW text
 *     parses to a json_equal value; an integer args.correlation of a
 *     non-flow event lives in `corr`, not in the blob. INT64_MIN, the typed
 *     columns' TL_NONE, is never stored as an integer: it stays raw text.
 * It also checks the kept top-level keys (raw text) and that a top-level
 * `metadata` key is dropped.
 *
 * jansson cannot hold integers beyond int64, reals that overflow a double,
 * NaN or Infinity: before parsing, such number tokens (in the document and in
 * every raw text of ours) become the string "\u0001num:TOKEN", so they
 * compare by their text.
 *
 * Documents: every *.json.gz under argv[1] (../shared/data; also
 * decompressed to a plain file and scanned in 4 parallel parts), argv[2]
 * (examples/demo_trace.json, also in 4 parts) and generated edge cases (also
 * with a 5-byte read buffer and in 3 parallel parts).
 * Prints one line per document and "N passed, N failed"; exits 77 ("SKIP:
 * ../shared/data not found") when argv[1] is absent and all else passed.
 * `test_differential --files PATH...` compares just the given documents. */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "json/kineto_scan.h"

#define MARK "\001num:"
#define MARK_LEN 5
#define MAX_REPORTS 20
#define TOP SIZE_MAX /* diff.event while checking the top-level keys */

/* ------------------------------------------------------------ utilities */

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

static void buf_add(buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 4096;
        while (c < b->n + n + 1) c *= 2;
        b->p = realloc(b->p, c);
        if (!b->p) abort();
        b->cap = c;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The whole (decompressed when gzip) content of path; 0 on success. */
static int read_all(const char *path, buf *out)
{
    gzFile f = gzopen(path, "rb");
    if (!f) return -1;
    char chunk[1 << 16];
    int n;
    while ((n = gzread(f, chunk, sizeof chunk)) > 0) buf_add(out, chunk, (size_t)n);
    int bad = n < 0;
    gzclose(f);
    if (!out->p) buf_add(out, "", 0);
    return bad ? -1 : 0;
}

/* ------------------------------------- numbers jansson cannot represent */

static int is_num_char(char c)
{
    return (c >= '0' && c <= '9') || (c && strchr("+-.eENaInfity", c));
}

/* 1 when jansson parses the number token to a value with the same meaning. */
static int representable(const char *tok, size_t n)
{
    char small[64];
    char *s = n < sizeof small ? small : malloc(n + 1);
    memcpy(s, tok, n);
    s[n] = 0;
    int ok;
    if (strpbrk(s, "NI")) {
        ok = 0;
    } else if (!strpbrk(s, ".eE")) {
        errno = 0;
        (void)strtoll(s, NULL, 10);
        ok = errno != ERANGE;
    } else {
        ok = !isinf(strtod(s, NULL));
    }
    if (s != small) free(s);
    return ok;
}

/* Index after the JSON string starting at t[i] == '"'. */
static size_t skip_string(const char *t, size_t n, size_t i)
{
    for (i++; i < n; i++) {
        if (t[i] == '\\') i++;
        else if (t[i] == '"') return i + 1;
    }
    return n;
}

/* Copy of JSON text t with every unrepresentable number token replaced by
 * a marker string; NULL when there is none (use t as is). */
static char *quote_wide_numbers(const char *t, size_t n, size_t *outn)
{
    buf out = {0};
    size_t copied = 0, i = 0;
    while (i < n) {
        char c = t[i];
        if (c == '"') {
            i = skip_string(t, n, i);
            continue;
        }
        if (!(c == '-' || (c >= '0' && c <= '9') || c == 'N' || c == 'I')) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < n && is_num_char(t[j])) j++;
        if (!representable(t + i, j - i)) {
            buf_add(&out, t + copied, i - copied);
            buf_add(&out, "\"\\u0001num:", 11);
            buf_add(&out, t + i, j - i);
            buf_add(&out, "\"", 1);
            copied = j;
        }
        i = j;
    }
    if (!out.p) return NULL;
    buf_add(&out, t + copied, n - copied);
    *outn = out.n;
    return out.p;
}

/* Parses JSON text (any value) with jansson after quoting wide numbers. */
static json_t *load_text(const char *t, size_t n, json_error_t *jerr)
{
    size_t qn = 0;
    char *q = quote_wide_numbers(t, n, &qn);
    json_t *v = json_loadb(q ? q : t, q ? qn : n, JSON_DECODE_ANY | JSON_ALLOW_NUL, jerr);
    free(q);
    return v;
}

static int is_marker(const json_t *v)
{
    return json_is_string(v) && json_string_length(v) > MARK_LEN &&
           memcmp(json_string_value(v), MARK, MARK_LEN) == 0;
}

/* --------------------------------------------------------- the context */

typedef struct diff {
    const char *label;
    const tl_event_store *es;
    json_t **raw;           /* values id -> parsed raw text (lazy) */
    json_t **idv;           /* idval index -> first jansson value seen */
    size_t event;
    int mismatches;
} diff;

static void report(diff *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(diff *d, const char *fmt, ...)
{
    if (d->mismatches++ >= MAX_REPORTS) return;
    va_list ap;
    va_start(ap, fmt);
    if (d->event == TOP) fprintf(stderr, "  %s: top level: ", d->label);
    else fprintf(stderr, "  %s: event %zu: ", d->label, d->event);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static json_t *raw_value(diff *d, uint32_t vid)
{
    if (!d->raw[vid]) {
        json_error_t jerr;
        const tl_strpool *p = &d->es->values;
        d->raw[vid] = load_text(tl_strpool_get(p, vid), tl_strpool_len(p, vid), &jerr);
        if (!d->raw[vid]) d->raw[vid] = json_string("\001unparsable raw text");
    }
    return d->raw[vid];
}

/* Our text (e.g. a non-string name) equals the JSON value v. */
static int text_equals(const char *t, size_t n, const json_t *v)
{
    json_error_t jerr;
    json_t *mine = load_text(t, n, &jerr);
    int eq = mine && json_equal(mine, v);
    json_decref(mine);
    return eq;
}

static int pool_equals(const tl_strpool *p, uint32_t id, const char *s, size_t n)
{
    return tl_strpool_len(p, id) == n && memcmp(tl_strpool_get(p, id), s, n) == 0;
}

/* ------------------------------------------------ per-field comparisons */

static void check_ph(diff *d, json_t *ev)
{
    json_t *v = json_object_get(ev, "ph");
    int want = json_is_string(v) && json_string_length(v) ? (unsigned char)json_string_value(v)[0] : 0;
    if (d->es->ph[d->event] != want) report(d, "ph '%c' (%d), jansson '%c' (%d)", d->es->ph[d->event] ? d->es->ph[d->event] : '0', d->es->ph[d->event], want ? want : '0', want);
}

static uint8_t classify(const char *c)
{
    static const char *known[] = {"cpu_op", "cuda_runtime", "cuda_driver", "python_function", "kernel",
                                  "gpu_memcpy", "gpu_memset", "ac2g", "user_annotation",
                                  "gpu_user_annotation"};
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (!strcmp(c, known[i])) return (uint8_t)(TL_CAT_CPU_OP + i);
    return TL_CAT_OTHER;
}

static void check_cat(diff *d, json_t *ev)
{
    const tl_event_store *es = d->es;
    size_t i = d->event;
    json_t *v = json_object_get(ev, "cat");
    if (!json_is_string(v)) {
        if (es->cat[i] != TL_CAT_NONE || tl_strpool_len(&es->cats, es->cat_id[i]) != 0)
            report(d, "cat \"%s\" (%d), jansson has no string cat", tl_strpool_get(&es->cats, es->cat_id[i]), es->cat[i]);
        return;
    }
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);
    if (!pool_equals(&es->cats, es->cat_id[i], s, n))
        report(d, "cat \"%s\", jansson \"%s\"", tl_strpool_get(&es->cats, es->cat_id[i]), s);
    else if (es->cat[i] != classify(s))
        report(d, "cat \"%s\" classified %d, expected %d", s, es->cat[i], classify(s));
}

static void check_name(diff *d, json_t *ev)
{
    const tl_event_store *es = d->es;
    uint32_t id = es->name[d->event];
    json_t *v = json_object_get(ev, "name");
    int ok;
    if (!v) ok = tl_strpool_len(&es->names, id) == 0;
    else if (json_is_string(v) && !is_marker(v)) ok = pool_equals(&es->names, id, json_string_value(v), json_string_length(v));
    else ok = text_equals(tl_strpool_get(&es->names, id), tl_strpool_len(&es->names, id), v);
    if (!ok) {
        char *js = v ? json_dumps(v, JSON_ENCODE_ANY) : NULL;
        report(d, "name \"%s\", jansson %s", tl_es_name(es, d->event), js ? js : "(absent)");
        free(js);
    }
}

/* An integer the store keeps as one: INT64_MIN is TL_NONE in the typed
 * columns, so the scanner keeps it as text like any other wide number. */
static int is_int64(const json_t *v)
{
    return json_is_integer(v) && json_integer_value(v) != INT64_MIN;
}

/* The number a value stands for (markers included); 0 when not a number. */
static int number_of(const json_t *v, double *out)
{
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return 1;
    }
    if (!is_marker(v)) return 0;
    char *end;
    *out = strtod(json_string_value(v) + MARK_LEN, &end);
    return *end == 0;
}

/* Our text of an "other" pid/tid value (kind 3) stands for v: the same JSON
 * value, or the same double (the scanner canonicalises reals, and 1e400
 * becomes "inf"). */
static int other_equals(const char *t, size_t n, const json_t *v)
{
    if (text_equals(t, n, v)) return 1;
    double a, b;
    char *end;
    a = strtod(t, &end);
    return end == t + n && n && number_of(v, &b) && (a == b || (isnan(a) && isnan(b)));
}

/* pid / tid: the idval must match the value, and stand for one value only. */
static void check_idval(diff *d, json_t *ev, const char *key, uint32_t idx)
{
    const tl_event_store *es = d->es;
    const tl_idval *iv = &es->idvals[idx];
    json_t *v = json_object_get(ev, key);
    int ok;
    if (!v || json_is_null(v)) ok = iv->kind == 2;
    else if (is_int64(v)) ok = iv->kind == 0 && iv->i == json_integer_value(v);
    else if (json_is_string(v) && !is_marker(v))
        ok = iv->kind == 1 && pool_equals(&es->names, (uint32_t)iv->i, json_string_value(v), json_string_length(v));
    else
        ok = iv->kind == 3 && other_equals(tl_strpool_get(&es->names, (uint32_t)iv->i),
                                           tl_strpool_len(&es->names, (uint32_t)iv->i), v);
    if (!ok) {
        char *js = v ? json_dumps(v, JSON_ENCODE_ANY) : NULL;
        report(d, "%s kind %d value %lld, jansson %s", key, iv->kind, (long long)iv->i, js ? js : "(absent)");
        free(js);
        return;
    }
    json_t *norm = v ? v : json_null();
    if (!d->idv[idx]) d->idv[idx] = json_incref(norm);
    else if (!json_equal(d->idv[idx], norm)) {
        char *a = json_dumps(d->idv[idx], JSON_ENCODE_ANY), *b = json_dumps(norm, JSON_ENCODE_ANY);
        report(d, "%s: idval %u stands for both %s and %s", key, idx, a, b);
        free(a);
        free(b);
    }
}

/* Half an ulp of r, in ns (r is in us), plus the 1 ns the brief allows. */
static long double time_tolerance(double r)
{
    double a = fabs(r);
    return 1.0L + 500.0L * (long double)(nextafter(a, INFINITY) - a);
}

/* ts or dur: present/absent, exact for integers, within tolerance for reals.
 * For dur, a negative value is stored as 0 with TL_F_NEGDUR. */
static void check_time(diff *d, json_t *ev, const char *key, int is_dur)
{
    const tl_event_store *es = d->es;
    size_t i = d->event;
    int present = (es->flags[i] & (is_dur ? TL_F_DUR : TL_F_TS)) != 0;
    int neg = is_dur && (es->flags[i] & TL_F_NEGDUR);
    int64_t got = is_dur ? es->dur[i] : es->ts[i];
    json_t *v = json_object_get(ev, key);
    if (!json_is_number(v)) {
        if (present || got != 0) report(d, "%s present (%lld ns), jansson has no number", key, (long long)got);
        return;
    }
    if (!present) {
        report(d, "%s absent, jansson %g", key, json_number_value(v));
        return;
    }
    int int_flag = (es->flags[i] & (is_dur ? TL_F_DUR_INT : TL_F_TS_INT)) != 0;
    if (int_flag != (json_is_integer(v) != 0))
        report(d, "%s integer flag %d, jansson %s", key, int_flag, json_is_integer(v) ? "integer" : "real");
    long double want, tol;
    if (json_is_integer(v)) {
        want = (long double)json_integer_value(v) * 1000.0L;
        tol = 0;
    } else {
        want = (long double)json_real_value(v) * 1000.0L;
        tol = time_tolerance(json_real_value(v));
    }
    if (is_dur && want < -tol) {
        if (!neg || got != 0) report(d, "dur %lld ns (negflag %d), jansson %.3Lf ns is negative", (long long)got, neg, want);
        return;
    }
    if (neg && want > tol) report(d, "dur has TL_F_NEGDUR, jansson %.3Lf ns", want);
    if (!neg && fabsl((long double)got - want) > tol)
        report(d, "%s %lld ns, jansson %.3Lf ns (tolerance %.3Lf)", key, (long long)got, want, tol);
}

static int is_flow(const tl_event_store *es, size_t i)
{
    return es->ph[i] == 's' || es->ph[i] == 'f';
}

static void check_flow_id(diff *d, json_t *ev)
{
    const tl_event_store *es = d->es;
    size_t i = d->event;
    if (!is_flow(es, i)) return;
    json_t *v = json_object_get(ev, "id");
    int64_t want = is_int64(v) ? json_integer_value(v) : TL_NONE;
    if (tl_es_corr(es, i) != want)
        report(d, "flow id %lld, jansson %lld", (long long)tl_es_corr(es, i), (long long)want);
}

/* ------------------------------------------------------------- args */

typedef struct our_arg {
    uint32_t key;
    int tag;
    int64_t i;
} our_arg;

/* Our args of the event, the last entry winning for a repeated key (as in
 * jansson); returns the count of distinct keys. */
static size_t collect_args(const tl_event_store *es, size_t ev, our_arg **out)
{
    tl_arg_iter it;
    tl_arg a;
    size_t n = 0, cap = 0;
    our_arg *v = NULL;
    tl_es_args_begin(es, ev, &it);
    while (tl_es_args_next(&it, &a)) {
        size_t k = 0;
        while (k < n && v[k].key != a.key) k++;
        if (k == n) {
            if (n == cap) {
                cap = cap ? cap * 2 : 16;
                v = realloc(v, cap * sizeof *v);
            }
            n++;
        }
        v[k] = (our_arg){a.key, a.tag, a.i};
    }
    *out = v;
    return n;
}

static const our_arg *find_arg(const tl_event_store *es, const our_arg *v, size_t n, const char *k, size_t klen)
{
    uint32_t kid = tl_strpool_find(&es->keys, k, klen);
    for (size_t j = 0; kid != UINT32_MAX && j < n; j++)
        if (v[j].key == kid) return &v[j];
    return NULL;
}

static void check_arg_value(diff *d, const char *k, const our_arg *a, json_t *jv)
{
    if (a->tag == TL_AV_INT) {
        if (!json_is_integer(jv) || json_integer_value(jv) != a->i) {
            char *js = json_dumps(jv, JSON_ENCODE_ANY);
            report(d, "args[\"%s\"] INT %lld, jansson %s", k, (long long)a->i, js);
            free(js);
        }
        return;
    }
    json_t *mine = raw_value(d, (uint32_t)a->i);
    if (!json_equal(mine, jv)) {
        char *js = json_dumps(jv, JSON_ENCODE_ANY);
        report(d, "args[\"%s\"] RAW %s, jansson %s", k, tl_strpool_get(&d->es->values, (uint32_t)a->i), js);
        free(js);
    }
}

/* args.correlation of a non-flow event: an integer is in corr, not the blob. */
static int check_corr(diff *d, json_t *args, const our_arg *v, size_t n)
{
    const tl_event_store *es = d->es;
    size_t i = d->event;
    json_t *jc = json_is_object(args) ? json_object_get(args, "correlation") : NULL;
    if (is_flow(es, i)) return 0;
    int in_corr = is_int64(jc);
    int64_t want = in_corr ? json_integer_value(jc) : TL_NONE;
    if (tl_es_corr(es, i) != want) report(d, "corr %lld, jansson correlation %lld", (long long)tl_es_corr(es, i), (long long)want);
    if (in_corr && find_arg(es, v, n, "correlation", 11)) report(d, "an integer correlation is also in the args blob");
    return in_corr;
}

static void check_args(diff *d, json_t *ev)
{
    const tl_event_store *es = d->es;
    json_t *args = json_object_get(ev, "args");
    our_arg *v;
    size_t n = collect_args(es, d->event, &v);
    int moved = check_corr(d, args, v, n);
    if (!json_is_object(args)) {
        if (n) report(d, "%zu args in the blob, jansson args is not an object", n);
        free(v);
        return;
    }
    if (!(es->flags[d->event] & TL_F_ARGS)) report(d, "TL_F_ARGS not set");
    const char *k;
    size_t klen;
    json_t *jv;
    json_object_keylen_foreach(args, k, klen, jv)
    {
        if (moved && klen == 11 && !memcmp(k, "correlation", 11)) continue;
        const our_arg *a = find_arg(es, v, n, k, klen);
        if (!a) report(d, "args[\"%s\"] missing", k);
        else check_arg_value(d, k, a, jv);
    }
    if (n != json_object_size(args) - (size_t)moved)
        report(d, "%zu args keys, jansson %zu", n, json_object_size(args) - (size_t)moved);
    free(v);
}

static void check_event(diff *d, json_t *ev)
{
    if (!json_is_object(ev)) {
        report(d, "jansson: not an object");
        return;
    }
    check_ph(d, ev);
    check_cat(d, ev);
    check_name(d, ev);
    check_idval(d, ev, "pid", tl_es_pid(d->es, d->event));
    check_idval(d, ev, "tid", tl_es_tid(d->es, d->event));
    check_time(d, ev, "ts", 0);
    check_time(d, ev, "dur", 1);
    check_flow_id(d, ev);
    check_args(d, ev);
}

/* ---------------------------------------------------- top-level keys */

static const tl_top_entry *find_top(const tl_event_store *es, const char *k, size_t klen)
{
    const tl_top_entry *found = NULL;
    for (size_t i = 0; i < es->n_top; i++)
        if (pool_equals(&es->keys, es->top[i].key, k, klen)) found = &es->top[i];
    return found;
}

static void check_top(diff *d, json_t *root)
{
    const tl_event_store *es = d->es;
    d->event = TOP;
    if (json_is_array(root)) {
        if (!es->bare_array || es->n_top) report(d, "bare array: bare_array %d, %zu top keys", es->bare_array, es->n_top);
        return;
    }
    int has_meta = json_object_get(root, "metadata") != NULL;
    if (es->dropped_metadata != has_meta) report(d, "dropped_metadata %d, jansson metadata key %d", es->dropped_metadata, has_meta);
    const char *k;
    size_t klen;
    json_t *jv;
    size_t want = 0;
    json_object_keylen_foreach(root, k, klen, jv)
    {
        if ((klen == 11 && !memcmp(k, "traceEvents", 11)) || (klen == 8 && !memcmp(k, "metadata", 8))) {
            if (klen == 8 && find_top(es, k, klen)) report(d, "top-level metadata kept");
            continue;
        }
        want++;
        const tl_top_entry *t = find_top(es, k, klen);
        if (!t) report(d, "top-level key \"%s\" missing", k);
        else if (!text_equals(t->raw, t->len, jv)) report(d, "top-level \"%s\": %.80s differs", k, t->raw);
    }
    size_t distinct = 0;
    for (size_t i = 0; i < es->n_top; i++) {
        const tl_strpool *kp = &es->keys;
        distinct += find_top(es, tl_strpool_get(kp, es->top[i].key), tl_strpool_len(kp, es->top[i].key)) == &es->top[i];
    }
    if (distinct != want) report(d, "%zu distinct top-level keys, jansson %zu", distinct, want);
}

/* ------------------------------------------------------ one document */

/* jansson's tree of the document text (NULL with *why set on failure). */
static json_t *load_jansson(const buf *text, const char **why)
{
    static char msg[300];
    json_error_t jerr;
    json_t *root = load_text(text->p, text->n, &jerr);
    if (!root) {
        snprintf(msg, sizeof msg, "jansson: line %d col %d: %s", jerr.line, jerr.column, jerr.text);
        *why = msg;
    }
    return root;
}

static void compare_docs(diff *d, json_t *root)
{
    const tl_event_store *es = d->es;
    json_t *events = json_is_array(root) ? root : json_object_get(root, "traceEvents");
    size_t n = json_array_size(events);
    if (es->n != n) {
        d->event = 0;
        report(d, "%zu events, jansson %zu", es->n, n);
    }
    for (size_t i = 0; i < n && i < es->n; i++) {
        d->event = i;
        check_event(d, json_array_get(events, i));
    }
    check_top(d, root);
}

static void diff_free(diff *d)
{
    for (uint32_t i = 0; i < d->es->values.n; i++) json_decref(d->raw[i]);
    for (uint32_t i = 0; i < d->es->n_idvals; i++) json_decref(d->idv[i]);
    free(d->raw);
    free(d->idv);
}

/* Scans path with o and compares with jansson's root (NULL: jansson
 * rejected it, for why); returns the mismatch count, or 1 when exactly one
 * side rejected the document. */
static int scan_and_compare(const char *path, const char *label, const tl_scan_opts *o, json_t *root,
                            const char *why)
{
    double t0 = now();
    tl_event_store es;
    tl_error err;
    tl_es_init(&es);
    int rc = tl_scan_file(path, &es, o, &err);
    int bad = 0;
    if (rc != 0 || !root) {
        bad = (rc != 0) != (root == NULL);
        printf("%s %s: %s\n", bad ? "FAIL" : "ok  ", label,
               !bad ? "both rejected" : rc ? "we rejected, jansson accepted" : "we accepted, jansson rejected");
        if (rc != 0) fprintf(stderr, "  ours: %s\n", err.msg);
        if (!root) fprintf(stderr, "  %s\n", why);
    } else {
        diff d = {label, &es, calloc(es.values.n + 1, sizeof(json_t *)), calloc(es.n_idvals + 1, sizeof(json_t *)), 0, 0};
        compare_docs(&d, root);
        bad = d.mismatches;
        printf("%s %s: %zu events, %d mismatches, %d parts joined (%.2f s)\n", bad ? "FAIL" : "ok  ", label, es.n,
               bad, es.parts_joined, now() - t0);
        diff_free(&d);
    }
    tl_es_free(&es);
    return bad;
}

/* Writes n bytes to a new temporary file; fills path (>= 32 bytes). */
static int write_temp(const char *data, size_t n, char *path)
{
    strcpy(path, "/tmp/tl_differential_XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    size_t off = 0;
    while (off < n) {
        ssize_t w = write(fd, data + off, n - off);
        if (w <= 0) break;
        off += (size_t)w;
    }
    close(fd);
    return off == n ? 0 : -1;
}

/* Compares the document at path with each of the n_opts option sets; with
 * plain_parts > 0 also its decompressed text, from a plain temporary file,
 * in that many parallel parts (they apply to plain files only). Returns
 * nonzero when any comparison failed. */
static int run_doc(const char *path, const char *label, const tl_scan_opts *opts, size_t n_opts,
                   int plain_parts)
{
    buf text = {0};
    const char *why = "cannot read (zlib)";
    json_t *root = read_all(path, &text) == 0 ? load_jansson(&text, &why) : NULL;
    int bad = 0;
    char lab[512];
    for (size_t i = 0; i < n_opts; i++) {
        const tl_scan_opts *o = &opts[i];
        if (o->buffer_bytes || o->parts) snprintf(lab, sizeof lab, "%s (buffer %zu, %d parts)", label, o->buffer_bytes, o->parts);
        else snprintf(lab, sizeof lab, "%s", label);
        bad |= scan_and_compare(path, lab, o, root, why) != 0;
    }
    char tmp[32];
    if (plain_parts && text.p && write_temp(text.p, text.n, tmp) == 0) {
        tl_scan_opts o = {.parts = plain_parts};
        snprintf(lab, sizeof lab, "%s (decompressed, %d parts)", label, plain_parts);
        bad |= scan_and_compare(tmp, lab, &o, root, why) != 0;
        unlink(tmp);
    }
    json_decref(root);
    free(text.p);
    return bad;
}

/* ----------------------------------------------------- edge documents */

static const char *EDGE[] = {
    /* escapes, \u and surrogate pairs, escaped keys (decoded before use);
     * \u0000 in an args value (names and keys refuse it: test_scan.c) */
    "{\"trace\\u0045vents\":[{\"ph\":\"\\u0058\",\"cat\":\"cpu\\u005fop\",\"name\":\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\","
    "\"pid\":1,\"tid\":1,\"t\\u0073\":1,\"dur\":2,\"args\":{\"k\\u00e9y\":\"v\\u00e9 \\ud83d\\ude00 \\u4e2d\","
    "\"a\\\"b\":\"caf\xc3\xa9 \xf0\x9f\x98\x80\",\"nul\":\"x\\u0000y\"}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"\\ud83d\\ude00tail\",\"pid\":\"\\u00e9\",\"tid\":\"x\\ty\",\"ts\":3}],"
    "\"meta\\u0064ata\":{\"HF_TOKEN\":\"secret\"},\"k\\u00e9y\":\"\\u00e9\"}",
    /* string / null / float / absent pids; int 7 and "7" are different */
    "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"pid\":7,\"tid\":\"7\",\"ts\":1},"
    "{\"ph\":\"X\",\"name\":\"b\",\"pid\":\"7\",\"tid\":7,\"ts\":2},"
    "{\"ph\":\"X\",\"name\":\"c\",\"pid\":\"Spans\",\"tid\":\"PyTorch Profiler\",\"ts\":3},"
    "{\"ph\":\"X\",\"name\":\"d\",\"pid\":\"\",\"tid\":\"\",\"ts\":4},"
    "{\"ph\":\"X\",\"name\":\"e\",\"pid\":null,\"ts\":5},"
    "{\"ph\":\"X\",\"name\":\"f\",\"pid\":-3,\"tid\":1.5,\"ts\":6},"
    "{\"ph\":\"X\",\"name\":\"g\",\"pid\":9223372036854775807,\"tid\":-9223372036854775808,\"ts\":7},"
    "{\"ph\":\"X\",\"name\":\"h\",\"pid\":18446744073709551615,\"tid\":true,\"ts\":8},"
    "{\"ph\":\"X\",\"name\":\"i\",\"pid\":\"18446744073709551615\",\"tid\":\"true\",\"ts\":9},"
    "{\"ph\":\"X\",\"name\":\"j\",\"pid\":1.5,\"tid\":1.50,\"ts\":10},"
    "{\"ph\":\"X\",\"name\":\"k\",\"pid\":\"1.5\",\"tid\":\"1.50\",\"ts\":11}]}",
    /* huge ints (ts and dur at the bounds kineto_scan.h allows) */
    "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"nccl\",\"pid\":0,\"tid\":7,\"ts\":4000000000000000,"
    "\"dur\":-1000000000000000,\"args\":{\"Comms Id\":18446744073709551615,\"max\":9223372036854775807,"
    "\"min\":-9223372036854775808,\"over\":9223372036854775808,\"under\":-9223372036854775809,"
    "\"big\":100000000000000000000000,\"list\":[1,18446744073709551615,{\"x\":-99999999999999999999}],"
    "\"correlation\":9223372036854775807}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"args\":{\"correlation\":-9223372036854775808}},"
    "{\"ph\":\"f\",\"id\":-9223372036854775808,\"cat\":\"ac2g\",\"name\":\"ac2g\"}],"
    "\"baseTimeNanoseconds\":18446744073709551615}",
    /* floats in args, exponents, odd ts/dur */
    "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"f\",\"pid\":1,\"tid\":1,\"ts\":1.5e3,\"dur\":2E+1,"
    "\"args\":{\"half\":0.5,\"tiny\":-1.25e-7,\"e\":1E+2,\"three\":3.0,\"max\":1.7976931348623157e308,"
    "\"denorm\":2.5e-320,\"huge\":1e400,\"neghuge\":-1e400,\"negzero\":-0,\"negzeror\":-0.0,\"zero\":0}},"
    "{\"ph\":\"X\",\"name\":\"g\",\"ts\":1E-3,\"dur\":15e-1},{\"ph\":\"X\",\"name\":\"h\",\"ts\":0.1e1,\"dur\":1e-9},"
    "{\"ph\":\"X\",\"name\":\"i\",\"ts\":1.0005e0,\"dur\":1.0015},{\"ph\":\"X\",\"name\":\"j\",\"ts\":1419247333291.708,\"dur\":0.0005},"
    "{\"ph\":\"X\",\"name\":\"k\",\"ts\":1708722576381804.123,\"dur\":12.3456789}]}",
    /* negative and missing dur, non-number ts/dur */
    "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":10,\"dur\":-5},{\"ph\":\"X\",\"name\":\"b\",\"ts\":10,\"dur\":-0.0004},"
    "{\"ph\":\"X\",\"name\":\"c\",\"ts\":10,\"dur\":-0.0006},{\"ph\":\"X\",\"name\":\"d\",\"ts\":10},"
    "{\"ph\":\"X\",\"name\":\"e\",\"ts\":10,\"dur\":null},{\"ph\":\"X\",\"name\":\"f\",\"ts\":\"12\",\"dur\":\"3\"},"
    "{\"ph\":\"X\",\"name\":\"g\",\"dur\":[1]},{\"ph\":\"X\",\"name\":\"h\",\"ts\":-2.5,\"dur\":-1.5e2},"
    "{\"ph\":\"X\",\"name\":\"i\",\"ts\":NaN,\"dur\":Infinity}]}",
    /* empty / non-object / nested args */
    "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"args\":{}},{\"ph\":\"X\",\"name\":\"b\",\"args\":[]},"
    "{\"ph\":\"X\",\"name\":\"c\",\"args\":null},{\"ph\":\"X\",\"name\":\"d\",\"args\":\"x\"},"
    "{\"ph\":\"X\",\"name\":\"e\",\"args\":{\"a\":{\"b\":[{\"c\":[[],{}]}],\"d\":null},\"t\":true,\"f\":false,"
    "\"Input Dims\":[[4,8],[],[[1],[2,3]]],\"s\":\"\",\"n\":null}},{}]}",
    /* correlation and flows */
    "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"args\":{\"correlation\":7}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"args\":{\"correlation\":\"7\"}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"args\":{\"correlation\":7.0}},"
    "{\"ph\":\"s\",\"id\":7,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"pid\":1,\"tid\":1,\"ts\":1},"
    "{\"ph\":\"f\",\"id\":7,\"bp\":\"e\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"args\":{\"correlation\":8,\"x\":1}},"
    "{\"ph\":\"s\",\"id\":\"0x1\",\"cat\":\"fwdbwd\",\"name\":\"fwdbwd\"},{\"ph\":\"f\",\"id\":1e2},{\"ph\":\"s\"},"
    "{\"ph\":\"XY\",\"name\":\"two-char ph\"},{\"ph\":\"\",\"name\":\"empty ph\"},{\"ph\":7,\"name\":\"number ph\"},"
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"python3\"}},"
    "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":1,\"tid\":1,\"args\":{\"sort_index\":3}}]}",
    /* a bare top-level array of events, whitespace everywhere */
    " \n[ {\"ph\" : \"X\" , \"cat\":\"\",\"name\" : \"x\" , \"ts\" : 1 , \"dur\" : 2 } ,\t{ \"name\":42} ,"
    "{\"name\":null,\"cat\":5},{\"name\":{\"a\" : [1, 2]},\"cat\":\"Kernel\"} ]\r\n",
    /* duplicate keys: the last one wins (jansson) */
    "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"first\",\"name\":\"second\",\"ts\":1,\"ts\":2,"
    "\"args\":{\"a\":1,\"a\":\"x\"},\"args\":{\"b\":2,\"b\":3}},"
    "{\"ph\":\"X\",\"name\":\"c\",\"args\":{\"correlation\":5,\"correlation\":\"x\"}},"
    "{\"ph\":\"X\",\"name\":\"c\",\"args\":{\"correlation\":\"x\",\"correlation\":5}}],\"k\":1,\"k\":[2]}",
    /* top-level keys of every kind, events not first */
    "{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0,\"name\":\"H100\",\"warpSize\":32}],"
    "\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":1751410836000000000,\"f\":1.5e-3,\"t\":true,"
    "\"n\":null,\"s\":\"\\u00e9\\\"\",\"o\":{},\"a\":[],\"traceEvents\":[],\"distributedInfo\":{\"rank\":0,"
    "\"pg_config\":[{\"ranks\":[0,1]}]},\"metadata\":{\"x\":[1,{\"y\":null}]},\"traceName\":\"t.json\"}",
};

/* Compares an edge document: default options, a tiny read buffer, and the
 * parallel scan in 3 parts. */
static int run_edge(size_t k, const char *doc)
{
    char path[32], label[64];
    if (write_temp(doc, strlen(doc), path) != 0) return 1;
    static const tl_scan_opts opts[] = {{.buffer_bytes = 0}, {.buffer_bytes = 5}, {.parts = 3}};
    snprintf(label, sizeof label, "edge case %zu", k);
    int bad = run_doc(path, label, opts, 3, 0);
    unlink(path);
    return bad;
}

/* ------------------------------------------------------ shared traces */

typedef struct paths {
    char **v;
    size_t n, cap;
} paths;

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && !strcmp(s + n - m, suf);
}

static void find_gz(const char *dir, paths *out)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char *p = malloc(n);
        snprintf(p, n, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            find_gz(p, out);
            free(p);
        } else if (ends_with(p, ".json.gz")) {
            if (out->n == out->cap) {
                out->cap = out->cap ? out->cap * 2 : 32;
                out->v = realloc(out->v, out->cap * sizeof *out->v);
            }
            out->v[out->n++] = p;
        } else {
            free(p);
        }
    }
    closedir(d);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* test_differential --files PATH...: compares just those documents. */
static int run_files(int argc, char **argv)
{
    int passed = 0, failed = 0;
    tl_scan_opts dflt = {0};
    for (int i = 2; i < argc; i++) {
        if (run_doc(argv[i], argv[i], &dflt, 1, 0)) failed++;
        else passed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

/* Every *.json.gz under dir, in name order, counted into passed / failed. */
static void run_shared(const char *dir, int *passed, int *failed)
{
    static const tl_scan_opts dflt = {0};
    paths ps = {0};
    find_gz(dir, &ps);
    if (ps.n) qsort(ps.v, ps.n, sizeof *ps.v, cmp_str);
    size_t skip = strlen(dir) + 1;
    for (size_t i = 0; i < ps.n; i++) {
        if (run_doc(ps.v[i], ps.v[i] + skip, &dflt, 1, 4)) ++*failed;
        else ++*passed;
        free(ps.v[i]);
    }
    free(ps.v);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 2 && !strcmp(argv[1], "--files")) return run_files(argc, argv);
    if (argc < 3) {
        fprintf(stderr, "usage: test_differential SHARED_DATA_DIR DEMO_TRACE_JSON\n"
                        "       test_differential --files PATH...\n");
        return 2;
    }
    int passed = 0, failed = 0;
    for (size_t k = 0; k < sizeof EDGE / sizeof *EDGE; k++) {
        if (run_edge(k, EDGE[k])) failed++;
        else passed++;
    }
    static const tl_scan_opts demo[] = {{.parts = 0}, {.parts = 4}};
    if (run_doc(argv[2], argv[2], demo, 2, 0)) failed++;
    else passed++;
    struct stat st;
    int have_data = stat(argv[1], &st) == 0 && S_ISDIR(st.st_mode);
    if (have_data) run_shared(argv[1], &passed, &failed);
    printf("%d passed, %d failed\n", passed, failed);
    if (failed) return 1;
    if (!have_data) {
        printf("SKIP: ../shared/data not found\n");
        return 77;
    }
    return 0;
}
