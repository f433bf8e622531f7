#include "pyfmt.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Python's float repr: the fewest significant digits that read back as x
 * (among those, the nearest to x), then fixed notation when the decimal
 * exponent is in -4..15, scientific otherwise, with at least one fraction
 * digit in fixed form. */

/* The common case fast, in integer arithmetic: x's shortest text as k /
 * 10^d. Let u be the spacing of doubles at x. When 10^d * u < 1/3 and
 * x * 10^d < 2^53: if some integer n reads back as x (n / 10^d rounds to
 * x), then |n - x*10^d| <= 10^d*u/2 and the rounded product fl(x*10^d) is
 * within 10^d*u of x*10^d, so it lies within 1.5*10^d*u < 1/2 of n and
 * rounds to n; and k / 10^d, both operands exact, is the correctly rounded
 * double of the decimal k*10^-d, so the test below is exact. The interval
 * of decimals reading back as x is narrower than 1/3 at scale 10^d, so n
 * is the only candidate, and the smallest such d is the shortest text.
 * Returns 1 with x's digits (no trailing zero) and decimal exponent; else
 * 0 with *min_p, the smallest "%.{p}e" precision that can read back (every
 * text with fewer decimals was ruled out). */
static int short_decimal(double ax, char *digits, int *nd, int *exp10, int *min_p)
{
    static const double P10[] = {1,    1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    int d;
    uint64_t bits;
    memcpy(&bits, &ax, sizeof bits);
    int bexp = (int)(bits >> 52 & 0x7ff);
    double u; /* the spacing of doubles at ax: 2^(bexp - 1075) */
    if (bexp > 52) {
        uint64_t ub = (uint64_t)(bexp - 52) << 52;
        memcpy(&u, &ub, sizeof u);
    } else {
        int e;
        frexp(ax, &e);
        u = ldexp(1.0, e - 53);
    }
    for (d = 0; d < (int)(sizeof P10 / sizeof *P10); d++) {
        if (u * P10[d] >= 1.0 / 3) break;
        double m = ax * P10[d];
        if (m >= 9007199254740992.0) break;
        double k = nearbyint(m);
        if (k / P10[d] != ax) continue;
        unsigned long long kk = (unsigned long long)k;
        char tmp[24];
        int n = 0;
        do {
            tmp[n++] = (char)('0' + kk % 10);
            kk /= 10;
        } while (kk);
        *exp10 = n - 1 - d;
        int z = 0;
        while (z < n - 1 && tmp[z] == '0') z++; /* trailing zeros of k */
        *nd = n - z;
        for (int i = 0; i < *nd; i++) digits[i] = tmp[n - 1 - i];
        return 1;
    }
    /* no text with fewer than d decimals (none ruled out when d = 0): at
     * least d + e10 + 1 significant digits for any e10 <= floor(log10 ax):
     * from the binary exponent (a subnormal: log10, taken one lower for its
     * rounding) */
    int e10;
    if (bexp) { /* floor((bexp - 1023) * log10 2) <= floor(log10 ax) */
        double t = (bexp - 1023) * 0.30102999566398120;
        e10 = (int)t;
        if (t < e10) e10--;
    } else e10 = (int)floor(log10(ax)) - 1; /* one lower, for log10's rounding */
    int p = d ? d + e10 : 0;
    *min_p = p < 0 ? 0 : p > 16 ? 16 : p;
    return 0;
}

/* Python's text from significant digits (no trailing zero) and exponent. */
static int format_digits(char *buf, size_t cap, int neg, const char *digits, int nd, int exp10)
{
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
        int ax = exp10 < 0 ? -exp10 : exp10; /* "e%c%02d" */
        out[o++] = 'e';
        out[o++] = exp10 < 0 ? '-' : '+';
        if (ax >= 100) out[o++] = (char)('0' + ax / 100);
        out[o++] = (char)('0' + ax / 10 % 10);
        out[o++] = (char)('0' + ax % 10);
    }
    if (cap == 0) return o;
    size_t k = (size_t)o < cap ? (size_t)o : cap - 1; /* snprintf's truncation */
    memcpy(buf, out, k);
    buf[k] = 0;
    return o;
}

/* The shortest text of x = m * 2^e (m in (2^52, 2^53): a normal double,
 * not a power of two, positive) in exact integer arithmetic, when its 17
 * significant digits sit at a scale 10^k, 0 <= k <= 27, small enough for
 * 128 bits: X = 2 * m * 5^k is x * 10^k * 2^S with S = 1 - e - k, so
 * N = X >> S is x * 10^k truncated to 17 digits, and the half-spacing of
 * doubles at x is H = 5^k at that scale. The correctly rounded text with
 * p + 1 digits (printf's "%.{p}e": exact ties to even) is D = q * 10^(16-p),
 * and it reads back as x when |D * 2^S - X| < H, or = H with m even
 * (strtod's ties to even). Away from a power of two that interval is
 * symmetric about x, so reading back is monotone in p and a binary search
 * over p in min_p..16 finds the smallest -- the search shortest_exp does
 * with printf and strtod, without them. Returns 1 with the digits (no
 * trailing zero) and exponent; 0 when x is out of this range. */
typedef unsigned __int128 u128;
static const uint64_t P10_64[] = {1ull,
                                  10ull,
                                  100ull,
                                  1000ull,
                                  10000ull,
                                  100000ull,
                                  1000000ull,
                                  10000000ull,
                                  100000000ull,
                                  1000000000ull,
                                  10000000000ull,
                                  100000000000ull,
                                  1000000000000ull,
                                  10000000000000ull,
                                  100000000000000ull,
                                  1000000000000000ull,
                                  10000000000000000ull,
                                  100000000000000000ull};

/* q: N rounded to p + 1 digits (as printf rounds: exact ties to even);
 * returns whether q * 10^(16-p) reads back as x. */
static int rounds_back(uint64_t N, u128 rem, int S, u128 X, u128 H, uint64_t m, int p, uint64_t *q_out)
{
    uint64_t div = P10_64[16 - p], q = N / div, r = N - q * div;
    /* the part below q: r * 2^S + rem, against half a unit, div * 2^(S-1) */
    u128 below = ((u128)r << S) + rem, half = (u128)div << (S - 1);
    if (below > half || (below == half && (q & 1))) q++;
    u128 D = (u128)(q * div) << S;
    u128 dist = D > X ? D - X : X - D;
    *q_out = q;
    return dist < H || (dist == H && !(m & 1));
}

static int exact_shortest(uint64_t m, int e, int min_p, char *digits, int *nd, int *exp10)
{
    /* floor(log10 x) is floor((e + 52) * log10 2) or one more */
    double t = (e + 52) * 0.30102999566398120;
    int f = (int)t;
    if (t < f) f--;
    int k = 16 - f;
    for (int tries = 0; tries < 3; tries++) {
        if (k < 0 || k > 27) return 0;
        int S = 1 - e - k;
        if (S < 1 || S > 68) return 0;
        uint64_t p5 = 1;
        for (int i = 0; i < k; i++) p5 *= 5;
        u128 X = (u128)(2 * m) * p5;
        u128 Nw = X >> S;
        if (Nw >= (u128)P10_64[17]) { /* one digit too many */
            k--;
            continue;
        }
        if (Nw < (u128)P10_64[16]) {
            k++;
            continue;
        }
        uint64_t N = (uint64_t)Nw, q;
        u128 rem = X - (Nw << S), H = p5;
        int lo = min_p, hi = 16; /* p = 16 (17 digits) always reads back */
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (rounds_back(N, rem, S, X, H, m, mid, &q)) hi = mid;
            else lo = mid + 1;
        }
        (void)rounds_back(N, rem, S, X, H, m, lo, &q);
        /* q has lo + 1 digits, or lo + 2 when rounding carried (q = 10^(lo+1)) */
        int carry = q == P10_64[lo + 1];
        if (carry) q /= 10;
        char tmp[20];
        for (int i = 0; i <= lo; i++) {
            tmp[lo - i] = (char)('0' + q % 10);
            q /= 10;
        }
        int n = lo + 1;
        while (n > 1 && tmp[n - 1] == '0') n--;
        memcpy(digits, tmp, (size_t)n);
        *nd = n;
        *exp10 = 16 - k + carry;
        return 1;
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
 * and a binary search finds the smallest (from min_p, below which none
 * reads back). At a power of two the interval
 * is narrower below x, so every p is tried in turn. */
static void shortest_exp(char *e, size_t cap, double x, int min_p)
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
    int lo = min_p, hi = 16;
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
    char digits[24];
    int nd, exp10, min_p;
    if (short_decimal(fabs(x), digits, &nd, &exp10, &min_p)) return format_digits(buf, cap, x < 0, digits, nd, exp10);
    /* a normal double, not a power of two: the exact search, in range */
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    uint64_t frac = bits & ((1ull << 52) - 1);
    int bexp = (int)((bits >> 52) & 0x7ff);
    if (bexp != 0 && frac != 0 && exact_shortest(frac | 1ull << 52, bexp - 1075, min_p, digits, &nd, &exp10))
        return format_digits(buf, cap, x < 0, digits, nd, exp10);
    char e[40];
    shortest_exp(e, sizeof e, x, min_p);
    /* e = [-]D[.DDD]e[+-]XX */
    nd = 0;
    const char *s = e + (e[0] == '-');
    for (; *s && *s != 'e'; s++)
        if (*s != '.') digits[nd++] = *s;
    exp10 = atoi(s + 1);
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    return format_digits(buf, cap, x < 0, digits, nd, exp10);
}
