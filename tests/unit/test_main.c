#include "test.h"

tl_test_ctx tl_test_state;

typedef struct suite {
    const char *name;
    void (*fn)(void);
} suite;

int main(void)
{
    static const suite suites[] = {{"scan", suite_scan}, {"timeline", suite_timeline}, {"tree", suite_tree},
                                    {"extras", suite_report_extras}, {"table", suite_table},
                                    {"hook", suite_report_hook}};
    int passed = 0, failed = 0;
    for (size_t i = 0; i < sizeof suites / sizeof *suites; i++) {
        int before = tl_test_state.failures, checks = tl_test_state.checks;
        suites[i].fn();
        int f = tl_test_state.failures - before;
        printf("%-10s %4d checks, %d failed\n", suites[i].name, tl_test_state.checks - checks, f);
        if (f) failed++;
        else passed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
