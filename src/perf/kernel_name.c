/* kernel_name.c — GEMM kernel-name parsing (perf-model spec §8). */
#include "kernel_name.h"

#include <string.h>

static int is_lower(char c) { return c >= 'a' && c <= 'z'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* `C[a-z]{3}_A[a-z]{3}_B[a-z]{3}` starting at p. */
static int tensile_at(const char *p)
{
    static const char shape[] = "Cxxx_Axxx_Bxxx";
    for (size_t i = 0; shape[i]; i++) {
        if (shape[i] == 'x' ? !is_lower(p[i]) : p[i] != shape[i]) return 0;
    }
    return 1;
}

/* Python `re.match(r"^.*C[a-z]{3}_A[a-z]{3}_B[a-z]{3}.*$", name)`: `.`
 * stops at a newline and `$` matches at the end or before a final newline,
 * so the marker must sit on a first line that is the whole name. */
static int is_tensile(const char *name)
{
    const char *nl = strchr(name, '\n');
    if (nl && nl[1] != '\0') return 0;
    size_t len = nl ? (size_t)(nl - name) : strlen(name);
    for (size_t i = 0; i + 14 <= len; i++)
        if (tensile_at(name + i)) return 1;
    return 0;
}

/* Digits at *p as an int (saturating; the values only feed analyses). */
static int64_t digits(const char **p)
{
    int64_t v = 0;
    for (; is_digit(**p); (*p)++) v = v > (INT64_MAX - 9) / 10 ? INT64_MAX : v * 10 + (**p - '0');
    return v;
}

/* The first `MT(\d+)x(\d+)x(\d+)`. */
static void macro_tile(const char *name, tl_gemm_kname *out)
{
    for (const char *p = strstr(name, "MT"); p; p = strstr(p + 1, "MT")) {
        const char *q = p + 2;
        int64_t v[3];
        int k = 0;
        for (; k < 3; k++) {
            if (!is_digit(*q)) break;
            v[k] = digits(&q);
            if (k < 2 && *q++ != 'x') break;
        }
        if (k == 3) {
            out->mt_m = v[0], out->mt_n = v[1], out->depth_u = v[2];
            return;
        }
    }
}

static void parse_tensile(const char *name, tl_gemm_kname *out)
{
    out->trans_a = strstr(name, "_Ailk_") ? 0 : strstr(name, "_Alik_") ? 1 : TL_KN_NONE;
    out->trans_b = strstr(name, "_Bljk_") ? 0 : strstr(name, "_Bjlk_") ? 1 : TL_KN_NONE;
    macro_tile(name, out);
}

/* nvjet_..._TNT: the last `_` token's first two letters. A token shorter
 * than two characters is treated as not recognised. */
static int parse_nvjet(const char *name, tl_gemm_kname *out)
{
    const char *us = strrchr(name, '_');
    const char *tok = us ? us + 1 : name;
    if (strlen(tok) < 2) return 0;
    out->trans_a = tok[0] == 'T';
    out->trans_b = tok[1] == 'T';
    return 1;
}

int tl_kname_parse_gemm(const char *name, tl_gemm_kname *out)
{
    out->trans_a = out->trans_b = TL_KN_NONE;
    out->mt_m = out->mt_n = out->depth_u = TL_KN_NONE;
    if (!name) return 0;
    if (is_tensile(name)) {
        parse_tensile(name, out);
        return 1;
    }
    if (!strncmp(name, "nvjet", 5)) return parse_nvjet(name, out);
    return 0;
}

long tl_kname_first_gemm(const char *const *names, size_t n, tl_gemm_kname *out)
{
    for (size_t i = 0; i < n; i++)
        if (tl_kname_parse_gemm(names[i], out)) return (long)i;
    tl_kname_parse_gemm(NULL, out);
    return -1;
}
