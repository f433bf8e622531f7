/* str.h — the small text tests the core repeats: prefix, suffix, and
 * ASCII-case-blind substring (Python's `needle in s.lower()` for a
 * lower-case needle). Header-only. */
#ifndef TL_STR_H
#define TL_STR_H

#include <string.h>
#include <strings.h>

static inline int tl_starts_with(const char *s, const char *pre) { return strncmp(s, pre, strlen(pre)) == 0; }

static inline int tl_ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && memcmp(s + n - m, suf, m) == 0;
}

static inline int tl_ends_with_ci(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcasecmp(s + n - m, suf) == 0;
}

/* strcasestr is a GNU extension (the build defines _GNU_SOURCE). */
static inline int tl_contains_ci(const char *hay, const char *needle) { return strcasestr(hay, needle) != NULL; }

#endif
