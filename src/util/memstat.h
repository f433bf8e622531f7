/* memstat.h — the process's resident memory, for the stage figures
 * (TRACELENS_SCAN_STAGES): read from /proc/self/status; owns nothing. */
#ifndef TL_MEMSTAT_H
#define TL_MEMSTAT_H

/* Resident set now and its peak so far (VmRSS, VmHWM) in MB of 10^6 bytes;
 * both 0 where /proc is not readable. */
void tl_mem_status(double *rss_mb, double *peak_mb);

#endif
