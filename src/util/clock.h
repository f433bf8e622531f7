/* clock.h — wall time for measurements: seconds on the monotonic clock. */
#ifndef TL_CLOCK_H
#define TL_CLOCK_H

double tl_now_s(void);

#endif
