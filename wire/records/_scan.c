/* The record walk of wire/records/scan.py in C: the same checks, the same answers, without an
 * interpreter step per byte. scan.py's docstrings say what is checked and why; this file only
 * does it. Every read is bounds-checked against the buffer: a read past its end, like any
 * structural fault, makes the walk answer None (scan.py turns that into INVALID_RECORD).
 *
 * scan(data, count, full) -> (min_ts_delta, max_ts_delta, in_order, keyless) | None
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

typedef struct {
    const uint8_t *buf;
    int64_t len;
    int64_t pos;
} reader;

/* A zigzag varint of at most 5 bytes, truncated to 32 bits; 0 when it is too long or runs
 * past the buffer. */
static int read_varint(reader *r, int64_t *out)
{
    uint32_t u = 0;
    for (int shift = 0; shift <= 28; shift += 7) {
        if (r->pos >= r->len)
            return 0;
        uint8_t b = r->buf[r->pos++];
        u |= (uint32_t)(b & 0x7F) << shift;
        if (b < 0x80) {
            *out = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
            return 1;
        }
    }
    return 0;
}

/* A zigzag varlong of at most 10 bytes, truncated to 64 bits. */
static int read_varlong(reader *r, int64_t *out)
{
    uint64_t u = 0;
    for (int shift = 0; shift <= 63; shift += 7) {
        if (r->pos >= r->len)
            return 0;
        uint8_t b = r->buf[r->pos++];
        u |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80) {
            *out = (int64_t)((u >> 1) ^ (0 - (u & 1)));
            return 1;
        }
    }
    return 0;
}

/* Header count, then each header's key (length >= 0, within end) and value (within end);
 * `full` also bounds the count by the bytes left, as Kafka's full read does. */
static int skip_headers(reader *r, int64_t end, int full)
{
    int64_t n, klen, vlen;
    if (!read_varint(r, &n) || n < 0 || (full && n > r->len - r->pos))
        return 0;
    for (int64_t h = 0; h < n; h++) {
        if (!read_varint(r, &klen) || klen < 0)
            return 0;
        r->pos += klen;
        if (r->pos > end || !read_varint(r, &vlen))
            return 0;
        if (vlen > 0) {
            r->pos += vlen;
            if (r->pos > end)
                return 0;
        }
    }
    return 1;
}

/* One record; 0 for a structural fault. Offsets are int64 and grow by at most 2^31 per
 * field, so they cannot overflow before a bounds check stops the walk. */
static int walk_record(reader *r, int64_t i, int full, int64_t *ts, int *in_order, int *keyless)
{
    int64_t size, od, n, body_end = 0;
    if (!read_varint(r, &size) || size < 0)
        return 0;
    if (full) {
        body_end = r->pos + size;
        if (body_end > r->len)
            return 0;
    }
    r->pos += 1; /* attributes: never read, but the timestamp after it must be there */
    if (!read_varlong(r, ts) || !read_varint(r, &od))
        return 0;
    if (od != i)
        *in_order = 0;
    if (!read_varint(r, &n))
        return 0;
    *keyless = n < 0;
    if (n > 0)
        r->pos += n;
    if (!read_varint(r, &n))
        return 0;
    if (n > 0)
        r->pos += n;
    if (full)
        return skip_headers(r, body_end, 1) && r->pos == body_end;
    return skip_headers(r, r->len, 0);
}

static PyObject *scan(PyObject *self, PyObject *args)
{
    Py_buffer view;
    long long count;
    int full;
    if (!PyArg_ParseTuple(args, "y*Lp", &view, &count, &full))
        return NULL;
    reader r = {(const uint8_t *)view.buf, (int64_t)view.len, 0};
    int64_t ts, ts_min = INT64_MAX, ts_max = INT64_MIN;
    int in_order = 1, keyless, ok = 1;
    PyObject *keyless_list = PyList_New(0);
    if (keyless_list == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    for (long long i = 0; i < count; i++) {
        if (!walk_record(&r, i, full, &ts, &in_order, &keyless)) {
            ok = 0;
            break;
        }
        if (ts < ts_min)
            ts_min = ts;
        if (ts > ts_max)
            ts_max = ts;
        if (keyless) {
            PyObject *index = PyLong_FromLongLong(i);
            if (index == NULL || PyList_Append(keyless_list, index) < 0) {
                Py_XDECREF(index);
                Py_DECREF(keyless_list);
                PyBuffer_Release(&view);
                return NULL;
            }
            Py_DECREF(index);
        }
    }
    PyBuffer_Release(&view);
    if (!ok || r.pos != r.len) {
        Py_DECREF(keyless_list);
        Py_RETURN_NONE;
    }
    return Py_BuildValue("LLON", (long long)ts_min, (long long)ts_max,
                         (full || in_order) ? Py_True : Py_False, keyless_list);
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS,
     "scan(data, count, full) -> (min_ts_delta, max_ts_delta, in_order, keyless) or None "
     "when the records are malformed"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "wire.records._scan",
    "The record walk of wire.records.scan in C (optional accelerator).", -1, methods,
};

PyMODINIT_FUNC PyInit__scan(void)
{
    return PyModule_Create(&module);
}
