/* png_chart.h — the analysis layer's chart (analysis-layer spec §13.1):
 * a horizontal stacked bar (or several, one per trace of a comparative
 * analysis, top to bottom on one x axis, each named left of the axis by a
 * y tick label) with a title, an x axis from 0 to xmax with
 * matplotlib-style automatic ticks and a label, and a legend below in up to
 * N columns filled column-major, laid out the way matplotlib's
 * tight_layout + savefig(bbox_inches="tight", pad 0.1 in) would (sizes in
 * points at the given dpi; DejaVu Sans 12 pt bold title, 10 pt axis text,
 * 9 pt legend; bar height 0.8 in y limits [-0.6, 0.6]; segments drawn with
 * alpha 0.95 and a 0.9 pt white edge).
 * Owns nothing beyond a call: the description is borrowed, the fonts are
 * found (text.h) and opened per call, the canvas belongs to the caller. */
#ifndef TL_PNG_CHART_H
#define TL_PNG_CHART_H

#include <stddef.h>

#include "../util/error.h"
#include "canvas.h"

typedef struct tl_chart_segment {
    const char *label; /* UTF-8 legend text (NULL: "") */
    double value;      /* >= 0, in x units */
    tl_rgb color;
} tl_chart_segment;

/* One bar of several: its name (a y tick label) and its segments. */
typedef struct tl_chart_bar {
    const char *label; /* UTF-8; NULL or "" for none */
    const tl_chart_segment *segments;
    size_t nsegments; /* >= 1; drawn left to right in this order */
} tl_chart_bar;

#define TL_CHART_MAX_BARS 64
#define TL_CHART_MAX_ENTRIES 4096 /* segments per bar, legend entries */

typedef struct tl_stacked_bar {
    const char *title;  /* UTF-8; NULL or "" for none */
    const char *xlabel; /* UTF-8; NULL or "" for none */
    double xmax;        /* x axis limits [0, xmax], > 0 */
    const tl_chart_segment *segments;
    size_t nsegments;        /* the one bar (when nbars is 0): >= 1, left to right */
    int legend_cols;         /* 0: min(legend entries, 4) */
    double width_in, height_in, dpi; /* figure size; 0: 12, 3, 150 */
    /* Several bars instead of segments (nbars 1 to TL_CHART_MAX_BARS, the
     * first on top; segments must then be NULL): the y limits are
     * [-0.6, nbars - 0.4], each bar 0.8 high, and the legend hangs below
     * the axis as far (in y units) as below the one bar. */
    const tl_chart_bar *bars;
    size_t nbars;
    /* The legend's entries (value unused), in order; NULL: the segments of
     * the one bar, or, with bars, each colour's first segment in bar order
     * (its label). */
    const tl_chart_segment *legend;
    size_t nlegend;
} tl_stacked_bar;

/* Where things landed, in pixels of the image. */
typedef struct tl_chart_geometry {
    int width, height;
    double axis_x0, axis_x1; /* x = 0 and x = xmax */
    double bar_y0, bar_y1;   /* top and bottom of the (first) bar */
    size_t nbars;
    double bars_y0[TL_CHART_MAX_BARS], bars_y1[TL_CHART_MAX_BARS]; /* every bar, top to bottom */
} tl_chart_geometry;

/* Renders onto a new canvas (the caller frees it); geo may be NULL. */
int tl_chart_stacked_bar_render(const tl_stacked_bar *spec, tl_canvas *out, tl_chart_geometry *geo,
                                tl_error *err);
/* Renders and writes a PNG (atomically; on failure no file is left). */
int tl_chart_stacked_bar_png(const tl_stacked_bar *spec, const char *path, tl_chart_geometry *geo,
                             tl_error *err);

/* matplotlib's AutoLocator (MaxNLocator, steps 1, 2, 2.5, 5, 10) and
 * ScalarFormatter for the view interval [vmin, vmax] with nbins bins:
 * every tick value the locator returns (some may lie just outside the
 * view: visible says which are drawn), the labels ("%1.Nf" of value /
 * 10^order, a U+2212 minus for negatives), and order, the power of ten
 * matplotlib moves into an offset text ("1e6") when the visible ticks reach
 * 1e6 or stay below 1e-5 (0 otherwise). */
#define TL_CHART_MAX_TICKS 64
typedef struct tl_chart_ticks {
    int n, order;
    double value[TL_CHART_MAX_TICKS];
    int visible[TL_CHART_MAX_TICKS];
    char label[TL_CHART_MAX_TICKS][48];
} tl_chart_ticks;

/* -1 when vmin >= vmax or either is not finite. */
int tl_chart_ticks_compute(double vmin, double vmax, int nbins, tl_chart_ticks *t);

#endif
