#include "memstat.h"

#include <stdio.h>
#include <string.h>

void tl_mem_status(double *rss_mb, double *peak_mb)
{
    *rss_mb = *peak_mb = 0;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return;
    char line[256];
    unsigned long kib;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "VmRSS: %lu kB", &kib) == 1) *rss_mb = kib * 1024.0 / 1e6;
        else if (sscanf(line, "VmHWM: %lu kB", &kib) == 1) *peak_mb = kib * 1024.0 / 1e6;
    }
    fclose(f);
}
