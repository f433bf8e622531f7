/* xml_scan.h — a small strict pull scanner for the XML parts of a workbook
 * (xlsx_read.h). Owns its event buffers (decoded text, attributes, the
 * stack of open elements); the part's bytes stay the caller's.
 *
 * Accepted: UTF-8 text (a leading BOM skipped), an XML declaration and
 * processing instructions (skipped), comments (skipped), CDATA sections
 * (text), elements with attributes in single or double quotes, self-closing
 * tags, the five predefined entities (&amp; &lt; &gt; &quot; &apos;) and
 * character references (&#N; &#xH; of XML characters), decoded in text and
 * attribute values. Element and attribute names are matched on their local
 * part (the text after a prefix "x:"): namespaces are not resolved.
 * Refused, with "WHAT: byte N: expected ...": a DOCTYPE (no entity is ever
 * defined or expanded), an unknown entity, a NUL byte or invalid UTF-8, an
 * end tag that does not close the open element, a repeated attribute, text
 * or a second element after the root element, nesting deeper than
 * TL_XML_MAX_DEPTH, and a part that ends inside a tag or an element. */
#ifndef TL_XML_SCAN_H
#define TL_XML_SCAN_H

#include <stddef.h>

#include "../util/error.h"
#include "../util/sbuf.h"
#include "../util/vec.h"

#define TL_XML_MAX_DEPTH 64

typedef enum tl_xml_ev { TL_XML_ERR = -1, TL_XML_EOF, TL_XML_START, TL_XML_END, TL_XML_TEXT } tl_xml_ev;

typedef struct tl_xml_attr {
    size_t name, name_len; /* the qualified name: offset in the part */
    size_t val, val_len;   /* the decoded value: offset in vals (NUL-terminated) */
} tl_xml_attr;

typedef struct tl_xml_open {
    size_t name, name_len; /* an open element's qualified name: offset in the part */
} tl_xml_open;

typedef struct tl_xml {
    const char *data;
    size_t n, pos;
    size_t bad;       /* the first NUL or invalid UTF-8 byte (n: none) */
    const char *what; /* error prefix, e.g. "r.xlsx: part xl/workbook.xml" */
    tl_error *err;
    /* the current event */
    size_t at;         /* where it begins in the part (its '<', or its text) */
    const char *local; /* START / END: the element's local name (not NUL-terminated) */
    size_t local_len;
    tl_sbuf text;      /* TEXT: the decoded text of this piece (an element's text may come in pieces) */
    TL_VEC(tl_xml_attr) attrs; /* START: its attributes */
    tl_sbuf vals;
    /* state */
    TL_VEC(tl_xml_open) stack;
    int pending_end; /* a self-closing tag: its END comes next */
    int root_done;   /* the root element has been closed */
} tl_xml;

/* Scans data[0..n); errors are prefixed with `what` (kept, not copied). */
void tl_xml_init(tl_xml *x, const char *data, size_t n, const char *what, tl_error *err);
void tl_xml_free(tl_xml *x);

/* The next event; TL_XML_ERR with err set on malformed XML. */
tl_xml_ev tl_xml_next(tl_xml *x);

/* Whether the current START / END element's local name is `local`. */
int tl_xml_is(const tl_xml *x, const char *local);

/* The decoded value of the current START element's attribute whose local
 * name is `local` (NUL-terminated; *len its length), or NULL. */
const char *tl_xml_attr_get(const tl_xml *x, const char *local, size_t *len);

/* How many elements are open (after a START: including it). */
static inline size_t tl_xml_depth(const tl_xml *x) { return x->stack.n; }

/* Sets err to "WHAT: byte N: MESSAGE" at the current event; returns TL_XML_ERR. */
tl_xml_ev tl_xml_fail(tl_xml *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
