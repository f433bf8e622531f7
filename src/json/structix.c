#include "structix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#define TL_SX_X86 1
#include <immintrin.h>
#endif
#if defined(__aarch64__) && defined(__ARM_NEON)
#define TL_SX_ARM 1
#include <arm_neon.h>
#endif

/* ------------------------------------------------------------ portable */

/* Byte classes of the portable path: one bit per mask of tl_sx_masks. */
enum { C_QUOTE = 1, C_BSLASH = 2, C_STRUCT = 4, C_SPACE = 8, C_CTRL = 16, C_HIGH = 32 };

static unsigned byte_class(unsigned c)
{
    if (c == '"') return C_QUOTE;
    if (c == '\\') return C_BSLASH;
    if (c == '{' || c == '}' || c == '[' || c == ']' || c == ':' || c == ',') return C_STRUCT;
    if (c == ' ') return C_SPACE;
    if (c == '\t' || c == '\n' || c == '\r') return C_SPACE | C_CTRL;
    if (c < 0x20) return C_CTRL;
    if (c >= 0x80) return C_HIGH;
    return 0;
}

static void classify_fallback(const uint8_t *p, tl_sx_masks *m)
{
    tl_sx_masks r = {0};
    for (unsigned i = 0; i < 64; i++) {
        unsigned c = byte_class(p[i]);
        uint64_t bit = (uint64_t)1 << i;
        if (c & C_QUOTE) r.quote |= bit;
        if (c & C_BSLASH) r.bslash |= bit;
        if (c & C_STRUCT) r.structural |= bit;
        if (c & C_SPACE) r.space |= bit;
        if (c & C_CTRL) r.ctrl |= bit;
        if (c & C_HIGH) r.high |= bit;
    }
    *m = r;
}

/* The scanner's masks, 8 bytes at a time with word arithmetic: a byte of
 * the word has its top bit set in `x` exactly when it is in the class. */
static inline uint64_t swar_eq(uint64_t w, uint8_t c)
{
    const uint64_t ones = 0x0101010101010101ull, low7 = 0x7f7f7f7f7f7f7f7full;
    uint64_t x = w ^ (ones * c);                 /* zero byte where equal */
    return ~(((x & low7) + low7) | x) & ~low7;   /* top bit where zero */
}

static inline uint64_t swar_lt(uint64_t w, uint8_t n) /* bytes < n (n <= 0x80) */
{
    const uint64_t ones = 0x0101010101010101ull, low7 = 0x7f7f7f7f7f7f7f7full;
    /* (b & 0x7f) + (0x80 - n) has its top bit clear iff (b & 0x7f) < n;
     * bytes >= 0x80 are excluded by ~w */
    return ~((w & low7) + ones * (uint8_t)(0x80 - n)) & ~w & ~low7;
}

/* Gathers the top bit of each byte of t into 8 bits. */
static inline unsigned swar_bits(uint64_t t)
{
    return (unsigned)(((t >> 7) * 0x0102040810204080ull) >> 56);
}

static void scan_blocks_fallback(const uint8_t *p, size_t n, tl_sx_scan_masks *out)
{
    for (size_t b = 0; b < n; b++, p += 64) {
        uint64_t stop = 0, space = 0;
        for (unsigned k = 0; k < 8; k++) {
            uint64_t w;
            memcpy(&w, p + 8 * k, 8);
            /* little-endian byte order: byte j of the word is p[8k + j] */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            w = __builtin_bswap64(w);
#endif
            const uint64_t high = 0x8080808080808080ull;
            uint64_t st = swar_eq(w, '"') | swar_eq(w, '\\') | swar_lt(w, 0x20) | (w & high);
            uint64_t sp = swar_eq(w, ' ') | swar_eq(w, '\t') | swar_eq(w, '\n') | swar_eq(w, '\r');
            stop |= (uint64_t)swar_bits(st) << (8 * k);
            space |= (uint64_t)swar_bits(sp) << (8 * k);
        }
        out[b].stop = stop;
        out[b].nonspace = ~space;
    }
}

/* ---------------------------------------------------------------- x86 */

#ifdef TL_SX_X86
__attribute__((target("sse4.2"))) static inline uint64_t mm_bits(__m128i a, __m128i b, __m128i c, __m128i d)
{
    return (uint64_t)(uint32_t)_mm_movemask_epi8(a) | (uint64_t)(uint32_t)_mm_movemask_epi8(b) << 16 |
           (uint64_t)(uint32_t)_mm_movemask_epi8(c) << 32 | (uint64_t)(uint32_t)_mm_movemask_epi8(d) << 48;
}

#define SSE_CLASSES(x)                                                                                          \
    __m128i q_##x = _mm_cmpeq_epi8(x, quote), b_##x = _mm_cmpeq_epi8(x, bsl);                                  \
    __m128i l_##x = _mm_or_si128(x, lower);                                                                     \
    __m128i s_##x = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(l_##x, lbrace), _mm_cmpeq_epi8(l_##x, rbrace)),    \
                                 _mm_or_si128(_mm_cmpeq_epi8(x, colon), _mm_cmpeq_epi8(x, comma)));             \
    __m128i w_##x = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, sp), _mm_cmpeq_epi8(x, tab)),                   \
                                 _mm_or_si128(_mm_cmpeq_epi8(x, nl), _mm_cmpeq_epi8(x, cr)));                   \
    __m128i c_##x = _mm_cmpeq_epi8(_mm_max_epu8(x, c1f), c1f)

#define SSE_CONSTS                                                                                              \
    const __m128i quote = _mm_set1_epi8('"'), bsl = _mm_set1_epi8('\\'), lower = _mm_set1_epi8(0x20);          \
    const __m128i lbrace = _mm_set1_epi8('{'), rbrace = _mm_set1_epi8('}'), colon = _mm_set1_epi8(':');        \
    const __m128i comma = _mm_set1_epi8(','), sp = _mm_set1_epi8(' '), tab = _mm_set1_epi8('\t');               \
    const __m128i nl = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r'), c1f = _mm_set1_epi8(0x1f)

__attribute__((target("sse4.2"))) static void classify_sse42(const uint8_t *p, tl_sx_masks *m)
{
    SSE_CONSTS;
    (void)lbrace;
    __m128i x0 = _mm_loadu_si128((const __m128i *)p), x1 = _mm_loadu_si128((const __m128i *)(p + 16));
    __m128i x2 = _mm_loadu_si128((const __m128i *)(p + 32)), x3 = _mm_loadu_si128((const __m128i *)(p + 48));
    SSE_CLASSES(x0);
    SSE_CLASSES(x1);
    SSE_CLASSES(x2);
    SSE_CLASSES(x3);
    m->quote = mm_bits(q_x0, q_x1, q_x2, q_x3);
    m->bslash = mm_bits(b_x0, b_x1, b_x2, b_x3);
    m->structural = mm_bits(s_x0, s_x1, s_x2, s_x3);
    m->space = mm_bits(w_x0, w_x1, w_x2, w_x3);
    m->ctrl = mm_bits(c_x0, c_x1, c_x2, c_x3);
    m->high = mm_bits(x0, x1, x2, x3);
}

/* The scanner's masks by nibble lookup: a byte's class is LO[low nibble] &
 * HI[high nibble], with bits  1: any byte of the high nibbles 0, 1, 8-f
 * (control and >= 0x80), 2: '"', 4: '\\', 8: ' ', 16: '\t' '\n' '\r'.
 * stop = class & 7, space = class & 24. */
#define NIB_LO 9, 1, 3, 1, 1, 1, 1, 1, 1, 17, 17, 1, 5, 17, 1, 1
#define NIB_HI 17, 1, 10, 0, 0, 4, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1

__attribute__((target("sse4.2"))) static void scan_blocks_sse42(const uint8_t *p, size_t n, tl_sx_scan_masks *out)
{
    const __m128i lo_t = _mm_setr_epi8(NIB_LO), hi_t = _mm_setr_epi8(NIB_HI), f = _mm_set1_epi8(0x0f);
    const __m128i stop_b = _mm_set1_epi8(7), space_b = _mm_set1_epi8(24), zero = _mm_setzero_si128();
    for (size_t b = 0; b < n; b++, p += 64) {
        __m128i st[4], ws[4];
        for (int k = 0; k < 4; k++) {
            __m128i x = _mm_loadu_si128((const __m128i *)(p + 16 * k));
            __m128i c = _mm_and_si128(_mm_shuffle_epi8(lo_t, _mm_and_si128(x, f)),
                                      _mm_shuffle_epi8(hi_t, _mm_and_si128(_mm_srli_epi16(x, 4), f)));
            st[k] = _mm_cmpeq_epi8(_mm_and_si128(c, stop_b), zero);
            ws[k] = _mm_cmpeq_epi8(_mm_and_si128(c, space_b), zero);
        }
        out[b].stop = ~mm_bits(st[0], st[1], st[2], st[3]);
        out[b].nonspace = mm_bits(ws[0], ws[1], ws[2], ws[3]);
    }
}

__attribute__((target("avx2"))) static inline uint64_t mm256_bits(__m256i a, __m256i b)
{
    return (uint64_t)(uint32_t)_mm256_movemask_epi8(a) | (uint64_t)(uint32_t)_mm256_movemask_epi8(b) << 32;
}

__attribute__((target("avx2"))) static void classify_avx2(const uint8_t *p, tl_sx_masks *m)
{
    const __m256i quote = _mm256_set1_epi8('"'), bsl = _mm256_set1_epi8('\\'), lower = _mm256_set1_epi8(0x20);
    const __m256i lbrace = _mm256_set1_epi8('{'), rbrace = _mm256_set1_epi8('}'), colon = _mm256_set1_epi8(':');
    const __m256i comma = _mm256_set1_epi8(','), sp = _mm256_set1_epi8(' '), tab = _mm256_set1_epi8('\t');
    const __m256i nl = _mm256_set1_epi8('\n'), cr = _mm256_set1_epi8('\r'), c1f = _mm256_set1_epi8(0x1f);
    __m256i x[2] = {_mm256_loadu_si256((const __m256i *)p), _mm256_loadu_si256((const __m256i *)(p + 32))};
    __m256i q[2], b[2], s[2], w[2], c[2];
    for (int k = 0; k < 2; k++) {
        __m256i l = _mm256_or_si256(x[k], lower);
        q[k] = _mm256_cmpeq_epi8(x[k], quote);
        b[k] = _mm256_cmpeq_epi8(x[k], bsl);
        s[k] = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(l, lbrace), _mm256_cmpeq_epi8(l, rbrace)),
                               _mm256_or_si256(_mm256_cmpeq_epi8(x[k], colon), _mm256_cmpeq_epi8(x[k], comma)));
        w[k] = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(x[k], sp), _mm256_cmpeq_epi8(x[k], tab)),
                               _mm256_or_si256(_mm256_cmpeq_epi8(x[k], nl), _mm256_cmpeq_epi8(x[k], cr)));
        c[k] = _mm256_cmpeq_epi8(_mm256_max_epu8(x[k], c1f), c1f);
    }
    m->quote = mm256_bits(q[0], q[1]);
    m->bslash = mm256_bits(b[0], b[1]);
    m->structural = mm256_bits(s[0], s[1]);
    m->space = mm256_bits(w[0], w[1]);
    m->ctrl = mm256_bits(c[0], c[1]);
    m->high = mm256_bits(x[0], x[1]);
}

__attribute__((target("avx2"))) static void scan_blocks_avx2(const uint8_t *p, size_t n, tl_sx_scan_masks *out)
{
    const __m256i lo_t = _mm256_setr_epi8(NIB_LO, NIB_LO), hi_t = _mm256_setr_epi8(NIB_HI, NIB_HI);
    const __m256i f = _mm256_set1_epi8(0x0f), stop_b = _mm256_set1_epi8(7), space_b = _mm256_set1_epi8(24);
    const __m256i zero = _mm256_setzero_si256();
    for (size_t b = 0; b < n; b++, p += 64) {
        __m256i st[2], ws[2];
        for (int k = 0; k < 2; k++) {
            __m256i x = _mm256_loadu_si256((const __m256i *)(p + 32 * k));
            __m256i c = _mm256_and_si256(_mm256_shuffle_epi8(lo_t, _mm256_and_si256(x, f)),
                                         _mm256_shuffle_epi8(hi_t, _mm256_and_si256(_mm256_srli_epi16(x, 4), f)));
            st[k] = _mm256_cmpeq_epi8(_mm256_and_si256(c, stop_b), zero);
            ws[k] = _mm256_cmpeq_epi8(_mm256_and_si256(c, space_b), zero);
        }
        out[b].stop = ~mm256_bits(st[0], st[1]);
        out[b].nonspace = mm256_bits(ws[0], ws[1]);
    }
}
#endif

/* ---------------------------------------------------------------- arm64 */

#ifdef TL_SX_ARM
/* Four compare results (0x00 / 0xff per byte) as 64 bits: each byte keeps
 * its own bit weight, pairwise adds gather the bytes' bits together. */
static inline uint64_t neon_bits(uint8x16_t a, uint8x16_t b, uint8x16_t c, uint8x16_t d)
{
    static const uint8_t w[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    const uint8x16_t wv = vld1q_u8(w);
    uint8x16_t t0 = vpaddq_u8(vandq_u8(a, wv), vandq_u8(b, wv));
    uint8x16_t t1 = vpaddq_u8(vandq_u8(c, wv), vandq_u8(d, wv));
    t0 = vpaddq_u8(t0, t1);
    t0 = vpaddq_u8(t0, t0);
    return vgetq_lane_u64(vreinterpretq_u64_u8(t0), 0);
}

static void classify_neon(const uint8_t *p, tl_sx_masks *m)
{
    uint8x16_t q[4], b[4], s[4], w[4], c[4], h[4];
    for (int k = 0; k < 4; k++) {
        uint8x16_t x = vld1q_u8(p + 16 * k), l = vorrq_u8(x, vdupq_n_u8(0x20));
        q[k] = vceqq_u8(x, vdupq_n_u8('"'));
        b[k] = vceqq_u8(x, vdupq_n_u8('\\'));
        s[k] = vorrq_u8(vorrq_u8(vceqq_u8(l, vdupq_n_u8('{')), vceqq_u8(l, vdupq_n_u8('}'))),
                        vorrq_u8(vceqq_u8(x, vdupq_n_u8(':')), vceqq_u8(x, vdupq_n_u8(','))));
        w[k] = vorrq_u8(vorrq_u8(vceqq_u8(x, vdupq_n_u8(' ')), vceqq_u8(x, vdupq_n_u8('\t'))),
                        vorrq_u8(vceqq_u8(x, vdupq_n_u8('\n')), vceqq_u8(x, vdupq_n_u8('\r'))));
        c[k] = vcltq_u8(x, vdupq_n_u8(0x20));
        h[k] = vcgeq_u8(x, vdupq_n_u8(0x80));
    }
    m->quote = neon_bits(q[0], q[1], q[2], q[3]);
    m->bslash = neon_bits(b[0], b[1], b[2], b[3]);
    m->structural = neon_bits(s[0], s[1], s[2], s[3]);
    m->space = neon_bits(w[0], w[1], w[2], w[3]);
    m->ctrl = neon_bits(c[0], c[1], c[2], c[3]);
    m->high = neon_bits(h[0], h[1], h[2], h[3]);
}

static void scan_blocks_neon(const uint8_t *p, size_t n, tl_sx_scan_masks *out)
{
    for (size_t b = 0; b < n; b++, p += 64) {
        uint8x16_t st[4], ws[4];
        for (int k = 0; k < 4; k++) {
            uint8x16_t x = vld1q_u8(p + 16 * k);
            st[k] = vorrq_u8(vorrq_u8(vceqq_u8(x, vdupq_n_u8('"')), vceqq_u8(x, vdupq_n_u8('\\'))),
                             vorrq_u8(vcltq_u8(x, vdupq_n_u8(0x20)), vcgeq_u8(x, vdupq_n_u8(0x80))));
            ws[k] = vorrq_u8(vorrq_u8(vceqq_u8(x, vdupq_n_u8(' ')), vceqq_u8(x, vdupq_n_u8('\t'))),
                             vorrq_u8(vceqq_u8(x, vdupq_n_u8('\n')), vceqq_u8(x, vdupq_n_u8('\r'))));
        }
        out[b].stop = neon_bits(st[0], st[1], st[2], st[3]);
        out[b].nonspace = ~neon_bits(ws[0], ws[1], ws[2], ws[3]);
    }
}
#endif

/* ------------------------------------------------------------ dispatch */

const char *tl_sx_name(tl_sx_path path)
{
    switch (path) {
    case TL_SX_AUTO: return "auto";
    case TL_SX_FALLBACK: return "fallback";
    case TL_SX_SSE42: return "sse4.2";
    case TL_SX_AVX2: return "avx2";
    case TL_SX_NEON: return "neon";
    default: return "?";
    }
}

int tl_sx_supported(tl_sx_path path)
{
    switch (path) {
    case TL_SX_AUTO:
    case TL_SX_FALLBACK: return 1;
#ifdef TL_SX_X86
    case TL_SX_SSE42: __builtin_cpu_init(); return __builtin_cpu_supports("sse4.2") != 0;
    case TL_SX_AVX2: __builtin_cpu_init(); return __builtin_cpu_supports("avx2") != 0;
#endif
#ifdef TL_SX_ARM
    case TL_SX_NEON: return 1;
#endif
    default: return 0;
    }
}

int tl_sx_resolve(tl_sx_path want, tl_sx_path *out, char *msg, size_t cap)
{
    if (want == TL_SX_AUTO) {
        const char *env = getenv("TRACELENS_SCAN");
        if (env && *env && strcmp(env, "auto") != 0) {
            if (!strcmp(env, "fallback")) want = TL_SX_FALLBACK;
            else if (!strcmp(env, "sse4.2") || !strcmp(env, "sse")) want = TL_SX_SSE42;
            else if (!strcmp(env, "avx2")) want = TL_SX_AVX2;
            else if (!strcmp(env, "neon")) want = TL_SX_NEON;
            else {
                snprintf(msg, cap, "TRACELENS_SCAN=%.40s: not a scanner path (auto, fallback, sse4.2, avx2, neon)", env);
                return -1;
            }
        }
    }
    if (want == TL_SX_AUTO) {
        want = tl_sx_supported(TL_SX_AVX2)    ? TL_SX_AVX2
               : tl_sx_supported(TL_SX_NEON)  ? TL_SX_NEON
               : tl_sx_supported(TL_SX_SSE42) ? TL_SX_SSE42
                                              : TL_SX_FALLBACK;
    }
    if (want <= TL_SX_AUTO || want >= TL_SX_NPATHS || !tl_sx_supported(want)) {
        snprintf(msg, cap, "scanner path %s: this machine cannot run it", tl_sx_name(want));
        return -1;
    }
    *out = want;
    return 0;
}

void tl_sx_classify(tl_sx_path path, const uint8_t *p, tl_sx_masks *out)
{
    switch (path) {
#ifdef TL_SX_X86
    case TL_SX_SSE42: classify_sse42(p, out); return;
    case TL_SX_AVX2: classify_avx2(p, out); return;
#endif
#ifdef TL_SX_ARM
    case TL_SX_NEON: classify_neon(p, out); return;
#endif
    default: classify_fallback(p, out); return;
    }
}

void tl_sx_scan_blocks(tl_sx_path path, const uint8_t *p, size_t n, tl_sx_scan_masks *out)
{
    switch (path) {
#ifdef TL_SX_X86
    case TL_SX_SSE42: scan_blocks_sse42(p, n, out); return;
    case TL_SX_AVX2: scan_blocks_avx2(p, n, out); return;
#endif
#ifdef TL_SX_ARM
    case TL_SX_NEON: scan_blocks_neon(p, n, out); return;
#endif
    default: scan_blocks_fallback(p, n, out); return;
    }
}

/* ------------------------------------------------------ string tracking */

static inline uint64_t prefix_xor(uint64_t x)
{
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

uint64_t tl_sx_strings(const tl_sx_masks *m, tl_sx_strstate *st, uint64_t *escaped, uint64_t *inside)
{
    /* a backslash escapes the next byte unless it is escaped itself: walk
     * the backslashes in order (they are rare in traces) */
    uint64_t esc = st->escaped_next & 1, carry = 0, b = m->bslash;
    while (b) {
        unsigned i = (unsigned)__builtin_ctzll(b);
        b &= b - 1;
        if ((esc >> i) & 1) continue;
        if (i == 63) carry = 1;
        else esc |= (uint64_t)1 << (i + 1);
    }
    uint64_t in = prefix_xor(m->quote & ~esc) ^ st->in_string;
    st->escaped_next = carry;
    st->in_string = (uint64_t)0 - (in >> 63);
    *escaped = esc;
    *inside = in;
    return m->structural & ~in;
}
