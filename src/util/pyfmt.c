#include "pyfmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Python's float repr: shortest round-tripping digits ("%.{p}e" for the
 * smallest p that round-trips), then fixed notation when -4 <= exp < 16,
 * scientific otherwise, with at least one fraction digit in fixed form. */
/* The common case fast: a value of at most six decimals between 1e-4 and
 * 1e9 (times in microseconds, percentages). k / 10^d is the correctly
 * rounded double of the decimal k·10^-d (both operands are exact), so it
 * equals x exactly when that decimal reads back as x; the smallest such d
 * gives the shortest text, and below 1e9 the spacing of doubles (< 10^-6)
 * leaves only one candidate. Returns the length, or 0 to take the slow path. */
static int short_decimal(char *buf, size_t cap, double x)
{
    static const double P10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6};
    double ax = fabs(x);
    if (!(ax >= 1e-4 && ax < 1e9) || cap < 32) return 0;
    for (int d = 0; d <= 6; d++) {
        double k = nearbyint(ax * P10[d]);
        if (k / P10[d] != ax) continue;
        long long ip = (long long)k / (long long)P10[d], fp = (long long)k % (long long)P10[d];
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

int tl_pyfloat_repr(char *buf, size_t cap, double x)
{
    if (isnan(x)) return snprintf(buf, cap, "nan");
    if (isinf(x)) return snprintf(buf, cap, x < 0 ? "-inf" : "inf");
    if (x == 0) return snprintf(buf, cap, signbit(x) ? "-0.0" : "0.0");
    int n = short_decimal(buf, cap, x);
    if (n) return n;

    char e[40];
    int p;
    for (p = 0; p < 17; p++) {
        snprintf(e, sizeof e, "%.*e", p, x);
        if (strtod(e, NULL) == x) break;
    }
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
