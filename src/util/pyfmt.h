/* pyfmt.h — number text as Python writes it (repr of float: the shortest
 * text that reads back to the same double; pandas CSV uses the same). */
#ifndef TL_PYFMT_H
#define TL_PYFMT_H

#include <stddef.h>

/* Writes repr(x) of a Python float into buf (>= 32 bytes); returns length. */
int tl_pyfloat_repr(char *buf, size_t cap, double x);

#endif
