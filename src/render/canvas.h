/* canvas.h — a small RGB raster (8 bits a channel, rows top to bottom) with
 * anti-aliased drawing and PNG output.
 * Owns its pixel buffer. Coordinates are pixels as doubles: pixel (i, j)
 * covers [i, i+1) x [j, j+1), y grows downwards. Drawing is clipped to the
 * canvas; "alpha" is the opacity of the colour (0..1), multiplied by how much
 * of each pixel the shape covers. PNG files are written to a temporary name
 * and renamed into place, so a failure leaves no file. */
#ifndef TL_CANVAS_H
#define TL_CANVAS_H

#include "../util/error.h"

typedef struct tl_rgb {
    unsigned char r, g, b;
} tl_rgb;

typedef struct tl_canvas {
    int w, h;
    unsigned char *px; /* w * h * 3 bytes, row-major RGB */
} tl_canvas;

/* Largest width or height accepted. */
#define TL_CANVAS_MAX_SIDE 20000

/* Parses "#rrggbb" (hex digits of either case); returns 0, or -1 when the
 * text is not of that form. */
int tl_rgb_parse(const char *text, tl_rgb *out);

/* A w x h canvas filled with bg; -1 (err set) when a side is < 1 or larger
 * than TL_CANVAS_MAX_SIDE. */
int tl_canvas_init(tl_canvas *c, int w, int h, tl_rgb bg, tl_error *err);
void tl_canvas_free(tl_canvas *c);
/* The pixel at (x, y), which must be inside the canvas. */
tl_rgb tl_canvas_get(const tl_canvas *c, int x, int y);

/* The rectangle [x0, x1] x [y0, y1]; fractional edges are covered partly. */
void tl_canvas_fill_rect(tl_canvas *c, double x0, double y0, double x1, double y1, tl_rgb col, double alpha);
/* A straight line of the given width with butt ends (axis-aligned lines are
 * exact rectangles, other lines are sampled 4x4 a pixel). */
void tl_canvas_line(tl_canvas *c, double x0, double y0, double x1, double y1, double width, tl_rgb col,
                    double alpha);
/* The outline of a rectangle, a line of the given width centred on each
 * edge (the corners are covered once). */
void tl_canvas_stroke_rect(tl_canvas *c, double x0, double y0, double x1, double y1, double width, tl_rgb col,
                           double alpha);
/* Blends col through an 8-bit coverage mask (mw x mh, rows `pitch` bytes
 * apart) whose top-left pixel lands on (x, y). */
void tl_canvas_blend_mask(tl_canvas *c, int x, int y, const unsigned char *mask, int mw, int mh, int pitch,
                          tl_rgb col);

/* Writes an 8-bit RGB PNG with the resolution (pHYs) of dpi. */
int tl_canvas_write_png(const tl_canvas *c, const char *path, double dpi, tl_error *err);

#endif
