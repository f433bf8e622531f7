/* openpyxl_python.h — for the tests that read or build workbooks with
 * python3-openpyxl: the first python3 that has it (PATH's, else Debian's,
 * which tests/install_deps.sh provides), or NULL after printing the SKIP
 * line (the test then exits 77). */
#ifndef TL_TEST_OPENPYXL_PYTHON_H
#define TL_TEST_OPENPYXL_PYTHON_H

#include <stdio.h>
#include <stdlib.h>

static inline const char *tl_test_openpyxl_python(void)
{
    if (system("python3 -c 'import openpyxl' 2>/dev/null") == 0) return "python3";
    if (system("/usr/bin/python3 -c 'import openpyxl' 2>/dev/null") == 0) return "/usr/bin/python3";
    printf("SKIP: no python3 with openpyxl (tests/install_deps.sh installs python3-openpyxl)\n");
    return NULL;
}

#endif
