/* test.h — the tiny unit-test harness: CHECK macros that count failures
 * and report file:line; test_main.c runs every suite and prints the
 * closing "N passed, N failed" line. */
#ifndef TL_TEST_H
#define TL_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct tl_test_ctx {
    int checks, failures;
} tl_test_ctx;

extern tl_test_ctx tl_test_state;

#define CHECK(cond)                                                                   \
    do {                                                                              \
        tl_test_state.checks++;                                                       \
        if (!(cond)) {                                                                \
            tl_test_state.failures++;                                                 \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                             \
    } while (0)

#define CHECK_I64(a, b)                                                                          \
    do {                                                                                         \
        long long a_ = (long long)(a), b_ = (long long)(b);                                     \
        tl_test_state.checks++;                                                                  \
        if (a_ != b_) {                                                                          \
            tl_test_state.failures++;                                                            \
            fprintf(stderr, "%s:%d: %s == %lld, expected %lld\n", __FILE__, __LINE__, #a, a_, b_); \
        }                                                                                        \
    } while (0)

#define CHECK_STR(a, b)                                                                           \
    do {                                                                                          \
        const char *a_ = (a), *b_ = (b);                                                          \
        tl_test_state.checks++;                                                                   \
        if (!a_ || strcmp(a_, b_) != 0) {                                                         \
            tl_test_state.failures++;                                                             \
            fprintf(stderr, "%s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a,     \
                    a_ ? a_ : "(null)", b_);                                                      \
        }                                                                                         \
    } while (0)

void suite_scan(void);
void suite_timeline(void);
void suite_tree(void);
void suite_report_extras(void);
void suite_report_hook(void);
void suite_table(void);

#endif
