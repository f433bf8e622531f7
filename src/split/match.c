/* match.c — `tracelens match-blocks A B -o OUT` (inference spec §1.8,
 * docs/split.md): the phase blocks of two serving traces (maximal runs of
 * steps of one phase, cut into windows of --num-steps), the best A/B pair
 * of equal size per phase by the annotations' sequence statistics, the
 * pair's traces (extracted as the splitter does) and match_report.json /
 * .csv / match_notes.json. Owns nothing after it returns. */
#include "match.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/error.h"
#include "../io/outfile.h"
#include "../util/sbuf.h"
#include "../util/vec.h"
#include "split.h"

static const char *const MATCH_HELP =
    "usage: tracelens match-blocks TRACE_A TRACE_B -o OUT [--phases P[,P...]] [--num-steps N]\n"
    "                              [--no-extract]\n"
    "\n"
    "Finds, per phase, the block of consecutive iterations of TRACE_A and the block\n"
    "of TRACE_B of the same size whose sequence statistics (from the detailed\n"
    "iteration annotations) are closest, and writes both as traces:\n"
    "OUT/<phase>/<phase>_best_A<i>_B<j>_<A|B>_..._<trace>.json.gz, with\n"
    "OUT/match_report.json, OUT/match_report.csv (when a pair was found) and\n"
    "OUT/match_notes.json (phases without a pair) (docs/split.md).\n"
    "\n"
    "options:\n"
    "  -o, --output-dir OUT   output directory (required)\n"
    "  --phases LIST          decode_only, prefilldecode, prefill_only, comma-separated\n"
    "                         (default decode_only,prefilldecode)\n"
    "  --num-steps N          block window size (default 16; 0: whole blocks)\n"
    "  --no-extract           the reports only, no traces\n"
    "  -q, --quiet            no summary line\n"
    "  -h, --help             this help\n"
    "\n"
    "Exit status: 0 success, 1 input error, 2 usage error.\n";

typedef struct block {
    int phase;
    size_t start, end;       /* [start, end) root indices */
    long original;           /* original_num_steps (-1: not windowed) */
} block;

typedef TL_VEC(block) blockvec;

typedef struct side {
    const char *path;
    tl_trace *t;
    tl_iteration *roots;
    size_t n;
    tl_iter_details *det;
    blockvec blocks;
    char *base;
} side;

/* find_blocks then window_blocks */
static void make_blocks(side *s, long max_steps)
{
    blockvec raw = {0};
    int cur = TL_PHASE_NONE;
    size_t from = 0;
    for (size_t i = 0; i <= s->n; i++) {
        int p = i < s->n ? tl_iter_phase(&s->det[i]) : TL_PHASE_NONE;
        if (p == cur && p != TL_PHASE_NONE) continue;
        if (cur != TL_PHASE_NONE) {
            size_t len = i - from;
            if (len >= (cur == TL_PHASE_DECODE_ONLY ? 2u : 1u)) TL_PUSH(raw, ((block){cur, from, i, -1}));
        }
        cur = p;
        from = i;
    }
    for (size_t k = 0; k < raw.n; k++) {
        block b = raw.v[k];
        size_t n = b.end - b.start;
        if (max_steps <= 0) {
            TL_PUSH(s->blocks, b);
        } else if (n <= (size_t)max_steps) {
            b.original = (long)n;
            TL_PUSH(s->blocks, b);
        } else {
            for (size_t w = 0; w < n / (size_t)max_steps; w++) {
                block x = {b.phase, b.start + w * (size_t)max_steps, b.start + (w + 1) * (size_t)max_steps, (long)n};
                TL_PUSH(s->blocks, x);
            }
        }
    }
    free(raw.v);
}

/* The iterations of a phase on one side. */
static size_t phase_iterations(const side *s, int ph)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) n += tl_iter_phase(&s->det[i]) == ph;
    return n;
}

/* Why a phase has no pair, in a line on stdout (match_notes.json keeps the
 * reference's counts). */
static void say_no_pair(const side *sa, const side *sb, int ph, size_t n_a, size_t n_cand)
{
    size_t ia = phase_iterations(sa, ph), ib = phase_iterations(sb, ph);
    printf("%s: no pair: A has %zu %s iteration%s and B %zu", tl_phase_name(ph), ia, tl_phase_name(ph),
           ia == 1 ? "" : "s", ib);
    if (!n_a)
        printf("; A has no block of the phase%s\n",
               ph == TL_PHASE_DECODE_ONLY ? " (a decode-only block is a run of 2 or more consecutive iterations)" : "");
    else if (!n_cand)
        printf("; none of A's %zu block%s has a B block of the same size with sequence statistics\n", n_a,
               n_a == 1 ? "" : "s");
    else
        printf("; A's blocks with a same-size B block lack sequence statistics (sq/sk) in some iteration\n");
}

static int full_sqsk(const side *s, const block *b)
{
    for (size_t i = b->start; i < b->end; i++)
        if (!s->roots[i].ann.has_sqsk) return 0;
    return 1;
}

/* distance of equal-size blocks; returns the number of components */
static int distance(const side *a, const block *x, const side *b, const block *y, double *d)
{
    size_t n = x->end - x->start;
    int m = x->phase == TL_PHASE_DECODE_ONLY ? 2 : 4;
    for (int k = 0; k < m; k++) d[k] = 0;
    for (size_t i = 0; i < n; i++) {
        const tl_iter_ann *p = &a->roots[x->start + i].ann, *q = &b->roots[y->start + i].ann;
        double v[4];
        if (m == 2) {
            v[0] = (double)(p->g_sq - q->g_sq), v[1] = (double)(p->g_sk - q->g_sk);
        } else {
            v[0] = (double)(p->context_requests - q->context_requests);
            v[1] = (double)(p->generation_requests - q->generation_requests);
            v[2] = (double)(p->c_sq - q->c_sq), v[3] = (double)(p->g_sq - q->g_sq);
        }
        for (int k = 0; k < m; k++) d[k] += v[k] < 0 ? -v[k] : v[k];
    }
    for (int k = 0; k < m; k++) d[k] /= (double)n;
    return m;
}

/* Python round(x, nd): the correctly rounded decimal (half-even on exact ties) */
static double pyround(double x, int nd)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.*f", nd, x);
    return strtod(buf, NULL);
}

typedef struct match {
    int phase;
    size_t ia, ib;           /* block indices */
    double dist[4];
    int nd;
    char *out_a, *out_b;
} match;

static void put_jstr(tl_sbuf *b, const char *s)
{
    tl_sb_putc(b, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') tl_sb_printf(b, "\\%c", c);
        else if (c < 0x20) tl_sb_printf(b, "\\u%04x", c);
        else tl_sb_putc(b, (char)c);
    }
    tl_sb_putc(b, '"');
}

typedef struct avgs {
    double c_req, g_req, c_sq, c_sk, g_sq, g_sk;
} avgs;

static avgs block_avgs(const side *s, const block *b)
{
    avgs a = {0};
    size_t n = b->end - b->start;
    for (size_t i = b->start; i < b->end; i++) {
        const tl_iter_ann *p = &s->roots[i].ann;
        a.c_req += (double)p->context_requests, a.g_req += (double)p->generation_requests;
        a.c_sq += (double)p->c_sq, a.c_sk += (double)p->c_sk, a.g_sq += (double)p->g_sq, a.g_sk += (double)p->g_sk;
    }
    if (n) {
        a.c_req = pyround(a.c_req / (double)n, 3), a.g_req = pyround(a.g_req / (double)n, 3);
        a.c_sq = pyround(a.c_sq / (double)n, 3), a.c_sk = pyround(a.c_sk / (double)n, 3);
        a.g_sq = pyround(a.g_sq / (double)n, 3), a.g_sk = pyround(a.g_sk / (double)n, 3);
    }
    return a;
}

static void put_side_json(tl_sbuf *b, const side *s, size_t bi, const char *out)
{
    const block *k = &s->blocks.v[bi];
    avgs a = block_avgs(s, k);
    tl_sb_printf(b, "{\n      \"block_index\": %zu,\n      \"trace\": ", bi);
    put_jstr(b, s->path);
    tl_sb_puts(b, ",\n      \"output_path\": ");
    put_jstr(b, out);
    const char *nm[6] = {"avg_context_requests", "avg_generation_requests", "avg_c_sq", "avg_c_sk", "avg_g_sq", "avg_g_sk"};
    double v[6] = {a.c_req, a.g_req, a.c_sq, a.c_sk, a.g_sq, a.g_sk};
    for (int i = 0; i < 6; i++) {
        tl_sb_printf(b, ",\n      \"%s\": ", nm[i]);
        tl_sb_pyfloat(b, v[i]);
    }
    tl_sb_printf(b, ",\n      \"start\": %zu,\n      \"end\": %zu,\n      \"num_steps\": %zu,\n"
                    "      \"original_num_steps\": %ld,\n      \"truncated\": %s,\n      \"steps\": [",
                 k->start, k->end, k->end - k->start, k->original,
                 k->original > 0 && k->original != (long)(k->end - k->start) ? "true" : "false");
    for (size_t i = k->start; i < k->end; i++) {
        const tl_iter_ann *p = &s->roots[i].ann;
        tl_sb_printf(b, "%s\n        {\n          \"step\": %zu,\n          \"name\": ", i > k->start ? "," : "", i);
        put_jstr(b, tl_es_name(&s->t->es, s->roots[i].uid));
        tl_sb_printf(b,
                     ",\n          \"num_context\": %lld,\n          \"num_generation\": %lld,\n"
                     "          \"c_sq\": %lld,\n          \"c_sk\": %lld,\n          \"g_sq\": %lld,\n"
                     "          \"g_sk\": %lld\n        }",
                     (long long)p->context_requests, (long long)p->generation_requests, (long long)p->c_sq,
                     (long long)p->c_sk, (long long)p->g_sq, (long long)p->g_sk);
    }
    tl_sb_puts(b, k->end > k->start ? "\n      ]\n    }" : "]\n    }");
}

static void put_side_csv(tl_sbuf *b, const side *s, size_t bi, const char *out)
{
    const block *k = &s->blocks.v[bi];
    avgs a = block_avgs(s, k);
    tl_sb_putc(b, ',');
    tl_split_csv_cell(b, s->path);
    tl_sb_printf(b, ",%zu,%zu,%zu,%ld,%s", bi, k->start, k->end, k->original,
                 k->original > 0 && k->original != (long)(k->end - k->start) ? "True" : "False");
    double v[6] = {a.c_req, a.g_req, a.c_sq, a.c_sk, a.g_sq, a.g_sk};
    for (int i = 0; i < 6; i++) {
        tl_sb_putc(b, ',');
        tl_sb_pyfloat(b, v[i]);
    }
    tl_sb_putc(b, ',');
    tl_split_csv_cell(b, out);
}

static int write_text(const char *path, const tl_sbuf *b, tl_error *err)
{
    return tl_outfile_write_all(path, b->s, b->len, err);
}

static char *out_name(const char *out_dir, const char *phase, size_t ia, size_t ib, char which, const side *s,
                      size_t bi)
{
    const block *k = &s->blocks.v[bi];
    tl_phase_window pw;
    tl_phase_from_window(s->det + k->start, k->end - k->start, &pw);
    tl_sbuf b;
    tl_sb_init(&b);
    tl_sb_printf(&b, "%s%s%s/%s_best_A%zu_B%zu_%c_prefill_%zu_prefilldecode_%zu_decode_%zu_bs%lld_conc%lld_%s.json.gz",
                 out_dir, out_dir[0] && out_dir[strlen(out_dir) - 1] == '/' ? "" : "/", phase, phase, ia, ib, which,
                 pw.num_prefill, pw.num_prefilldecode, pw.num_decode, (long long)pw.avg_bs, (long long)pw.avg_conc,
                 s->base);
    return tl_sb_take(&b);
}

static int load_side(side *s, const char *path, tl_error *err)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    size_t l = strlen(path);
    if (l >= 4 && !strcmp(path + l - 4, ".zip")) {
        tl_error_set(err, "%s: .zip traces are not supported by match-blocks (unzip it and give the .json)", path);
        return -1;
    }
    tl_load_opts lo = {0};
    s->t = tl_trace_load(path, &lo, err);
    if (!s->t) return -1;
    s->n = tl_trace_iterations(s->t, &s->roots);
    if (!s->n) {
        tl_error_set(err, "%s: no iteration annotations (vLLM, SGLang, ATOM, diffusion): no blocks to match", path);
        return -1;
    }
    s->det = tl_xmalloc(s->n * sizeof *s->det);
    for (size_t i = 0; i < s->n; i++) tl_iter_details_of(&s->roots[i].ann, &s->det[i]);
    s->base = tl_split_base_name(path);
    char *z;
    while ((z = strstr(s->base, ".zip"))) memmove(z, z + 4, strlen(z + 4) + 1);
    return 0;
}

static void free_side(side *s)
{
    if (s->t) tl_trace_release(s->t);
    free(s->roots);
    free(s->det);
    free(s->blocks.v);
    free(s->base);
}

static int phase_of_name(const char *s, size_t n)
{
    static const struct {
        const char *name;
        int phase;
    } P[3] = {{"decode_only", TL_PHASE_DECODE_ONLY}, {"prefilldecode", TL_PHASE_PREFILLDECODE},
              {"prefill_only", TL_PHASE_PREFILL_ONLY}};
    for (int i = 0; i < 3; i++)
        if (strlen(P[i].name) == n && !strncmp(P[i].name, s, n)) return P[i].phase;
    return -1;
}

static int run(side *sa, side *sb, const int *phases, int n_phases, long num_steps, const char *out_dir, int extract,
               int quiet, tl_error *err)
{
    make_blocks(sa, num_steps);
    make_blocks(sb, num_steps);
    TL_VEC(match) mv = {0};
    tl_sbuf notes;
    tl_sb_init(&notes);
    size_t n_notes = 0;
    for (int pi = 0; pi < n_phases; pi++) {
        int ph = phases[pi];
        int found = 0;
        match best = {0};
        double best_key[6] = {0};
        int key_n = 0;
        size_t n_a = 0, n_cand = 0;
        for (size_t i = 0; i < sa->blocks.n; i++) {
            const block *x = &sa->blocks.v[i];
            if (x->phase != ph) continue;
            n_a++;
            int has_cand = 0, a_full = full_sqsk(sa, x);
            for (size_t j = 0; j < sb->blocks.n; j++) {
                const block *y = &sb->blocks.v[j];
                if (y->phase != ph || y->end - y->start != x->end - x->start || !full_sqsk(sb, y)) continue;
                has_cand = 1;
                if (!a_full) continue;
                double d[4], key[6];
                int m = distance(sa, x, sb, y, d);
                for (int k = 0; k < m; k++) key[k] = d[k];
                long mo = x->original < y->original ? x->original : y->original;
                key[m] = -(double)mo;
                key[m + 1] = -(double)(x->end - x->start);
                int better = !found;
                if (found) {
                    int c = 0;
                    for (int k = 0; k < m + 2 && !c; k++) c = (key[k] > best_key[k]) - (key[k] < best_key[k]);
                    better = c < 0;
                }
                if (better) {
                    found = 1;
                    key_n = m + 2;
                    memcpy(best_key, key, sizeof key);
                    best = (match){.phase = ph, .ia = i, .ib = j, .nd = m};
                    memcpy(best.dist, d, sizeof d);
                }
            }
            n_cand += (size_t)has_cand;
        }
        (void)key_n;
        if (found) {
            const char *pn = tl_phase_name(ph);
            best.out_a = out_name(out_dir, pn, best.ia, best.ib, 'A', sa, best.ia);
            best.out_b = out_name(out_dir, pn, best.ia, best.ib, 'B', sb, best.ib);
            TL_PUSH(mv, best);
        } else {
            tl_sb_printf(&notes, "%s  {\n    \"phase\": \"%s\",\n    \"reason\": \"no eligible (A, B) pair found (A blocks of "
                                 "phase: %zu, with same-size B candidate: %zu)\"\n  }",
                         n_notes ? ",\n" : "", tl_phase_name(ph), n_a, n_cand);
            n_notes++;
            if (!quiet) say_no_pair(sa, sb, ph, n_a, n_cand);
        }
    }
    int rc = 0;
    /* the traces first, then the reports */
    if (extract && mv.n) {
        tl_split_index *ia = tl_split_index_new(&sa->t->es), *ib = tl_split_index_new(&sb->t->es);
        for (size_t k = 0; k < mv.n && !rc; k++) {
            const match *m = &mv.v[k];
            for (int w = 0; w < 2 && !rc; w++) {
                side *s = w ? sb : sa;
                const block *bl = &s->blocks.v[w ? m->ib : m->ia];
                size_t n = bl->end - bl->start, *sel = tl_xmalloc(n * sizeof *sel);
                for (size_t i = 0; i < n; i++) sel[i] = bl->start + i;
                rc = tl_split_write(&s->t->es, w ? ib : ia, s->roots, sel, n, w ? m->out_b : m->out_a, NULL, err);
                free(sel);
            }
        }
        tl_split_index_free(ia);
        tl_split_index_free(ib);
    }
    tl_sbuf b;
    tl_sb_init(&b);
    if (!rc) {
        if (!mv.n) tl_sb_puts(&b, "[]");
        else {
            tl_sb_puts(&b, "[\n");
            for (size_t k = 0; k < mv.n; k++) {
                const match *m = &mv.v[k];
                const block *x = &sa->blocks.v[m->ia];
                tl_sb_printf(&b, "  {\n    \"match_id\": %zu,\n    \"phase\": \"%s\",\n    \"num_steps\": %zu,\n    \"distance\": [",
                             k, tl_phase_name(m->phase), x->end - x->start);
                for (int d = 0; d < m->nd; d++) {
                    tl_sb_puts(&b, d ? ",\n      " : "\n      ");
                    tl_sb_pyfloat(&b, pyround(m->dist[d], 6));
                }
                tl_sb_puts(&b, "\n    ],\n    \"TraceA\": ");
                put_side_json(&b, sa, m->ia, m->out_a);
                tl_sb_puts(&b, ",\n    \"TraceB\": ");
                put_side_json(&b, sb, m->ib, m->out_b);
                tl_sb_printf(&b, "\n  }%s\n", k + 1 < mv.n ? "," : "");
            }
            tl_sb_puts(&b, "]");
        }
        char *p = tl_xmalloc(strlen(out_dir) + 32);
        sprintf(p, "%s/match_report.json", out_dir);
        rc = write_text(p, &b, err);
        if (!rc && mv.n) {
            tl_sb_clear(&b);
            tl_sb_puts(&b, "match_id,phase,num_steps,distance");
            for (int w = 0; w < 2; w++)
                tl_sb_printf(&b,
                             ",Trace%c_trace,Trace%c_block_index,Trace%c_start,Trace%c_end,Trace%c_original_num_steps,"
                             "Trace%c_truncated,Trace%c_avg_c_req,Trace%c_avg_g_req,Trace%c_avg_c_sq,Trace%c_avg_c_sk,"
                             "Trace%c_avg_g_sq,Trace%c_avg_g_sk,Trace%c_output_path",
                             "AB"[w], "AB"[w], "AB"[w], "AB"[w], "AB"[w], "AB"[w], "AB"[w], "AB"[w], "AB"[w], "AB"[w],
                             "AB"[w], "AB"[w], "AB"[w]);
            tl_sb_putc(&b, '\n');
            for (size_t k = 0; k < mv.n; k++) {
                const match *m = &mv.v[k];
                const block *x = &sa->blocks.v[m->ia];
                tl_sb_printf(&b, "%zu,%s,%zu,", k, tl_phase_name(m->phase), x->end - x->start);
                for (int d = 0; d < m->nd; d++) {
                    if (d) tl_sb_putc(&b, '|');
                    tl_sb_pyfloat(&b, pyround(m->dist[d], 6));
                }
                put_side_csv(&b, sa, m->ia, m->out_a);
                put_side_csv(&b, sb, m->ib, m->out_b);
                tl_sb_putc(&b, '\n');
            }
            sprintf(p, "%s/match_report.csv", out_dir);
            rc = write_text(p, &b, err);
        }
        if (!rc) {
            tl_sb_clear(&b);
            if (n_notes) {
                tl_sb_puts(&b, "[\n");
                tl_sb_putn(&b, notes.s, notes.len);
                tl_sb_puts(&b, "\n]");
            } else {
                tl_sb_puts(&b, "[]");
            }
            sprintf(p, "%s/match_notes.json", out_dir);
            rc = write_text(p, &b, err);
        }
        free(p);
    }
    if (!rc && !quiet)
        printf("match-blocks: %zu match%s, %zu note%s in %s\n", mv.n, mv.n == 1 ? "" : "es", n_notes,
               n_notes == 1 ? "" : "s", out_dir);
    tl_sb_free(&b);
    tl_sb_free(&notes);
    for (size_t k = 0; k < mv.n; k++) {
        free(mv.v[k].out_a);
        free(mv.v[k].out_b);
    }
    free(mv.v);
    return rc;
}

static int usage(const char *msg) { return tl_usage_error("match-blocks", msg); }

int tl_match_cli(int argc, char **argv)
{
    const char *paths[2] = {NULL, NULL}, *out = NULL, *phases_arg = "decode_only,prefilldecode";
    long num_steps = 16;
    int extract = 1, quiet = 0, np = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(MATCH_HELP, stdout);
            return 0;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output-dir") || !strcmp(a, "--output_dir")) {
            if (i + 1 >= argc) return usage("-o/--output-dir needs a value");
            out = argv[++i];
        } else if (!strcmp(a, "--phases")) {
            if (i + 1 >= argc) return usage("--phases needs a value");
            phases_arg = argv[++i];
        } else if (!strcmp(a, "--num-steps")) {
            if (i + 1 >= argc) return usage("--num-steps needs a value");
            char *end;
            num_steps = strtol(argv[++i], &end, 10);
            if (!argv[i][0] || *end || num_steps < -1000000000L || num_steps > 1000000000L)
                return usage("--num-steps: not an integer");
        } else if (!strcmp(a, "--no-extract")) {
            extract = 0;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (a[0] == '-' && a[1]) {
            char msg[160];
            snprintf(msg, sizeof msg, "unknown option '%.60s'", a);
            return usage(msg);
        } else if (np < 2) {
            paths[np++] = a;
        } else {
            return usage("more than two traces given");
        }
    }
    if (np < 2) return usage("two traces are needed (TRACE_A TRACE_B)");
    if (!out) return usage("-o/--output-dir is required");
    int phases[8], n_phases = 0;
    for (const char *p = phases_arg;;) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        int ph = phase_of_name(p, n);
        if (ph < 0 || n_phases == 8) {
            char msg[200];
            snprintf(msg, sizeof msg, "--phases: '%.*s' is not decode_only, prefilldecode or prefill_only", (int)(n > 60 ? 60 : n),
                     p);
            return usage(msg);
        }
        phases[n_phases++] = ph;
        if (!c) break;
        p = c + 1;
    }
    side sa, sb;
    tl_error err = {{0}};
    memset(&sb, 0, sizeof sb);
    int rc = load_side(&sa, paths[0], &err);
    if (!rc) rc = load_side(&sb, paths[1], &err);
    if (!rc) rc = run(&sa, &sb, phases, n_phases, num_steps, out, extract, quiet, &err);
    free_side(&sa);
    free_side(&sb);
    if (rc) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
        return TL_EXIT_INPUT;
    }
    return 0;
}
