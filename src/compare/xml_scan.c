#include "xml_scan.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

void tl_xml_init(tl_xml *x, const char *data, size_t n, const char *what, tl_error *err)
{
    memset(x, 0, sizeof *x);
    x->data = data;
    x->n = n;
    x->what = what;
    x->err = err;
    tl_sb_init(&x->text);
    tl_sb_init(&x->vals);
    if (n >= 3 && !memcmp(data, "\xEF\xBB\xBF", 3)) x->pos = 3;
    x->bad = x->pos + tl_utf8_bad_at(data + x->pos, n - x->pos);
}

void tl_xml_free(tl_xml *x)
{
    tl_sb_free(&x->text);
    tl_sb_free(&x->vals);
    free(x->attrs.v);
    free(x->stack.v);
}

tl_xml_ev tl_xml_fail(tl_xml *x, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tl_error_set(x->err, "%s: byte %zu: %s", x->what, x->pos, msg);
    return TL_XML_ERR;
}

static int local_is(const char *q, size_t n, const char *local)
{
    const char *colon = memchr(q, ':', n);
    if (colon) {
        n -= (size_t)(colon + 1 - q);
        q = colon + 1;
    }
    return strlen(local) == n && !memcmp(q, local, n);
}

int tl_xml_is(const tl_xml *x, const char *local)
{
    return x->local && strlen(local) == x->local_len && !memcmp(x->local, local, x->local_len);
}

const char *tl_xml_attr_get(const tl_xml *x, const char *local, size_t *len)
{
    for (size_t i = 0; i < x->attrs.n; i++) {
        const tl_xml_attr *a = &x->attrs.v[i];
        if (local_is(x->data + a->name, a->name_len, local)) {
            if (len) *len = a->val_len;
            return x->vals.s + a->val;
        }
    }
    return NULL;
}

/* ------------------------------------------------------------ lexing */

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static int name_start(unsigned char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == ':' || c >= 0x80; }

static int name_char(unsigned char c) { return name_start(c) || (c >= '0' && c <= '9') || c == '.' || c == '-'; }

static int starts(const tl_xml *x, const char *s)
{
    size_t k = strlen(s);
    return x->n - x->pos >= k && !memcmp(x->data + x->pos, s, k);
}

/* The name at pos; 0 when there is none. */
static size_t scan_name(tl_xml *x)
{
    size_t b = x->pos;
    if (b >= x->n || !name_start((unsigned char)x->data[b])) return 0;
    while (x->pos < x->n && name_char((unsigned char)x->data[x->pos])) x->pos++;
    return x->pos - b;
}

static void skip_space(tl_xml *x)
{
    while (x->pos < x->n && is_space(x->data[x->pos])) x->pos++;
}

static void put_utf8(tl_sbuf *b, uint32_t cp)
{
    char u[4];
    size_t k;
    if (cp < 0x80) u[0] = (char)cp, k = 1;
    else if (cp < 0x800) u[0] = (char)(0xC0 | cp >> 6), u[1] = (char)(0x80 | (cp & 63)), k = 2;
    else if (cp < 0x10000)
        u[0] = (char)(0xE0 | cp >> 12), u[1] = (char)(0x80 | ((cp >> 6) & 63)), u[2] = (char)(0x80 | (cp & 63)), k = 3;
    else
        u[0] = (char)(0xF0 | cp >> 18), u[1] = (char)(0x80 | ((cp >> 12) & 63)), u[2] = (char)(0x80 | ((cp >> 6) & 63)),
        u[3] = (char)(0x80 | (cp & 63)), k = 4;
    tl_sb_putn(b, u, k);
}

/* Decodes the entity at pos ('&') into b; -1 with err set when it is not one. */
static int entity(tl_xml *x, tl_sbuf *b)
{
    static const struct {
        const char *name;
        char c;
    } named[] = {{"amp;", '&'}, {"lt;", '<'}, {"gt;", '>'}, {"quot;", '"'}, {"apos;", '\''}};
    size_t at = x->pos++;
    for (size_t i = 0; i < sizeof named / sizeof *named; i++)
        if (starts(x, named[i].name)) {
            tl_sb_putc(b, named[i].c);
            x->pos += strlen(named[i].name);
            return 0;
        }
    if (starts(x, "#")) {
        x->pos++;
        int hex = starts(x, "x");
        if (hex) x->pos++;
        uint32_t cp = 0;
        size_t digits = 0;
        for (; x->pos < x->n && digits < 9; x->pos++, digits++) {
            char c = x->data[x->pos];
            unsigned d = c >= '0' && c <= '9'               ? (unsigned)(c - '0')
                         : hex && c >= 'a' && c <= 'f'      ? (unsigned)(c - 'a' + 10)
                         : hex && c >= 'A' && c <= 'F'      ? (unsigned)(c - 'A' + 10)
                                                            : 99;
            if (d == 99) break;
            cp = cp * (hex ? 16 : 10) + d;
        }
        int ok = digits && digits < 9 && starts(x, ";") &&
                 (cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
                  (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF));
        if (ok) {
            x->pos++;
            put_utf8(b, cp);
            return 0;
        }
        x->pos = at;
        tl_xml_fail(x, "a character reference that is not an XML character: expected &#N; or &#xH;");
        return -1;
    }
    x->pos = at;
    tl_xml_fail(x, "an unknown entity: expected &amp; &lt; &gt; &quot; &apos; or &#N; (no DOCTYPE entities are read)");
    return -1;
}

/* Text up to the next '<' (or the end), decoded into x->text. */
static tl_xml_ev text(tl_xml *x)
{
    tl_sb_clear(&x->text);
    size_t run = x->pos;
    while (x->pos < x->n && x->data[x->pos] != '<') {
        if (x->data[x->pos] != '&') {
            x->pos++;
            continue;
        }
        tl_sb_putn(&x->text, x->data + run, x->pos - run);
        if (entity(x, &x->text) != 0) return TL_XML_ERR;
        run = x->pos;
    }
    tl_sb_putn(&x->text, x->data + run, x->pos - run);
    if (x->stack.n == 0) {
        for (size_t i = 0; i < x->text.len; i++)
            if (!is_space(x->text.s[i])) {
                x->pos = run;
                return tl_xml_fail(x, "text outside the root element: expected only markup there");
            }
    }
    return TL_XML_TEXT;
}

static void set_local(tl_xml *x, size_t name, size_t len)
{
    const char *q = x->data + name, *colon = memchr(q, ':', len);
    x->local = colon ? colon + 1 : q;
    x->local_len = colon ? len - (size_t)(colon + 1 - q) : len;
}

static tl_xml_ev start_tag(tl_xml *x)
{
    size_t lt = x->pos++;
    size_t name = x->pos, len = scan_name(x);
    if (!len) return tl_xml_fail(x, "expected an element name after '<'");
    if (x->root_done) {
        x->pos = lt;
        return tl_xml_fail(x, "a second root element: expected the end of the part");
    }
    if (x->stack.n >= TL_XML_MAX_DEPTH) return tl_xml_fail(x, "elements nested deeper than %d", TL_XML_MAX_DEPTH);
    x->attrs.n = 0;
    tl_sb_clear(&x->vals);
    for (;;) {
        size_t before = x->pos;
        skip_space(x);
        if (x->pos >= x->n) return tl_xml_fail(x, "the part ends inside a tag: expected '>'");
        char c = x->data[x->pos];
        if (c == '>' || (c == '/' && starts(x, "/>"))) {
            x->pos += c == '>' ? 1 : 2;
            x->pending_end = c == '/';
            break;
        }
        if (before == x->pos) return tl_xml_fail(x, "expected a space, '>' or '/>' in a tag");
        tl_xml_attr a = {x->pos, 0, 0, 0};
        a.name_len = scan_name(x);
        if (!a.name_len) return tl_xml_fail(x, "expected an attribute name, '>' or '/>' in a tag");
        for (size_t i = 0; i < x->attrs.n; i++)
            if (x->attrs.v[i].name_len == a.name_len &&
                !memcmp(x->data + x->attrs.v[i].name, x->data + a.name, a.name_len))
                return tl_xml_fail(x, "a repeated attribute: expected each attribute once");
        skip_space(x);
        if (!starts(x, "=")) return tl_xml_fail(x, "expected '=' after an attribute name");
        x->pos++;
        skip_space(x);
        char q = x->pos < x->n ? x->data[x->pos] : 0;
        if (q != '"' && q != '\'') return tl_xml_fail(x, "expected a quoted attribute value");
        x->pos++;
        a.val = x->vals.len;
        size_t run = x->pos;
        while (x->pos < x->n && x->data[x->pos] != q) {
            char ch = x->data[x->pos];
            if (ch == '<') return tl_xml_fail(x, "'<' in an attribute value: expected &lt;");
            if (ch != '&') {
                x->pos++;
                continue;
            }
            tl_sb_putn(&x->vals, x->data + run, x->pos - run);
            if (entity(x, &x->vals) != 0) return TL_XML_ERR;
            run = x->pos;
        }
        if (x->pos >= x->n) return tl_xml_fail(x, "the part ends inside an attribute value: expected %c", q);
        tl_sb_putn(&x->vals, x->data + run, x->pos - run);
        x->pos++;
        a.val_len = x->vals.len - a.val;
        tl_sb_putc(&x->vals, 0);
        TL_PUSH(x->attrs, a);
    }
    tl_xml_open o = {name, len};
    TL_PUSH(x->stack, o);
    set_local(x, name, len);
    return TL_XML_START;
}

static tl_xml_ev end_element(tl_xml *x)
{
    tl_xml_open o = x->stack.v[--x->stack.n];
    set_local(x, o.name, o.name_len);
    if (x->stack.n == 0) x->root_done = 1;
    return TL_XML_END;
}

static tl_xml_ev end_tag(tl_xml *x)
{
    size_t at = x->pos;
    x->pos += 2;
    size_t name = x->pos, len = scan_name(x);
    skip_space(x);
    if (!len || !starts(x, ">")) return tl_xml_fail(x, "expected an element name and '>' after '</'");
    x->pos++;
    if (x->stack.n == 0) {
        x->pos = at;
        return tl_xml_fail(x, "an end tag without an open element");
    }
    const tl_xml_open *o = &x->stack.v[x->stack.n - 1];
    if (o->name_len != len || memcmp(x->data + o->name, x->data + name, len)) {
        x->pos = at;
        return tl_xml_fail(x, "expected </%.*s>, saw </%.*s>", (int)(o->name_len > 100 ? 100 : o->name_len),
                           x->data + o->name, (int)(len > 100 ? 100 : len), x->data + name);
    }
    return end_element(x);
}

/* Skips from pos past `close`; -1 when the part ends first. */
static int skip_past(tl_xml *x, const char *close)
{
    size_t k = strlen(close);
    for (size_t i = x->pos; i + k <= x->n; i++)
        if (!memcmp(x->data + i, close, k)) {
            x->pos = i + k;
            return 0;
        }
    return -1;
}

tl_xml_ev tl_xml_next(tl_xml *x)
{
    x->local = NULL;
    x->local_len = 0;
    if (x->pending_end) {
        x->pending_end = 0;
        return end_element(x);
    }
    if (x->bad < x->n) { /* checked once, in tl_xml_init */
        x->pos = x->bad;
        if (x->data[x->bad] == 0) return tl_xml_fail(x, "a NUL byte: expected UTF-8 XML text");
        return tl_xml_fail(x, "byte 0x%02X is not UTF-8 text: expected UTF-8 XML", (unsigned char)x->data[x->bad]);
    }
    for (;;) {
        x->at = x->pos;
        if (x->pos >= x->n) {
            if (x->stack.n)
                return tl_xml_fail(x, "the part ends inside <%.*s>: expected its end tag",
                                   (int)(x->stack.v[x->stack.n - 1].name_len > 100 ? 100
                                                                                    : x->stack.v[x->stack.n - 1].name_len),
                                   x->data + x->stack.v[x->stack.n - 1].name);
            if (!x->root_done) return tl_xml_fail(x, "expected an XML element, saw the end of the part");
            return TL_XML_EOF;
        }
        if (x->data[x->pos] != '<') return text(x);
        if (starts(x, "<?")) {
            if (skip_past(x, "?>") != 0) return tl_xml_fail(x, "the part ends inside a processing instruction: expected '?>'");
        } else if (starts(x, "<!--")) {
            if (skip_past(x, "-->") != 0) return tl_xml_fail(x, "the part ends inside a comment: expected '-->'");
        } else if (starts(x, "<![CDATA[")) {
            if (x->stack.n == 0) return tl_xml_fail(x, "a CDATA section outside the root element");
            size_t b = x->pos + 9;
            x->pos = b;
            if (skip_past(x, "]]>") != 0) return tl_xml_fail(x, "the part ends inside a CDATA section: expected ']]>'");
            tl_sb_clear(&x->text);
            tl_sb_putn(&x->text, x->data + b, x->pos - 3 - b);
            return TL_XML_TEXT;
        } else if (starts(x, "<!")) {
            return tl_xml_fail(x, "a DOCTYPE or declaration: expected elements only (no entities are defined)");
        } else if (starts(x, "</")) {
            return end_tag(x);
        } else {
            return start_tag(x);
        }
    }
}
