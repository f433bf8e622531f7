/* lpattern.c — Lua 5.4 patterns that honour the task time limit, see
 * lpattern.h. Written from the reference manual (§6.4, §6.4.1).
 *
 * The matcher is a backtracking recursive descent over the pattern text:
 * pm_match consumes items left to right and recurses only where it must
 * try alternatives (a single-character class with '*', '+', '-' or '?', and
 * every capture boundary, whose bookkeeping is undone on failure). Its
 * nesting is limited to PM_MAX_DEPTH calls ("pattern too complex"), the
 * limit of Lua's own matcher, so both reject the same patterns.
 *
 * Time: work is counted in steps, about one per byte read: a pm_match call,
 * each test of a subject byte against a class (as many steps as the class
 * has pattern bytes, so a huge [set] counts as what it costs), each subject
 * byte %b or a back-reference goes over, each replacement string expanded
 * (its length). Every PM_CHECK_STEPS steps tl_limits_check raises "time
 * limit exceeded" once the task's deadline has passed, so the time between
 * two checks is bounded whatever the pattern: at most a few thousand steps,
 * or one linear scan of the subject (a run of a short class, counted when
 * it ends).
 *
 * Speed: a try that would fail at once without an error is skipped. Where
 * the next pattern item is a plain character that must be present, so are
 * positions without it (memchr at the start of find/match/gmatch/gsub, a
 * byte test in the '*' and '-' loops; tries where the depth limit would
 * raise an error are made); where a pattern begins with a class that must
 * match one byte, so are positions whose byte is not in it. Results and
 * errors are the same as with every try made. */
#include "lpattern.h"

#include <ctype.h>
#include <lauxlib.h>
#include <lualib.h>
#include <stdint.h>
#include <string.h>

#include "limits.h"

#define PM_MAX_CAPTURES 32  /* as LUA_MAXCAPTURES */
#define PM_MAX_DEPTH 200    /* nested pm_match calls, as Lua's matcher */
#define PM_CHECK_STEPS 4096 /* matching steps between two time-limit checks */

#define PM_OPEN (-1)        /* capture length: started, not closed yet */
#define PM_POSITION (-2)    /* capture length: a position capture "()" */

typedef struct pm_state {
    lua_State *L;
    const char *src, *src_end; /* the whole subject (positions count from src) */
    const char *pat_end;
    int depth;                 /* pm_match calls that may still nest */
    int ncap;                  /* captures started */
    long steps;                /* steps left until the next time check */
    struct {
        const char *start;
        ptrdiff_t len;         /* a length, PM_OPEN or PM_POSITION */
    } cap[PM_MAX_CAPTURES];
} pm_state;

static void pm_init(pm_state *m, lua_State *L, const char *s, size_t slen, const char *p, size_t plen)
{
    m->L = L;
    m->src = s;
    m->src_end = s + slen;
    m->pat_end = p + plen;
    m->steps = PM_CHECK_STEPS;
}

/* Before each match attempt at a new subject position. */
static inline void pm_reset(pm_state *m)
{
    m->ncap = 0;
    m->depth = PM_MAX_DEPTH;
}

static void pm_tick(pm_state *m)
{
    m->steps = PM_CHECK_STEPS;
    tl_limits_check(m->L);
}

static inline void pm_spend(pm_state *m, ptrdiff_t n)
{
    m->steps -= n;
    if (m->steps <= 0) pm_tick(m);
}

/* --- single-character classes ------------------------------------------- */

/* Is byte c in class %cl (a c d g l p s u w x z, upper case for the
 * complement)? Any other cl stands for itself. */
static int pm_class(int c, int cl)
{
    int in;
    switch (tolower(cl)) {
    case 'a': in = isalpha(c); break;
    case 'c': in = iscntrl(c); break;
    case 'd': in = isdigit(c); break;
    case 'g': in = isgraph(c); break;
    case 'l': in = islower(c); break;
    case 'p': in = ispunct(c); break;
    case 's': in = isspace(c); break;
    case 'u': in = isupper(c); break;
    case 'w': in = isalnum(c); break;
    case 'x': in = isxdigit(c); break;
    case 'z': in = c == 0; break; /* the NUL byte: gone from the manual, kept by Lua */
    default: return cl == c;
    }
    return isupper(cl) ? !in : in != 0;
}

/* Is byte c in the set whose '[' is at open and whose ']' is at close?
 * Elements: %x classes, ranges x-y, single characters; '^' first negates. */
static int pm_set(int c, const char *open, const char *close)
{
    const char *p = open + 1;
    int found = 1;
    if (*p == '^') {
        found = 0;
        p++;
    }
    while (p < close) {
        if (*p == '%') {
            if (pm_class(c, (unsigned char)p[1])) return found;
            p += 2;
        } else if (p[1] == '-' && p + 2 < close) {
            if ((unsigned char)p[0] <= c && c <= (unsigned char)p[2]) return found;
            p += 3;
        } else {
            if ((unsigned char)*p == c) return found;
            p++;
        }
    }
    return !found;
}

/* Past the single-character class at p (a byte, '.', %x or a [set]).
 * Pattern texts come from Lua strings, so *pat_end is a readable '\0'. */
static const char *pm_item_end(pm_state *m, const char *p)
{
    char c = *p++;
    if (c == '%') {
        if (p >= m->pat_end) luaL_error(m->L, "malformed pattern (ends with '%%')");
        return p + 1;
    }
    if (c == '[') {
        if (*p == '^') p++;
        do { /* the first element may be ']' itself */
            if (p >= m->pat_end) luaL_error(m->L, "malformed pattern (missing ']')");
            if (*p++ == '%' && p < m->pat_end) p++;
        } while (*p != ']');
        return p + 1;
    }
    return p;
}

/* Does the subject byte at s match the class from p to ep? */
static inline int pm_single(const pm_state *m, const char *s, const char *p, const char *ep)
{
    if (s >= m->src_end) return 0;
    int c = (unsigned char)*s;
    switch (*p) {
    case '.': return 1;
    case '%': return pm_class(c, (unsigned char)p[1]);
    case '[': return pm_set(c, p, ep - 1);
    default: return (unsigned char)*p == c;
    }
}

/* The byte that a match of the pattern at p must start with, when p starts
 * with a plain character without '*', '?' or '-' after it; else -1. */
static int pm_lead_char(const pm_state *m, const char *p)
{
    if (p >= m->pat_end) return -1;
    switch (*p) {
    case '(': case ')': case '%': case '[': case '.': return -1;
    case '$':
        if (p + 1 == m->pat_end) return -1;
        break;
    default: break;
    }
    if (p + 1 < m->pat_end && (p[1] == '*' || p[1] == '?' || p[1] == '-')) return -1;
    return (unsigned char)*p;
}

/* --- the matcher -------------------------------------------------------- */

static const char *pm_match(pm_state *m, const char *s, const char *p);

/* A try of the pattern at p from s that would fail at once without an
 * error (s lacks the lead byte, and the call would not hit the depth
 * limit) can be skipped. */
static inline int pm_skippable(const pm_state *m, int lead, const char *s)
{
    return lead >= 0 && m->depth > 0 && (s >= m->src_end || (unsigned char)*s != lead);
}

/* Where a match of a whole pattern may begin: at the byte lead (>= 0), or
 * at a byte of the single-character class p..ep (ep not NULL), or (lead < 0
 * and no ep) anywhere. The first two need a byte: never at the end. */
typedef struct pm_start {
    int lead;
    const char *p, *ep;
} pm_start;

/* Only where the pattern p will be tried at least once: the first item's
 * class is parsed here, raising the error the first try would raise. */
static void pm_start_init(pm_state *m, const char *p, pm_start *st)
{
    st->lead = pm_lead_char(m, p);
    st->p = p;
    st->ep = NULL;
    if (st->lead >= 0 || p >= m->pat_end) return;
    switch (*p) {
    case '(': case ')': return;
    case '$':
        if (p + 1 == m->pat_end) return;
        break;
    case '%':
        if (p[1] == 'b' || p[1] == 'f' || (p[1] >= '0' && p[1] <= '9')) return;
        break;
    default: break;
    }
    const char *ep = pm_item_end(m, p);
    if (*ep != '*' && *ep != '?' && *ep != '-') st->ep = ep;
}

static void pm_no_start(pm_start *st)
{
    st->lead = -1;
    st->p = st->ep = NULL;
}

/* The first position from at on where a match may begin, or NULL. */
static const char *pm_next_start(pm_state *m, const pm_start *st, const char *at)
{
    if (st->lead >= 0) return memchr(at, st->lead, (size_t)(m->src_end - at));
    if (!st->ep) return at;
    ptrdiff_t cost = st->ep - st->p;
    for (; at < m->src_end; at++) {
        if (pm_single(m, at, st->p, st->ep)) return at;
        pm_spend(m, cost);
    }
    return NULL;
}

/* Class p..ep with '*' (or '+' once one byte is taken): the longest run
 * first, then shorter ones. */
static const char *pm_greedy(pm_state *m, const char *s, const char *p, const char *ep)
{
    ptrdiff_t n = 0;
    if (*p == '.') {
        n = m->src_end - s;
        pm_spend(m, n);
    } else if (ep - p <= 8) { /* a cheap class: one linear scan, then its steps */
        while (pm_single(m, s + n, p, ep)) n++;
        pm_spend(m, n * (ep - p));
    } else { /* a long set: its steps byte by byte */
        while (pm_single(m, s + n, p, ep)) {
            n++;
            pm_spend(m, ep - p);
        }
    }
    const char *rest = ep + 1;
    int lead = pm_lead_char(m, rest);
    for (; n >= 0; n--) {
        if (pm_skippable(m, lead, s + n)) continue;
        const char *r = pm_match(m, s + n, rest);
        if (r) return r;
    }
    return NULL;
}

/* Class p..ep with '-': the shortest run first, then longer ones. */
static const char *pm_lazy(pm_state *m, const char *s, const char *p, const char *ep)
{
    const char *rest = ep + 1;
    int lead = pm_lead_char(m, rest);
    ptrdiff_t cost = ep - p;
    for (;;) {
        pm_spend(m, cost);
        if (!pm_skippable(m, lead, s)) {
            const char *r = pm_match(m, s, rest);
            if (r) return r;
        }
        if (!pm_single(m, s, p, ep)) return NULL;
        s++;
    }
}

static const char *pm_open(pm_state *m, const char *s, const char *p, ptrdiff_t kind)
{
    int i = m->ncap;
    if (i >= PM_MAX_CAPTURES) {
        luaL_error(m->L, "too many captures");
        return NULL;
    }
    m->cap[i].start = s;
    m->cap[i].len = kind;
    m->ncap = i + 1;
    const char *r = pm_match(m, s, p);
    if (!r) m->ncap = i;
    return r;
}

/* ')' closes the innermost capture still open. */
static const char *pm_close(pm_state *m, const char *s, const char *p)
{
    int i = m->ncap - 1;
    while (i >= 0 && m->cap[i].len != PM_OPEN) i--;
    if (i < 0) {
        luaL_error(m->L, "invalid pattern capture");
        return NULL;
    }
    m->cap[i].len = s - m->cap[i].start;
    const char *r = pm_match(m, s, p);
    if (!r) m->cap[i].len = PM_OPEN;
    return r;
}

/* %1-%9: the text of a closed capture again (a position capture never
 * matches). d is the digit. */
static const char *pm_backref(pm_state *m, const char *s, int d)
{
    int i = d - '1';
    if (i < 0 || i >= m->ncap || m->cap[i].len == PM_OPEN) {
        luaL_error(m->L, "invalid capture index %%%d", i + 1);
        return NULL;
    }
    ptrdiff_t len = m->cap[i].len;
    if (len < 0 || m->src_end - s < len || memcmp(m->cap[i].start, s, (size_t)len) != 0) return NULL;
    pm_spend(m, len);
    return s + len;
}

/* %bxy at s: x, then bytes up to the y that balances it. p is at x. */
static const char *pm_balance(pm_state *m, const char *s, const char *p)
{
    if (p + 1 >= m->pat_end) {
        luaL_error(m->L, "malformed pattern (missing arguments to '%%b')");
        return NULL;
    }
    if (s >= m->src_end || *s != p[0]) return NULL;
    char open = p[0], close = p[1];
    ptrdiff_t level = 1;
    for (const char *q = s + 1; q < m->src_end; q++) {
        if (*q == close) {
            if (--level == 0) {
                pm_spend(m, q - s);
                return q + 1;
            }
        } else if (*q == open) {
            level++;
        }
    }
    pm_spend(m, m->src_end - s);
    return NULL;
}

/* The end of the match of the pattern p..pat_end at s, or NULL. */
static const char *pm_match(pm_state *m, const char *s, const char *p)
{
    if (m->depth == 0) {
        luaL_error(m->L, "pattern too complex");
        return NULL;
    }
    m->depth--;
    pm_spend(m, 1);
    while (p < m->pat_end) {
        switch (*p) {
        case '(':
            s = p[1] == ')' ? pm_open(m, s, p + 2, PM_POSITION) : pm_open(m, s, p + 1, PM_OPEN);
            goto done;
        case ')':
            s = pm_close(m, s, p + 1);
            goto done;
        case '$':
            if (p + 1 == m->pat_end) { /* an anchor only at the very end */
                if (s != m->src_end) s = NULL;
                goto done;
            }
            break;
        case '%':
            if (p[1] == 'b') {
                s = pm_balance(m, s, p + 2);
                if (!s) goto done;
                p += 4;
                continue;
            }
            if (p[1] == 'f') {
                p += 2;
                if (*p != '[') luaL_error(m->L, "missing '[' after '%%f' in pattern");
                const char *ep = pm_item_end(m, p);
                pm_spend(m, 2 * (ep - p));
                int before = s == m->src ? 0 : (unsigned char)s[-1];
                int here = s < m->src_end ? (unsigned char)*s : 0;
                if (pm_set(before, p, ep - 1) || !pm_set(here, p, ep - 1)) {
                    s = NULL;
                    goto done;
                }
                p = ep;
                continue;
            }
            if (p[1] >= '0' && p[1] <= '9') {
                s = pm_backref(m, s, p[1]);
                if (!s) goto done;
                p += 2;
                continue;
            }
            break;
        default: break;
        }
        /* a single-character class, maybe with a quantifier */
        const char *ep = pm_item_end(m, p);
        if (*p == '[') pm_spend(m, ep - p);
        if (!pm_single(m, s, p, ep)) {
            if (*ep == '*' || *ep == '?' || *ep == '-') { /* zero repetitions */
                p = ep + 1;
                continue;
            }
            s = NULL;
            goto done;
        }
        switch (*ep) {
        case '?': {
            const char *r = pm_match(m, s + 1, ep + 1);
            if (r) {
                s = r;
                goto done;
            }
            p = ep + 1;
            continue;
        }
        case '+': s = pm_greedy(m, s + 1, p, ep); goto done;
        case '*': s = pm_greedy(m, s, p, ep); goto done;
        case '-': s = pm_lazy(m, s, p, ep); goto done;
        default:
            s++;
            p = ep;
            continue;
        }
    }
done:
    m->depth++;
    return s;
}

/* --- results ------------------------------------------------------------ */

/* Capture i (0-based) of the match s..e: its text in *text and its length,
 * or PM_POSITION with the position's byte in *text. With no captures,
 * capture 0 is the whole match. */
static ptrdiff_t pm_capture(pm_state *m, int i, const char *s, const char *e, const char **text)
{
    if (i >= m->ncap) {
        if (i != 0) luaL_error(m->L, "invalid capture index %%%d", i + 1);
        *text = s;
        return e - s;
    }
    if (m->cap[i].len == PM_OPEN) luaL_error(m->L, "unfinished capture");
    *text = m->cap[i].start;
    return m->cap[i].len;
}

static void pm_push_capture(pm_state *m, int i, const char *s, const char *e)
{
    const char *t;
    ptrdiff_t len = pm_capture(m, i, s, e, &t);
    if (len == PM_POSITION) lua_pushinteger(m->L, (lua_Integer)(t - m->src) + 1);
    else lua_pushlstring(m->L, t, (size_t)len);
}

/* Pushes every capture (the whole match when there are none and s is
 * given); returns how many. */
static int pm_push_captures(pm_state *m, const char *s, const char *e)
{
    int n = m->ncap == 0 && s ? 1 : m->ncap;
    luaL_checkstack(m->L, n, "too many captures");
    for (int i = 0; i < n; i++) pm_push_capture(m, i, s, e);
    return n;
}

/* 0-based start for the init argument (negative counts from the end);
 * may be past the end of the subject. */
static size_t pm_init_pos(lua_Integer init, size_t len)
{
    if (init > 0) return (size_t)init - 1;
    if (init == 0 || init < -(lua_Integer)len) return 0;
    return len - (size_t)(-init);
}

static int pm_has_specials(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (p[i]) {
        case '^': case '$': case '*': case '+': case '?': case '.': case '(': case '[': case '%': case '-':
            return 1;
        default: break;
        }
    }
    return 0;
}

/* The first occurrence of p (n bytes) in s (len bytes), or NULL. For the
 * short needles of typical calls, memchr on the first byte then memcmp is
 * faster than memmem's setup; long needles go to memmem, whose time is
 * linear (the memchr loop could take len * n steps). */
static const char *pm_find_plain(const char *s, size_t len, const char *p, size_t n)
{
    if (n == 0) return s;
    if (n > len) return NULL;
    if (n > 32) return memmem(s, len, p, n);
    const char *last = s + (len - n); /* the last possible start */
    while (s <= last) {
        const char *q = memchr(s, p[0], (size_t)(last - s) + 1);
        if (!q) return NULL;
        if (memcmp(q + 1, p + 1, n - 1) == 0) return q;
        s = q + 1;
    }
    return NULL;
}

/* Sets m up for pattern *p over s, a leading '^' taken as the anchor (*p
 * and *plen then skip it), and st for skipping start positions (none when
 * anchored or no_skip). Returns whether the pattern is anchored. */
static int pm_prepare(pm_state *m, pm_start *st, lua_State *L, const char *s, size_t slen, const char **p,
                      size_t *plen, int no_skip)
{
    int anchored = **p == '^';
    if (anchored) {
        ++*p;
        --*plen;
    }
    pm_init(m, L, s, slen, *p, *plen);
    if (anchored || no_skip) pm_no_start(st);
    else pm_start_init(m, *p, st);
    return anchored;
}

/* string.find (find = 1) and string.match (find = 0). */
static int pm_find_or_match(lua_State *L, int find)
{
    size_t slen, plen;
    const char *s = luaL_checklstring(L, 1, &slen);
    const char *p = luaL_checklstring(L, 2, &plen);
    size_t init = pm_init_pos(luaL_optinteger(L, 3, 1), slen);
    if (init > slen) {
        luaL_pushfail(L);
        return 1;
    }
    if (find && (lua_toboolean(L, 4) || !pm_has_specials(p, plen))) {
        const char *hit = pm_find_plain(s + init, slen - init, p, plen);
        if (!hit) {
            luaL_pushfail(L);
            return 1;
        }
        lua_pushinteger(L, (lua_Integer)(hit - s) + 1);
        lua_pushinteger(L, (lua_Integer)(hit - s + plen));
        return 2;
    }
    pm_state m;
    pm_start st;
    int anchored = pm_prepare(&m, &st, L, s, slen, &p, &plen, 0);
    const char *at = s + init;
    for (;;) {
        if (!(at = pm_next_start(&m, &st, at))) break;
        pm_reset(&m);
        const char *e = pm_match(&m, at, p);
        if (e) {
            if (!find) return pm_push_captures(&m, at, e);
            lua_pushinteger(L, (lua_Integer)(at - s) + 1);
            lua_pushinteger(L, (lua_Integer)(e - s));
            return 2 + pm_push_captures(&m, NULL, NULL);
        }
        if (anchored || at >= m.src_end) break;
        at++;
    }
    luaL_pushfail(L);
    return 1;
}

static int pm_find(lua_State *L) { return pm_find_or_match(L, 1); }
static int pm_match_fn(lua_State *L) { return pm_find_or_match(L, 0); }

/* --- gmatch ------------------------------------------------------------- */

typedef struct pm_iter {
    size_t pos;  /* where the next search starts */
    size_t last; /* end of the previous match, SIZE_MAX before the first */
} pm_iter;

/* Upvalues: subject, pattern, pm_iter. A match may not be empty right at
 * the end of the previous one. '^' is an ordinary character here. */
static int pm_gmatch_next(lua_State *L)
{
    size_t slen, plen;
    const char *s = lua_tolstring(L, lua_upvalueindex(1), &slen);
    const char *p = lua_tolstring(L, lua_upvalueindex(2), &plen);
    pm_iter *it = lua_touserdata(L, lua_upvalueindex(3));
    if (it->pos > slen) return 0;
    pm_state m;
    pm_init(&m, L, s, slen, p, plen);
    pm_start st;
    pm_start_init(&m, p, &st);
    for (const char *at = s + it->pos;; at++) {
        if (!(at = pm_next_start(&m, &st, at))) break;
        pm_reset(&m);
        const char *e = pm_match(&m, at, p);
        if (e && (size_t)(e - s) != it->last) {
            it->pos = it->last = (size_t)(e - s);
            return pm_push_captures(&m, at, e);
        }
        if (at >= m.src_end) break;
    }
    it->pos = slen + 1;
    return 0;
}

static int pm_gmatch(lua_State *L)
{
    size_t slen, plen;
    luaL_checklstring(L, 1, &slen);
    luaL_checklstring(L, 2, &plen);
    size_t init = pm_init_pos(luaL_optinteger(L, 3, 1), slen);
    lua_settop(L, 2);
    pm_iter *it = lua_newuserdatauv(L, sizeof *it, 0);
    it->pos = init > slen ? slen + 1 : init;
    it->last = SIZE_MAX;
    lua_pushcclosure(L, pm_gmatch_next, 3);
    return 1;
}

/* --- gsub --------------------------------------------------------------- */

/* A replacement string (argument 3): %0-%9 the match or a capture, %% a '%'. */
static void pm_add_template(pm_state *m, luaL_Buffer *b, const char *s, const char *e)
{
    size_t len;
    const char *r = lua_tolstring(m->L, 3, &len), *end = r + len, *pc;
    pm_spend(m, (ptrdiff_t)len);
    while ((pc = memchr(r, '%', (size_t)(end - r))) != NULL) {
        luaL_addlstring(b, r, (size_t)(pc - r));
        int d = (unsigned char)pc[1]; /* the '\0' after the string when '%' ends it */
        if (d == '%') {
            luaL_addchar(b, '%');
        } else if (d == '0') {
            luaL_addlstring(b, s, (size_t)(e - s));
        } else if (isdigit(d)) {
            const char *t;
            ptrdiff_t n = pm_capture(m, d - '1', s, e, &t);
            if (n == PM_POSITION) {
                lua_pushinteger(m->L, (lua_Integer)(t - m->src) + 1);
                luaL_addvalue(b);
            } else {
                luaL_addlstring(b, t, (size_t)n);
            }
        } else {
            luaL_error(m->L, "invalid use of '%%' in replacement string");
        }
        r = pc + 2;
    }
    luaL_addlstring(b, r, (size_t)(end - r));
}

/* Appends the replacement of the match s..e; returns whether it differs
 * from the match (false or nil from a table or function keep the match). */
static int pm_add_value(pm_state *m, luaL_Buffer *b, const char *s, const char *e, int rtype)
{
    lua_State *L = m->L;
    if (rtype == LUA_TFUNCTION) {
        lua_pushvalue(L, 3);
        int n = pm_push_captures(m, s, e);
        lua_call(L, n, 1);
    } else if (rtype == LUA_TTABLE) {
        pm_push_capture(m, 0, s, e);
        lua_gettable(L, 3);
    } else {
        pm_add_template(m, b, s, e);
        return 1;
    }
    if (!lua_toboolean(L, -1)) {
        lua_pop(L, 1);
        luaL_addlstring(b, s, (size_t)(e - s));
        return 0;
    }
    if (!lua_isstring(L, -1)) return luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
    luaL_addvalue(b);
    return 1;
}

static int pm_gsub(lua_State *L)
{
    size_t slen, plen;
    const char *s = luaL_checklstring(L, 1, &slen);
    const char *p = luaL_checklstring(L, 2, &plen);
    int rtype = lua_type(L, 3);
    lua_Integer max_n = luaL_optinteger(L, 4, (lua_Integer)slen + 1);
    luaL_argexpected(L, rtype == LUA_TNUMBER || rtype == LUA_TSTRING || rtype == LUA_TFUNCTION || rtype == LUA_TTABLE,
                     3, "string/function/table");
    pm_state m;
    pm_start st;
    int anchored = pm_prepare(&m, &st, L, s, slen, &p, &plen, max_n <= 0);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    const char *at = s, *last = NULL;
    lua_Integer n = 0;
    int changed = 0;
    while (n < max_n) {
        const char *next = pm_next_start(&m, &st, at);
        if (next != at) { /* copy up to the next possible match */
            const char *to = next ? next : m.src_end;
            luaL_addlstring(&b, at, (size_t)(to - at));
            at = to;
            if (!next) break;
        }
        pm_reset(&m);
        const char *e = pm_match(&m, at, p);
        if (e && e != last) { /* no empty match right after the previous one */
            n++;
            changed |= pm_add_value(&m, &b, at, e, rtype);
            at = last = e;
        } else if (at < m.src_end) {
            luaL_addchar(&b, *at++);
        } else {
            break;
        }
        if (anchored) break;
    }
    if (!changed) {
        lua_pushvalue(L, 1);
    } else {
        luaL_addlstring(&b, at, (size_t)(m.src_end - at));
        luaL_pushresult(&b);
    }
    lua_pushinteger(L, n);
    return 2;
}

/* --- installation ------------------------------------------------------- */

void tl_lpattern_install(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"find", pm_find}, {"match", pm_match_fn}, {"gmatch", pm_gmatch}, {"gsub", pm_gsub}, {NULL, NULL}};
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    if (lua_getfield(L, -1, LUA_STRLIBNAME) == LUA_TTABLE) luaL_setfuncs(L, fns, 0);
    lua_pop(L, 2);
    /* the string metatable's __index, should it be another table */
    lua_pushliteral(L, "");
    if (lua_getmetatable(L, -1)) {
        if (lua_getfield(L, -1, "__index") == LUA_TTABLE) luaL_setfuncs(L, fns, 0);
        lua_pop(L, 2);
    }
    lua_pop(L, 1);
}
