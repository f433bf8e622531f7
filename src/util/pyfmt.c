#include "pyfmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Python's float repr: shortest round-tripping digits ("%.{p}e" for the
 * smallest p that round-trips), then fixed notation when -4 <= exp < 16,
 * scientific otherwise, with at least one fraction digit in fixed form. */
/* The common case fast: a value between 1e-4 and 2^51 whose shortest text
 * has d decimals, written as k / 10^d. Let u be the spacing of doubles at
 * x. When 10^d * u < 1/3 and x * 10^d < 2^53: if some integer n reads back
 * as x (n / 10^d rounds to x), then |n - x*10^d| <= 10^d*u/2 and the
 * rounded product fl(x*10^d) is within 10^d*u of x*10^d, so it lies within
 * 1.5*10^d*u < 1/2 of n and rounds to n; and k / 10^d, both operands exact,
 * is the correctly rounded double of the decimal k*10^-d, so the test below
 * is exact. The interval of decimals reading back as x is narrower than 1/3
 * at scale 10^d, so n is the only candidate, and the smallest such d is the
 * shortest text (Python's repr: fixed notation in this range). Returns the
 * length, or 0 to take the slow path. */
static int short_decimal(char *buf, size_t cap, double x)
{
    static const double P10[] = {1,    1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,
                                 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19};
    static const unsigned long long P10U[] = {1ULL,
                                              10ULL,
                                              100ULL,
                                              1000ULL,
                                              10000ULL,
                                              100000ULL,
                                              1000000ULL,
                                              10000000ULL,
                                              100000000ULL,
                                              1000000000ULL,
                                              10000000000ULL,
                                              100000000000ULL,
                                              1000000000000ULL,
                                              10000000000000ULL,
                                              100000000000000ULL,
                                              1000000000000000ULL,
                                              10000000000000000ULL,
                                              100000000000000000ULL,
                                              1000000000000000000ULL,
                                              10000000000000000000ULL};
    double ax = fabs(x);
    if (!(ax >= 1e-4 && ax < 2251799813685248.0) || cap < 32) return 0;
    int e;
    frexp(ax, &e);
    double u = ldexp(1.0, e - 53); /* the spacing of doubles at ax */
    for (int d = 0; d < (int)(sizeof P10 / sizeof *P10); d++) {
        if (u * P10[d] >= 1.0 / 3) return 0;
        double m = ax * P10[d];
        if (m >= 9007199254740992.0) return 0;
        double k = nearbyint(m);
        if (k / P10[d] != ax) continue;
        unsigned long long kk = (unsigned long long)k, ip = kk / P10U[d], fp = kk % P10U[d];
        char tmp[32];
        int n = 0;
        do {
            tmp[n++] = (char)('0' + ip % 10);
            ip /= 10;
        } while (ip);
        int o = 0;
        if (x < 0) buf[o++] = '-';
        while (n) buf[o++] = tmp[--n];
        buf[o++] = '.';
        if (d == 0) buf[o++] = '0';
        for (int i = d - 1; i >= 0; i--) {
            buf[o + i] = (char)('0' + fp % 10);
            fp /= 10;
        }
        o += d;
        buf[o] = 0;
        return o;
    }
    return 0;
}

/* e = "[-]D[.DDD]e[+-]XX": moves it one unit of its last digit away from
 * zero (up != 0 for a positive value) or towards zero, carrying into the
 * exponent (9.9e+01 -> 1.0e+02, 1.0e+02 -> 9.9e+01). Returns 0 when the
 * text cannot be stepped (a mantissa of zero). */
static int step_last_digit(char *e, size_t cap, int up)
{
    char *m = e[0] == '-' ? e + 1 : e, *ep = strchr(m, 'e');
    if (!ep) return 0;
    int away = e[0] == '-' ? !up : up; /* away from zero in magnitude */
    char dig[24];
    int nd = 0;
    for (char *s = m; s < ep && nd < 23; s++)
        if (*s != '.') dig[nd++] = *s;
    int exp10 = atoi(ep + 1), i = nd - 1;
    if (away) {
        while (i >= 0 && dig[i] == '9') dig[i--] = '0';
        if (i < 0) { /* 9.99 -> 10.0: 1.00 at the next power of ten */
            dig[0] = '1';
            exp10++;
        } else dig[i]++;
    } else {
        while (i >= 0 && dig[i] == '0') dig[i--] = '9';
        if (i < 0) return 0;
        dig[i]--;
        if (dig[0] == '0') { /* 1.00 -> 0.99: 9.99 at the power of ten below */
            if (nd == 1) return 0;
            for (int k = 0; k < nd - 1; k++) dig[k] = dig[k + 1];
            dig[nd - 1] = '9';
            exp10--;
        }
    }
    char out[48];
    int o = 0;
    if (e[0] == '-') out[o++] = '-';
    out[o++] = dig[0];
    if (nd > 1) {
        out[o++] = '.';
        for (int k = 1; k < nd; k++) out[o++] = dig[k];
    }
    snprintf(out + o, sizeof out - (size_t)o, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
    snprintf(e, cap, "%s", out);
    return 1;
}

/* The fewest significant digits that read back as x: "%.{p}e" for the
 * smallest p; p = 16 (17 digits) always reads back. Unless x is a power of
 * two, the decimals reading back as x form an interval symmetric about x,
 * and the correctly rounded text with p+1 digits is at least as close to x
 * as the p-digit one padded with a zero, so round-tripping is monotone in p
 * and a binary search finds the smallest. At a power of two the interval
 * is narrower below x, so every p is tried in turn. */
static void shortest_exp(char *e, size_t cap, double x)
{
    int ex;
    if (fabs(frexp(x, &ex)) == 0.5) {
        for (int p = 0; p < 17; p++) {
            snprintf(e, cap, "%.*e", p, x);
            if (strtod(e, NULL) == x) return;
            /* the p-digit decimal on the other side of x may still be
             * inside the interval (its wider side): Python takes it */
            if (step_last_digit(e, cap, strtod(e, NULL) < x) && strtod(e, NULL) == x) return;
        }
        snprintf(e, cap, "%.16e", x);
        return;
    }
    int lo = 0, hi = 16;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        snprintf(e, cap, "%.*e", mid, x);
        if (strtod(e, NULL) == x) hi = mid;
        else lo = mid + 1;
    }
    snprintf(e, cap, "%.*e", lo, x);
}

int tl_pyfloat_repr(char *buf, size_t cap, double x)
{
    if (isnan(x)) return snprintf(buf, cap, "nan");
    if (isinf(x)) return snprintf(buf, cap, x < 0 ? "-inf" : "inf");
    if (x == 0) return snprintf(buf, cap, signbit(x) ? "-0.0" : "0.0");
    int n = short_decimal(buf, cap, x);
    if (n) return n;

    char e[40];
    shortest_exp(e, sizeof e, x);
    /* e = [-]D[.DDD]e[+-]XX */
    char digits[24];
    int nd = 0, neg = 0;
    const char *s = e;
    if (*s == '-') { neg = 1; s++; }
    while (*s && *s != 'e') {
        if (*s != '.') digits[nd++] = *s;
        s++;
    }
    int exp10 = atoi(s + 1);
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    digits[nd] = 0;

    char out[64];
    int o = 0;
    if (neg) out[o++] = '-';
    if (exp10 >= -4 && exp10 < 16) {
        if (exp10 < 0) {
            out[o++] = '0';
            out[o++] = '.';
            for (int i = -1; i > exp10; i--) out[o++] = '0';
            for (int i = 0; i < nd; i++) out[o++] = digits[i];
        } else {
            int i;
            for (i = 0; i <= exp10; i++) out[o++] = i < nd ? digits[i] : '0';
            out[o++] = '.';
            if (i >= nd) out[o++] = '0';
            for (; i < nd; i++) out[o++] = digits[i];
        }
    } else {
        out[o++] = digits[0];
        if (nd > 1) {
            out[o++] = '.';
            for (int i = 1; i < nd; i++) out[o++] = digits[i];
        }
        o += snprintf(out + o, sizeof out - (size_t)o, "e%c%02d", exp10 < 0 ? '-' : '+',
                      exp10 < 0 ? -exp10 : exp10);
    }
    out[o] = 0;
    return snprintf(buf, cap, "%s", out);
}
