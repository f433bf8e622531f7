/* perf_test.h — the runner of the tests/perf/test_*.c programs: runs their
 * test functions in order, with an optional hook before and after each (a
 * fresh arena, say), and prints the closing "N passed, N failed" line (N
 * test functions). Each program defines tl_test_state itself. */
#ifndef TL_PERF_TEST_H
#define TL_PERF_TEST_H

#include <stddef.h>
#include <stdio.h>

#include "test.h"

typedef void (*tl_perf_test_fn)(void);

/* Returns the exit status: 1 when a test failed. */
static inline int tl_perf_test_run(const tl_perf_test_fn *tests, size_t n, tl_perf_test_fn before,
                                   tl_perf_test_fn after)
{
    int passed = 0, failed = 0;
    for (size_t i = 0; i < n; i++) {
        int failures = tl_test_state.failures;
        if (before) before();
        tests[i]();
        if (after) after();
        if (tl_test_state.failures == failures) passed++;
        else failed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}

#define TL_PERF_TEST_RUN(tests, before, after) tl_perf_test_run(tests, sizeof tests / sizeof *tests, before, after)

#endif
