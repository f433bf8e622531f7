#include "png_chart.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/vec.h"
#include "text.h"

/* ------------------------------------------------------------- ticks */

/* Python's divmod for floats (CPython float_divmod, numpy npy_divmod). */
static double py_divmod(double x, double y, double *mod)
{
    double m = fmod(x, y), div = (x - m) / y, q;
    if (m != 0) {
        if ((y < 0) != (m < 0)) {
            m += y;
            div -= 1.0;
        }
    } else {
        m = copysign(0.0, y);
    }
    if (div != 0) {
        q = floor(div);
        if (div - q > 0.5) q += 1.0;
    } else {
        q = copysign(0.0, x / y);
    }
    *mod = m;
    return q;
}

/* matplotlib.ticker._Edge_integer */
typedef struct edge_int {
    double step, offset;
} edge_int;

static int edge_close(const edge_int *e, double ms, double edge)
{
    double tol = 1e-10;
    if (e->offset > 0) {
        tol = fmax(1e-10, pow(10, log10(e->offset / e->step) - 12));
        tol = fmin(0.4999, tol);
    }
    return fabs(ms - edge) < tol;
}

static double edge_le(const edge_int *e, double x)
{
    double m, d = py_divmod(x, e->step, &m);
    return edge_close(e, m / e->step, 1) ? d + 1 : d;
}

static double edge_ge(const edge_int *e, double x)
{
    double m, d = py_divmod(x, e->step, &m);
    return edge_close(e, m / e->step, 0) ? d : d + 1;
}

/* MaxNLocator._raw_ticks with steps [1, 2, 2.5, 5, 10], min_n_ticks 2. */
static int raw_ticks(double vmin, double vmax, int nbins, double *out, int cap)
{
    double dv = fabs(vmax - vmin), meanv = (vmax + vmin) / 2, offset = 0;
    if (!(fabs(meanv) / dv < 100)) offset = copysign(pow(10, floor(log10(fabs(meanv)))), meanv);
    double scale = pow(10, floor(log10(dv / nbins)));
    static const double extended[] = {0.1, 0.2, 0.25, 0.5, 1, 2, 2.5, 5, 10, 20};
    enum { NSTEPS = sizeof extended / sizeof *extended };
    double steps[NSTEPS];
    for (int i = 0; i < NSTEPS; i++) steps[i] = extended[i] * scale;
    double lo_v = vmin - offset, hi_v = vmax - offset, raw_step = (hi_v - lo_v) / nbins;
    int istep = NSTEPS - 1;
    for (int i = 0; i < NSTEPS; i++)
        if (steps[i] >= raw_step) {
            istep = i;
            break;
        }
    int n = 0;
    for (int i = istep; i >= 0; i--) {
        double step = steps[i], m;
        double best_vmin = py_divmod(lo_v, step, &m) * step;
        edge_int e = {step, offset};
        double low = edge_le(&e, lo_v - best_vmin), high = edge_ge(&e, hi_v - best_vmin);
        n = 0;
        int shown = 0;
        for (double k = low; k < high + 1 && n < cap; k += 1) {
            double t = k * step + best_vmin;
            out[n++] = t;
            if (t <= hi_v && t >= lo_v) shown++;
        }
        if (shown >= 2) break;
    }
    for (int i = 0; i < n; i++) out[i] += offset;
    return n;
}

/* numpy.round(x, decimals) for decimals >= 0 */
static double np_round(double x, int decimals)
{
    double p = pow(10, decimals);
    return nearbyint(x * p) / p;
}

int tl_chart_ticks_compute(double vmin, double vmax, int nbins, tl_chart_ticks *t)
{
    memset(t, 0, sizeof *t);
    if (!isfinite(vmin) || !isfinite(vmax) || !(vmin < vmax)) return -1;
    if (nbins < 1) nbins = 1;
    t->n = raw_ticks(vmin, vmax, nbins, t->value, TL_CHART_MAX_TICKS);

    /* Axis._update_ticks: drawn when inside the view, relative tolerance 1e-10 */
    double tol = (vmax - vmin) * 1e-10, vis_max = 0;
    int any = 0;
    for (int i = 0; i < t->n; i++) {
        t->visible[i] = t->value[i] >= vmin - tol && t->value[i] <= vmax + tol;
        /* ScalarFormatter._compute_order_of_magnitude (strict view limits) */
        if (t->value[i] >= vmin && t->value[i] <= vmax) {
            vis_max = fmax(vis_max, fabs(t->value[i]));
            any = 1;
        }
    }
    int oom = any && vis_max != 0 ? (int)floor(log10(vis_max)) : 0;
    t->order = oom <= -5 || oom >= 6 ? oom : 0;

    /* ScalarFormatter._set_format over every location. The offset is 0:
     * ticks that straddle 0 never get one, and the one chart starts at 0;
     * other intervals keep it 0 too (a documented simplification). */
    double scale = pow(10, t->order), locs[TL_CHART_MAX_TICKS], lo = HUGE_VAL, hi = -HUGE_VAL;
    for (int i = 0; i < t->n; i++) {
        locs[i] = t->value[i] / scale;
        lo = fmin(lo, locs[i]);
        hi = fmax(hi, locs[i]);
    }
    double range = hi - lo;
    if (range == 0) range = fmax(fabs(lo), fabs(hi));
    if (range == 0) range = 1;
    int range_oom = (int)floor(log10(range));
    int sigfigs = 3 - range_oom > 0 ? 3 - range_oom : 0;
    double thresh = 1e-3 * pow(10, range_oom);
    while (sigfigs >= 0) {
        double worst = 0;
        for (int i = 0; i < t->n; i++) worst = fmax(worst, fabs(locs[i] - np_round(locs[i], sigfigs)));
        if (worst < thresh) sigfigs--;
        else break;
    }
    sigfigs++;
    for (int i = 0; i < t->n; i++) {
        double xp = locs[i];
        if (fabs(xp) < 1e-8) xp = 0;
        char num[40];
        snprintf(num, sizeof num, "%1.*f", sigfigs > 30 ? 30 : sigfigs, xp);
        /* unicode minus, as axes.unicode_minus */
        snprintf(t->label[i], sizeof t->label[i], "%s%s", num[0] == '-' ? "\xe2\x88\x92" : "",
                 num[0] == '-' ? num + 1 : num);
    }
    return 0;
}

/* ------------------------------------------------------------ layout */

/* Sizes in points (matplotlib's defaults and the spec's figure). */
#define TITLE_PT 12.0
#define TITLE_PAD_PT 10.0
#define AXIS_PT 10.0
#define LEGEND_PT 9.0
#define TICK_LEN_PT 3.5
#define TICK_PAD_PT 3.5
#define LINE_PT 0.8   /* spine and tick width */
#define EDGE_PT 0.9   /* white edge around the segments */
#define LABEL_PAD_PT 4.0
#define OFFSET_PAD_PT 3.0
#define TIGHT_PAD_PT (1.08 * 10.0) /* tight_layout(pad=1.08) x font size */
#define SAVE_PAD_PT 7.2            /* bbox_inches="tight", pad_inches=0.1 */
#define BAR_ALPHA 0.95
/* legend parameters in units of the legend font size */
#define LEG_BORDERPAD 0.4
#define LEG_LABELSPACING 0.5
#define LEG_HANDLELENGTH 2.0
#define LEG_HANDLEHEIGHT 0.7
#define LEG_HANDLETEXTPAD 0.8
#define LEG_COLUMNSPACING 2.0
#define LEG_BORDERAXESPAD 0.5
#define LEG_ANCHOR_Y (-0.4) /* bbox_to_anchor (0.5, -0.4), loc "upper center" */

static const tl_rgb black = {0, 0, 0}, white = {255, 255, 255};

typedef struct box {
    double x0, y0, x1, y1;
} box;

static void box_add(box *u, box b)
{
    u->x0 = fmin(u->x0, b.x0);
    u->y0 = fmin(u->y0, b.y0);
    u->x1 = fmax(u->x1, b.x1);
    u->y1 = fmax(u->y1, b.y1);
}

/* A measured line of text; asc/desc follow matplotlib, which never makes a
 * line shorter than "lp" in the same font. */
typedef struct text {
    const char *s;
    tl_font *font;
    double size, w, asc, desc, x0; /* x0: ink start relative to the origin */
} text;

typedef struct chart {
    const tl_stacked_bar *spec;
    double s;                /* pixels per point */
    double fig_w, fig_h;     /* pixels */
    tl_font *regular, *bold;
    const tl_chart_bar *bars; /* spec->bars, or one made of spec->segments */
    size_t nbars;
    tl_chart_bar one;
    const tl_chart_segment *entries; /* the legend's entries */
    size_t nentries;
    tl_chart_segment *own_entries; /* the default legend of several bars */
    text title, xlabel, *legend; /* legend[nentries] */
    text *ylabel;                /* ylabel[nbars]: the bars' names */
    int ncols;
    /* per layout */
    double ax0, ay0, ax1, ay1;
    tl_chart_ticks ticks;
    text tick[TL_CHART_MAX_TICKS], offset;
    char offset_label[16]; /* "1e6": the power of ten the tick labels leave out */
    double tick_top, xlabel_top, offset_top;
    box legend_box, all;
} chart;

static int measure(text *t, tl_font *font, double size, const char *s, tl_error *err)
{
    tl_text_box m, lp;
    t->s = s ? s : "";
    t->font = font;
    t->size = size;
    if (tl_text_measure(font, size, t->s, &m, err) != 0 || tl_text_measure(font, size, "lp", &lp, err) != 0)
        return -1;
    t->w = m.x1 - m.x0;
    t->x0 = m.x0;
    t->asc = fmax(m.ascent, lp.ascent);
    t->desc = fmax(m.descent, lp.descent);
    return 0;
}

/* Draws t with its ink box's left edge at x and its box top at top. */
static int draw_text(tl_canvas *c, const text *t, double x, double top, tl_error *err)
{
    if (!t->s[0]) return 0;
    return tl_text_draw(c, t->font, t->size, x - t->x0, top + t->asc, t->s, black, err);
}

static box text_box(const text *t, double x, double top)
{
    return (box){x, top, x + t->w, top + t->asc + t->desc};
}

/* Column c's first entry and entry count (numpy.array_split). */
static void legend_column(size_t n, int ncols, int c, size_t *first, size_t *count)
{
    size_t k = (size_t)ncols, q = n / k, r = n % k, cc = (size_t)c;
    *first = cc * q + (cc < r ? cc : r);
    *count = q + (cc < r ? 1 : 0);
}

static double legend_entry_height(const chart *ch, const text *t, double *asc)
{
    double fs = LEGEND_PT * ch->s;
    *asc = fmax(t->asc, LEG_HANDLEHEIGHT * fs);
    return *asc + t->desc;
}

static double legend_column_width(const chart *ch, int c)
{
    double fs = LEGEND_PT * ch->s, w = 0;
    size_t first, count;
    legend_column(ch->nentries, ch->ncols, c, &first, &count);
    for (size_t i = first; i < first + count; i++) w = fmax(w, ch->legend[i].w);
    return (LEG_HANDLELENGTH + LEG_HANDLETEXTPAD) * fs + w;
}

/* Bar i's top and bottom between the axes' top ay0 and bottom ay1: y
 * limits [-0.6, nbars - 0.4], bar i (counted from the top) centred at i. */
static void bar_span(size_t nbars, size_t i, double ay0, double ay1, double *y0, double *y1)
{
    double yc, half;
    if (nbars == 1) {
        yc = (ay0 + ay1) / 2;
        half = 0.4 / 1.2 * (ay1 - ay0);
    } else {
        double range = (double)nbars + 0.2;
        yc = ay0 + (0.6 + (double)i) / range * (ay1 - ay0);
        half = 0.4 / range * (ay1 - ay0);
    }
    *y0 = yc - half;
    *y1 = yc + half;
}

/* The right end of the bars' names, and the top of bar i's name. */
static double ylabel_right(const chart *ch, double ax0)
{
    return ax0 - (TICK_LEN_PT + TICK_PAD_PT) * ch->s;
}

static double ylabel_top(const chart *ch, size_t i, double ay0, double ay1)
{
    double y0, y1;
    bar_span(ch->nbars, i, ay0, ay1, &y0, &y1);
    return (y0 + y1) / 2 - (ch->ylabel[i].asc + ch->ylabel[i].desc) / 2;
}

/* Places everything around the axes rectangle (ax0, ay0)-(ax1, ay1) in
 * figure pixels and collects the bounding box of what is drawn. */
static int layout(chart *ch, double ax0, double ay0, double ax1, double ay1, tl_error *err)
{
    const tl_stacked_bar *sp = ch->spec;
    double s = ch->s, axis_px = AXIS_PT * s, lw = LINE_PT * s;
    ch->ax0 = ax0, ch->ay0 = ay0, ch->ax1 = ax1, ch->ay1 = ay1;
    box all = {ax0, ay0, ax1, ay1};
    double axc = (ax0 + ax1) / 2, h = ay1 - ay0;

    if (ch->title.s[0]) {
        double top = ay0 - TITLE_PAD_PT * s - ch->title.asc;
        box_add(&all, text_box(&ch->title, axc - ch->title.w / 2, top));
    }
    box_add(&all, (box){ax0 - lw / 2, ay1 - lw / 2, ax1 + lw / 2, ay1 + lw / 2}); /* spine */
    for (size_t i = 0; i < ch->nbars; i++)
        if (ch->ylabel[i].s[0]) {
            const text *t = &ch->ylabel[i];
            box_add(&all, text_box(t, ylabel_right(ch, ax0) - t->w, ylabel_top(ch, i, ay0, ay1)));
        }

    /* ticks: Axis.get_tick_space = axis length / (3 x label size), 1..9 */
    int nbins = (int)floor((ax1 - ax0) / s / (3 * AXIS_PT));
    nbins = nbins < 1 ? 1 : nbins > 9 ? 9 : nbins;
    if (tl_chart_ticks_compute(0, sp->xmax, nbins, &ch->ticks) != 0) {
        tl_error_set(err, "chart: bad x limits [0, %g]", sp->xmax);
        return -1;
    }
    ch->tick_top = ay1 + (TICK_LEN_PT + TICK_PAD_PT) * s;
    double below = ay1 + TICK_LEN_PT * s;
    for (int i = 0; i < ch->ticks.n; i++) {
        if (!ch->ticks.visible[i]) continue;
        text *t = &ch->tick[i];
        if (measure(t, ch->regular, axis_px, ch->ticks.label[i], err) != 0) return -1;
        double x = ax0 + ch->ticks.value[i] / sp->xmax * (ax1 - ax0);
        box_add(&all, (box){x - lw / 2, ay1, x + lw / 2, ay1 + TICK_LEN_PT * s});
        box b = text_box(t, x - t->w / 2, ch->tick_top);
        box_add(&all, b);
        below = fmax(below, b.y1);
    }
    ch->offset.s = "";
    if (ch->ticks.order != 0) {
        snprintf(ch->offset_label, sizeof ch->offset_label, "1e%d", ch->ticks.order);
        if (measure(&ch->offset, ch->regular, axis_px, ch->offset_label, err) != 0) return -1;
        ch->offset_top = below + OFFSET_PAD_PT * s;
        box_add(&all, text_box(&ch->offset, ax1 - ch->offset.w, ch->offset_top));
    }
    ch->xlabel_top = below + LABEL_PAD_PT * s;
    if (ch->xlabel.s[0]) box_add(&all, text_box(&ch->xlabel, axc - ch->xlabel.w / 2, ch->xlabel_top));

    /* legend: columns side by side, entries stacked, top-aligned */
    double fs = LEGEND_PT * s, lw_sum = 0, lh = 0;
    for (int c = 0; c < ch->ncols; c++) {
        size_t first, count;
        legend_column(ch->nentries, ch->ncols, c, &first, &count);
        double colh = 0, asc;
        for (size_t i = first; i < first + count; i++)
            colh += legend_entry_height(ch, &ch->legend[i], &asc) + (i > first ? LEG_LABELSPACING * fs : 0);
        lh = fmax(lh, colh);
        lw_sum += legend_column_width(ch, c) + (c ? LEG_COLUMNSPACING * fs : 0);
    }
    /* several bars: as far below the axis, in y units, as under one bar */
    double drop = ch->nbars == 1 ? -LEG_ANCHOR_Y * h : -LEG_ANCHOR_Y * 1.2 / ((double)ch->nbars + 0.2) * h;
    double top = ay1 + drop + LEG_BORDERAXESPAD * fs, width = lw_sum + 2 * LEG_BORDERPAD * fs;
    ch->legend_box = (box){axc - width / 2, top, axc + width / 2, top + lh + 2 * LEG_BORDERPAD * fs};
    box_add(&all, ch->legend_box);
    ch->all = all;
    return 0;
}

/* tight_layout: the axes at matplotlib's default subplot position, then
 * moved so that everything fits the figure with the tight_layout pad. */
static int place(chart *ch, tl_error *err)
{
    double W = ch->fig_w, H = ch->fig_h, pad = TIGHT_PAD_PT * ch->s;
    double ax0 = 0.125 * W, ax1 = 0.9 * W, ay0 = (1 - 0.88) * H, ay1 = (1 - 0.11) * H;
    if (layout(ch, ax0, ay0, ax1, ay1, err) != 0) return -1;
    box a = ch->all;
    double l = fmax(ax0 - a.x0, 0) + pad, r = fmax(a.x1 - ax1, 0) + pad;
    double t = fmax(ay0 - a.y0, 0) + pad, b = fmax(a.y1 - ay1, 0) + pad;
    /* matplotlib leaves the layout alone when it cannot fit */
    if (W - l - r > 1 && H - t - b > 1) ax0 = l, ax1 = W - r, ay0 = t, ay1 = H - b;
    return layout(ch, ax0, ay0, ax1, ay1, err);
}

/* ------------------------------------------------------------ drawing */

static void draw_segment(tl_canvas *c, double x0, double y0, double x1, double y1, tl_rgb col, double edge)
{
    tl_canvas_fill_rect(c, x0, y0, x1, y1, col, BAR_ALPHA);
    tl_canvas_stroke_rect(c, x0, y0, x1, y1, edge, white, BAR_ALPHA);
}

static int draw(chart *ch, tl_canvas *c, double ox, double oy, tl_error *err)
{
    const tl_stacked_bar *sp = ch->spec;
    double s = ch->s, lw = LINE_PT * s, edge = EDGE_PT * s;
    double ax0 = ch->ax0 + ox, ax1 = ch->ax1 + ox, ay0 = ch->ay0 + oy, ay1 = ch->ay1 + oy;
    double axw = ax1 - ax0;

    /* the bars, clipped to the axes like matplotlib's patches, and their names */
    for (size_t b = 0; b < ch->nbars; b++) {
        const tl_chart_bar *bar = &ch->bars[b];
        double y0, y1, left = 0;
        bar_span(ch->nbars, b, ay0, ay1, &y0, &y1);
        for (size_t i = 0; i < bar->nsegments; i++) {
            double v = bar->segments[i].value;
            double x0 = ax0 + left / sp->xmax * axw, x1 = ax0 + (left + v) / sp->xmax * axw;
            left += v;
            x0 = fmin(x0, ax1), x1 = fmin(x1, ax1);
            if (v > 0 && x1 > x0) draw_segment(c, x0, y0, x1, y1, bar->segments[i].color, edge);
        }
        const text *t = &ch->ylabel[b];
        if (t->s[0] && draw_text(c, t, ylabel_right(ch, ax0) - t->w, ylabel_top(ch, b, ay0, ay1), err) != 0)
            return -1;
    }

    /* bottom spine (projecting caps) and ticks */
    tl_canvas_line(c, ax0 - lw / 2, ay1, ax1 + lw / 2, ay1, lw, black, 1);
    for (int i = 0; i < ch->ticks.n; i++) {
        if (!ch->ticks.visible[i]) continue;
        double x = ax0 + ch->ticks.value[i] / sp->xmax * axw;
        tl_canvas_line(c, x, ay1, x, ay1 + TICK_LEN_PT * s, lw, black, 1);
        const text *t = &ch->tick[i];
        if (draw_text(c, t, x - t->w / 2, ch->tick_top + oy, err) != 0) return -1;
    }
    if (ch->offset.s[0] && draw_text(c, &ch->offset, ax1 - ch->offset.w, ch->offset_top + oy, err) != 0)
        return -1;
    if (draw_text(c, &ch->xlabel, (ax0 + ax1) / 2 - ch->xlabel.w / 2, ch->xlabel_top + oy, err) != 0) return -1;
    if (ch->title.s[0]) {
        double top = ay0 - TITLE_PAD_PT * s - ch->title.asc;
        if (draw_text(c, &ch->title, (ax0 + ax1) / 2 - ch->title.w / 2, top, err) != 0) return -1;
    }

    /* legend entries, column-major */
    double fs = LEGEND_PT * s, x = ch->legend_box.x0 + ox + LEG_BORDERPAD * fs;
    for (int col = 0; col < ch->ncols; col++) {
        size_t first, count;
        legend_column(ch->nentries, ch->ncols, col, &first, &count);
        double y = ch->legend_box.y0 + oy + LEG_BORDERPAD * fs;
        for (size_t i = first; i < first + count; i++) {
            double asc, eh = legend_entry_height(ch, &ch->legend[i], &asc), base = y + asc;
            draw_segment(c, x, base - LEG_HANDLEHEIGHT * fs, x + LEG_HANDLELENGTH * fs, base,
                         ch->entries[i].color, edge);
            double tx = x + (LEG_HANDLELENGTH + LEG_HANDLETEXTPAD) * fs;
            if (draw_text(c, &ch->legend[i], tx, base - ch->legend[i].asc, err) != 0) return -1;
            y += eh + LEG_LABELSPACING * fs;
        }
        x += legend_column_width(ch, col) + LEG_COLUMNSPACING * fs;
    }
    return 0;
}

/* ---------------------------------------------------------------- API */

static int check_spec(const tl_stacked_bar *sp, tl_error *err)
{
    if (!(isfinite(sp->xmax) && sp->xmax > 0)) {
        tl_error_set(err, "chart: xmax must be a positive number (got %g)", sp->xmax);
        return -1;
    }
    if (sp->bars || sp->nbars) {
        if (!sp->bars || sp->nbars < 1 || sp->nbars > TL_CHART_MAX_BARS) {
            tl_error_set(err, "chart: bars must hold 1 to %d bars", TL_CHART_MAX_BARS);
            return -1;
        }
        if (sp->segments || sp->nsegments) {
            tl_error_set(err, "chart: segments and bars given together");
            return -1;
        }
    } else if (sp->nsegments < 1 || !sp->segments) {
        tl_error_set(err, "chart: no segments");
        return -1;
    }
    size_t nbars = sp->bars ? sp->nbars : 1, total = 0;
    for (size_t b = 0; b < nbars; b++) {
        const tl_chart_segment *seg = sp->bars ? sp->bars[b].segments : sp->segments;
        size_t n = sp->bars ? sp->bars[b].nsegments : sp->nsegments;
        if (n < 1 || !seg) {
            tl_error_set(err, "chart: bar %zu: no segments", b + 1);
            return -1;
        }
        total += n;
        for (size_t i = 0; i < n; i++)
            if (!(isfinite(seg[i].value) && seg[i].value >= 0)) {
                if (sp->bars)
                    tl_error_set(err, "chart: bar %zu: segment %zu: value must be a number >= 0 (got %g)", b + 1,
                                 i + 1, seg[i].value);
                else
                    tl_error_set(err, "chart: segment %zu: value must be a number >= 0 (got %g)", i + 1, seg[i].value);
                return -1;
            }
    }
    if (sp->bars && total > TL_CHART_MAX_ENTRIES) {
        tl_error_set(err, "chart: %zu segments in all; at most %d", total, TL_CHART_MAX_ENTRIES);
        return -1;
    }
    if (sp->legend && (sp->nlegend < 1 || sp->nlegend > TL_CHART_MAX_ENTRIES)) {
        tl_error_set(err, "chart: the legend must hold 1 to %d entries", TL_CHART_MAX_ENTRIES);
        return -1;
    }
    if (sp->legend_cols < 0) {
        tl_error_set(err, "chart: legend_cols must be >= 0");
        return -1;
    }
    double w = sp->width_in, h = sp->height_in, dpi = sp->dpi;
    if (!(w >= 0 && w <= 100 && h >= 0 && h <= 100 && dpi >= 0 && dpi <= 1200)) {
        tl_error_set(err, "chart: size %g x %g in at %g dpi is out of range (up to 100 in, 1200 dpi)", w, h, dpi);
        return -1;
    }
    return 0;
}

/* The default legend of several bars: each colour's first segment, in bar
 * order (check_spec has bounded the segments to TL_CHART_MAX_ENTRIES). */
static void legend_of_bars(chart *ch)
{
    size_t total = 0, n = 0;
    for (size_t b = 0; b < ch->nbars; b++) total += ch->bars[b].nsegments;
    ch->own_entries = tl_xcalloc(total, sizeof *ch->own_entries);
    for (size_t b = 0; b < ch->nbars; b++)
        for (size_t i = 0; i < ch->bars[b].nsegments; i++) {
            const tl_chart_segment *s = &ch->bars[b].segments[i];
            size_t k = 0;
            while (k < n && !(ch->own_entries[k].color.r == s->color.r && ch->own_entries[k].color.g == s->color.g &&
                              ch->own_entries[k].color.b == s->color.b))
                k++;
            if (k == n) ch->own_entries[n++] = *s;
        }
    ch->entries = ch->own_entries;
    ch->nentries = n;
}

static int open_fonts(chart *ch, tl_error *err)
{
    char path[1024];
    if (tl_font_find(TL_FONT_REGULAR, path, sizeof path, err) != 0) return -1;
    if (!(ch->regular = tl_font_open(path, err))) return -1;
    if (tl_font_find(TL_FONT_BOLD, path, sizeof path, err) != 0) return -1;
    if (!(ch->bold = tl_font_open(path, err))) return -1;
    return 0;
}

int tl_chart_stacked_bar_render(const tl_stacked_bar *spec, tl_canvas *out, tl_chart_geometry *geo,
                                tl_error *err)
{
    out->w = out->h = 0;
    out->px = NULL;
    if (check_spec(spec, err) != 0) return -1;
    chart ch = {.spec = spec};
    double dpi = spec->dpi > 0 ? spec->dpi : 150;
    ch.s = dpi / 72;
    ch.fig_w = (spec->width_in > 0 ? spec->width_in : 12) * dpi;
    ch.fig_h = (spec->height_in > 0 ? spec->height_in : 3) * dpi;
    if (spec->bars) {
        ch.bars = spec->bars;
        ch.nbars = spec->nbars;
    } else {
        ch.one = (tl_chart_bar){NULL, spec->segments, spec->nsegments};
        ch.bars = &ch.one;
        ch.nbars = 1;
    }
    if (spec->legend) {
        ch.entries = spec->legend;
        ch.nentries = spec->nlegend;
    } else if (!spec->bars) {
        ch.entries = spec->segments;
        ch.nentries = spec->nsegments;
    } else {
        legend_of_bars(&ch);
    }
    size_t n = ch.nentries;
    int cols = spec->legend_cols ? spec->legend_cols : 4;
    ch.ncols = (size_t)cols < n ? cols : (int)n;
    ch.legend = tl_xcalloc(n, sizeof *ch.legend);
    ch.ylabel = tl_xcalloc(ch.nbars, sizeof *ch.ylabel);
    int rc = -1;
    if (open_fonts(&ch, err) != 0) goto done;
    if (measure(&ch.title, ch.bold, TITLE_PT * ch.s, spec->title, err) != 0 ||
        measure(&ch.xlabel, ch.regular, AXIS_PT * ch.s, spec->xlabel, err) != 0)
        goto done;
    for (size_t i = 0; i < n; i++)
        if (measure(&ch.legend[i], ch.regular, LEGEND_PT * ch.s, ch.entries[i].label, err) != 0) goto done;
    for (size_t i = 0; i < ch.nbars; i++)
        if (measure(&ch.ylabel[i], ch.regular, AXIS_PT * ch.s, ch.bars[i].label, err) != 0) goto done;
    if (place(&ch, err) != 0) goto done;

    double pad = SAVE_PAD_PT * ch.s;
    double w = ceil(ch.all.x1 - ch.all.x0 + 2 * pad - 1e-6), h = ceil(ch.all.y1 - ch.all.y0 + 2 * pad - 1e-6);
    if (tl_canvas_init(out, (int)fmin(w, 1e9), (int)fmin(h, 1e9), white, err) != 0) goto done;
    double ox = pad - ch.all.x0, oy = pad - ch.all.y0;
    if (draw(&ch, out, ox, oy, err) != 0) {
        tl_canvas_free(out);
        goto done;
    }
    if (geo) {
        memset(geo, 0, sizeof *geo);
        geo->width = out->w;
        geo->height = out->h;
        geo->axis_x0 = ch.ax0 + ox;
        geo->axis_x1 = ch.ax1 + ox;
        geo->nbars = ch.nbars;
        for (size_t i = 0; i < ch.nbars; i++)
            bar_span(ch.nbars, i, ch.ay0 + oy, ch.ay1 + oy, &geo->bars_y0[i], &geo->bars_y1[i]);
        geo->bar_y0 = geo->bars_y0[0];
        geo->bar_y1 = geo->bars_y1[0];
    }
    rc = 0;
done:
    tl_font_close(ch.regular);
    tl_font_close(ch.bold);
    free(ch.legend);
    free(ch.ylabel);
    free(ch.own_entries);
    return rc;
}

int tl_chart_stacked_bar_png(const tl_stacked_bar *spec, const char *path, tl_chart_geometry *geo, tl_error *err)
{
    tl_canvas c;
    if (tl_chart_stacked_bar_render(spec, &c, geo, err) != 0) return -1;
    int rc = tl_canvas_write_png(&c, path, spec->dpi > 0 ? spec->dpi : 150, err);
    tl_canvas_free(&c);
    return rc;
}
