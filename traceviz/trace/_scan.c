/*
 * traceviz.trace._scan: one pass over a JSON array of Kineto events that writes the columns of
 * its "X" events straight into C arrays, without a Python object per event.
 *
 * scan(buffer) takes the bytes of a JSON array ("[ {...}, {...} ]") and returns None when the
 * array holds anything this scanner does not take on itself (then the caller decodes it with
 * msgspec, which gives the exact result or the exact error), else a tuple:
 *
 *   (n_events, n_x, columns, cats, names, name_escaped, flow_names, flow_name_escaped,
 *    strings, rare, comm)
 *
 *   columns       dict of bytes. One value per "X" event, in file order:
 *                 cat, name, pid_str, tid_str: int32 codes (cat/name into cats/names;
 *                 pid_str/tid_str into strings where the pid/tid is a string, else -1);
 *                 pid, tid, ts_ns, dur_ns, correlation, external_id: int64 (external_id:
 *                 args "External id", else args "external id"; -1 where absent).
 *                 One value per flow event ("ph" "s" or "f"), in file order:
 *                 flow_start, flow_name: int32 (1 for "s"; code into flow_names);
 *                 flow_ts_ns, flow_id: int64 (-1: no id).
 *   cats          the distinct "cat" strings of all events, in order of first appearance,
 *                 as raw UTF-8 bytes ("" where an event has none);
 *   names         the distinct "name" strings of the X events, raw bytes between the quotes
 *                 (JSON escapes left in: name_escaped[i] is 1 where there are any);
 *   flow_names    the same for the flow events;
 *   strings       the distinct string pids/tids of X and flow events, raw UTF-8 bytes;
 *   rare          int64 (start, end) byte offsets of every other event (metadata "M",
 *                 "B"/"E", instant events, ...), for the caller to decode;
 *   comm          int64 (x_row, start, end) of the X events whose args hold a non-null
 *                 "Collective name".
 *
 * Time values (ts, dur: microseconds) become int64 nanoseconds exactly as traceviz's numpy
 * path does (traceviz/trace/decode.py: us_to_ns): the correctly rounded double f of the
 * decimal text, then floor(f) * 1000 + rint((f - floor(f)) * 1000); |f| > 4e15 gives
 * INT64_MIN (no time).
 *
 * What makes it return None (the msgspec path then decides): invalid JSON or invalid UTF-8;
 * an escape in a key, a "ph", a "cat" or a string pid/tid; a \u escape of a surrogate; a
 * known key twice in one object; nesting deeper than MAX_DEPTH; on an "X" or flow event, a value
 * of another type than msgspec's typed schema takes (cat/name not a string, pid/tid not an
 * int64 or a string, ts/dur not a number or beyond the double range, args not an object or
 * null, ids not an int64, args name/labels not a string or null, id not an int64, string
 * or null); a flow event's string id. The scan runs without the GIL.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define MAX_DEPTH 64
#define NO_TIME INT64_MIN
#define MISSING_ID (-1)

typedef const unsigned char *ptr;

/* ---- growable arrays ------------------------------------------------------------------ */

typedef struct {
    char *data;
    size_t len, cap; /* bytes */
} Buf;

static int buf_reserve(Buf *b, size_t more) {
    if (b->len + more <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more) cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d) return -1;
    b->data = d;
    b->cap = cap;
    return 0;
}

static int push64(Buf *b, int64_t v) {
    if (buf_reserve(b, 8)) return -1;
    memcpy(b->data + b->len, &v, 8);
    b->len += 8;
    return 0;
}

static int push32(Buf *b, int32_t v) {
    if (buf_reserve(b, 4)) return -1;
    memcpy(b->data + b->len, &v, 4);
    b->len += 4;
    return 0;
}

/* ---- interned byte strings ------------------------------------------------------------ */

typedef struct {
    ptr s;
    uint32_t len;
    uint32_t hash;
    int32_t code; /* -1: empty slot */
} Slot;

typedef struct {
    Slot *slots;
    size_t mask; /* capacity - 1, capacity a power of two */
    Buf entries; /* Slot per code, in order of first appearance */
    Buf escaped; /* one byte per code */
} Table;

static int table_init(Table *t) {
    memset(t, 0, sizeof *t);
    t->mask = 255;
    t->slots = malloc(256 * sizeof(Slot));
    if (!t->slots) return -1;
    for (size_t i = 0; i <= t->mask; i++) t->slots[i].code = -1;
    return 0;
}

static void table_free(Table *t) {
    free(t->slots);
    free(t->entries.data);
    free(t->escaped.data);
}

static uint32_t hash_bytes(ptr s, size_t n) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ULL;
    return (uint32_t)(h ^ (h >> 32));
}

static int table_grow(Table *t) {
    size_t cap = (t->mask + 1) * 2;
    Slot *slots = malloc(cap * sizeof(Slot));
    if (!slots) return -1;
    for (size_t i = 0; i < cap; i++) slots[i].code = -1;
    size_t n = t->entries.len / sizeof(Slot);
    Slot *e = (Slot *)t->entries.data;
    for (size_t k = 0; k < n; k++) {
        size_t i = e[k].hash & (cap - 1);
        while (slots[i].code >= 0) i = (i + 1) & (cap - 1);
        slots[i] = e[k];
    }
    free(t->slots);
    t->slots = slots;
    t->mask = cap - 1;
    return 0;
}

/* The code of s[0:n] (interned on first sight); -1 when out of memory. */
static int32_t intern(Table *t, ptr s, size_t n, int escaped) {
    uint32_t h = hash_bytes(s, n);
    size_t i = h & t->mask;
    while (t->slots[i].code >= 0) {
        Slot *q = &t->slots[i];
        if (q->hash == h && q->len == n && memcmp(q->s, s, n) == 0) return q->code;
        i = (i + 1) & t->mask;
    }
    size_t count = t->entries.len / sizeof(Slot);
    if (count >= INT32_MAX) return -1;
    Slot slot = {s, (uint32_t)n, h, (int32_t)count};
    if (buf_reserve(&t->entries, sizeof slot) || buf_reserve(&t->escaped, 1)) return -1;
    memcpy(t->entries.data + t->entries.len, &slot, sizeof slot);
    t->entries.len += sizeof slot;
    t->escaped.data[t->escaped.len++] = (char)(escaped != 0);
    t->slots[i] = slot;
    if ((count + 1) * 2 > t->mask + 1 && table_grow(t)) return -1;
    return slot.code;
}

/* ---- JSON lexing ------------------------------------------------------------------------ */

static inline ptr skip_ws(ptr p, ptr e) {
    while (p < e && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
    return p;
}

static inline int hexval(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* One UTF-8 sequence at p (its first byte >= 0x80), validated strictly (no overlong forms,
 * no surrogates, at most U+10FFFF); returns the byte after it, or NULL. */
static ptr utf8_seq(ptr p, ptr e) {
    unsigned c = p[0];
    if (c >= 0xC2 && c <= 0xDF) {
        if (e - p < 2 || (p[1] & 0xC0) != 0x80) return NULL;
        return p + 2;
    }
    if (c >= 0xE0 && c <= 0xEF) {
        if (e - p < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return NULL;
        if (c == 0xE0 && p[1] < 0xA0) return NULL;  /* overlong */
        if (c == 0xED && p[1] >= 0xA0) return NULL; /* surrogate */
        return p + 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (e - p < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 ||
            (p[3] & 0xC0) != 0x80)
            return NULL;
        if (c == 0xF0 && p[1] < 0x90) return NULL; /* overlong */
        if (c == 0xF4 && p[1] >= 0x90) return NULL; /* beyond U+10FFFF */
        return p + 4;
    }
    return NULL;
}

/* A string at p (p[0] == '"'): its contents are [*s, *s + *n); *escaped tells whether they
 * hold a backslash escape. Returns the byte after the closing quote, or NULL. */
static ptr scan_string(ptr p, ptr e, ptr *s, size_t *n, int *escaped) {
    p++;
    ptr start = p;
    int esc = 0;
    for (;;) {
#if defined(__SSE2__)
        while (e - p >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)p);
            __m128i hit = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                             _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                _mm_cmplt_epi8(v, _mm_set1_epi8(0x20))); /* < 0x20, and every byte >= 0x80 */
            int m = _mm_movemask_epi8(hit);
            if (m) {
                p += __builtin_ctz((unsigned)m);
                break;
            }
            p += 16;
        }
#endif
        if (p >= e) return NULL;
        unsigned c = *p;
        if (c == '"') break;
        if (c == '\\') {
            if (e - p < 2) return NULL;
            unsigned x = p[1];
            esc = 1;
            if (x == 'u') {
                if (e - p < 6) return NULL;
                int code = 0;
                for (int k = 2; k < 6; k++) {
                    int h = hexval(p[k]);
                    if (h < 0) return NULL;
                    code = code * 16 + h;
                }
                if (code >= 0xD800 && code <= 0xDFFF) return NULL; /* surrogates: msgspec's */
                p += 6;
            } else if (x == '"' || x == '\\' || x == '/' || x == 'b' || x == 'f' || x == 'n' ||
                       x == 'r' || x == 't') {
                p += 2;
            } else {
                return NULL;
            }
        } else if (c < 0x20) {
            return NULL;
        } else if (c >= 0x80) {
            p = utf8_seq(p, e);
            if (!p) return NULL;
        } else {
            p++;
        }
    }
    *s = start;
    *n = (size_t)(p - start);
    *escaped = esc;
    return p + 1;
}

typedef struct {
    ptr start, end;
    int neg, is_int, big;
    uint64_t mant; /* significant digits, while they fit (big: they did not) */
    int32_t e10;   /* value = mant * 10^e10 */
} Num;

/* A JSON number at p; returns the byte after it, or NULL. */
static ptr scan_number(ptr p, ptr e, Num *n) {
    memset(n, 0, sizeof *n);
    n->start = p;
    n->is_int = 1;
    if (p < e && *p == '-') {
        n->neg = 1;
        p++;
    }
    if (p >= e) return NULL;
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        while (p < e && *p >= '0' && *p <= '9') {
            if (n->mant > (UINT64_MAX - 9) / 10) {
                n->big = 1;
            } else {
                n->mant = n->mant * 10 + (uint64_t)(*p - '0');
            }
            p++;
        }
    } else {
        return NULL;
    }
    if (p < e && *p == '.') {
        n->is_int = 0;
        p++;
        if (p >= e || *p < '0' || *p > '9') return NULL;
        while (p < e && *p >= '0' && *p <= '9') {
            if (n->mant > (UINT64_MAX - 9) / 10) {
                n->big = 1;
            } else {
                n->mant = n->mant * 10 + (uint64_t)(*p - '0');
                n->e10--;
            }
            p++;
        }
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        n->is_int = 0;
        p++;
        int eneg = 0;
        if (p < e && (*p == '+' || *p == '-')) {
            eneg = *p == '-';
            p++;
        }
        if (p >= e || *p < '0' || *p > '9') return NULL;
        int32_t x = 0;
        while (p < e && *p >= '0' && *p <= '9') {
            if (x < 100000) x = x * 10 + (*p - '0');
            else n->big = 1;
            p++;
        }
        n->e10 += eneg ? -x : x;
    }
    n->end = p;
    return p;
}

static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                  1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                  1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* The correctly rounded double of a number; 0 when it is not finite (out of range). */
static int num_double(const Num *n, double *out) {
    if (!n->big && n->mant <= (1ULL << 53) && n->e10 >= -22 && n->e10 <= 22) {
        /* Both operands exact: one rounding, so the result is the correctly rounded value. */
        double d = (double)n->mant;
        d = n->e10 < 0 ? d / POW10[-n->e10] : d * POW10[n->e10];
        *out = n->neg ? -d : d;
        return 1;
    }
    char text[128];
    size_t len = (size_t)(n->end - n->start);
    if (len >= sizeof text) return 0;
    memcpy(text, n->start, len);
    text[len] = 0;
    char *stop;
    double d = strtod(text, &stop);
    if (stop != text + len || !isfinite(d)) return 0; /* a locale's decimal point: decline */
    *out = d;
    return 1;
}

/* An int64 JSON integer; 0 when the number is not one. */
static int num_int64(const Num *n, int64_t *out) {
    if (!n->is_int || n->big) return 0;
    if (n->neg) {
        if (n->mant > (uint64_t)INT64_MAX + 1) return 0;
        *out = n->mant == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)n->mant;
    } else {
        if (n->mant > (uint64_t)INT64_MAX) return 0;
        *out = (int64_t)n->mant;
    }
    return 1;
}

/* Microseconds as int64 nanoseconds, as traceviz.trace.decode.us_to_ns. */
static int64_t us_to_ns(double f) {
    if (!(fabs(f) <= 4.0e15)) return NO_TIME;
    double whole = floor(f);
    int64_t frac = (int64_t)rint((f - whole) * 1000.0);
    return (int64_t)whole * 1000 + frac;
}

static ptr skip_value(ptr p, ptr e, int depth);

static ptr skip_container(ptr p, ptr e, int depth, int object) {
    if (depth >= MAX_DEPTH) return NULL;
    p = skip_ws(p + 1, e);
    unsigned char close = object ? '}' : ']';
    if (p < e && *p == close) return p + 1;
    for (;;) {
        if (object) {
            ptr s;
            size_t n;
            int esc;
            if (p >= e || *p != '"') return NULL;
            p = scan_string(p, e, &s, &n, &esc);
            if (!p) return NULL;
            p = skip_ws(p, e);
            if (p >= e || *p != ':') return NULL;
            p = skip_ws(p + 1, e);
        }
        p = skip_value(p, e, depth + 1);
        if (!p) return NULL;
        p = skip_ws(p, e);
        if (p >= e) return NULL;
        if (*p == ',') {
            p = skip_ws(p + 1, e);
            continue;
        }
        if (*p == close) return p + 1;
        return NULL;
    }
}

static ptr literal(ptr p, ptr e, const char *word, size_t n) {
    if ((size_t)(e - p) < n || memcmp(p, word, n) != 0) return NULL;
    return p + n;
}

static ptr skip_value(ptr p, ptr e, int depth) {
    if (p >= e) return NULL;
    switch (*p) {
    case '"': {
        ptr s;
        size_t n;
        int esc;
        return scan_string(p, e, &s, &n, &esc);
    }
    case '{': return skip_container(p, e, depth, 1);
    case '[': return skip_container(p, e, depth, 0);
    case 't': return literal(p, e, "true", 4);
    case 'f': return literal(p, e, "false", 5);
    case 'n': return literal(p, e, "null", 4);
    default: {
        Num num;
        return scan_number(p, e, &num);
    }
    }
}

/* ---- events ----------------------------------------------------------------------------- */

enum { T_ABSENT = 0, T_STR, T_NUM, T_OBJ, T_ARR, T_BOOL, T_NULL };

typedef struct {
    int type;
    ptr s; /* T_STR: contents; T_NUM: the number */
    size_t n;
    int escaped;
    Num num;
} Val;

/* One value at p, typed (contents of strings, numbers scanned; containers skipped). */
static ptr read_value(ptr p, ptr e, Val *v, int depth) {
    v->type = T_ABSENT;
    if (p >= e) return NULL;
    switch (*p) {
    case '"':
        v->type = T_STR;
        return scan_string(p, e, &v->s, &v->n, &v->escaped);
    case '{': v->type = T_OBJ; return skip_container(p, e, depth, 1);
    case '[': v->type = T_ARR; return skip_container(p, e, depth, 0);
    case 't': v->type = T_BOOL; return literal(p, e, "true", 4);
    case 'f': v->type = T_BOOL; return literal(p, e, "false", 5);
    case 'n': v->type = T_NULL; return literal(p, e, "null", 4);
    default: v->type = T_NUM; return scan_number(p, e, &v->num);
    }
}

#define KEY_IS(s, n, lit) ((n) == sizeof(lit) - 1 && memcmp((s), (lit), (n)) == 0)

typedef struct {
    int seen_args;  /* args present, and an object */
    int args_null;  /* args: null */
    int bad;        /* a typed field of args that the schema rejects */
    int64_t corr, ext, ext_legacy;
    int collective; /* "Collective name" present and not null */
} Args;

/* An int id of args: absent → MISSING_ID; anything but an int64 → bad. */
static int args_id(const Val *v, int64_t *out) {
    return v->type == T_NUM && num_int64(&v->num, out);
}

/* The members of an args object at p (p[0] == '{'). */
static ptr read_args(ptr p, ptr e, Args *a) {
    unsigned seen = 0;
    p = skip_ws(p + 1, e);
    if (p < e && *p == '}') return p + 1;
    for (;;) {
        ptr k;
        size_t kn;
        int kesc;
        if (p >= e || *p != '"') return NULL;
        p = scan_string(p, e, &k, &kn, &kesc);
        if (!p || kesc) return NULL;
        p = skip_ws(p, e);
        if (p >= e || *p != ':') return NULL;
        p = skip_ws(p + 1, e);
        unsigned bit = 0;
        Val v;
        p = read_value(p, e, &v, 2);
        if (!p) return NULL;
        if (KEY_IS(k, kn, "correlation")) {
            bit = 1;
            if (!args_id(&v, &a->corr)) a->bad = 1;
        } else if (KEY_IS(k, kn, "External id")) {
            bit = 2;
            if (!args_id(&v, &a->ext)) a->bad = 1;
        } else if (KEY_IS(k, kn, "external id")) {
            bit = 4;
            if (!args_id(&v, &a->ext_legacy)) a->bad = 1;
        } else if (KEY_IS(k, kn, "name") || KEY_IS(k, kn, "labels")) {
            bit = KEY_IS(k, kn, "name") ? 8 : 16;
            if (v.type != T_STR && v.type != T_NULL) a->bad = 1;
        } else if (KEY_IS(k, kn, "Collective name")) {
            bit = 32;
            a->collective = v.type != T_NULL;
        } else if (KEY_IS(k, kn, "In msg nelems")) {
            bit = 64;
        } else if (KEY_IS(k, kn, "Out msg nelems")) {
            bit = 128;
        } else if (KEY_IS(k, kn, "Process Group Name")) {
            bit = 256;
        } else if (KEY_IS(k, kn, "Group size")) {
            bit = 512;
        } else if (KEY_IS(k, kn, "Seq")) {
            bit = 1024;
        } else if (KEY_IS(k, kn, "dtype")) {
            bit = 2048;
        }
        if (bit) {
            if (seen & bit) return NULL; /* a known key twice */
            seen |= bit;
        }
        p = skip_ws(p, e);
        if (p >= e) return NULL;
        if (*p == ',') {
            p = skip_ws(p + 1, e);
            continue;
        }
        if (*p == '}') return p + 1;
        return NULL;
    }
}

typedef struct {
    Buf cat, name, pid_s, tid_s;           /* int32 */
    Buf pid, tid, ts, dur, corr, ext;      /* int64 */
    Buf rare, comm;                        /* int64 pairs / triples */
    Buf flow_start, flow_name;             /* int32 */
    Buf flow_ts, flow_id;                  /* int64 */
    Table cats, names, strings, flow_names;
    int64_t n_events, n_x;
} Out;

enum { K_PH = 1, K_CAT = 2, K_NAME = 4, K_PID = 8, K_TID = 16, K_TS = 32, K_DUR = 64,
       K_ARGS = 128, K_ID = 256 };

/* pid / tid of an X event into (value, string code); 0 when the schema rejects it. */
static int pid_tid(Out *o, const Val *v, int64_t *value, int32_t *code) {
    *code = -1;
    *value = 0;
    if (v->type == T_ABSENT) return 1;
    if (v->type == T_NUM) return num_int64(&v->num, value);
    if (v->type != T_STR || v->escaped) return 0;
    int32_t c = intern(&o->strings, v->s, v->n, 0);
    if (c < 0) return -1;
    *code = c;
    *value = c;
    return 1;
}

static int time_ns(const Val *v, int64_t *out) {
    double d = 0.0;
    if (v->type == T_NUM) {
        if (!num_double(&v->num, &d)) return 0;
    } else if (v->type != T_ABSENT) {
        return 0;
    }
    *out = us_to_ns(d);
    return 1;
}

/* Returns 1 (taken), 0 (decline: msgspec decides), -1 (out of memory). */
static int event(Out *o, ptr base, ptr *pp, ptr e) {
    ptr p = *pp, start = p;
    Val ph = {0}, cat = {0}, name = {0}, pid = {0}, tid = {0}, ts = {0}, dur = {0}, id = {0};
    Args args = {0, 0, 0, MISSING_ID, MISSING_ID, MISSING_ID, 0};
    unsigned seen = 0;
    if (p >= e || *p != '{') return 0;
    p = skip_ws(p + 1, e);
    if (p < e && *p == '}') {
        p++;
    } else {
        for (;;) {
            ptr k;
            size_t kn;
            int kesc;
            if (p >= e || *p != '"') return 0;
            p = scan_string(p, e, &k, &kn, &kesc);
            if (!p || kesc) return 0;
            p = skip_ws(p, e);
            if (p >= e || *p != ':') return 0;
            p = skip_ws(p + 1, e);
            Val *slot = NULL;
            unsigned bit = 0;
            if (kn == 2 && k[0] == 'p' && k[1] == 'h') { slot = &ph; bit = K_PH; }
            else if (KEY_IS(k, kn, "cat")) { slot = &cat; bit = K_CAT; }
            else if (KEY_IS(k, kn, "name")) { slot = &name; bit = K_NAME; }
            else if (KEY_IS(k, kn, "pid")) { slot = &pid; bit = K_PID; }
            else if (KEY_IS(k, kn, "tid")) { slot = &tid; bit = K_TID; }
            else if (kn == 2 && k[0] == 't' && k[1] == 's') { slot = &ts; bit = K_TS; }
            else if (KEY_IS(k, kn, "dur")) { slot = &dur; bit = K_DUR; }
            else if (KEY_IS(k, kn, "id")) { slot = &id; bit = K_ID; }
            else if (KEY_IS(k, kn, "args")) { bit = K_ARGS; }
            if (bit) {
                if (seen & bit) return 0;
                seen |= bit;
            }
            if (bit == K_ARGS) {
                if (p < e && *p == '{') {
                    args.seen_args = 1;
                    p = read_args(p, e, &args);
                } else {
                    Val v;
                    p = read_value(p, e, &v, 1);
                    if (v.type == T_NULL) args.args_null = 1;
                    else args.bad = 1;
                }
            } else if (slot) {
                p = read_value(p, e, slot, 1);
            } else {
                p = skip_value(p, e, 1);
            }
            if (!p) return 0;
            p = skip_ws(p, e);
            if (p >= e) return 0;
            if (*p == ',') {
                p = skip_ws(p + 1, e);
                continue;
            }
            if (*p == '}') {
                p++;
                break;
            }
            return 0;
        }
    }
    *pp = p;
    o->n_events++;
    /* cat: interned for every event, in order of first appearance ("" when absent). */
    if (cat.type != T_ABSENT && (cat.type != T_STR || cat.escaped)) return 0;
    int32_t cat_code = intern(&o->cats, cat.type == T_STR ? cat.s : (ptr) "",
                              cat.type == T_STR ? cat.n : 0, 0);
    if (cat_code < 0) return -1;
    if (ph.type == T_STR && ph.escaped) return 0;
    int one = ph.type == T_STR && ph.n == 1;
    int is_x = one && ph.s[0] == 'X';
    int is_flow = one && (ph.s[0] == 's' || ph.s[0] == 'f');
    if (!is_x && !is_flow) {
        if (push64(&o->rare, start - base) || push64(&o->rare, p - base)) return -1;
        return 1;
    }
    /* An X or flow event: the types msgspec's typed schema takes, else decline. */
    if (name.type != T_ABSENT && name.type != T_STR) return 0;
    if (args.bad) return 0;
    int64_t idv = MISSING_ID;
    if (id.type == T_NUM) {
        if (!num_int64(&id.num, &idv)) return 0;
    } else if (id.type == T_STR) {
        if (is_flow) return 0; /* a string flow id: traceviz's Python rule reads it */
    } else if (id.type != T_ABSENT && id.type != T_NULL) {
        return 0;
    }
    int64_t pidv, tidv, tsv, durv;
    int32_t pids, tids;
    int r = pid_tid(o, &pid, &pidv, &pids);
    if (r <= 0) return r;
    r = pid_tid(o, &tid, &tidv, &tids);
    if (r <= 0) return r;
    if (!time_ns(&ts, &tsv) || !time_ns(&dur, &durv)) return 0;
    if (is_flow) {
        int32_t code = intern(&o->flow_names, name.type == T_STR ? name.s : (ptr) "",
                              name.type == T_STR ? name.n : 0, name.escaped);
        if (code < 0 || push32(&o->flow_start, ph.s[0] == 's') ||
            push32(&o->flow_name, code) || push64(&o->flow_ts, tsv) || push64(&o->flow_id, idv))
            return -1;
        return 1;
    }
    int32_t name_code = intern(&o->names, name.type == T_STR ? name.s : (ptr) "",
                               name.type == T_STR ? name.n : 0, name.escaped);
    if (name_code < 0) return -1;
    int64_t ext = args.ext != MISSING_ID ? args.ext : args.ext_legacy;
    if (args.collective) {
        if (push64(&o->comm, o->n_x) || push64(&o->comm, start - base) ||
            push64(&o->comm, p - base))
            return -1;
    }
    if (push32(&o->cat, cat_code) || push32(&o->name, name_code) || push32(&o->pid_s, pids) ||
        push32(&o->tid_s, tids) || push64(&o->pid, pidv) || push64(&o->tid, tidv) ||
        push64(&o->ts, tsv) || push64(&o->dur, durv) || push64(&o->corr, args.corr) ||
        push64(&o->ext, ext))
        return -1;
    o->n_x++;
    return 1;
}

/* The whole array; 1 taken, 0 decline, -1 out of memory. */
static int scan_array(Out *o, ptr base, size_t len) {
    ptr p = base, e = base + len;
    p = skip_ws(p, e);
    if (p >= e || *p != '[') return 0;
    p = skip_ws(p + 1, e);
    if (p < e && *p == ']') {
        p++;
    } else {
        for (;;) {
            int r = event(o, base, &p, e);
            if (r <= 0) return r;
            p = skip_ws(p, e);
            if (p >= e) return 0;
            if (*p == ',') {
                p = skip_ws(p + 1, e);
                continue;
            }
            if (*p == ']') {
                p++;
                break;
            }
            return 0;
        }
    }
    return skip_ws(p, e) == e;
}

/* ---- Python ----------------------------------------------------------------------------- */

static void out_free(Out *o) {
    Buf *bufs[] = {&o->cat, &o->name, &o->pid_s, &o->tid_s, &o->pid, &o->tid,
                   &o->ts,  &o->dur,  &o->corr,  &o->ext,   &o->rare, &o->comm,
                   &o->flow_start, &o->flow_name, &o->flow_ts, &o->flow_id};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) free(bufs[i]->data);
    table_free(&o->flow_names);
    table_free(&o->cats);
    table_free(&o->names);
    table_free(&o->strings);
}

static PyObject *as_bytes(const Buf *b) {
    return PyBytes_FromStringAndSize(b->data ? b->data : "", (Py_ssize_t)b->len);
}

static PyObject *table_list(const Table *t) {
    size_t n = t->entries.len / sizeof(Slot);
    const Slot *e = (const Slot *)t->entries.data;
    PyObject *list = PyList_New((Py_ssize_t)n);
    if (!list) return NULL;
    for (size_t i = 0; i < n; i++) {
        PyObject *s = PyBytes_FromStringAndSize((const char *)e[i].s, e[i].len);
        if (!s) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, s);
    }
    return list;
}

static PyObject *columns_dict(const Out *o) {
    const char *keys[] = {"cat", "name", "pid_str", "tid_str", "pid", "tid",
                          "ts_ns", "dur_ns", "correlation", "external_id",
                          "flow_start", "flow_name", "flow_ts_ns", "flow_id"};
    const Buf *bufs[] = {&o->cat, &o->name, &o->pid_s, &o->tid_s, &o->pid, &o->tid,
                         &o->ts,  &o->dur,  &o->corr,  &o->ext,
                         &o->flow_start, &o->flow_name, &o->flow_ts, &o->flow_id};
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        PyObject *b = as_bytes(bufs[i]);
        if (!b || PyDict_SetItemString(d, keys[i], b)) {
            Py_XDECREF(b);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(b);
    }
    return d;
}

static PyObject *scan(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE)) return NULL;
    Out o;
    memset(&o, 0, sizeof o);
    if (table_init(&o.cats) || table_init(&o.names) || table_init(&o.strings) ||
        table_init(&o.flow_names)) {
        out_free(&o);
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    int r;
    Py_BEGIN_ALLOW_THREADS
    r = scan_array(&o, (ptr)view.buf, (size_t)view.len);
    Py_END_ALLOW_THREADS
    PyObject *result = NULL;
    if (r < 0) {
        PyErr_NoMemory();
    } else if (r == 0) {
        result = Py_NewRef(Py_None);
    } else {
        result = Py_BuildValue(
            "(LLNNNNNNNNN)", (long long)o.n_events, (long long)o.n_x, columns_dict(&o),
            table_list(&o.cats), table_list(&o.names), as_bytes(&o.names.escaped),
            table_list(&o.flow_names), as_bytes(&o.flow_names.escaped),
            table_list(&o.strings), as_bytes(&o.rare), as_bytes(&o.comm));
    }
    out_free(&o);
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_O,
     "scan(buffer) -> tuple | None: the columns of a JSON array of Kineto events "
     "(see the module's C source for the tuple); None where msgspec must decide."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_scan",
    "One-pass scanner of Kineto event arrays into columns (C; optional).", -1, methods,
};

PyMODINIT_FUNC PyInit__scan(void) { return PyModule_Create(&module); }
