/* The tick, compiled: steering, the arbiter and the after-tick bookkeeping of mirofish.world.
 *
 * Three functions do, fish by fish in C, exactly what World's numpy code does for the whole
 * tank at once (World.step's numpy path is the reference and the fallback when this module was
 * not built). At 60 fish the numpy tick is bound by the fixed cost of a few hundred small
 * array operations, not by the fish; here a tick costs a few microseconds per fish.
 *
 *   steer(...)      plan + view -> this tick's action per fish (fish/steering.py, World.steer)
 *   arbitrate(...)  priorities, tie-breaks, moves and meals, applied (arbiter.py, World.step)
 *   after(...)      energy, counters, the new views, plan triggers, memories (World.step)
 *   food(...)       food spawned where the draws fall, food rotted (Water.spawn_food, rot_food)
 *   summarize(...)  the long-term memories' records every summary_every ticks (World._summarize)
 *   plan(...)       the instinct planner for a batch of fish (brains/instinct.py)
 *
 * and the observers' per-tick work, each beside its numpy reference and tested against it:
 *
 *   tally(...)      the metrics' rolling windows (observe/metrics.Metrics.observe)
 *   tally_tanks(...) the same for a joined world's tanks at once (observe/together.py)
 *   deeds(...)      the word-and-deed tally of open plans (observe/worddeed.WordDeed.observe)
 *   judge(...)      plans without words judged and opened (worddeed.WordDeed._close, observe)
 *   keep(...)       a batch of decisions into a session's history (session/history.DecisionHistory)
 *   neighbours(...) nearest neighbours and clusters from a grid of the fish (metrics.nn_and_labels)
 *   school(...)     a sample's order figures and its largest school (metrics.Sample)
 *   components(...) union-find labels (metrics' clusters, water's pocket sealing)
 *
 * Everything but steering's utilities is integer arithmetic and identical by construction.
 * Steering's floats follow the numpy code operation by operation (no fused multiply-add:
 * built with -ffp-contract=off); the feature sums and exp() may differ from numpy's in the
 * last bit, which could change a sampled action only if a uniform draw fell within an ulp of
 * a cumulative probability (tests/test_kernel.py compares both paths tick by tick).
 *
 * numpy arrays come in through numpy's C API (C-contiguous; anything else that exports a buffer,
 * through the buffer protocol); each is checked for its size, and every index read from an array
 * is checked before use, so a damaged keyframe raises ValueError instead of reading outside an
 * array. The arrays a function fills anew each call (steer's actions, arbitrate's outcomes,
 * after's new state, ask's requests, plan's decisions, adopt's ended codes) it makes and returns.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
/* numpy's own arrays are read through its C API (their data pointer, size and flags: a few
   loads) instead of the buffer protocol, whose every export allocates and frees a record of
   the array's shape (some 40-70 ns, and a tick passes a few hundred arrays); anything else
   that exports a buffer still comes in through the protocol. Arrays a function makes (``ask``'s
   requests) are made here too. Without numpy's headers (setup.py) this file does not build, and
   the numpy tick runs. */
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#include <unistd.h>
#endif

/* Codes shared with the Python modules; exported as CONSTANTS and checked by the tests. */
enum { A_EAT = 4, A_REST = 5 };                                   /* actions.Action */
enum { MOVED = 0, STAYED = 1, BLOCKED = 2, CROWDED = 3, OCCUPIED = 4 }; /* arbiter outcomes */
enum { ATE = 0, NO_FOOD_R = 1, TAKEN = 2, NOT_EATING = -1 };      /* arbiter meal results */
enum { V_WATER = 0, V_WALL = 1, V_FOOD = 2, V_SELF = 3, V_FISH = 4, N_CODES = 8 }; /* perception */
enum { G_HOLD = 0 };                      /* plans.G_HOLD: the first plan type (the others come by table) */
#define NO_FOOD_BORN (-1)                                          /* water.NO_FOOD */
#define N_FEATURES 36
#define N_EVENTS 9                                                 /* world.EVENT_ORDER */
#define N_GOAL_FLAGS 7                                /* world._GOAL_FLAGS' columns (GOAL_FLAG_COLUMNS) */
#define BIG_GRID 200000 /* cells: above this, after() reads the views from a grid of view codes */
#define NEG (-1e9)
#define BOXED (-1e8)
/* steering feature columns */
enum { F_OPEN = 0, F_WALL = 4, F_CROWD = 8, F_ALIGN = 12, F_FISH = 16, F_LOST = 20, F_FOOD = 24, F_BLOCKED = 28,
       F_VISIBLE = 32, F_FOOD_CLOSE = 33 };
/* A hexagonal tank (mirofish/grid.py) has six moves where the square one has four: the actions
   are the moves, then eat and rest; the view codes a fish by each of its headings; the feature
   rows are eight blocks of one column per move, then four (steering.Layout). The functions that
   read moves take their number from an array's size (bias, delta, refused_at, the feature rows)
   — four gives exactly the square tank's arithmetic above. */
#define MAX_MOVES 6
#define MAX_FEATURES (8 * MAX_MOVES + 4)
#define HEX_MOVE_ARG 16 /* fish/memory.HEX_MOVE_ARG: a hexagonal tank's refused or bumped move, remembered */
typedef struct {
    int d, open, wall, crowd, align, fish, lost, food, blocked, visible, food_close, food_seen, walls, n, codes;
} Lay;
static Lay lay_of(int d) {
    Lay l = {d, 0, d, 2 * d, 3 * d, 4 * d, 5 * d, 6 * d, 7 * d, 8 * d, 8 * d + 1, 8 * d + 2, 8 * d + 3, 8 * d + 4, V_FISH + d};
    return l;
}
/* the number of moves ``total / per`` of an array of ``total`` items, ``per`` a fish (4 or 6), or -1 with a ValueError */
static int moves_of(Py_ssize_t total, Py_ssize_t per, const char *name) {
    if (per <= 0) return 4;
    if (total >= 0 && total % per == 0 && (total / per == 4 || total / per == 6)) return (int)(total / per);
    if (total >= 0) PyErr_Format(PyExc_ValueError, "array %s: %zd items for %zd fish, not 4 or 6 moves each", name, total, per);
    else if (!PyErr_Occurred()) /* (a count worked out from another array's: too few items there) */
        PyErr_Format(PyExc_ValueError, "array %s: too few items for its rows", name);
    return -1;
}

static uint64_t splitmix(uint64_t z) {
    z ^= z >> 30;
    z *= 0xBF58476D1CE4E5B9ULL;
    z ^= z >> 27;
    z *= 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* rng.at_tick for one key */
static uint64_t at_tick(uint64_t key, int64_t tick) { return splitmix(key ^ ((uint64_t)tick * 0x9E3779B97F4A7C15ULL)); }

/* rng.to_unit */
static double to_unit(uint64_t h) { return (double)(h >> 11) * (1.0 / 9007199254740992.0); }

/* ------------------------------------------------------------------ buffers */

typedef struct {
    Py_buffer b;
    int held;
} Buf;

#define MAX_BUFS 48
typedef struct {
    Buf bufs[MAX_BUFS];
    int n;
} Bufs;

static void release_all(Bufs *bs) {
    for (int i = 0; i < bs->n; i++)
        if (bs->bufs[i].held) PyBuffer_Release(&bs->bufs[i].b);
    bs->n = 0;
}

/* Borrow ``obj``'s C-contiguous buffer of exactly ``count`` items of ``itemsize`` bytes. */
static void *take(Bufs *bs, PyObject *obj, Py_ssize_t count, Py_ssize_t itemsize, int writable, const char *name) {
    if (PyArray_Check(obj)) { /* (the same checks and errors as the buffer protocol's path below) */
        PyArrayObject *a = (PyArrayObject *)obj;
        if (!PyArray_IS_C_CONTIGUOUS(a) || (writable && !PyArray_ISWRITEABLE(a))) {
            PyErr_Format(PyExc_ValueError, "array %s: not a contiguous%s array", name, writable ? " writable" : "");
            return NULL;
        }
        if (PyArray_NBYTES(a) != count * itemsize) {
            PyErr_Format(PyExc_ValueError, "array %s: %zd bytes, expected %zd", name, (Py_ssize_t)PyArray_NBYTES(a),
                         count * itemsize);
            return NULL;
        }
        return PyArray_DATA(a);
    }
    if (bs->n >= MAX_BUFS) {
        PyErr_SetString(PyExc_RuntimeError, "too many arrays");
        return NULL;
    }
    Buf *slot = &bs->bufs[bs->n];
    int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, &slot->b, flags) < 0) {
        PyErr_Format(PyExc_ValueError, "array %s: not a contiguous%s array", name, writable ? " writable" : "");
        return NULL;
    }
    slot->held = 1;
    bs->n++;
    if (slot->b.len != count * itemsize) {
        PyErr_Format(PyExc_ValueError, "array %s: %zd bytes, expected %zd", name, slot->b.len, count * itemsize);
        return NULL;
    }
    return slot->b.buf;
}

/* A new C-contiguous numpy array of ``rows`` items of ``type`` (``cols`` < 0), or of ``rows`` x
   ``cols``; NULL with MemoryError. */
static PyArrayObject *new_array(Py_ssize_t rows, Py_ssize_t cols, int type) {
    npy_intp dims[2] = {rows, cols};
    return (PyArrayObject *)PyArray_SimpleNew(cols < 0 ? 1 : 2, dims, type);
}

/* Byte length of ``obj``'s buffer divided by ``itemsize`` (the array's item count). */
static Py_ssize_t items(PyObject *obj, Py_ssize_t itemsize, const char *name) {
    if (PyArray_Check(obj)) {
        if (!PyArray_IS_C_CONTIGUOUS((PyArrayObject *)obj)) {
            PyErr_Format(PyExc_ValueError, "array %s: not a contiguous array", name);
            return -1;
        }
        return (Py_ssize_t)PyArray_NBYTES((PyArrayObject *)obj) / itemsize;
    }
    Py_buffer b;
    if (PyObject_GetBuffer(obj, &b, PyBUF_SIMPLE) < 0) {
        PyErr_Format(PyExc_ValueError, "array %s: not a contiguous array", name);
        return -1;
    }
    Py_ssize_t n = b.len / itemsize;
    PyBuffer_Release(&b);
    return n;
}

#define TAKE(var, type, obj, count, writable)                                              \
    type *var = (type *)take(&bs, obj, (count), (Py_ssize_t)sizeof(type), writable, #var); \
    if (!var) goto fail;

/* Set the error every bad index raises; returns NULL. */
static PyObject *out_of_range(const char *what, long long value) {
    return PyErr_Format(PyExc_ValueError, "%s %lld is out of range", what, value);
}

static PyObject *bad_index(Bufs *bs, const char *what, long long value) {
    release_all(bs);
    return out_of_range(what, value);
}

/* Large tanks split steer's and after's per-fish loops over the machine's cores (OpenMP, when
   the extension was built with it: setup.py). Each fish's results depend only on the state read
   and are written to its own rows, so the split changes no result, only the time. A bad index
   found inside such a loop is noted (the first one noted wins) and reported after it. */
#define PARALLEL_FISH 4096

#define PRAGMA(x) _Pragma(#x)
#ifdef _OPENMP
#define SPLIT_FOR(cond) PRAGMA(omp parallel for schedule(static) if (cond))
#define ONE_AT_A_TIME PRAGMA(omp critical(mirofish_bad))
static long split_owner = 0;
#else
#define SPLIT_FOR(cond)
#define ONE_AT_A_TIME
#endif

/* Split a loop over ``n`` fish? Only in the process that split first: a child forked from it
   (sweeps and reefs fork their workers) inherits no OpenMP threads and runs serially. */
static int split(Py_ssize_t n) {
#ifdef _OPENMP
    if (n < PARALLEL_FISH) return 0;
    long me = (long)getpid();
    if (!split_owner) split_owner = me;
    return split_owner == me;
#else
    (void)n;
    return 0;
#endif
}

typedef struct {
    const char *what;
    long long value;
} Bad;

static void note_bad(Bad *b, const char *what, long long value) {
    ONE_AT_A_TIME
    {
        if (!b->what) {
            b->what = what;
            b->value = value;
        }
    }
}

/* ------------------------------------------------------------------ arguments by name */

/* Look every one of ``names`` up in ``d`` (a dict of exactly those names) into ``out``;
   ``fn`` and ``what`` name the call in the error ("after(): no array named 'moves'"). */
/* The names of a table as interned str objects, made once per table (a lookup with them skips
   making and hashing a new str per name and call). NULL with an error set on failure. */
#define MAX_TABLES 32
static struct {
    const char **names;
    int count; /* (tally and tally_tanks read the first N_T and all N_TT names of one table) */
    PyObject **keys;
} key_tables[MAX_TABLES];

static PyObject **keys_for(const char **names, int count) {
    int t = 0;
    for (; t < MAX_TABLES && key_tables[t].names; t++)
        if (key_tables[t].names == names && key_tables[t].count == count) return key_tables[t].keys;
    if (t == MAX_TABLES) {
        PyErr_SetString(PyExc_RuntimeError, "too many name tables");
        return NULL;
    }
    PyObject **keys = PyMem_Calloc((size_t)count, sizeof(PyObject *));
    if (!keys) return (PyObject **)PyErr_NoMemory();
    for (int k = 0; k < count; k++)
        if (!(keys[k] = PyUnicode_InternFromString(names[k]))) {
            for (int j = 0; j < k; j++) Py_DECREF(keys[j]);
            PyMem_Free(keys);
            return NULL;
        }
    key_tables[t].names = names;
    key_tables[t].count = count;
    key_tables[t].keys = keys;
    return keys;
}

/* by_name calls that could not read their dict in one walk (dict_counts(); the call budget's
   test keeps it at 0 for a tick) */
static long long slow_lookups = 0;
/* dicts of names given so far (dict_counts(); kernel.positional makes a tick's calls give tuples:
   0 a tick) */
static long long dict_calls = 0;

/* (Each function reads its numbers first, then its arrays: a number's conversion may run Python
   code — a user's __index__ — which could change a dict of arrays whose items by_name only
   borrows; after the arrays nothing runs Python code until they are taken.) */
static int by_name(PyObject *d, const char **names, int count, PyObject **out, const char *fn, const char *what,
                   const char *table) {
    if (PyTuple_CheckExact(d)) { /* the values in the table's order (kernel.positional puts them there by name) */
        if (PyTuple_GET_SIZE(d) != count) {
            PyErr_Format(PyExc_ValueError, "%s(): %zd %ss given, it takes exactly %d (%s)", fn, PyTuple_GET_SIZE(d),
                         what, count, table);
            return -1;
        }
        for (int k = 0; k < count; k++) out[k] = PyTuple_GET_ITEM(d, k);
        return 0;
    }
    if (!PyDict_Check(d)) {
        PyErr_Format(PyExc_TypeError, "%s(): the %ss are a dict by name or a tuple in the order of %s", fn, what,
                     table);
        return -1;
    }
    dict_calls++;
    PyObject **keys = keys_for(names, count);
    if (!keys) return -1;
    if (PyDict_GET_SIZE(d) == count) {
        /* a dict whose keys come in the table's order (the callers' literals: a dict keeps the
           order its keys were put in) is read in one walk, key by key the same interned str
           objects: no hashing, no probing (a 60-fish tick passes about 300 names) */
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        int k = 0;
        while (k < count && PyDict_Next(d, &pos, &key, &value) && key == keys[k]) out[k++] = value;
        if (k == count) return 0;
        slow_lookups++; /* another order, or keys that are equal but not the same objects: look up */
    }
    for (int k = 0; k < count; k++) {
        out[k] = PyDict_GetItemWithError(d, keys[k]);
        if (!out[k]) {
            if (PyErr_Occurred()) return -1;
            PyErr_Format(PyExc_ValueError, "%s(): no %s named '%s'", fn, what, names[k]);
            return -1;
        }
    }
    if (PyDict_GET_SIZE(d) != count) {
        PyErr_Format(PyExc_ValueError, "%s(): %zd %ss given, it takes exactly %d (%s)", fn, PyDict_GET_SIZE(d), what,
                     count, table);
        return -1;
    }
    return 0;
}

/* The numbers by name, as long long (``ints``) or double (``floats``: the others). */
static int numbers_by_name(PyObject *d, const char **names, int count, long long *ints, double *floats,
                           int n_ints, const char *fn, const char *table) {
    PyObject *o[64];
    if (count > 64 || by_name(d, names, count, o, fn, "number", table) < 0) return -1;
    for (int k = 0; k < count; k++) Py_INCREF(o[k]); /* held: a conversion may run code that changes ``d`` */
    int bad = 0;
    for (int k = 0; k < count && !bad; k++) {
        if (k < n_ints) {
            ints[k] = PyLong_AsLongLong(o[k]);
            bad = ints[k] == -1 && PyErr_Occurred();
        } else {
            floats[k - n_ints] = PyFloat_AsDouble(o[k]);
            bad = floats[k - n_ints] == -1.0 && PyErr_Occurred();
        }
    }
    for (int k = 0; k < count; k++) Py_DECREF(o[k]);
    return bad ? -1 : 0;
}

/* rng.seeded_softmax for one row of ``n`` utilities and its uniform draw ``unit`` in [0, 1):
   the same sums in the same order as the numpy code (steering, the planner). */
#define MAX_CHOICES 64 /* the most a seeded softmax draws among (the planner: 6 built-in + 58 formula utilities) */
/* 1 / ``temperature`` when that is exact (a power of two whose reciprocal is a finite double, as
   steering's default 0.25): then ``u * scale`` is ``u / temperature`` bit for bit (both are the
   same real number, rounded once), without a division; else 0.0 (divide). A power of two below
   2^-1023 has no finite reciprocal (1/T is inf, and 0 * inf is NaN where 0 / T is 0): it divides. */
static double exact_scale(double temperature) {
    int e;
    double r = 1.0 / temperature;
    return frexp(temperature, &e) == 0.5 && isfinite(r) && r != 0.0 ? r : 0.0;
}

/* ``obj``'s items are float64 (its buffer's format "d"): the functions that read a float array of
   a size a wrong dtype could also have (``nth``, steering's dense rows) ask; -1 with a ValueError. */
static int is_float64(PyObject *obj, const char *name) {
    Py_buffer b;
    if (PyObject_GetBuffer(obj, &b, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
        PyErr_Format(PyExc_ValueError, "array %s: not a contiguous array", name);
        return -1;
    }
    const char *f = b.format ? b.format : "B";
    int ok = b.itemsize == 8 && (strcmp(f, "d") == 0 || strcmp(f, "<d") == 0 || strcmp(f, "=d") == 0);
    PyBuffer_Release(&b);
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "array %s: not float64 (format '%s')", name, f);
        return -1;
    }
    return 0;
}

static int seeded_softmax(const double *u, int n, double temperature, double scale, double unit) {
    double z[MAX_CHOICES], cdf[MAX_CHOICES], top, acc = 0.0;
    if (scale != 0.0)
        for (int a = 0; a < n; a++) z[a] = u[a] * scale;
    else
        for (int a = 0; a < n; a++) z[a] = u[a] / temperature;
    top = z[0];
    for (int a = 1; a < n; a++)
        if (z[a] > top) top = z[a];
    for (int a = 0; a < n; a++) {
        double x = z[a] - top;
        /* exp() of less than -745.2 is 0.0 exactly and exp(0) 1.0: no call for a ruled-out choice
           nor for the top one */
        acc += x < -800.0 ? 0.0 : (x == 0.0 ? 1.0 : exp(x));
        cdf[a] = acc;
    }
    double draw = unit * cdf[n - 1];
    int pick = 0;
    for (int a = 0; a < n; a++) pick += cdf[a] <= draw;
    return pick < n - 1 ? pick : n - 1;
}

/* The view-feature matrix ((code, cell) rows of N_FEATURES) without its zeros, as
   steering.sparse_rows builds it once per tank: about one entry in ten is not zero, and adding a
   zero changes no sum (the sums start at +0.0), so the sums over the nonzero entries, cell by
   cell in the same order, are the dense sums exactly. */
typedef struct {
    const int64_t *start; /* row r's entries: start[r] .. start[r + 1] - 1 */
    const int32_t *column;
    const double *value;
} Sparse;

enum { SP_START, SP_COLUMN, SP_VALUE, N_SP };

/* Sparse matrices already checked whole, remembered with a copy of what was checked (their
   row starts and columns, the two that index memory): the same three objects for the same rows
   and features whose starts and columns still equal the copy (a memcmp, about a tenth of the
   walk: a 60-fish tick's steering and planner walked about 16,000 instructions) are not walked
   again. Whatever changed them — written while writable, made read-only again, a view of an
   array written elsewhere — no longer equals the copy and is checked whole again. The arrays
   are held here (a reference each) while remembered, so none can be freed and another take its
   address. */
#define SPARSE_SEEN 8
static struct {
    PyObject *o[N_SP];
    Py_ssize_t rows, entries;
    int n;
    int64_t *start;  /* rows + 1 */
    int32_t *column; /* entries */
} sparse_seen[SPARSE_SEEN];
static int sparse_seen_next = 0;

/* Borrow the three arrays ``o[SP_*]`` of the sparse matrix of ``nc`` view cells into ``sp``,
   checked whole: a row's entries lie inside the arrays and every column is a feature. */
static int sparse_take(Bufs *bs, Sparse *sp, PyObject **o, Py_ssize_t nc, const Lay *lay) {
    Py_ssize_t rows = lay->codes * nc, entries = items(o[SP_COLUMN], 4, "rows_column");
    if (entries < 0) return -1;
    if (!(sp->start = take(bs, o[SP_START], rows + 1, 8, 0, "rows_start")) ||
        !(sp->column = take(bs, o[SP_COLUMN], entries, 4, 0, "rows_column")) ||
        !(sp->value = take(bs, o[SP_VALUE], entries, 8, 0, "rows_value")))
        return -1;
    size_t start_bytes = (size_t)(rows + 1) * sizeof(int64_t), column_bytes = (size_t)entries * sizeof(int32_t);
    for (int k = 0; k < SPARSE_SEEN; k++)
        if (sparse_seen[k].o[SP_START] == o[SP_START] && sparse_seen[k].o[SP_COLUMN] == o[SP_COLUMN] &&
            sparse_seen[k].o[SP_VALUE] == o[SP_VALUE] && sparse_seen[k].rows == rows &&
            sparse_seen[k].entries == entries && sparse_seen[k].n == lay->n &&
            memcmp(sparse_seen[k].start, sp->start, start_bytes) == 0 &&
            memcmp(sparse_seen[k].column, sp->column, column_bytes) == 0)
            return 0;
    int ok = sp->start[0] == 0 && sp->start[rows] == entries;
    for (Py_ssize_t r = 0; r < rows && ok; r++) ok = sp->start[r] <= sp->start[r + 1];
    for (Py_ssize_t e = 0; e < entries && ok; e++) ok = sp->column[e] >= 0 && sp->column[e] < lay->n;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "rows_start/rows_column: not the sparse rows of a view-feature matrix");
        return -1;
    }
    int64_t *start = PyMem_Malloc(start_bytes ? start_bytes : 1);
    int32_t *column = PyMem_Malloc(column_bytes ? column_bytes : 1);
    if (!start || !column) { /* (not remembered: checked whole again next time) */
        PyMem_Free(start);
        PyMem_Free(column);
        return 0;
    }
    memcpy(start, sp->start, start_bytes);
    memcpy(column, sp->column, column_bytes);
    int k = sparse_seen_next; /* remembered in place of the oldest */
    sparse_seen_next = (k + 1) % SPARSE_SEEN;
    for (int i = 0; i < N_SP; i++) {
        Py_XDECREF(sparse_seen[k].o[i]);
        Py_INCREF(o[i]);
        sparse_seen[k].o[i] = o[i];
    }
    PyMem_Free(sparse_seen[k].start);
    PyMem_Free(sparse_seen[k].column);
    sparse_seen[k].start = start;
    sparse_seen[k].column = column;
    sparse_seen[k].rows = rows;
    sparse_seen[k].entries = entries;
    sparse_seen[k].n = lay->n;
    return 0;
}

/* The same sums from the matrix's dense rows (``dense``: one row of DENSE_W columns per (code,
   cell), its zeros kept; steering.dense_rows), for a square tank on a CPU with AVX2: the 36
   features' sums held in nine vector registers, each added to cell by cell in the same order as
   above. Adding the zeros the sparse rows leave out changes no sum: the sums start at +0.0 and
   +0.0 + x is x for every x (a sum of nonzero terms is never -0.0). Vector and scalar adds round
   alike (IEEE 754), so the features are the sparse loop's bit for bit (tests/test_kernel.py). */
#define DENSE_W 36
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
__attribute__((target("avx2"))) static int view_features_dense(double *f, const int8_t *view, Py_ssize_t nc,
                                                                const double *dense, int *bad, int codes) {
    __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0;
    for (Py_ssize_t p = 0; p < nc; p++) {
        int code = view[p];
        if (code < 0 || code >= codes) {
            *bad = code;
            return -1;
        }
        const double *r = dense + ((Py_ssize_t)code * nc + p) * DENSE_W;
        a0 = _mm256_add_pd(a0, _mm256_loadu_pd(r));
        a1 = _mm256_add_pd(a1, _mm256_loadu_pd(r + 4));
        a2 = _mm256_add_pd(a2, _mm256_loadu_pd(r + 8));
        a3 = _mm256_add_pd(a3, _mm256_loadu_pd(r + 12));
        a4 = _mm256_add_pd(a4, _mm256_loadu_pd(r + 16));
        a5 = _mm256_add_pd(a5, _mm256_loadu_pd(r + 20));
        a6 = _mm256_add_pd(a6, _mm256_loadu_pd(r + 24));
        a7 = _mm256_add_pd(a7, _mm256_loadu_pd(r + 28));
        a8 = _mm256_add_pd(a8, _mm256_loadu_pd(r + 32));
    }
    _mm256_storeu_pd(f, a0);
    _mm256_storeu_pd(f + 4, a1);
    _mm256_storeu_pd(f + 8, a2);
    _mm256_storeu_pd(f + 12, a3);
    _mm256_storeu_pd(f + 16, a4);
    _mm256_storeu_pd(f + 20, a5);
    _mm256_storeu_pd(f + 24, a6);
    _mm256_storeu_pd(f + 28, a7);
    _mm256_storeu_pd(f + 32, a8);
    return 0;
}
static int dense_ok = -1; /* the CPU has AVX2 and MIROFISH_AVX2 is not 0: asked once */
static int use_dense(void) {
    if (dense_ok < 0) {
        const char *env = getenv("MIROFISH_AVX2"); /* 0: the sparse rows on any CPU (a test of that path) */
        __builtin_cpu_init();
        dense_ok = __builtin_cpu_supports("avx2") && !(env && strcmp(env, "0") == 0) ? 1 : 0;
    }
    return dense_ok;
}
#else
static int view_features_dense(double *f, const int8_t *view, Py_ssize_t nc, const double *dense, int *bad,
                               int codes) {
    (void)f, (void)view, (void)nc, (void)dense, (void)bad, (void)codes;
    return -2; /* never called: use_dense() is 0 */
}
static int use_dense(void) { return 0; }
#endif

/* steering.view_features for one fish: the matrix rows of its ``nc`` view codes summed into
   ``f`` (zeroed first); -1 with the bad code in ``*bad`` when a code is out of range. */
static int view_features(double *f, const int8_t *view, Py_ssize_t nc, const Sparse *sp, int *bad, const Lay *lay) {
    memset(f, 0, sizeof(double) * lay->n);
    for (Py_ssize_t p = 0; p < nc; p++) {
        int code = view[p];
        if (code < 0 || code >= lay->codes) {
            *bad = code;
            return -1;
        }
        Py_ssize_t r = code * nc + p;
        for (Py_ssize_t e = sp->start[r]; e < sp->start[r + 1]; e++) f[sp->column[e]] += sp->value[e];
    }
    return 0;
}

/* ------------------------------------------------------------------ steer */

static const char steer_doc[] =
    "steer(arrays, numbers) -> actions\n"
    "Every fish's action this tick, a new int8 array: hold plans their action, the others by\n"
    "steering (World.steer, Steering.utilities and Steering.choose); exhausted fish rest.\n"
    "By name: exactly the names of STEER_ARRAYS and STEER_NUMBERS.";

enum { S_GOAL, S_PARAM, S_CODES, S_HEADING, S_ENERGY, S_FOOD_BORN, S_CELL, S_REFUSED_AT, S_STUCK, S_W, S_BIAS,
       S_FORAGE, S_SNACKS, S_RESTS, S_KEYS, S_ROWS_START, S_ROWS_COLUMN, S_ROWS_VALUE, S_ROWS_DENSE, N_S };
static const char *S_NAMES[N_S] = {"goal", "param", "codes", "heading", "energy", "food_born", "cell",
                                   "refused_at", "stuck", "w", "bias", "forage", "snacks", "rests", "keys",
                                   "rows_start", "rows_column", "rows_value", "rows_dense"};
enum { SN_TICK, N_SN_INTS, SN_HUNGER_SCALE = N_SN_INTS, SN_PERSISTENCE, SN_REFUSED, SN_EAT, SN_REST, SN_TEMPERATURE,
       N_SN };
static const char *SN_NAMES[N_SN] = {"tick", "hunger_scale", "persistence", "refused", "eat", "rest", "temperature"};
/* the six weighted terms of a move's utility, in the order of a fish's weights (Steering.w) */
static const char *STEER_TERMS[6] = {"open", "glass", "crowd", "align", "cohesion", "food"};

static PyObject *steer(PyObject *self, PyObject *args) {
    PyObject *arrays, *numbers, *sa[N_S];
    long long tick;
    double fl[N_SN - N_SN_INTS];
    if (!PyArg_ParseTuple(args, "OO", &arrays, &numbers)) return NULL;
    if (numbers_by_name(numbers, SN_NAMES, N_SN, &tick, fl, N_SN_INTS, "steer", "STEER_NUMBERS") < 0 ||
        by_name(arrays, S_NAMES, N_S, sa, "steer", "array", "STEER_ARRAYS") < 0)
        return NULL;
    double hunger_scale = fl[SN_HUNGER_SCALE - N_SN_INTS], persistence = fl[SN_PERSISTENCE - N_SN_INTS],
           refused_w = fl[SN_REFUSED - N_SN_INTS], eat_w = fl[SN_EAT - N_SN_INTS], rest_w = fl[SN_REST - N_SN_INTS],
           temperature = fl[SN_TEMPERATURE - N_SN_INTS];
    PyObject *o_goal = sa[S_GOAL], *o_param = sa[S_PARAM], *o_codes = sa[S_CODES],
             *o_heading = sa[S_HEADING], *o_energy = sa[S_ENERGY], *o_food = sa[S_FOOD_BORN], *o_cell = sa[S_CELL],
             *o_refused = sa[S_REFUSED_AT], *o_stuck = sa[S_STUCK], *o_w = sa[S_W], *o_bias = sa[S_BIAS],
             *o_forage = sa[S_FORAGE], *o_snacks = sa[S_SNACKS], *o_rests = sa[S_RESTS], *o_keys = sa[S_KEYS];
    Bufs bs = {.n = 0};
    Sparse sp;
    PyArrayObject *o_out = NULL; /* made here, returned */
    Py_ssize_t n = items(o_goal, 1, "goal"), grid = items(o_food, 4, "food_born");
    if (n < 0 || grid < 0) return NULL;
    Py_ssize_t code_items = n ? items(o_codes, 1, "codes") : 0;
    if (code_items < 0) return NULL;
    Py_ssize_t nc = n ? code_items / n : 0;
    if (nc <= 0 && n) return PyErr_Format(PyExc_ValueError, "array codes: empty");
    if (!(o_out = new_array(n, -1, NPY_INT8))) return NULL;
    int8_t *out = PyArray_DATA(o_out);
    TAKE(goal, int8_t, o_goal, n, 0);
    TAKE(param, int16_t, o_param, n, 0);
    TAKE(codes, int8_t, o_codes, n * nc, 0);
    TAKE(heading, int8_t, o_heading, n, 0);
    TAKE(energy, int32_t, o_energy, n, 0);
    TAKE(food_born, int32_t, o_food, grid, 0);
    TAKE(cell, int64_t, o_cell, n, 0);
    const int nd = moves_of(items(o_bias, 8, "bias"), n, "bias");
    if (nd < 0) goto fail;
    const Lay lay = lay_of(nd);
    TAKE(refused_at, int32_t, o_refused, nd * n, 0);
    TAKE(stuck, int32_t, o_stuck, n, 0);
    TAKE(w, double, o_w, 6 * n, 0);
    TAKE(bias, double, o_bias, nd * n, 0);
    TAKE(forage, uint8_t, o_forage, n, 0);
    TAKE(snacks, uint8_t, o_snacks, n, 0);
    TAKE(rests, uint8_t, o_rests, n, 0);
    TAKE(keys, uint64_t, o_keys, n, 0);
    if (n && sparse_take(&bs, &sp, sa + S_ROWS_START, nc, &lay) < 0) goto fail;
    /* the same matrix's dense rows (steering.dense_rows; empty: a hexagonal tank), read instead
       of the sparse ones on a CPU with AVX2 */
    Py_ssize_t dense_items = items(sa[S_ROWS_DENSE], 8, "rows_dense");
    if (dense_items < 0) goto fail;
    if (dense_items && (nd != 4 || dense_items != (Py_ssize_t)lay.codes * nc * DENSE_W)) {
        PyErr_Format(PyExc_ValueError, "array rows_dense: %zd items, not %d columns a row of a square tank's view-feature matrix",
                     dense_items, DENSE_W);
        goto fail;
    }
    if (dense_items && is_float64(sa[S_ROWS_DENSE], "rows_dense") < 0) goto fail;
    const int by_dense = n && dense_items && use_dense();
    const double *dense = by_dense ? take(&bs, sa[S_ROWS_DENSE], dense_items, 8, 0, "rows_dense") : NULL;
    if (by_dense && !dense) goto fail;
    const double scale = exact_scale(temperature);

    Bad fault = {NULL, 0};
    const int parallel = split(n);
    (void)parallel; /* read by SPLIT_FOR only when built with OpenMP */
    SPLIT_FOR(parallel)
    for (Py_ssize_t i = 0; i < n; i++) {
        if (goal[i] == G_HOLD) {
            out[i] = (int8_t)param[i];
        } else {
            if (cell[i] < 0 || cell[i] >= grid) {
                note_bad(&fault, "fish cell", cell[i]);
                continue;
            }
            double f[MAX_FEATURES];
            int bad;
            if ((by_dense ? view_features_dense(f, codes + i * nc, nc, dense, &bad, lay.codes)
                          : view_features(f, codes + i * nc, nc, &sp, &bad, &lay)) < 0) {
                note_bad(&fault, "view code", bad);
                continue;
            }
            double hungry = 1.0 - (double)energy[i] * hunger_scale;
            hungry = hungry < 0.0 ? 0.0 : (hungry > 1.0 ? 1.0 : hungry);
            double inv = 1.0 / (f[lay.visible] > 1.0 ? f[lay.visible] : 1.0);
            const double *wi = w + 6 * i;
            double u[MAX_MOVES + 2];
            int h = heading[i];
            for (int d = 0; d < nd; d++) {
                double crowd = f[lay.crowd + d] - 1.0;
                double terms[6] = {
                    f[lay.open + d],
                    f[lay.wall + d],
                    crowd > 0.0 ? crowd : 0.0,
                    f[lay.align + d] * inv,
                    f[lay.fish + d] - f[lay.lost + d] * inv,
                    f[lay.food + d],
                };
                double m = 0.0;
                for (int j = 0; j < 6; j++) m += wi[j] * terms[j];
                m += bias[nd * i + d];
                if (d == h) m += persistence;
                if (refused_at[nd * i + d] >= tick - 2) m -= refused_w;
                if (f[lay.blocked + d] > 0.0) m = NEG;
                u[d] = m;
            }
            int food_here = food_born[cell[i]] != NO_FOOD_BORN;
            int can_eat = (f[lay.food_close] > 0.0 || food_here) && (forage[i] || (hungry > 0.0 && snacks[i]));
            u[nd] = can_eat ? eat_w * (1.0 + hungry) : NEG;  /* eat */
            u[nd + 1] = rests[i] ? rest_w : (stuck[i] >= 2 ? refused_w * ((double)stuck[i] - 1.0) : BOXED);  /* rest */
            out[i] = (int8_t)seeded_softmax(u, nd + 2, temperature, scale, to_unit(at_tick(keys[i], tick)));  /* Steering.choose */
        }
        if (energy[i] <= 0) out[i] = (int8_t)(nd + 1);  /* rest */
    }
    if (fault.what) {
        Py_DECREF(o_out);
        return bad_index(&bs, fault.what, fault.value);
    }
    release_all(&bs);
    return (PyObject *)o_out;
fail:
    Py_XDECREF(o_out);
    release_all(&bs);
    return NULL;
}

/* ------------------------------------------------------------------ arbitrate */

/* a outranks b: higher score, then higher tie-break, then the lower index (a stable sort's order) */
static int outranks(Py_ssize_t a, Py_ssize_t b, const int64_t *score, const uint64_t *tie) {
    if (score[a] != score[b]) return score[a] > score[b];
    if (tie[a] != tie[b]) return tie[a] > tie[b];
    return a < b;
}

static const char arbitrate_doc[] =
    "arbitrate(arrays, ints) -> (outcome, meal)\n"
    "Resolve this tick's moves and meals (arbiter.py) and apply them: fish move (cell, heading,\n"
    "occupant), eaten food disappears. Returns each fish's move outcome and meal result (-1: did not\n"
    "eat) as new int8 arrays. ``best`` is a scratch grid of -1 the size of the tank, left as it was\n"
    "found. By name: exactly the names of ARBITRATE_ARRAYS and ARBITRATE_INTS.";

enum { R_EXECUTED, R_CELL, R_HEADING, R_AGE, R_ENERGY, R_ID_KEYS, R_BLOCKED, R_OCCUPANT, R_FOOD_BORN, R_BEST,
       R_DELTA, R_EAT_OFFSETS, N_R };
static const char *R_NAMES[N_R] = {"executed", "cell", "heading", "age", "energy", "id_keys", "blocked", "occupant",
                                   "food_born", "best", "delta", "eat_offsets"};
enum { RI_TICK, RI_MAX_ENERGY, RI_AGE_WEIGHT, RI_ENERGY_WEIGHT, RI_AGE_CAP, N_RI };
static const char *RI_NAMES[N_RI] = {"tick", "max_energy", "age_weight", "energy_weight", "age_cap"};

static PyObject *arbitrate(PyObject *self, PyObject *args) {
    PyObject *arrays, *ints, *ra[N_R];
    long long ri[N_RI];
    if (!PyArg_ParseTuple(args, "OO", &arrays, &ints)) return NULL;
    if (numbers_by_name(ints, RI_NAMES, N_RI, ri, NULL, N_RI, "arbitrate", "ARBITRATE_INTS") < 0 ||
        by_name(arrays, R_NAMES, N_R, ra, "arbitrate", "array", "ARBITRATE_ARRAYS") < 0)
        return NULL;
    long long tick = ri[RI_TICK], max_energy = ri[RI_MAX_ENERGY], age_weight = ri[RI_AGE_WEIGHT],
              energy_weight = ri[RI_ENERGY_WEIGHT], age_cap = ri[RI_AGE_CAP];
    PyObject *o_exec = ra[R_EXECUTED], *o_cell = ra[R_CELL], *o_heading = ra[R_HEADING], *o_age = ra[R_AGE],
             *o_energy = ra[R_ENERGY], *o_keys = ra[R_ID_KEYS], *o_blocked = ra[R_BLOCKED], *o_occ = ra[R_OCCUPANT],
             *o_food = ra[R_FOOD_BORN], *o_best = ra[R_BEST], *o_delta = ra[R_DELTA], *o_eatoff = ra[R_EAT_OFFSETS];
    if (max_energy <= 0 || age_cap <= 0) return PyErr_Format(PyExc_ValueError, "max_energy and age_cap must be > 0");
    Bufs bs = {.n = 0};
    PyObject *result = NULL;
    PyArrayObject *o_outcome = NULL, *o_meal = NULL; /* made here, returned */
    int64_t *score = NULL;
    uint64_t *tie = NULL;
    int64_t *target = NULL;
    int8_t *state = NULL;
    Py_ssize_t n = items(o_exec, 1, "executed"), grid = items(o_blocked, 1, "blocked");
    if (n < 0 || grid < 0) return NULL;
    TAKE(executed, int8_t, o_exec, n, 0);
    TAKE(cell, int64_t, o_cell, n, 1);
    TAKE(heading, int8_t, o_heading, n, 1);
    TAKE(age, int32_t, o_age, n, 0);
    TAKE(energy, int32_t, o_energy, n, 0);
    TAKE(id_keys, uint64_t, o_keys, n, 0);
    TAKE(blocked, uint8_t, o_blocked, grid, 0);
    TAKE(occupant, int32_t, o_occ, grid, 1);
    TAKE(food_born, int32_t, o_food, grid, 1);
    TAKE(best, int64_t, o_best, grid, 1);
    const int nd = moves_of(items(o_delta, 8, "delta"), 1, "delta");  /* 4 moves, or a hexagonal tank's 6 */
    if (nd < 0) goto fail;
    TAKE(delta, int64_t, o_delta, nd, 0);
    TAKE(eat_off, int64_t, o_eatoff, nd + 1, 0);
    if (!(o_outcome = new_array(n, -1, NPY_INT8)) || !(o_meal = new_array(n, -1, NPY_INT8))) goto fail;
    int8_t *outcome = PyArray_DATA(o_outcome), *meal = PyArray_DATA(o_meal);
    score = malloc(sizeof(int64_t) * (n ? n : 1));
    tie = malloc(sizeof(uint64_t) * (n ? n : 1));
    target = malloc(sizeof(int64_t) * (n ? n : 1));
    state = malloc(n ? n : 1);
    if (!score || !tie || !target || !state) {
        PyErr_NoMemory();
        goto fail;
    }
    /* every index this function will follow is checked first: an error leaves the tank and
       the scratch grid untouched */
    for (Py_ssize_t i = 0; i < n; i++) {
        if (cell[i] < 0 || cell[i] >= grid) {
            out_of_range("fish cell", cell[i]);
            goto fail;
        }
        int e = executed[i];
        if (e >= 0 && e < nd) {
            int64_t t = cell[i] + delta[e];
            if (t < 0 || t >= grid) {
                out_of_range("move target", t);
                goto fail;
            }
        } else if (e == nd) {  /* eat */
            for (int j = 0; j <= nd; j++) {
                int64_t c = cell[i] + eat_off[j];
                if (c < 0 || c >= grid) {
                    out_of_range("meal cell", c);
                    goto fail;
                }
            }
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) { /* arbiter.priority and arbiter.tie_break */
        int64_t a = age[i] < age_cap ? age[i] : age_cap;
        score[i] = age_weight * (a * 1000 / age_cap) + energy_weight * ((int64_t)energy[i] * 1000 / max_energy);
        tie[i] = at_tick(id_keys[i], tick);
        outcome[i] = STAYED;
        meal[i] = NOT_EATING;
        state[i] = 0; /* 0 staying, 1 pending, 2 leaving */
        target[i] = -1;
    }
    /* moves: glass first, then the best candidate per target cell */
    for (Py_ssize_t i = 0; i < n; i++) {
        int e = executed[i];
        if (e < 0 || e >= nd) continue;
        int64_t t = cell[i] + delta[e];
        if (blocked[t]) {
            outcome[i] = BLOCKED;
            continue;
        }
        target[i] = t;
        if (best[t] < 0 || outranks(i, best[t], score, tie)) best[t] = i;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t t = target[i];
        if (t < 0) continue;
        if (best[t] != i) {
            outcome[i] = CROWDED;
            target[i] = -1; /* only winners keep a target */
        } else {
            state[i] = occupant[t] < 0 ? 2 : 1;
        }
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (target[i] >= 0) best[target[i]] = -1;
    /* chains: a winner enters when the fish in its target cell leaves; cycles stay pending */
    for (int changed = 1; changed;) {
        changed = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            if (state[i] != 1) continue;
            int64_t o = occupant[target[i]];
            if (o < 0 || o >= n) {
                out_of_range("occupant", o);
                goto fail;
            }
            if (state[o] != 1) {
                state[i] = state[o];
                changed = 1;
            }
        }
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (target[i] >= 0) outcome[i] = state[i] == 2 ? MOVED : OCCUPIED;
    /* meals: the first food among the fish's own cell, then north, south, west, east */
    for (Py_ssize_t i = 0; i < n; i++) {
        target[i] = -1;
        if (executed[i] != nd) continue;  /* eat */
        meal[i] = NO_FOOD_R;
        for (int j = 0; j <= nd; j++) {
            int64_t c = cell[i] + eat_off[j];
            if (food_born[c] != NO_FOOD_BORN) {
                target[i] = c;
                if (best[c] < 0 || outranks(i, best[c], score, tie)) best[c] = i;
                break;
            }
        }
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (target[i] >= 0) meal[i] = best[target[i]] == i ? ATE : TAKEN;
    for (Py_ssize_t i = 0; i < n; i++)
        if (target[i] >= 0) {
            best[target[i]] = -1;
            food_born[target[i]] = NO_FOOD_BORN;
        }
    /* apply the moves: every mover leaves its cell, then enters its target */
    for (Py_ssize_t i = 0; i < n; i++)
        if (outcome[i] == MOVED) occupant[cell[i]] = -1;
    for (Py_ssize_t i = 0; i < n; i++)
        if (outcome[i] == MOVED) {
            cell[i] += delta[executed[i]];
            occupant[cell[i]] = (int32_t)i;
            heading[i] = executed[i];
        }
    result = Py_BuildValue("(OO)", o_outcome, o_meal);
fail: /* and done: result is NULL on an error */
    Py_XDECREF(o_outcome);
    Py_XDECREF(o_meal);
    free(score);
    free(tie);
    free(target);
    free(state);
    release_all(&bs);
    return result;
}

/* ------------------------------------------------------------------ after */

static const char after_doc[] =
    "after(arrays, ints) -> (energy, failed, codes, food_seen, neighbours, food_rose, neighbours_changed)\n"
    "Everything World.step does after the food spawned and rotted: energy, age, counters, the\n"
    "new views and their counts, plan triggers (when ``ints['plan_events']``) and memories. The\n"
    "fish's new energy (int32[n]), failed actions (bool[n]), view codes (int8[n, view cells]), food\n"
    "and fish in view (int16[n] each) and whether those rose or changed (bool[n] each) come back as\n"
    "new arrays; the other state is changed in place.\n"
    "``arrays`` and ``ints`` are dicts by name: exactly the names of AFTER_ARRAYS and AFTER_INTS\n"
    "(ticks.step_compiled); a missing, unknown or misspelt name is an error, never a silent swap.";

enum {
    /* arrays, in the order World._step_compiled passes them */
    X_EXECUTED, X_OUTCOME, X_MEAL, X_BEFORE, X_AGE, X_STUCK, X_REFUSED_AT, X_MAX_STUCK, X_ACTION_COUNTS,
    X_MOVES, X_REFUSALS, X_EATS, X_CELL, X_HEADING, X_BLOCKED, X_OCCUPANT, X_FOOD_BORN, X_WINDOW,
    X_FOOD_SEEN_OLD, X_NEIGHBOURS_OLD, X_COMPANY_TICKS, X_PLAN_GOAL, X_PLAN_PARAM, X_PLAN_END, X_PLAN_TRIGGER, X_NO_FOOD, X_ALONE, X_CROWDED,
    X_HUNGRY_FOOD, X_GOAL_FLAGS, X_MEM_TICK, X_MEM_CODE, X_MEM_ARG, X_MEM_COUNT, X_EVENT_ORDER, X_DECAY_OF,
    X_MOVE_COST_OF, X_MAX_ENERGY_OF, X_SIGHT, X_RINGS, N_X
};
enum {
    /* ints, in the order World._step_compiled passes them */
    I_TICK, I_DECAY, I_MOVE_COST, I_FOOD_GAIN, I_REST_GAIN, I_REST_CEILING, I_MAX_ENERGY, I_LOW_LINE, I_HUNGRY_LINE,
    I_PLAN_EVENTS, I_ALONE_TICKS, I_CROWD_LINE, I_FORAGE_PATIENCE, I_STUCK_TICKS, I_MEM_SIZE,
    I_T_HORIZON, I_T_FOUND_COMPANY, I_T_CROWDED, I_T_HUNGRY_FOOD, I_T_LOST_COMPANY, I_T_FOOD_GONE,
    I_T_ENERGY_REACHED, I_T_ATE, I_T_STUCK, I_T_LOW_ENERGY, I_SATED_LINE, I_BLOCK_CELLS, N_I
};
/* the names after() takes its arguments by, in the order of the enums (exported as AFTER_ARRAYS, AFTER_INTS) */
static const char *X_NAMES[N_X] = {
    "executed", "outcome", "meal", "before", "age", "stuck", "refused_at", "max_stuck", "action_counts",
    "moves", "refusals", "eats", "cell", "heading", "blocked", "occupant", "food_born", "window",
    "food_seen_old", "neighbours_old", "company_ticks", "plan_goal", "plan_param", "plan_end", "plan_trigger", "no_food", "alone", "crowded",
    "hungry_food", "goal_flags", "mem_tick", "mem_code", "mem_arg", "mem_count", "event_order",
    "decay_of", "move_cost_of", "max_energy_of", /* each fish's own, or empty: the ints' for all */
    "sight", "rings"}; /* each fish's view radius (or empty: all see the whole window), each window cell's ring */
static const char *I_NAMES[N_I] = {
    "tick", "decay", "move_cost", "food_gain", "rest_gain", "rest_ceiling", "max_energy", "low_line", "hungry_line",
    "plan_events", "alone_ticks", "crowd_line", "forage_patience", "stuck_ticks", "mem_size",
    "t_horizon", "t_found_company", "t_crowded", "t_hungry_food", "t_lost_company", "t_food_gone",
    "t_energy_reached", "t_ate", "t_stuck", "t_low_energy", "sated_line",
    "block_cells"}; /* the cells of one tank's grid: the whole grid, or one tank's block of joined tanks (batch.py) */

/* goal flag columns (world._GOAL_FLAGS; exported as GOAL_FLAG_COLUMNS) */
enum { GF_PLANNED, GF_FORAGE, GF_SCHOOL, GF_REST, GF_ROAMING, GF_CROWD, GF_HUNGRY, N_GF };
static const char *GF_NAMES[N_GF] = {"planned", "forage", "school", "rest", "roaming", "crowd", "hungry"};

static PyObject *after(PyObject *self, PyObject *args) {
    PyObject *arrays, *ints, *xa[N_X];
    long long v[N_I];
    if (!PyArg_ParseTuple(args, "OO", &arrays, &ints)) return NULL;
    if (numbers_by_name(ints, I_NAMES, N_I, v, NULL, N_I, "after", "AFTER_INTS") < 0 ||
        by_name(arrays, X_NAMES, N_X, xa, "after", "array", "AFTER_ARRAYS") < 0)
        return NULL;
    if (v[I_MEM_SIZE] <= 0 || v[I_STUCK_TICKS] <= 0)
        return PyErr_Format(PyExc_ValueError, "memory size and stuck_ticks must be > 0");
    Bufs bs = {.n = 0};
    /* the new arrays (new_array), in the order after() returns them */
    enum { M_ENERGY, M_FAILED, M_CODES, M_FOOD_SEEN, M_NEIGHBOURS, M_FOOD_ROSE, M_NB_CHANGED, N_M };
    PyArrayObject *made[N_M] = {NULL};
#define ARR(k) xa[k]
    Py_ssize_t n = items(ARR(X_EXECUTED), 1, "executed"), grid = items(ARR(X_BLOCKED), 1, "blocked");
    Py_ssize_t nc = items(ARR(X_WINDOW), 8, "window"), ms = (Py_ssize_t)v[I_MEM_SIZE];
    if (n < 0 || grid < 0 || nc < 0) return NULL;
    if (!(made[M_ENERGY] = new_array(n, -1, NPY_INT32)) || !(made[M_FAILED] = new_array(n, -1, NPY_BOOL)) ||
        !(made[M_CODES] = new_array(n, nc, NPY_INT8)) || !(made[M_FOOD_SEEN] = new_array(n, -1, NPY_INT16)) ||
        !(made[M_NEIGHBOURS] = new_array(n, -1, NPY_INT16)) || !(made[M_FOOD_ROSE] = new_array(n, -1, NPY_BOOL)) ||
        !(made[M_NB_CHANGED] = new_array(n, -1, NPY_BOOL)))
        goto fail;
    int32_t *energy = PyArray_DATA(made[M_ENERGY]);
    uint8_t *failed = PyArray_DATA(made[M_FAILED]), *food_rose = PyArray_DATA(made[M_FOOD_ROSE]),
            *nb_changed = PyArray_DATA(made[M_NB_CHANGED]);
    int8_t *codes = PyArray_DATA(made[M_CODES]);
    int16_t *food_seen = PyArray_DATA(made[M_FOOD_SEEN]), *neighbours = PyArray_DATA(made[M_NEIGHBOURS]);
    TAKE(executed, int8_t, ARR(X_EXECUTED), n, 0);
    TAKE(outcome, int8_t, ARR(X_OUTCOME), n, 0);
    TAKE(meal, int8_t, ARR(X_MEAL), n, 0);
    TAKE(before, int32_t, ARR(X_BEFORE), n, 0);
    TAKE(age, int32_t, ARR(X_AGE), n, 1);
    TAKE(stuck, int32_t, ARR(X_STUCK), n, 1);
    const int nd = moves_of(items(ARR(X_REFUSED_AT), 4, "refused_at"), n, "refused_at");
    if (nd < 0) goto fail;
    TAKE(refused_at, int32_t, ARR(X_REFUSED_AT), nd * n, 1);
    TAKE(max_stuck, int32_t, ARR(X_MAX_STUCK), n, 1);
    TAKE(action_counts, int32_t, ARR(X_ACTION_COUNTS), (nd + 2) * n, 1);
    TAKE(moves, int32_t, ARR(X_MOVES), n, 1);
    TAKE(refusals, int32_t, ARR(X_REFUSALS), n, 1);
    TAKE(eats, int32_t, ARR(X_EATS), n, 1);
    TAKE(cell, int64_t, ARR(X_CELL), n, 0);
    TAKE(heading, int8_t, ARR(X_HEADING), n, 0);
    TAKE(blocked, uint8_t, ARR(X_BLOCKED), grid, 0);
    TAKE(occupant, int32_t, ARR(X_OCCUPANT), grid, 0);
    TAKE(food_born, int32_t, ARR(X_FOOD_BORN), grid, 0);
    TAKE(window, int64_t, ARR(X_WINDOW), nc, 0);
    TAKE(food_old, int16_t, ARR(X_FOOD_SEEN_OLD), n, 0);
    TAKE(nb_old, int16_t, ARR(X_NEIGHBOURS_OLD), n, 0);
    Py_ssize_t n_bodies = items(ARR(X_DECAY_OF), 4, "decay_of");
    if (n_bodies < 0) goto fail;
    TAKE(decay_of, int32_t, ARR(X_DECAY_OF), n_bodies ? n : 0, 0);
    TAKE(move_cost_of, int32_t, ARR(X_MOVE_COST_OF), n_bodies ? n : 0, 0);
    Py_ssize_t n_tops = items(ARR(X_MAX_ENERGY_OF), 4, "max_energy_of");
    if (n_tops < 0) goto fail;
    TAKE(max_energy_of, int32_t, ARR(X_MAX_ENERGY_OF), n_tops ? n : 0, 0);
    Py_ssize_t n_sight = items(ARR(X_SIGHT), 1, "sight");
    if (n_sight < 0) goto fail;
    TAKE(sight, int8_t, ARR(X_SIGHT), n_sight ? n : 0, 0);
    TAKE(rings, int8_t, ARR(X_RINGS), n_sight ? nc : 0, 0);
    TAKE(company_ticks, int32_t, ARR(X_COMPANY_TICKS), n, 1);
    TAKE(plan_goal, int8_t, ARR(X_PLAN_GOAL), n, 0);
    TAKE(plan_param, int16_t, ARR(X_PLAN_PARAM), n, 0);
    TAKE(plan_end, int32_t, ARR(X_PLAN_END), n, 0);
    TAKE(plan_trigger, int8_t, ARR(X_PLAN_TRIGGER), n, 1);
    TAKE(no_food, int32_t, ARR(X_NO_FOOD), n, 1);
    TAKE(alone, int32_t, ARR(X_ALONE), n, 1);
    TAKE(crowded, uint8_t, ARR(X_CROWDED), n, 1);
    TAKE(hungry_food, uint8_t, ARR(X_HUNGRY_FOOD), n, 1);
    Py_ssize_t n_goals = items(ARR(X_GOAL_FLAGS), 1, "goal_flags") / N_GOAL_FLAGS; /* one row per plan type */
    TAKE(goal_flags, uint8_t, ARR(X_GOAL_FLAGS), n_goals * N_GOAL_FLAGS, 0);
    TAKE(mem_tick, int32_t, ARR(X_MEM_TICK), n * ms, 1);
    TAKE(mem_code, int8_t, ARR(X_MEM_CODE), n * ms, 1);
    TAKE(mem_arg, int16_t, ARR(X_MEM_ARG), n * ms, 1);
    TAKE(mem_count, int32_t, ARR(X_MEM_COUNT), n, 1);
    TAKE(event_order, int8_t, ARR(X_EVENT_ORDER), N_EVENTS, 0);
#undef ARR
    const int64_t t = v[I_TICK], low = v[I_LOW_LINE];
    const Py_ssize_t centre = nc / 2;
    /* A large tank: each cell's view code first, in one pass over the grid (reading three big
       arrays in order), so that the views below read one small array instead of three big ones
       at random. Heading codes are checked as they are read. Joined small tanks (batch.py) are
       not a large tank: their fish read their own tank's block, which stays in the cache. */
    int8_t *cellcode = NULL;
    const int parallel = split(n);
    (void)parallel; /* read by SPLIT_FOR only when built with OpenMP */
    if (v[I_BLOCK_CELLS] > BIG_GRID && n * nc * 4 > grid) {
        cellcode = PyMem_Malloc((size_t)grid);
        if (!cellcode) {
            PyErr_NoMemory();
            goto fail;
        }
    SPLIT_FOR(parallel)
        for (Py_ssize_t c = 0; c < grid; c++) {
            int64_t o = occupant[c];
            if (blocked[c]) cellcode[c] = V_WALL;
            else if (o >= 0) cellcode[c] = o < n ? (int8_t)(V_FISH + heading[o]) : -1;
            else cellcode[c] = food_born[c] != NO_FOOD_BORN ? V_FOOD : V_WATER;
        }
    }
    int64_t wmin = 0, wmax = 0; /* the view's offsets' range (a fish's view is inside the grid when its
                                   cell plus both is) */
    for (Py_ssize_t p = 0; p < nc; p++) {
        if (p == 0 || window[p] < wmin) wmin = window[p];
        if (p == 0 || window[p] > wmax) wmax = window[p];
    }
    Bad fault = {NULL, 0};
#define AFTER_BAD(what, value)             \
    do {                                   \
        note_bad(&fault, what, value);     \
        goto next_fish;                    \
    } while (0)
    SPLIT_FOR(parallel)
    for (Py_ssize_t i = 0; i < n; i++) {
        int e = executed[i], oc = outcome[i];
        if (e < 0 || e > nd + 1) AFTER_BAD("action", e);
        int moved = oc == MOVED, ate = meal[i] == ATE;
        int refused = oc == CROWDED || oc == OCCUPIED, bumped = oc == BLOCKED, is_stuck = refused || bumped;
        /* energy and age */
        int64_t en = (int64_t)before[i] - (n_bodies ? decay_of[i] : v[I_DECAY]);
        if (moved) en -= n_bodies ? move_cost_of[i] : v[I_MOVE_COST];
        if (ate) en += v[I_FOOD_GAIN];
        if (e == nd + 1 && before[i] < v[I_REST_CEILING]) en += v[I_REST_GAIN];  /* rest */
        int64_t top = n_tops ? max_energy_of[i] : v[I_MAX_ENERGY];
        en = en < 0 ? 0 : (en > top ? top : en);
        energy[i] = (int32_t)en;
        age[i] += 1;
        /* counters */
        if (is_stuck) {
            stuck[i] += 1;
            refused_at[nd * i + e] = (int32_t)t; /* a stuck fish tried a move: e < nd */
        } else {
            stuck[i] = 0;
        }
        if (stuck[i] > max_stuck[i]) max_stuck[i] = stuck[i];
        action_counts[(nd + 2) * i + e] += 1;
        moves[i] += moved;
        refusals[i] += is_stuck;
        eats[i] += ate;
        int taken = meal[i] == TAKEN, nothing = meal[i] == NO_FOOD_R;
        failed[i] = is_stuck || taken || nothing;
        /* the new view (perception.cell_codes + view_codes): glass, then a fish by heading, then food */
        if (cell[i] < 0 || cell[i] >= grid) AFTER_BAD("fish cell", cell[i]);
        int8_t *view = codes + i * nc;
        int fs = 0, nb = 0;
        if (!cellcode && nc > 0 && cell[i] + wmin >= 0 && cell[i] + wmax < grid) {
            /* every view cell inside the grid (as always but for a damaged input): the loop below
               without its bounds and centre tests, the same codes and counts */
            const int64_t at = cell[i];
            for (Py_ssize_t p = 0; p < nc; p++) {
                int64_t c = at + window[p], o = occupant[c];
                int8_t code;
                if (blocked[c]) {
                    code = V_WALL;
                } else if (o >= 0) {
                    if (o >= n) AFTER_BAD("occupant", o);
                    code = (int8_t)(V_FISH + heading[o]);
                } else {
                    code = food_born[c] != NO_FOOD_BORN ? V_FOOD : V_WATER;
                }
                view[p] = code;
                fs += code == V_FOOD;
                nb += code >= V_FISH;
            }
            fs -= view[centre] == V_FOOD;  /* the fish's own cell: itself */
            nb -= view[centre] >= V_FISH;
            view[centre] = V_SELF;
        } else
        for (Py_ssize_t p = 0; p < nc; p++) {
            int64_t c = cell[i] + window[p];
            if (c < 0 || c >= grid) AFTER_BAD("view cell", c);
            int8_t code;
            if (cellcode) {
                code = cellcode[c];
                if (code < 0) AFTER_BAD("occupant", occupant[c]);
            } else if (blocked[c]) {
                code = V_WALL;
            } else if (occupant[c] >= 0) {
                int64_t o = occupant[c];
                if (o >= n) AFTER_BAD("occupant", o);
                code = (int8_t)(V_FISH + heading[o]);
            } else {
                code = food_born[c] != NO_FOOD_BORN ? V_FOOD : V_WATER;
            }
            if (p == centre) code = V_SELF;
            view[p] = code;
            fs += code == V_FOOD;
            nb += code >= V_FISH;
        }
        if (n_sight) /* a group's own view radius: beyond it, open water to the fish (World.look) */
            for (Py_ssize_t p = 0; p < nc; p++) {
                if (rings[p] <= sight[i]) continue;
                fs -= view[p] == V_FOOD;
                nb -= view[p] >= V_FISH;
                view[p] = V_WATER;
            }
        food_seen[i] = (int16_t)fs;
        neighbours[i] = (int16_t)nb;
        food_rose[i] = fs > food_old[i];
        nb_changed[i] = nb != nb_old[i];
        company_ticks[i] += nb > 0;
        /* plan triggers (World._plan_events): later lines win */
        if (v[I_PLAN_EVENTS]) {
            int g = plan_goal[i];
            if (g < 0 || g >= n_goals) AFTER_BAD("plan goal", g);
            const uint8_t *gf = goal_flags + g * N_GOAL_FLAGS;
            int seen_food = fs > 0, company = nb > 0;
            no_food[i] = seen_food ? 0 : no_food[i] + 1;
            int was_alone = alone[i] >= v[I_ALONE_TICKS];
            alone[i] = company ? 0 : alone[i] + 1;
            int now_crowded = nb >= v[I_CROWD_LINE] || (crowded[i] && nb >= v[I_CROWD_LINE] - 2);
            int now_hungry_food = energy[i] < v[I_HUNGRY_LINE] && seen_food;
            int ev = t + 1 >= plan_end[i] ? (int)v[I_T_HORIZON] : -1;
            if (gf[GF_ROAMING] && was_alone && company) ev = (int)v[I_T_FOUND_COMPANY];
            if (gf[GF_CROWD] && now_crowded && !crowded[i]) ev = (int)v[I_T_CROWDED];
            if (gf[GF_HUNGRY] && now_hungry_food && !hungry_food[i]) ev = (int)v[I_T_HUNGRY_FOOD];
            if (gf[GF_SCHOOL] && alone[i] == v[I_ALONE_TICKS]) ev = (int)v[I_T_LOST_COMPANY];
            if (gf[GF_FORAGE] && no_food[i] >= v[I_FORAGE_PATIENCE]) ev = (int)v[I_T_FOOD_GONE];
            if (gf[GF_REST] && energy[i] >= (int32_t)plan_param[i] * 100) ev = (int)v[I_T_ENERGY_REACHED];
            /* a meal ends a forage plan only when it made the fish sated (sated line 0: every meal) */
            int sated = (before[i] < v[I_SATED_LINE] && energy[i] >= v[I_SATED_LINE]) || v[I_SATED_LINE] == 0;
            if (gf[GF_FORAGE] && ate && sated) ev = (int)v[I_T_ATE];
            if (gf[GF_PLANNED] && stuck[i] > 0 && stuck[i] % v[I_STUCK_TICKS] == 0) ev = (int)v[I_T_STUCK];
            if (!gf[GF_FORAGE] && before[i] >= low && energy[i] < low) ev = (int)v[I_T_LOW_ENERGY];
            crowded[i] = now_crowded;
            hungry_food[i] = now_hungry_food;
            if (ev >= 0) plan_trigger[i] = (int8_t)ev;
        }
        /* memories, in EVENT_ORDER: exhausted, refused, bumped, ate, taken, nothing to eat,
           low energy, food rose, neighbours changed */
        int level = energy[i] / 100;
        int flags[N_EVENTS] = {before[i] > 0 && energy[i] == 0, refused, bumped, ate, taken, nothing,
                               before[i] >= low && energy[i] < low, food_rose[i], nb_changed[i]};
        int way = nd == 4 ? e : e + HEX_MOVE_ARG;  /* (a hexagonal tank's move, remembered as such) */
        int argv[N_EVENTS] = {0, way, way, level, 0, 0, level, fs, nb};
        if (mem_count[i] < 0) AFTER_BAD("memory count", mem_count[i]);
        for (int k = 0; k < N_EVENTS; k++) {
            if (!flags[k]) continue;
            Py_ssize_t slot = i * ms + mem_count[i] % ms;
            mem_tick[slot] = (int32_t)t;
            mem_code[slot] = event_order[k];
            mem_arg[slot] = (int16_t)argv[k];
            mem_count[i] += 1;
        }
    next_fish:;
    }
    PyMem_Free(cellcode);
    if (fault.what) {
        for (int a = 0; a < N_M; a++) Py_DECREF(made[a]);
        return bad_index(&bs, fault.what, fault.value);
    }
    release_all(&bs);
    return Py_BuildValue("(NNNNNNN)", made[0], made[1], made[2], made[3], made[4], made[5], made[6]);
#undef AFTER_BAD
fail:
    for (int a = 0; a < N_M; a++) Py_XDECREF(made[a]);
    release_all(&bs);
    return NULL;
}

/* ------------------------------------------------------------------ plan */

static const char plan_doc[] =
    "plan(arrays, numbers) -> (goal, param, horizon, tier, status, tokens)\n"
    "The instinct planner (brains/instinct.InstinctPlanner.decide) for a batch of fish: view features,\n"
    "goal utilities, the seeded softmax over them, each goal's parameter and the horizon. Returns\n"
    "``goal`` (``goal_of`` each utility's goal, in PLANNER_UTILITIES order), ``param``, ``horizon``,\n"
    "each decision's ``tier`` (the number given), status (0: OK) and tokens (0) as a DecisionBatch\n"
    "holds them (new int8, int16, int16, int8, int8, int64 arrays); the draws are hashed from\n"
    "each fish's ``keys`` and ``tick``; return's utility, place and horizon come computed\n"
    "(``revisit``: NEG when none); ``base``: each built-in choice's base horizon. The utilities are\n"
    "formulas over features (fish/formula.py), compiled to programs (``ops``, ``args``, ``starts``:\n"
    "program j is ops[starts[j]:starts[j+1]]): the first five are forage's, school's, explore's,\n"
    "rest's and keep_away's; the m after them are the plan types the planner draws among beside the\n"
    "built-in ones (m > 0: all six and the m; m = 0: exactly as before), each choosing goal\n"
    "``extra_goal`` with parameter 0 and horizon ``extra_ticks``. ``plants``, ``prey``, ``hunters`` and\n"
    "``bites``: the plants, prey, fish that hunt it and plants with a bite left each fish is shown\n"
    "(empty: none).\n"
    "By name: exactly the names of PLAN_ARRAYS and PLAN_NUMBERS.";

enum { P_CODES, P_ROWS_START, P_ROWS_COLUMN, P_ROWS_VALUE, P_TRAITS, P_ENERGY, P_HEADING, P_KEYS, P_BASE, P_REVISIT, P_REVISIT_PARAM,
       P_REVISIT_HORIZON, P_GOAL_OF, P_PLANTS, P_PREY, P_HUNTERS, P_BITES, P_OPS, P_ARGS, P_STARTS, P_EXTRA_GOAL, P_EXTRA_TICKS,
       N_P };
static const char *P_NAMES[N_P] = {"codes", "rows_start", "rows_column", "rows_value", "traits", "energy", "heading", "keys", "base", "revisit",
                                   "revisit_param", "revisit_horizon", "goal_of", "plants", "prey", "hunters", "bites", "ops", "args",
                                   "starts", "extra_goal", "extra_ticks"};
enum { PN_REST_CEILING, PN_NEVER_SCHOOL, PN_TICK, PN_TIER, N_PN_INTS, PN_MAX_ENERGY = N_PN_INTS, PN_LOW, PN_HUNGRY,
       PN_CROWD_LINE, PN_TEMPERATURE, N_PN };
static const char *PN_NAMES[N_PN] = {"rest_ceiling", "never_school", "tick", "tier", "max_energy",
                                     "low_energy_fraction", "hungry_fraction", "crowd_line", "temperature"};
/* The planner's built-in choices (brains/instinct.PLANNER_UTILITIES; exported): each is one plan
   type's ``planner`` — how its parameter and horizon are chosen — and ``goal_of`` gives its goal
   code. Their utilities are the rows' formulas (below), return's comes computed (``revisit``). */
enum { U_FORAGE, U_SCHOOL, U_EXPLORE, U_REST, U_KEEP_AWAY, U_RETURN, N_U };
static const char *U_NAMES[N_U] = {"forage", "school", "explore", "rest", "keep_away", "return"};
enum { F_FOOD_SEEN = 34, F_WALLS = 35 };

/* A formula over named features (fish/formula.py), compiled there to a postfix program: ops and
   their arguments (a constant's value, a feature's index in FORMULA_FEATURES). Evaluated in
   doubles in the order written, with numpy's rules (comparisons 1 or 0, NaN propagating through
   min and max), so a formula gives the same doubles here as formula.Formula gives in numpy; a
   result that is not finite counts as 0. */
enum { OP_CONST, OP_FEAT, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_NEG, OP_NOT, OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE,
       OP_AND, OP_OR, OP_IF, OP_MIN, OP_MAX, OP_ABS, OP_CLIP, N_OPS };
static const char *OP_NAMES[N_OPS] = {"const", "feat", "add", "sub", "mul", "div", "neg", "not", "lt", "le", "gt",
                                      "ge", "eq", "ne", "and", "or", "if", "min", "max", "abs", "clip"};
/* the features a planner formula reads, computed per fish below (formula.PLANNER_FEATURES, same set) */
enum { FX_ENERGY, FX_HUNGER, FX_LOW, FX_FOOD_SEEN, FX_VISIBLE, FX_COMPANY, FX_CROWD, FX_WALLS, FX_PLANTS, FX_PREY, FX_HUNGRY_FOOD,
       FX_REST_LOW, FX_SOC, FX_CUR, FX_CAU, FX_APP, FX_CALM, FX_HUNTERS, FX_BITES, N_FX };
static const char *FX_NAMES[N_FX] = {"energy", "hunger", "low", "food_seen", "visible", "company", "crowd",
                                             "walls", "plants_seen", "prey_seen", "hungry_food", "rest_low",
                                             "sociability", "curiosity", "caution", "appetite", "calm",
                                             "hunters_seen", "bites_seen"};
#define FORMULA_STACK 256
static double fmin_np(double a, double b) { return (a < b || isnan(a)) ? a : b; }
static double fmax_np(double a, double b) { return (a > b || isnan(a)) ? a : b; }
static double run_formula(const int8_t *op, const double *arg, int64_t n, const double *x) {
    double st[FORMULA_STACK];
    int sp = 0;
    for (int64_t p = 0; p < n; p++) {
        double a, b, c;
        switch (op[p]) {
        case OP_CONST: st[sp++] = arg[p]; break;
        case OP_FEAT: st[sp++] = x[(int)arg[p]]; break;
        case OP_NEG: st[sp - 1] = -st[sp - 1]; break;
        case OP_NOT: st[sp - 1] = st[sp - 1] == 0.0 ? 1.0 : 0.0; break;
        case OP_ABS: st[sp - 1] = fabs(st[sp - 1]); break;
        case OP_IF:
            b = st[--sp], a = st[--sp], c = st[sp - 1];
            st[sp - 1] = c != 0.0 ? a : b;
            break;
        case OP_CLIP:
            c = st[--sp], b = st[--sp];
            st[sp - 1] = fmin_np(fmax_np(st[sp - 1], b), c);
            break;
        default:
            b = st[--sp], a = st[sp - 1];
            switch (op[p]) {
            case OP_ADD: a = a + b; break;
            case OP_SUB: a = a - b; break;
            case OP_MUL: a = a * b; break;
            case OP_DIV: a = a / b; break;
            case OP_LT: a = a < b ? 1.0 : 0.0; break;
            case OP_LE: a = a <= b ? 1.0 : 0.0; break;
            case OP_GT: a = a > b ? 1.0 : 0.0; break;
            case OP_GE: a = a >= b ? 1.0 : 0.0; break;
            case OP_EQ: a = a == b ? 1.0 : 0.0; break;
            case OP_NE: a = a != b ? 1.0 : 0.0; break;
            case OP_AND: a = (a != 0.0 && b != 0.0) ? 1.0 : 0.0; break;
            case OP_OR: a = (a != 0.0 || b != 0.0) ? 1.0 : 0.0; break;
            case OP_MIN: a = fmin_np(a, b); break;
            case OP_MAX: a = fmax_np(a, b); break;
            }
            st[sp - 1] = a;
        }
    }
    return isfinite(st[0]) ? st[0] : 0.0;
}

/* A program as formula.py makes it: every op known, every feature index in range, the stack never
   empty nor past FORMULA_STACK, one value left. 0 ok; -1 with a ValueError set. */
static int check_program(const int8_t *op, const double *arg, int64_t n) {
    int depth = 0;
    static const signed char pops[N_OPS] = {-1, -1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 0, 2};
    for (int64_t p = 0; p < n; p++) {
        if (op[p] < 0 || op[p] >= N_OPS) {
            PyErr_Format(PyExc_ValueError, "plan: formula op %d is not one of 0..%d", (int)op[p], N_OPS - 1);
            return -1;
        }
        if (op[p] == OP_FEAT && !(arg[p] >= 0 && arg[p] < N_FX && arg[p] == (double)(int)arg[p])) {
            PyErr_Format(PyExc_ValueError, "plan: formula feature index %g is not one of 0..%d", arg[p], N_FX - 1);
            return -1;
        }
        int needs = op[p] <= OP_FEAT ? 0 : (pops[op[p]] + 1);
        if (depth < needs) {
            PyErr_SetString(PyExc_ValueError, "plan: a formula program takes more than its stack holds");
            return -1;
        }
        depth += op[p] <= OP_FEAT ? 1 : -pops[op[p]];
        if (depth > FORMULA_STACK) {
            PyErr_Format(PyExc_ValueError, "plan: a formula program deeper than %d", FORMULA_STACK);
            return -1;
        }
    }
    if (depth != 1) {
        PyErr_SetString(PyExc_ValueError, "plan: a formula program must leave one value");
        return -1;
    }
    return 0;
}

static PyObject *plan(PyObject *self, PyObject *args) {
    PyObject *arrays, *numbers, *pa[N_P];
    long long ints[N_PN_INTS];
    double fl[N_PN - N_PN_INTS];
    if (!PyArg_ParseTuple(args, "OO", &arrays, &numbers)) return NULL;
    if (numbers_by_name(numbers, PN_NAMES, N_PN, ints, fl, N_PN_INTS, "plan", "PLAN_NUMBERS") < 0 ||
        by_name(arrays, P_NAMES, N_P, pa, "plan", "array", "PLAN_ARRAYS") < 0)
        return NULL;
#define NUM(k) fl[(k) - N_PN_INTS]
    double max_energy = NUM(PN_MAX_ENERGY), low_f = NUM(PN_LOW), hungry_f = NUM(PN_HUNGRY),
           crowd_line = NUM(PN_CROWD_LINE), temperature = NUM(PN_TEMPERATURE);
    const double scale = exact_scale(temperature);
#undef NUM
    long long rest_ceiling = ints[PN_REST_CEILING];
    PyArrayObject *made[6] = {NULL}; /* goal, param, horizon, tier, status, tokens: made here, returned */
    Bufs bs = {.n = 0};
    Sparse sp;
    Py_ssize_t k = items(pa[P_ENERGY], 4, "energy");
    if (k < 0) return NULL;
    Py_ssize_t nc = k ? items(pa[P_CODES], 1, "codes") / k : 0;
    if (nc <= 0 && k) return PyErr_Format(PyExc_ValueError, "array codes: empty");
    TAKE(codes, int8_t, pa[P_CODES], k * nc, 0);
    /* the moves: from the feature rows' count (a code per heading: 4 + 4 or 4 + 6 codes a cell) */
    Py_ssize_t n_rows = items(pa[P_ROWS_START], 8, "rows_start") - 1;
    const int nd = k ? moves_of(n_rows - V_FISH * nc, nc, "rows_start") : 4;
    if (nd < 0) goto fail;
    const Lay lay = lay_of(nd);
    if (k && sparse_take(&bs, &sp, pa + P_ROWS_START, nc, &lay) < 0) goto fail;
    TAKE(traits, int16_t, pa[P_TRAITS], 5 * k, 0);
    TAKE(energy, int32_t, pa[P_ENERGY], k, 0);
    TAKE(heading, int8_t, pa[P_HEADING], k, 0);
    TAKE(keys, uint64_t, pa[P_KEYS], k, 0);
    TAKE(base, double, pa[P_BASE], N_U, 0);
    TAKE(revisit, double, pa[P_REVISIT], k, 0); /* return's utility (NEG: no place to return to), its place, horizon */
    TAKE(revisit_param, int64_t, pa[P_REVISIT_PARAM], k, 0);
    TAKE(revisit_horizon, double, pa[P_REVISIT_HORIZON], k, 0);
    TAKE(goal_of, int8_t, pa[P_GOAL_OF], N_U, 0);
    Py_ssize_t np_ = items(pa[P_STARTS], 8, "starts");
    if (np_ < 0) goto fail;
    Py_ssize_t m = np_ - 1 - (N_U - 1);
    if (m < 0) {
        release_all(&bs);
        return PyErr_Format(PyExc_ValueError, "plan: starts holds %zd programs, at least %d", np_ - 1, N_U - 1);
    }
    if (m > MAX_CHOICES - N_U) {
        release_all(&bs);
        return PyErr_Format(PyExc_ValueError, "at most %d formula utilities, not %zd", MAX_CHOICES - N_U, m);
    }
    TAKE(starts, int64_t, pa[P_STARTS], np_, 0);
    Py_ssize_t n_ops = items(pa[P_OPS], 1, "ops");
    if (n_ops < 0) goto fail;
    TAKE(ops, int8_t, pa[P_OPS], n_ops, 0);
    TAKE(prog_args, double, pa[P_ARGS], n_ops, 0);
    for (Py_ssize_t j = 0; j + 1 < np_; j++) {
        if (starts[j] < 0 || starts[j] > starts[j + 1] || starts[j + 1] > n_ops ||
            check_program(ops + starts[j], prog_args + starts[j], starts[j + 1] - starts[j]) < 0) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "plan: starts out of order");
            goto fail;
        }
    }
    Py_ssize_t n_plants = items(pa[P_PLANTS], 8, "plants"), n_prey = items(pa[P_PREY], 8, "prey"),
               n_hunters = items(pa[P_HUNTERS], 8, "hunters"), n_bites = items(pa[P_BITES], 8, "bites");
    if (n_plants < 0 || n_prey < 0 || n_hunters < 0 || n_bites < 0) goto fail;
    TAKE(plants, double, pa[P_PLANTS], n_plants ? k : 0, 0);
    TAKE(prey, double, pa[P_PREY], n_prey ? k : 0, 0);
    TAKE(hunters, double, pa[P_HUNTERS], n_hunters ? k : 0, 0);
    TAKE(bites, double, pa[P_BITES], n_bites ? k : 0, 0);
    TAKE(extra_goal, int8_t, pa[P_EXTRA_GOAL], m, 0);
    TAKE(extra_ticks, double, pa[P_EXTRA_TICKS], m, 0);
    npy_intp dims[1] = {k};
    if (!(made[0] = new_array(k, -1, NPY_INT8)) || !(made[1] = new_array(k, -1, NPY_INT16)) ||
        !(made[2] = new_array(k, -1, NPY_INT16)) || !(made[3] = new_array(k, -1, NPY_INT8)) ||
        !(made[4] = (PyArrayObject *)PyArray_ZEROS(1, dims, NPY_INT8, 0)) ||
        !(made[5] = (PyArrayObject *)PyArray_ZEROS(1, dims, NPY_INT64, 0)))
        goto fail;
    int8_t *goal = PyArray_DATA(made[0]);
    int16_t *param = PyArray_DATA(made[1]), *horizon = PyArray_DATA(made[2]);
    memset(PyArray_DATA(made[3]), (int)(int8_t)ints[PN_TIER], (size_t)k);
    for (Py_ssize_t i = 0; i < k; i++) {
        double f[MAX_FEATURES];
        int bad;
        if (view_features(f, codes + i * nc, nc, &sp, &bad, &lay) < 0) {
            for (int a = 0; a < 6; a++) Py_DECREF(made[a]);
            return bad_index(&bs, "view code", bad);
        }
        double soc = traits[5 * i] / 100.0, cur = traits[5 * i + 1] / 100.0, cau = traits[5 * i + 2] / 100.0,
               app = traits[5 * i + 3] / 100.0, calm = traits[5 * i + 4] / 100.0;
        double e = (double)energy[i];
        double hunger = 1.0 - e / (0.8 * max_energy);
        hunger = hunger < 0.0 ? 0.0 : (hunger > 1.0 ? 1.0 : hunger);
        double visible = f[lay.visible];
        int food = f[lay.food_seen] > 0;
        double company = (visible < 3.0 ? visible : 3.0) / 3.0;
        int low = e < max_energy * low_f;
        int hungry_food = (e < max_energy * hungry_f) && food;
        double crowd = visible - crowd_line + 2;
        crowd = (crowd > 0.0 ? crowd : 0.0) / 3.0;
        double x[N_FX]; /* the features formulas read (fish/features.py: the same definitions) */
        x[FX_ENERGY] = e / max_energy;
        x[FX_HUNGER] = hunger;
        x[FX_LOW] = low;
        x[FX_FOOD_SEEN] = f[lay.food_seen];
        x[FX_VISIBLE] = visible;
        x[FX_COMPANY] = company;
        x[FX_CROWD] = crowd;
        x[FX_WALLS] = f[lay.walls];
        x[FX_PLANTS] = n_plants ? plants[i] : 0.0;
        x[FX_PREY] = n_prey ? prey[i] : 0.0;
        x[FX_HUNGRY_FOOD] = hungry_food;
        x[FX_REST_LOW] = energy[i] < rest_ceiling;
        x[FX_SOC] = soc, x[FX_CUR] = cur, x[FX_CAU] = cau, x[FX_APP] = app, x[FX_CALM] = calm;
        x[FX_HUNTERS] = n_hunters ? hunters[i] : 0.0;
        x[FX_BITES] = n_bites ? bites[i] : 0.0;
        double u[MAX_CHOICES];
        for (int j = 0; j < U_RETURN; j++) u[j] = run_formula(ops + starts[j], prog_args + starts[j], starts[j + 1] - starts[j], x);
        if (ints[PN_NEVER_SCHOOL]) u[U_SCHOOL] = NEG;
        u[U_RETURN] = revisit[i];
        double d[1 + MAX_MOVES]; /* one hash per fish and tick: the goal draw and a jitter per direction */
        for (int j = 0; j <= nd; j++) d[j] = to_unit(at_tick(keys[i] + (uint64_t)j, ints[PN_TICK]));
        for (Py_ssize_t j = 0; j < m; j++) {
            const int64_t a = starts[U_RETURN + j], b = starts[U_RETURN + j + 1];
            u[N_U + j] = run_formula(ops + a, prog_args + a, b - a, x);
        }
        /* no place: not return (m > 0: its utility NEG gives it no mass, and all are drawn among) */
        int g = seeded_softmax(u, m ? N_U + (int)m : (revisit[i] <= NEG ? U_RETURN : N_U), temperature, scale, d[0]);
        /* explore: the open way, favouring the course and where others swim */
        double vis1 = visible > 1.0 ? visible : 1.0;
        int best = 0;
        double bestv = 0.0;
        for (int w = 0; w < nd; w++) {
            double v = f[lay.open + w] + 0.5 * f[lay.align + w] / vis1;
            if (w == heading[i]) v += 0.3;
            v += 0.6 * d[1 + w];
            if (w == 0 || v > bestv) {
                bestv = v;
                best = w;
            }
        }
        int64_t choices[N_U] = {0, 0, best, energy[i] < rest_ceiling ? rest_ceiling / 100 : 100,
                                visible < crowd_line - 2, revisit_param[i]};
        double stretch[N_U] = {1.0, 0.5 + soc, 0.5 + cur, 0.5 + calm, 1.0, 1.0};
        if (g >= N_U) { /* a formula's plan type */
            goal[i] = extra_goal[g - N_U];
            param[i] = 0;
            horizon[i] = (int16_t)extra_ticks[g - N_U];
            continue;
        }
        goal[i] = goal_of[g];
        param[i] = (int16_t)choices[g];
        horizon[i] = (int16_t)(g == U_RETURN ? revisit_horizon[i] : nearbyint(base[g] * stretch[g]));
    }
    release_all(&bs);
    return Py_BuildValue("(NNNNNN)", made[0], made[1], made[2], made[3], made[4], made[5]);
fail:
    for (int a = 0; a < 6; a++) Py_XDECREF(made[a]);
    release_all(&bs);
    return NULL;
}

static const char formula_doc[] =
    "formula(ops, args, x) -> float\n"
    "One compiled formula (fish/formula.program) on one fish's features ``x`` (float64, in\n"
    "FORMULA_FEATURES order): what plan() draws with (tests/test_formulas.py holds it to numpy).";

static PyObject *formula(PyObject *self, PyObject *args) {
    PyObject *o_ops, *o_args, *o_x;
    if (!PyArg_ParseTuple(args, "OOO", &o_ops, &o_args, &o_x)) return NULL;
    Bufs bs = {.n = 0};
    Py_ssize_t n = items(o_ops, 1, "ops");
    if (n < 0) return NULL;
    TAKE(ops, int8_t, o_ops, n, 0);
    TAKE(vals, double, o_args, n, 0);
    TAKE(x, double, o_x, N_FX, 0);
    if (check_program(ops, vals, n) < 0) goto fail;
    double out = run_formula(ops, vals, n, x);
    release_all(&bs);
    return PyFloat_FromDouble(out);
fail:
    release_all(&bs);
    return NULL;
}

/* ------------------------------------------------------------------ ask */

static const char ask_doc[] =
    "ask(arrays, numbers) -> (fish, triggers, codes, energy, heading, traits, food_here, refused)\n"
    "The fish that ask for a decision this tick (World.triggers, then the engine's request): a fish\n"
    "asks when its trigger is set and it neither waits for an answer (``waiting``) nor is out of the\n"
    "water. Its trigger: ``timeout`` ticks since its last decision, then (``plan_trigger_on``) its\n"
    "plan's raised trigger, or (action mode, ``events_on``) the events whose codes are >= 0 and low\n"
    "energy, later ones winning. Returns new arrays of the k asking fish, in index order, and what a\n"
    "request carries about each: int64[k], int8[k], int8[k, view cells], int32[k], int8[k],\n"
    "int16[k, 5], bool[k], bool[k, moves] (World.asks' Asks).\n"
    "By name: exactly the names of ASK_ARRAYS and ASK_INTS.";

enum { Q_LAST_DECISION, Q_PLAN_TRIGGER, Q_NEIGHBOURS_CHANGED, Q_FOOD_ROSE, Q_FAILED, Q_ENERGY, Q_WAITING, Q_ABSENT,
       Q_CODES, Q_HEADING, Q_TRAITS, Q_CELL, Q_FOOD_BORN, Q_REFUSED_AT, N_Q };
static const char *Q_NAMES[N_Q] = {"last_decision", "plan_trigger", "neighbours_changed", "food_rose", "failed",
                                   "energy", "waiting", "absent", "codes", "heading", "traits", "cell", "food_born",
                                   "refused_at"};
enum { QI_TICK, QI_TIMEOUT, QI_PLAN_TRIGGER_ON, QI_EVENTS_ON, QI_T_TIMEOUT, QI_T_NEIGHBOURS, QI_T_FOOD_ROSE,
       QI_T_ACTION_FAILED, QI_T_LOW_ENERGY, QI_LOW_LINE, QI_REFUSED_WITHIN, N_QI };
static const char *QI_NAMES[N_QI] = {"tick", "timeout", "plan_trigger_on", "events_on", "t_timeout",
                                     "t_neighbours", "t_food_rose", "t_action_failed", "t_low_energy", "low_line",
                                     "refused_within"};

static PyObject *ask(PyObject *self, PyObject *args) {
    PyObject *arrays, *ints, *qa[N_Q];
    long long v[N_QI];
    if (!PyArg_ParseTuple(args, "OO", &arrays, &ints)) return NULL;
    if (numbers_by_name(ints, QI_NAMES, N_QI, v, NULL, N_QI, "ask", "ASK_INTS") < 0 ||
        by_name(arrays, Q_NAMES, N_Q, qa, "ask", "array", "ASK_ARRAYS") < 0)
        return NULL;
    Bufs bs = {.n = 0};
    int8_t *trs = NULL;
    enum { O_FISH, O_TRIGGERS, O_CODES, O_ENERGY, O_HEADING, O_TRAITS, O_FOOD_HERE, O_REFUSED, N_O };
    PyArrayObject *o[N_O] = {NULL};
    Py_ssize_t n = items(qa[Q_ENERGY], 4, "energy"), grid = items(qa[Q_FOOD_BORN], 4, "food_born");
    if (n < 0 || grid < 0) return NULL;
    Py_ssize_t nc = n ? items(qa[Q_CODES], 1, "codes") / n : 0;
    if (!n && PyArray_Check(qa[Q_CODES]) && PyArray_NDIM((PyArrayObject *)qa[Q_CODES]) == 2)
        nc = PyArray_DIM((PyArrayObject *)qa[Q_CODES], 1); /* (no fish: the requests' view width all the same) */
    TAKE(last_decision, int32_t, qa[Q_LAST_DECISION], n, 0);
    TAKE(plan_trigger, int8_t, qa[Q_PLAN_TRIGGER], n, 0);
    TAKE(nb_changed, uint8_t, qa[Q_NEIGHBOURS_CHANGED], n, 0);
    TAKE(food_rose, uint8_t, qa[Q_FOOD_ROSE], n, 0);
    TAKE(failed, uint8_t, qa[Q_FAILED], n, 0);
    TAKE(energy, int32_t, qa[Q_ENERGY], n, 0);
    TAKE(waiting, uint8_t, qa[Q_WAITING], n, 0);
    TAKE(absent, uint8_t, qa[Q_ABSENT], n, 0);
    TAKE(codes, int8_t, qa[Q_CODES], n * nc, 0);
    TAKE(heading, int8_t, qa[Q_HEADING], n, 0);
    TAKE(traits, int16_t, qa[Q_TRAITS], 5 * n, 0);
    TAKE(cell, int64_t, qa[Q_CELL], n, 0);
    TAKE(food_born, int32_t, qa[Q_FOOD_BORN], grid, 0);
    const int nd = moves_of(items(qa[Q_REFUSED_AT], 4, "refused_at"), n, "refused_at");
    if (nd < 0) goto fail;
    TAKE(refused_at, int32_t, qa[Q_REFUSED_AT], nd * n, 0);
    long long tick = v[QI_TICK], since = tick - v[QI_REFUSED_WITHIN];
    /* first each fish's trigger (-1: it does not ask) and how many ask, then their requests */
    if (n && !(trs = PyMem_Malloc((size_t)n))) {
        PyErr_NoMemory();
        goto fail;
    }
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int tr = -1;
        if (tick - last_decision[i] >= v[QI_TIMEOUT]) tr = (int)v[QI_T_TIMEOUT];
        if (v[QI_PLAN_TRIGGER_ON]) {
            if (plan_trigger[i] >= 0) tr = plan_trigger[i];
        } else if (v[QI_EVENTS_ON]) { /* an event's code < 0: that event asks nothing */
            if (v[QI_T_NEIGHBOURS] >= 0 && nb_changed[i]) tr = (int)v[QI_T_NEIGHBOURS];
            if (v[QI_T_FOOD_ROSE] >= 0 && food_rose[i]) tr = (int)v[QI_T_FOOD_ROSE];
            if (v[QI_T_ACTION_FAILED] >= 0 && failed[i]) tr = (int)v[QI_T_ACTION_FAILED];
            if (energy[i] < v[QI_LOW_LINE]) tr = (int)v[QI_T_LOW_ENERGY];
        }
        if (tr < 0 || waiting[i] || absent[i]) {
            trs[i] = -1;
            continue;
        }
        if (cell[i] < 0 || cell[i] >= grid) {
            PyMem_Free(trs);
            return bad_index(&bs, "fish cell", cell[i]);
        }
        trs[i] = (int8_t)tr;
        k++;
    }
    if (!(o[O_FISH] = new_array(k, -1, NPY_INT64)) || !(o[O_TRIGGERS] = new_array(k, -1, NPY_INT8)) ||
        !(o[O_CODES] = new_array(k, nc, NPY_INT8)) || !(o[O_ENERGY] = new_array(k, -1, NPY_INT32)) ||
        !(o[O_HEADING] = new_array(k, -1, NPY_INT8)) || !(o[O_TRAITS] = new_array(k, 5, NPY_INT16)) ||
        !(o[O_FOOD_HERE] = new_array(k, -1, NPY_BOOL)) || !(o[O_REFUSED] = new_array(k, nd, NPY_BOOL)))
        goto fail;
    int64_t *o_fish = PyArray_DATA(o[O_FISH]);
    int8_t *o_triggers = PyArray_DATA(o[O_TRIGGERS]), *o_codes = PyArray_DATA(o[O_CODES]),
           *o_heading = PyArray_DATA(o[O_HEADING]);
    int32_t *o_energy = PyArray_DATA(o[O_ENERGY]);
    int16_t *o_traits = PyArray_DATA(o[O_TRAITS]);
    uint8_t *o_food_here = PyArray_DATA(o[O_FOOD_HERE]), *o_refused = PyArray_DATA(o[O_REFUSED]);
    Py_ssize_t j = 0;
    for (Py_ssize_t i = 0; i < n && j < k; i++) {
        if (trs[i] < 0) continue;
        o_fish[j] = i;
        o_triggers[j] = trs[i];
        memcpy(o_codes + j * nc, codes + i * nc, (size_t)nc);
        o_energy[j] = energy[i];
        o_heading[j] = heading[i];
        memcpy(o_traits + 5 * j, traits + 5 * i, 5 * sizeof(int16_t));
        o_food_here[j] = food_born[cell[i]] >= 0; /* food lies there (engine: food_born >= 0) */
        for (int d = 0; d < nd; d++) o_refused[nd * j + d] = refused_at[nd * i + d] >= since;
        j++;
    }
    PyMem_Free(trs);
    release_all(&bs);
    return Py_BuildValue("(NNNNNNNN)", o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7]);
fail:
    PyMem_Free(trs);
    for (int a = 0; a < N_O; a++) Py_XDECREF(o[a]);
    release_all(&bs);
    return NULL;
}

/* ------------------------------------------------------------------ adopt */

static const char adopt_doc[] =
    "adopt(arrays, numbers)\n"
    "Make decided plans the standing plans of ``fish`` (World.apply_plans with Steering.set_plans):\n"
    "goal, parameter, end, cleared trigger and food patience, a hold plan's action as the intent,\n"
    "the decision's tick and count, and steering's derived weights, bias and flags, read per goal from\n"
    "the plan types' table (``goal_start``/``goal_variants``: its rows of ``table``, a parameter picking\n"
    "among several; ``goal_eats`` 0 never, 1 when hungry, 2 what it reaches; ``goal_rests``;\n"
    "``goal_biased``: the parameter is a direction steering favours; ``row_base``: empty, or each fish's\n"
    "first row of ``table``, its rows then a block of its own: joined tanks of other live settings). ``fish``\n"
    "holds no fish twice (a\n"
    "batch's). Returns what ended each fish's plan as the new one replaced it, a new int8 array\n"
    "(Frame.ended): its raised trigger, ``t_horizon`` where a raised one met the plan's end, -1 none;\n"
    "and how many of the plans are of a goal ``goal_watched`` marks (one World.step looks after).\n"
    "By name: exactly the names of ADOPT_ARRAYS and ADOPT_NUMBERS.";

enum { A_FISH, A_GOALS, A_PARAMS, A_HORIZONS, A_PLAN_GOAL, A_PLAN_PARAM, A_PLAN_END, A_PLAN_TRIGGER, A_NO_FOOD,
       A_INTENT, A_LAST_DECISION, A_DECISIONS, A_W, A_BIAS, A_FORAGE, A_SNACKS, A_RESTS, A_TABLE, A_PERSONAL,
       A_GOAL_START, A_GOAL_VARIANTS, A_GOAL_EATS, A_GOAL_RESTS, A_GOAL_BIASED, A_GOAL_WATCHED, A_ROW_BASE, N_A };
static const char *A_NAMES[N_A] = {"fish", "goals", "params", "horizons", "plan_goal", "plan_param", "plan_end",
                                   "plan_trigger", "no_food", "intent", "last_decision", "decisions", "w", "bias",
                                   "forage", "snacks", "rests", "table", "personal", "goal_start",
                                   "goal_variants", "goal_eats", "goal_rests", "goal_biased", "goal_watched",
                                   "row_base"};
enum { AN_TICK, AN_NO_END, AN_T_HORIZON, N_AN_INTS, AN_DIRECTION = N_AN_INTS, N_AN };
static const char *AN_NAMES[N_AN] = {"tick", "no_end", "t_horizon", "direction"};

static PyObject *adopt(PyObject *self, PyObject *args) {
    PyObject *arrays, *numbers, *aa[N_A];
    long long v[N_AN_INTS];
    double direction = 0.0;
    if (!PyArg_ParseTuple(args, "OO", &arrays, &numbers)) return NULL;
    if (numbers_by_name(numbers, AN_NAMES, N_AN, v, &direction, N_AN_INTS, "adopt", "ADOPT_NUMBERS") < 0 ||
        by_name(arrays, A_NAMES, N_A, aa, "adopt", "array", "ADOPT_ARRAYS") < 0)
        return NULL;
    Bufs bs = {.n = 0};
    PyArrayObject *o_ended = NULL; /* made here, returned */
    Py_ssize_t k = items(aa[A_FISH], 8, "fish"), n = items(aa[A_PLAN_GOAL], 1, "plan_goal");
    if (k < 0 || n < 0) return NULL;
    Py_ssize_t rows = items(aa[A_TABLE], 8, "table") / 6, n_goals = items(aa[A_GOAL_START], 8, "goal_start");
    if (rows < 0 || n_goals < 0) return NULL;
    TAKE(fish, int64_t, aa[A_FISH], k, 0);
    TAKE(goals, int8_t, aa[A_GOALS], k, 0);
    TAKE(params, int16_t, aa[A_PARAMS], k, 0);
    TAKE(horizons, int16_t, aa[A_HORIZONS], k, 0);
    TAKE(plan_goal, int8_t, aa[A_PLAN_GOAL], n, 1);
    TAKE(plan_param, int16_t, aa[A_PLAN_PARAM], n, 1);
    TAKE(plan_end, int32_t, aa[A_PLAN_END], n, 1);
    TAKE(plan_trigger, int8_t, aa[A_PLAN_TRIGGER], n, 1);
    TAKE(no_food, int32_t, aa[A_NO_FOOD], n, 1);
    TAKE(intent, int8_t, aa[A_INTENT], n, 1);
    TAKE(last_decision, int32_t, aa[A_LAST_DECISION], n, 1);
    TAKE(decisions, int32_t, aa[A_DECISIONS], n, 1);
    TAKE(w, double, aa[A_W], 6 * n, 1);
    const int nd = moves_of(items(aa[A_BIAS], 8, "bias"), n, "bias");
    if (nd < 0) goto fail;
    TAKE(bias, double, aa[A_BIAS], nd * n, 1);
    TAKE(forage, uint8_t, aa[A_FORAGE], n, 1);
    TAKE(snacks, uint8_t, aa[A_SNACKS], n, 1);
    TAKE(rests, uint8_t, aa[A_RESTS], n, 1);
    TAKE(table, double, aa[A_TABLE], 6 * rows, 0);
    TAKE(personal, double, aa[A_PERSONAL], 6 * n, 0);
    TAKE(goal_start, int64_t, aa[A_GOAL_START], n_goals, 0);
    TAKE(goal_variants, int64_t, aa[A_GOAL_VARIANTS], n_goals, 0);
    TAKE(goal_eats, uint8_t, aa[A_GOAL_EATS], n_goals, 0);
    TAKE(goal_rests, uint8_t, aa[A_GOAL_RESTS], n_goals, 0);
    TAKE(goal_biased, uint8_t, aa[A_GOAL_BIASED], n_goals, 0);
    TAKE(goal_watched, uint8_t, aa[A_GOAL_WATCHED], n_goals, 0);
    Py_ssize_t based = items(aa[A_ROW_BASE], 8, "row_base");
    if (based < 0) goto fail;
    if (based && based != n) {
        PyErr_Format(PyExc_ValueError, "array row_base: %zd items, not 0 or one a fish (%zd)", based, n);
        goto fail;
    }
    if (based && !(PyArray_Check(aa[A_ROW_BASE]) && PyArray_TYPE((PyArrayObject *)aa[A_ROW_BASE]) == NPY_INT64)) {
        PyErr_SetString(PyExc_ValueError, "array row_base: not an int64 array"); /* (its bytes would be misread) */
        goto fail;
    }
    const int64_t *row_base = based ? take(&bs, aa[A_ROW_BASE], n, 8, 0, "row_base") : NULL;
    if (based && !row_base) goto fail;
    Py_ssize_t watched = 0;
    if (!(o_ended = new_array(k, -1, NPY_INT8))) goto fail;
    int8_t *ended = PyArray_DATA(o_ended);
    for (Py_ssize_t q = 0; q < k; q++) {
        int64_t i = fish[q];
        int g = goals[q];
        const char *bad = NULL;
        long long what = 0;
        int64_t p = params[q], row = 0;
        int64_t base = 0;
        if (i < 0 || i >= n) bad = "fish", what = i;
        else if (g < 0 || g >= n_goals) bad = "plan goal", what = g;
        else if (row_base && ((base = row_base[i]) < 0 || base >= rows)) bad = "row base", what = base;
        else if (goal_start[g] < 0 || goal_start[g] >= rows)
            bad = "plan goal", what = g;
        else if ((row = base + goal_start[g] + ((goal_variants[g] > 1 && p >= 0 && p < goal_variants[g]) ? p : 0)) >=
                 rows) /* past the table: the goal's rows, or (a joined world's) the fish's block of them */
            bad = row_base ? "row base" : "plan goal", what = row_base ? base : g;
        if (bad) {
            Py_DECREF(o_ended);
            return bad_index(&bs, bad, what);
        }
        /* what ended the plan being replaced (engine: Frame.ended) */
        ended[q] = plan_trigger[i] >= 0 && plan_end[i] <= v[AN_TICK] ? (int8_t)v[AN_T_HORIZON] : plan_trigger[i];
        watched += goal_watched[g] != 0;
        plan_goal[i] = (int8_t)g;
        plan_param[i] = params[q];
        plan_end[i] = horizons[q] > 0 ? (int32_t)(v[AN_TICK] + horizons[q]) : (int32_t)v[AN_NO_END];
        plan_trigger[i] = -1;
        no_food[i] = 0; /* counts ticks without food in view during this plan */
        if (g == G_HOLD) intent[i] = (int8_t)params[q];
        last_decision[i] = (int32_t)v[AN_TICK];
        decisions[i] += 1;
        for (int j = 0; j < 6; j++) w[6 * i + j] = table[6 * row + j] * personal[6 * i + j];
        for (int d = 0; d < nd; d++) bias[nd * i + d] = 0.0;
        if (goal_biased[g]) bias[nd * i + ((params[q] % nd) + nd) % nd] = direction;
        forage[i] = goal_eats[g] == 2;
        snacks[i] = goal_eats[g] != 0;
        rests[i] = goal_rests[g] != 0;
    }
    release_all(&bs);
    return Py_BuildValue("(Nn)", o_ended, watched);
fail:
    Py_XDECREF(o_ended);
    release_all(&bs);
    return NULL;
}

/* ------------------------------------------------------------------ components */

static const char components_doc[] =
    "components(n, i, j, labels)\n"
    "Connected components of ``n`` nodes joined by the pairs (i[k], j[k]) (int64 arrays): each node's\n"
    "label, written into ``labels`` (int64[n]), is the smallest node index of its component — the\n"
    "labels metrics._components and water's pocket sealing compute in numpy, by union-find.";

static int64_t find_root(int64_t *parent, int64_t a) {
    while (parent[a] != a) {
        parent[a] = parent[parent[a]];
        a = parent[a];
    }
    return a;
}

/* Join the components of a and b: the root of both is the smaller of their roots. */
static void link_fish(int64_t *parent, int64_t a, int64_t b) {
    a = find_root(parent, a);
    b = find_root(parent, b);
    if (a < b) parent[b] = a;
    else if (b < a) parent[a] = b;
}

static PyObject *components(PyObject *self, PyObject *args) {
    Py_ssize_t n;
    PyObject *o_i, *o_j, *o_labels;
    if (!PyArg_ParseTuple(args, "nOOO", &n, &o_i, &o_j, &o_labels)) return NULL;
    if (n < 0) return PyErr_Format(PyExc_ValueError, "components(): n must be >= 0");
    Bufs bs = {.n = 0};
    Py_ssize_t m = items(o_i, 8, "i");
    if (m < 0) return NULL;
    TAKE(ii, int64_t, o_i, m, 0);
    TAKE(jj, int64_t, o_j, m, 0);
    TAKE(labels, int64_t, o_labels, n, 1);
    for (Py_ssize_t k = 0; k < n; k++) labels[k] = k;
    for (Py_ssize_t k = 0; k < m; k++) {
        if (ii[k] < 0 || ii[k] >= n || jj[k] < 0 || jj[k] >= n) return bad_index(&bs, "pair node", ii[k] < 0 || ii[k] >= n ? ii[k] : jj[k]);
        link_fish(labels, ii[k], jj[k]);
    }
    for (Py_ssize_t k = 0; k < n; k++) labels[k] = find_root(labels, k);
    release_all(&bs);
    Py_RETURN_NONE;
fail:
    release_all(&bs);
    return NULL;
}

/* ------------------------------------------------------------------ neighbours */

static const char neighbours_doc[] =
    "neighbours(x, y, link, nnd, labels)\n"
    "For fish at (x[k], y[k]) (int64 arrays): each one's nearest-neighbour distance (Euclidean, into\n"
    "``nnd``, float64[n]) and its cluster label (into ``labels``, int64[n]: the smallest index of\n"
    "the fish linked to it through chains of fish within ``link`` cells, Chebyshev) — what\n"
    "metrics.nn_and_labels computes in numpy, from a grid of the fish: the nearest one is searched\n"
    "ring by ring around each fish, and stops once no farther ring can hold a nearer one.";


#define NEIGHBOURS_BY_PAIRS 128 /* up to this many fish, neighbours() compares every pair (no grid) */
static PyObject *neighbours(PyObject *self, PyObject *args) {
    PyObject *o_x, *o_y, *o_nnd, *o_labels;
    Py_ssize_t link;
    if (!PyArg_ParseTuple(args, "OOnOO", &o_x, &o_y, &link, &o_nnd, &o_labels)) return NULL;
    if (link < 0) return PyErr_Format(PyExc_ValueError, "neighbours(): link must be >= 0");
    Bufs bs = {.n = 0};
    int32_t *head = NULL, *next = NULL; /* (fish indexes: n < 2^31, checked) */
    Py_ssize_t n = items(o_x, 8, "x");
    if (n < 0) return NULL;
    TAKE(x, int64_t, o_x, n, 0);
    TAKE(y, int64_t, o_y, n, 0);
    TAKE(nnd, double, o_nnd, n, 1);
    TAKE(labels, int64_t, o_labels, n, 1);
    if (n == 0) goto done;
    int64_t x0 = x[0], x1 = x[0], y0 = y[0], y1 = y[0];
    for (Py_ssize_t k = 1; k < n; k++) {
        x0 = x[k] < x0 ? x[k] : x0;
        x1 = x[k] > x1 ? x[k] : x1;
        y0 = y[k] < y0 ? y[k] : y0;
        y1 = y[k] > y1 ? y[k] : y1;
    }
    /* the spread, unsigned: x1 - x0 of far-apart int64 values would wrap around as a signed number */
    if ((uint64_t)x1 - (uint64_t)x0 >= 1000000 || (uint64_t)y1 - (uint64_t)y0 >= 1000000) {
        release_all(&bs);
        return PyErr_Format(PyExc_ValueError, "neighbours(): fish spread over more than 1000000 cells");
    }
    int64_t gw = x1 - x0 + 1, gh = y1 - y0 + 1;
    if (gw * gh > 100000000) {
        release_all(&bs);
        return PyErr_Format(PyExc_ValueError, "neighbours(): fish spread over %lld x %lld cells", (long long)gw,
                            (long long)gh);
    }
    if (n > INT32_MAX) {
        release_all(&bs);
        return PyErr_Format(PyExc_ValueError, "neighbours(): %zd fish", n);
    }
    for (Py_ssize_t k = 0; k < n; k++) labels[k] = k;
    if (n <= NEIGHBOURS_BY_PAIRS) {
        /* A few fish (a sample of the default tank): every pair, without a grid to clear and fill.
           The same figures: the nearest of all the others, and the components of the linked pairs
           (each labelled by its smallest fish, whatever order the pairs are linked in). */
        for (Py_ssize_t k = 0; k < n; k++) {
            int64_t best = INT64_MAX;
            for (Py_ssize_t o = 0; o < n; o++) {
                if (o == k) continue;
                int64_t dx = x[o] - x[k], dy = y[o] - y[k], d2 = dx * dx + dy * dy;
                if (d2 < best) best = d2;
                if (o > k && (dx < 0 ? -dx : dx) <= link && (dy < 0 ? -dy : dy) <= link) link_fish(labels, k, o);
            }
            nnd[k] = best == INT64_MAX ? INFINITY : sqrt((double)best); /* (one fish: no other, as the grid's) */
        }
        for (Py_ssize_t k = 0; k < n; k++) labels[k] = find_root(labels, k);
        goto done;
    }
    head = PyMem_Malloc(sizeof(int32_t) * (size_t)(gw * gh));
    next = PyMem_Malloc(sizeof(int32_t) * (size_t)n);
    if (!head || !next) {
        PyErr_NoMemory();
        goto fail;
    }
    memset(head, 0xFF, sizeof(int32_t) * (size_t)(gw * gh)); /* every cell -1: no fish */
    for (Py_ssize_t k = n - 1; k >= 0; k--) { /* each cell's list in index order */
        int64_t c = (y[k] - y0) * gw + (x[k] - x0);
        next[k] = head[c];
        head[c] = (int32_t)k;
    }
    int64_t reach = gw > gh ? gw : gh;
    for (Py_ssize_t k = 0; k < n; k++) {
        int64_t cx = x[k] - x0, cy = y[k] - y0, best = INT64_MAX;
        /* ring by ring: while a nearer fish may still be found, and while within the link */
        for (int64_t r = 0; r <= reach; r++) {
            int nearer = best == INT64_MAX || r * r < best; /* a fish in ring r is r or more cells away */
            if (!nearer && r > link) break;
            for (int64_t dy = -r; dy <= r; dy++) {
                int64_t yy = cy + dy;
                if (yy < 0 || yy >= gh) continue;
                int edge = dy == -r || dy == r;
                for (int64_t dx = -r; dx <= r; dx += edge ? 1 : 2 * r) {
                    int64_t xx = cx + dx;
                    if (xx >= 0 && xx < gw) {
                        for (int64_t o = head[yy * gw + xx]; o >= 0; o = next[o]) {
                            if (o == k) continue;
                            int64_t d2 = dx * dx + dy * dy;
                            if (nearer && d2 < best) best = d2;
                            if (r <= link && o > k) link_fish(labels, k, o);
                        }
                    }
                    if (r == 0) break;
                }
            }
        }
        nnd[k] = best == INT64_MAX ? INFINITY : sqrt((double)best);
    }
    for (Py_ssize_t k = 0; k < n; k++) labels[k] = find_root(labels, k);
done:
    PyMem_Free(head);
    PyMem_Free(next);
    release_all(&bs);
    Py_RETURN_NONE;
fail:
    PyMem_Free(head);
    PyMem_Free(next);
    release_all(&bs);
    return NULL;
}

/* ------------------------------------------------------------------ school */

static const char school_doc[] =
    "school(xy, heading, moving, labels, sizes, members, figures, ids, full, prev) -> members in the school\n"
    "A sample's collective figures (observe/metrics.Sample) of the n fish in the water, from their\n"
    "positions ``xy`` (float64[n, 2]), headings (int8[n]), who moved lately (bool[n]) and cluster\n"
    "labels (int64[n], from neighbours): fish per label into ``sizes`` (int64[n]); the largest moving,\n"
    "aligned school's fish (indexes into the n, ascending) into the front of ``members`` (int64[n]);\n"
    "into ``figures`` (float64[8]): polarization, rotation, clusters of 2 or more, the largest\n"
    "cluster, the school's polarization, rotation and share that moved, and how far its centre moved\n"
    "since the last sample: the n fish are the fish ``ids`` (int64[n]) of the whole tank's positions\n"
    "``full`` (float64[N, 2]), and ``prev`` is ``full`` at the last sample (or None: 0). The same\n"
    "numbers as the numpy reference (metrics.polarization, rotation, largest_school, school_figures,\n"
    "Sample.school_travel), bit for bit:\n"
    "means over fish are summed in numpy's orders (its axis-0 mean one row after another, its 1-D\n"
    "sums pairwise).";

/* numpy's pairwise sum of a contiguous float64 array (numpy/_core/src/umath/loops_utils.h). */
static double np_pairwise(const double *a, Py_ssize_t n) {
    if (n < 8) {
        double res = 0.;
        for (Py_ssize_t i = 0; i < n; i++) res += a[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        for (int j = 0; j < 8; j++) r[j] = a[j];
        Py_ssize_t i;
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++) r[j] += a[i + j];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i];
        return res;
    }
    Py_ssize_t n2 = n / 2;
    n2 -= n2 % 8;
    return np_pairwise(a, n2) + np_pairwise(a + n2, n - n2);
}

static const double UNIT_X[4] = {0., 0., -1., 1.}, UNIT_Y[4] = {-1., 1., 0., 0.}; /* actions.MOVE_DXDY */

/* Polarization of the fish ``idx[0..m)`` (all n when idx is NULL): |Σ unit headings| / m. */
static double polarization_of(const int8_t *heading, const int64_t *idx, Py_ssize_t m) {
    long long c[4] = {0, 0, 0, 0};
    for (Py_ssize_t k = 0; k < m; k++) c[heading[idx ? idx[k] : k] & 3]++;
    return hypot((double)(c[3] - c[2]), (double)(c[1] - c[0])) / (double)(m > 1 ? m : 1);
}

/* Couzin's milling |Σ r̂ × u| / m around the fish's centre, as metrics.rotation; ``cross`` scratch[m]. */
static double rotation_of(const double *xy, const int8_t *heading, const int64_t *idx, Py_ssize_t m, double *cross) {
    if (m < 2) return 0.0;
    double mx = 0., my = 0.;
    for (Py_ssize_t k = 0; k < m; k++) {
        Py_ssize_t i = idx ? idx[k] : k;
        mx += xy[2 * i];
        my += xy[2 * i + 1];
    }
    mx /= (double)m;
    my /= (double)m;
    Py_ssize_t kept = 0;
    for (Py_ssize_t k = 0; k < m; k++) {
        Py_ssize_t i = idx ? idx[k] : k;
        double rx = xy[2 * i] - mx, ry = xy[2 * i + 1] - my, norm = hypot(rx, ry);
        if (!(norm > 0)) continue;
        rx /= norm;
        ry /= norm;
        int h = heading[i] & 3;
        cross[kept++] = rx * UNIT_Y[h] - ry * UNIT_X[h];
    }
    return fabs(np_pairwise(cross, kept)) / (double)m;
}

/* Whether the byte ranges [a, a + alen) and [b, b + blen) share memory. */
static int overlap(const void *a, Py_ssize_t alen, const void *b, Py_ssize_t blen) {
    const char *x = a, *y = b;
    return x < y + blen && y < x + alen;
}

static PyObject *school(PyObject *self, PyObject *args) {
    PyObject *o_xy, *o_heading, *o_moving, *o_labels, *o_sizes, *o_members, *o_figures, *o_ids, *o_full, *o_prev;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOO", &o_xy, &o_heading, &o_moving, &o_labels, &o_sizes, &o_members,
                          &o_figures, &o_ids, &o_full, &o_prev))
        return NULL;
    Bufs bs = {.n = 0};
    double *scratch = NULL;
    Py_ssize_t n = items(o_heading, 1, "heading");
    if (n < 0) return NULL;
    TAKE(xy, double, o_xy, 2 * n, 0);
    TAKE(heading, int8_t, o_heading, n, 0);
    TAKE(moving, uint8_t, o_moving, n, 0);
    TAKE(labels, int64_t, o_labels, n, 0);
    TAKE(sizes, int64_t, o_sizes, n, 1);
    TAKE(members, int64_t, o_members, n, 1);
    TAKE(fig, double, o_figures, 8, 1);
    TAKE(ids, int64_t, o_ids, n, 0);
    Py_ssize_t whole = items(o_full, 16, "full");
    if (whole < 0) goto fail;
    TAKE(full, double, o_full, 2 * whole, 0);
    double *prev = NULL;
    if (o_prev != Py_None) {
        TAKE(prev_, double, o_prev, 2 * whole, 0);
        prev = prev_;
    }
    for (Py_ssize_t k = 0; k < n; k++)
        if (ids[k] < 0 || ids[k] >= whole) return bad_index(&bs, "fish id", ids[k]);
    { /* an output that is also an input (or another output) would be read after it was written */
        const void *in[7] = {xy, heading, moving, labels, ids, full, prev};
        const Py_ssize_t in_len[7] = {16 * n, n, n, 8 * n, 8 * n, 16 * whole, prev ? 16 * whole : 0};
        const void *out[3] = {sizes, members, fig};
        const Py_ssize_t out_len[3] = {8 * n, 8 * n, 64};
        for (int o = 0; o < 3; o++) {
            int shared = 0;
            for (int j = 0; j < 7; j++) shared |= overlap(out[o], out_len[o], in[j], in_len[j]);
            for (int j = o + 1; j < 3; j++) shared |= overlap(out[o], out_len[o], out[j], out_len[j]);
            if (shared) {
                release_all(&bs);
                return PyErr_Format(PyExc_ValueError, "school(): an output array shares memory with another array");
            }
        }
    }
    scratch = PyMem_Malloc(sizeof(double) * (size_t)(3 * (n > 0 ? n : 1)));
    if (!scratch) {
        PyErr_NoMemory();
        goto fail;
    }
    double *moved = scratch + n, *sx = moved, *sy = scratch + 2 * n; /* (moved, then sx reuse: see below) */
    for (Py_ssize_t k = 0; k < n; k++) {
        if (labels[k] < 0 || labels[k] >= n || heading[k] < 0 || heading[k] > 3) {
            PyMem_Free(scratch);
            return labels[k] < 0 || labels[k] >= n ? bad_index(&bs, "label", labels[k])
                                                   : bad_index(&bs, "heading", heading[k]);
        }
        sizes[k] = 0;
    }
    for (Py_ssize_t k = 0; k < n; k++) sizes[labels[k]]++;
    long long clusters = 0, largest = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        clusters += sizes[k] >= 2;
        largest = sizes[k] > largest ? sizes[k] : largest;
    }
    /* the candidates (metrics._moving_clusters): >= 3 fish, half of them moved lately, aligned */
    for (Py_ssize_t k = 0; k < n; k++) moved[k] = 0.;
    for (Py_ssize_t k = 0; k < n; k++) moved[labels[k]] += moving[k] ? 1. : 0.;
    Py_ssize_t best = -1;
    for (Py_ssize_t l = 0; l < n; l++) { /* (moved[l] read before sx[l] overwrites it) */
        int ok = sizes[l] >= 3 && moved[l] * 2 >= (double)sizes[l];
        scratch[l] = ok; /* scratch's first third: the label is a candidate */
    }
    for (Py_ssize_t k = 0; k < n; k++) sx[k] = sy[k] = 0.;
    for (Py_ssize_t k = 0; k < n; k++) {
        int h = heading[k] & 3;
        sx[labels[k]] += UNIT_X[h];
        sy[labels[k]] += UNIT_Y[h];
    }
    for (Py_ssize_t l = 0; l < n; l++) {
        if (!scratch[l]) continue;
        double floor_ = 0.5 * (double)(sizes[l] > 1 ? sizes[l] : 1) - 1e-9; /* metrics.SCHOOL_ALIGNED */
        if (hypot(sx[l], sy[l]) >= floor_ && (best < 0 || sizes[l] > sizes[best])) best = l;
    }
    Py_ssize_t m = 0;
    if (best >= 0)
        for (Py_ssize_t k = 0; k < n; k++)
            if (labels[k] == best) members[m++] = k;
    fig[0] = polarization_of(heading, NULL, n);
    fig[1] = rotation_of(xy, heading, NULL, n, scratch);
    fig[2] = (double)clusters;
    fig[3] = (double)largest;
    if (m) {
        long long moved_members = 0;
        for (Py_ssize_t k = 0; k < m; k++) moved_members += moving[members[k]] != 0;
        fig[4] = polarization_of(heading, members, m);
        fig[5] = rotation_of(xy, heading, members, m, scratch);
        fig[6] = (double)moved_members / (double)m;
    } else {
        fig[4] = fig[5] = fig[6] = 0.;
    }
    fig[7] = 0.;
    if (m && prev) { /* the school's centre now minus at the last sample (numpy's axis-0 means: in order) */
        double nx = 0., ny = 0., px = 0., py = 0.;
        for (Py_ssize_t k = 0; k < m; k++) {
            int64_t i = ids[members[k]];
            nx += full[2 * i];
            ny += full[2 * i + 1];
        }
        for (Py_ssize_t k = 0; k < m; k++) {
            int64_t i = ids[members[k]];
            px += prev[2 * i];
            py += prev[2 * i + 1];
        }
        fig[7] = hypot(nx / (double)m - px / (double)m, ny / (double)m - py / (double)m);
    }
    PyMem_Free(scratch);
    release_all(&bs);
    return PyLong_FromSsize_t(m);
fail:
    PyMem_Free(scratch);
    release_all(&bs);
    return NULL;
}

/* ------------------------------------------------------------------ tally */

static const char tally_doc[] =
    "tally(arrays, ints)\n"
    "The metrics' per-tick bookkeeping (observe/metrics.Metrics.observe): the executed actions of the\n"
    "fish in the water into the action window, (conflicts, intents) into the conflict window, each\n"
    "fish's fish-in-view into the schooling window, the tick of each successful move; writes the\n"
    "tick's fish per move outcome into ``arrays['outcomes']`` and, when a move was refused or\n"
    "bumped, each such fish's square into the ``heat`` map. Returns (fish in the water, the first\n"
    "fish of the longest stuck streak).\n"
    "By name: exactly the names of TALLY_ARRAYS and TALLY_INTS.";

enum { T_EXECUTED, T_OUTCOME, T_PRESENT, T_NEIGHBOURS, T_STUCK, T_X, T_Y, T_ACTIONS, T_ACTION_SUM, T_CONFLICTS,
       T_CONFLICT_SUM, T_NB, T_NB_SUM, T_LAST_MOVED, T_HEAT, T_OUTCOMES, N_T, T_HERE_WORST = N_T, N_TT };
static const char *T_NAMES[N_TT] = {"executed", "move_outcome", "present", "neighbours", "stuck", "x", "y", "actions",
                                    "action_sum", "conflicts", "conflict_sum", "nb", "nb_sum", "last_moved", "heat",
                                    "outcomes", "here_worst"}; /* (tally: the first N_T; tally_tanks: all) */
enum { TI_SLOT, TI_NSLOT, TI_WINDOW, TI_SCHOOLING_WINDOW, TI_TICKS, TI_HOTSPOT_CELL, TI_HEAT_WIDTH, TI_HEAT_HEIGHT,
       N_TI, TI_TANKS = N_TI, N_TTI };
static const char *TI_NAMES[N_TTI] = {"slot", "nslot", "window", "schooling_window", "ticks", "hotspot_cell",
                                      "heat_width", "heat_height", "tanks"};

/* One tank's tally (the arrays its own, ``n`` fish, ``na`` actions); -1 with the bad index's
   name and value in ``*what`` and ``*value``. */
static int tally_one(const int8_t *executed, const int8_t *outcome, const uint8_t *present, const int16_t *nbv,
                     const int32_t *stuck, const int64_t *xs, const int64_t *ys, int64_t *actions, int64_t *action_sum,
                     int64_t *conflicts, int64_t *conflict_sum, int64_t *nb, int64_t *nb_sum, int64_t *last_moved,
                     int64_t *heat, int64_t *outcomes, Py_ssize_t n, Py_ssize_t na, const long long *v,
                     int64_t *here_out, int64_t *worst_out, const char **what, long long *value) {
    int64_t counts[MAX_MOVES + 2] = {0}, here = 0, worst = 0;
    for (int k = 0; k < 5; k++) outcomes[k] = 0;
    int64_t *nb_row = nb + v[TI_NSLOT] * n;
    for (Py_ssize_t i = 0; i < n; i++) {
        int e = executed[i], o = outcome[i];
        if (e < 0 || e >= na) return *what = "action", *value = e, -1;
        if (o < 0 || o > 4) return *what = "move outcome", *value = o, -1;
        if (present[i]) {
            counts[e] += 1;
            here += 1;
        }
        outcomes[o] += 1;
        if (o == MOVED) last_moved[i] = v[TI_TICKS];
        nb_sum[i] += nbv[i] - nb_row[i];
        nb_row[i] = nbv[i];
        if (stuck[i] > stuck[worst]) worst = i;
    }
    if (outcomes[CROWDED] + outcomes[OCCUPIED] + outcomes[BLOCKED])
        for (Py_ssize_t i = 0; i < n; i++) {
            if (outcome[i] < BLOCKED) continue;
            int64_t hx = xs[i] / v[TI_HOTSPOT_CELL], hy = ys[i] / v[TI_HOTSPOT_CELL];
            if (xs[i] < 0 || ys[i] < 0 || hx >= v[TI_HEAT_WIDTH] || hy >= v[TI_HEAT_HEIGHT])
                return *what = "fish position", *value = xs[i] < 0 || hx >= v[TI_HEAT_WIDTH] ? xs[i] : ys[i], -1;
            heat[hy * v[TI_HEAT_WIDTH] + hx] += 1;
        }
    int64_t *a_row = actions + v[TI_SLOT] * na, *c_row = conflicts + v[TI_SLOT] * 2;
    for (int k = 0; k < na; k++) {
        action_sum[k] += counts[k] - a_row[k];
        a_row[k] = counts[k];
    }
    int64_t refused = outcomes[CROWDED] + outcomes[OCCUPIED];
    conflict_sum[0] += refused - c_row[0];
    conflict_sum[1] += here - c_row[1];
    c_row[0] = refused;
    c_row[1] = here;
    *here_out = here, *worst_out = worst;
    return 0;
}

/* The tally's arguments checked and its arrays borrowed, for ``tanks`` tanks of ``n`` fish each
   (the per-fish arrays tanks * n long, each tank's windows, sums and heat map one after another);
   then every tank tallied in turn. ``here_worst``: (fish in the water, longest stuck) a tank. */
static int tally_all(Bufs *bs_, PyObject **ta, const long long *v, Py_ssize_t tanks, Py_ssize_t n, int64_t *here_worst) {
#define bs (*bs_)
    if (v[TI_SLOT] < 0 || v[TI_SLOT] >= v[TI_WINDOW] || v[TI_NSLOT] < 0 || v[TI_NSLOT] >= v[TI_SCHOOLING_WINDOW]) {
        PyErr_Format(PyExc_ValueError, "tally(): slot out of its window");
        return -1;
    }
    if (v[TI_HOTSPOT_CELL] <= 0 || v[TI_HEAT_WIDTH] < 1 || v[TI_HEAT_HEIGHT] < 1) {
        PyErr_Format(PyExc_ValueError, "tally(): hotspot_cell and the heat map's size must be > 0");
        return -1;
    }
    Py_ssize_t w = v[TI_WINDOW], sw = v[TI_SCHOOLING_WINDOW], N = tanks * n,
               hs = v[TI_HEAT_WIDTH] * v[TI_HEAT_HEIGHT];
    TAKE(executed, int8_t, ta[T_EXECUTED], N, 0);
    TAKE(outcome, int8_t, ta[T_OUTCOME], N, 0);
    TAKE(present, uint8_t, ta[T_PRESENT], N, 0);
    TAKE(nbv, int16_t, ta[T_NEIGHBOURS], N, 0);
    /* the actions: a square tank's six, a hexagonal tank's eight (its six moves, eat, rest) */
    Py_ssize_t na = items(ta[T_ACTION_SUM], 8, "action_sum");
    if (na < 0) goto fail;
    na /= tanks;
    if (na != 6 && na != 8) {
        PyErr_Format(PyExc_ValueError, "array action_sum: %zd actions, not 6 or 8", na);
        goto fail;
    }
    TAKE(actions, int64_t, ta[T_ACTIONS], tanks * w * na, 1);
    TAKE(action_sum, int64_t, ta[T_ACTION_SUM], tanks * na, 1);
    TAKE(conflicts, int64_t, ta[T_CONFLICTS], tanks * w * 2, 1);
    TAKE(conflict_sum, int64_t, ta[T_CONFLICT_SUM], tanks * 2, 1);
    TAKE(nb, int64_t, ta[T_NB], tanks * sw * n, 1);
    TAKE(nb_sum, int64_t, ta[T_NB_SUM], N, 1);
    TAKE(last_moved, int64_t, ta[T_LAST_MOVED], N, 1);
    TAKE(outcomes, int64_t, ta[T_OUTCOMES], tanks * 5, 1);
    TAKE(stuck, int32_t, ta[T_STUCK], N, 0);
    TAKE(xs, int64_t, ta[T_X], N, 0);
    TAKE(ys, int64_t, ta[T_Y], N, 0);
    TAKE(heat, int64_t, ta[T_HEAT], tanks * hs, 1);
    for (Py_ssize_t t = 0; t < tanks; t++) {
        const char *what = NULL;
        long long value = 0;
        Py_ssize_t f = t * n;
        if (tally_one(executed + f, outcome + f, present + f, nbv + f, stuck + f, xs + f, ys + f,
                      actions + t * w * na, action_sum + t * na, conflicts + t * w * 2, conflict_sum + t * 2,
                      nb + t * sw * n, nb_sum + f, last_moved + f, heat + t * hs, outcomes + t * 5, n, na, v,
                      here_worst + 2 * t, here_worst + 2 * t + 1, &what, &value) < 0) {
            bad_index(&bs, what, value);
            return -1;
        }
    }
    return 0;
fail:
    return -1;
#undef bs
}

static PyObject *tally(PyObject *self, PyObject *args) {
    PyObject *arrays, *ints, *ta[N_T];
    long long v[N_TI];
    if (!PyArg_ParseTuple(args, "OO", &arrays, &ints)) return NULL;
    if (numbers_by_name(ints, TI_NAMES, N_TI, v, NULL, N_TI, "tally", "TALLY_INTS") < 0 ||
        by_name(arrays, T_NAMES, N_T, ta, "tally", "array", "TALLY_ARRAYS") < 0)
        return NULL;
    Bufs bs = {.n = 0};
    Py_ssize_t n = items(ta[T_EXECUTED], 1, "executed");
    if (n < 0) return NULL;
    int64_t hw[2];
    int bad = tally_all(&bs, ta, v, 1, n, hw);
    release_all(&bs);
    if (bad) return NULL;
    return Py_BuildValue("LL", (long long)hw[0], (long long)hw[1]);
}

static const char tally_tanks_doc[] =
    "tally_tanks(arrays, ints)\n"
    "tally() for ``ints['tanks']`` tanks of one size at once (a joined world's, session/joined.py): the\n"
    "per-fish arrays every tank's fish one tank after another, each tank's windows, sums, heat map and\n"
    "``outcomes`` one after another (a leading tank axis), and each tank's (fish in the water, first\n"
    "fish of its longest stuck streak) written into ``here_worst`` (int64[tanks, 2]). Every tank the\n"
    "same slots and tick. By name: TALLY_ARRAYS and ``here_worst``; TALLY_INTS and ``tanks``.";

static PyObject *tally_tanks(PyObject *self, PyObject *args) {
    PyObject *arrays, *ints, *ta[N_TT];
    long long v[N_TTI];
    if (!PyArg_ParseTuple(args, "OO", &arrays, &ints)) return NULL;
    if (numbers_by_name(ints, TI_NAMES, N_TTI, v, NULL, N_TTI, "tally_tanks", "TALLY_INTS + tanks") < 0 ||
        by_name(arrays, T_NAMES, N_TT, ta, "tally_tanks", "array", "TALLY_ARRAYS + here_worst") < 0)
        return NULL;
    if (v[TI_TANKS] < 1) return out_of_range("tanks", v[TI_TANKS]);
    Bufs bs = {.n = 0};
    Py_ssize_t all = items(ta[T_EXECUTED], 1, "executed");
    if (all < 0) return NULL;
    if (all % v[TI_TANKS]) return PyErr_Format(PyExc_ValueError, "tally_tanks(): %zd fish is not %lld tanks' fish",
                                               all, v[TI_TANKS]);
    int64_t *hw = take(&bs, ta[T_HERE_WORST], 2 * v[TI_TANKS], 8, 1, "here_worst");
    int bad = !hw || tally_all(&bs, ta, v, v[TI_TANKS], all / v[TI_TANKS], hw);
    release_all(&bs);
    if (bad) return NULL;
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ deeds */

static const char deeds_doc[] =
    "deeds(arrays, ints)\n"
    "The word-and-deed tally of every open plan for one tick (observe/worddeed.WordDeed.observe):\n"
    "ticks, successful moves, meals (an eat that raised energy), ticks with company and, for\n"
    "single-action plans (goal hold), ticks the action worked. By name: exactly the names of\n"
    "DEEDS_ARRAYS and DEEDS_INTS.";

enum { D_OPEN, D_OUTCOME, D_EXECUTED, D_ENERGY, D_ENERGY_BEFORE, D_NEIGHBOURS, D_TABLE, N_D };
static const char *D_NAMES[N_D] = {"open", "move_outcome", "executed", "energy", "energy_before", "neighbours",
                                   "table"};
enum { DI_HOLDS, DI_MOVES, N_DI };
static const char *DI_NAMES[N_DI] = {"holds", "moves"}; /* moves: 4, or a hexagonal tank's 6 */
/* the rows of ``table`` (int64[N_DC, n]): worddeed._COLS */
enum { DC_TICK, DC_GOAL, DC_PARAM, DC_X0, DC_Y0, DC_NB0, DC_TICKS, DC_MOVED, DC_ATE, DC_COMPANY, DC_WORKED, N_DC };
static const char *DC_NAMES[N_DC] = {"tick", "goal", "param", "x0", "y0", "nb0", "ticks", "moved", "ate",
                                     "company", "worked"};

static PyObject *deeds(PyObject *self, PyObject *args) {
    PyObject *arrays, *ints, *da[N_D];
    long long v[N_DI];
    if (!PyArg_ParseTuple(args, "OO", &arrays, &ints)) return NULL;
    if (numbers_by_name(ints, DI_NAMES, N_DI, v, NULL, N_DI, "deeds", "DEEDS_INTS") < 0 ||
        by_name(arrays, D_NAMES, N_D, da, "deeds", "array", "DEEDS_ARRAYS") < 0)
        return NULL;
    if (v[DI_MOVES] != 4 && v[DI_MOVES] != 6) return out_of_range("moves", v[DI_MOVES]);
    const int nd = (int)v[DI_MOVES];
    Bufs bs = {.n = 0};
    Py_ssize_t n = items(da[D_OPEN], 1, "open");
    if (n < 0) return NULL;
    TAKE(open, uint8_t, da[D_OPEN], n, 0);
    TAKE(outcome, int8_t, da[D_OUTCOME], n, 0);
    TAKE(executed, int8_t, da[D_EXECUTED], n, 0);
    TAKE(energy, int32_t, da[D_ENERGY], n, 0);
    TAKE(before, int32_t, da[D_ENERGY_BEFORE], n, 0);
    TAKE(nbv, int16_t, da[D_NEIGHBOURS], n, 0);
    TAKE(table, int64_t, da[D_TABLE], N_DC * n, 1);
    const int64_t *goal = table + DC_GOAL * n, *param = table + DC_PARAM * n;
    int64_t *ticks = table + DC_TICKS * n, *moved = table + DC_MOVED * n, *ate = table + DC_ATE * n,
            *company = table + DC_COMPANY * n, *worked = table + DC_WORKED * n;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!open[i]) continue;
        int mv = outcome[i] == MOVED, eat = executed[i] == nd && energy[i] > before[i];  /* nd: eat */
        ticks[i] += 1;
        moved[i] += mv;
        ate[i] += eat;
        company[i] += nbv[i] > 0;
        if (v[DI_HOLDS] && goal[i] == G_HOLD) {
            int64_t act = param[i];
            worked[i] += act == nd ? eat : (act < nd ? mv : executed[i] == act);
        }
    }
    release_all(&bs);
    Py_RETURN_NONE;
fail:
    release_all(&bs);
    return NULL;
}

/* ------------------------------------------------------------------ judge */

static const char judge_doc[] =
    "judge(arrays, ints) -> (the change in open single-action plans, slots) or None\n"
    "A batch of new plans without words (observe/worddeed.WordDeed.observe; its Python, plan by plan,\n"
    "is the reference): fish by fish in the batch's order, the fish's open plan, if any, is judged\n"
    "as worddeed's _close does (its deed check, counted into ``counts`` and kept in the fish's\n"
    "``ring``; the slot written goes into ``slots``, a new int64 array, -1 for none) and the new plan\n"
    "is opened in ``table``. A plan that came with words is never judged here (its words are read in\n"
    "Python): when one of the fish has such a plan open (``said``), nothing is done and None returned.\n"
    "By name: exactly the names of JUDGE_ARRAYS and JUDGE_INTS; the deed checks are JUDGE_DEEDS.";

enum { J_FISH, J_GOALS, J_PARAMS, J_OPEN, J_SAID, J_FOOD0, J_TABLE, J_COUNTS, J_RING, J_RING_N, J_DEED_OF, J_X, J_Y,
       J_NB_PREV, J_NEIGHBOURS, N_J };
static const char *J_NAMES[N_J] = {"fish", "goals", "params", "open", "said", "food0", "table", "counts", "ring",
                                   "ring_n", "deed_of", "x", "y", "nb_prev", "neighbours"};
enum { JI_TICK, JI_RECENT, JI_CROWD, JI_AWAY_KINDS, JI_MOVES, N_JI };
static const char *JI_NAMES[N_JI] = {"tick", "recent", "crowd", "away_kinds", "moves"}; /* moves: 4, or 6 */
enum { DEED_ATE, DEED_COMPANY, DEED_ALONG, DEED_STILL, DEED_AWAY, DEED_WORKED, N_DEEDS };
static const char *DEED_NAMES[N_DEEDS] = {"ate", "company", "along", "still", "away", "worked"}; /* plantypes.DEEDS */
#define N_COUNTS 7 /* worddeed.WordDeed.counts' columns */
#define N_RING 7   /* worddeed._RING */

static PyObject *judge_bad(Bufs *bs, PyArrayObject *made, const char *what, long long value) {
    Py_XDECREF(made);
    return bad_index(bs, what, value);
}

static PyObject *judge(PyObject *self, PyObject *args) {
    PyObject *arrays, *ints, *ja[N_J];
    long long v[N_JI];
    if (!PyArg_ParseTuple(args, "OO", &arrays, &ints)) return NULL;
    if (numbers_by_name(ints, JI_NAMES, N_JI, v, NULL, N_JI, "judge", "JUDGE_INTS") < 0 ||
        by_name(arrays, J_NAMES, N_J, ja, "judge", "array", "JUDGE_ARRAYS") < 0)
        return NULL;
    const long long tick = v[JI_TICK], recent = v[JI_RECENT], crowd = v[JI_CROWD], kinds = v[JI_AWAY_KINDS];
    if (recent < 1 || recent > 4096 || kinds < 1)
        return PyErr_Format(PyExc_ValueError, "judge(): recent must be 1..4096 and away_kinds >= 1");
    Bufs bs = {.n = 0};
    PyArrayObject *o_slots = NULL; /* made here, returned */
    Py_ssize_t n = items(ja[J_OPEN], 1, "open"), k = items(ja[J_FISH], 8, "fish"),
               goals_known = items(ja[J_DEED_OF], 8, "deed_of");
    if (n < 0 || k < 0 || goals_known < 0) return NULL;
    TAKE(fish, int64_t, ja[J_FISH], k, 0);
    TAKE(goals, int8_t, ja[J_GOALS], k, 0);
    TAKE(params, int16_t, ja[J_PARAMS], k, 0);
    TAKE(open, uint8_t, ja[J_OPEN], n, 1);
    TAKE(said, uint8_t, ja[J_SAID], n, 1);
    TAKE(food0, int16_t, ja[J_FOOD0], n, 1);
    TAKE(table, int64_t, ja[J_TABLE], N_DC * n, 1);
    TAKE(counts, int64_t, ja[J_COUNTS], N_COUNTS * n, 1);
    TAKE(ring, int64_t, ja[J_RING], n * recent * N_RING, 1);
    TAKE(ring_n, int64_t, ja[J_RING_N], n, 1);
    TAKE(deed_of, int64_t, ja[J_DEED_OF], goals_known, 0);
    TAKE(x, int64_t, ja[J_X], n, 0);
    TAKE(y, int64_t, ja[J_Y], n, 0);
    TAKE(nb_prev, int16_t, ja[J_NB_PREV], n, 0);
    TAKE(nb, int16_t, ja[J_NEIGHBOURS], n, 0);
    for (Py_ssize_t q = 0; q < k; q++) /* a plan with words was opened for one of them: not judged here */
        if (fish[q] >= 0 && fish[q] < n && said[fish[q]]) {
            release_all(&bs);
            Py_RETURN_NONE;
        }
    if (!(o_slots = new_array(k, -1, NPY_INT64))) goto fail;
    int64_t *slots = PyArray_DATA(o_slots);
    { /* an array written here that is also read here would change what was checked */
        const void *in[8] = {fish, goals, params, deed_of, x, y, nb_prev, nb};
        const Py_ssize_t in_len[8] = {8 * k, k, 2 * k, 8 * goals_known, 8 * n, 8 * n, 2 * n, 2 * n};
        const void *out[8] = {open, said, food0, table, counts, ring, ring_n, slots};
        const Py_ssize_t out_len[8] = {n, n, 2 * n, 8 * N_DC * n, 8 * N_COUNTS * n, 8 * n * recent * N_RING, 8 * n,
                                       8 * k};
        for (int o = 0; o < 8; o++) {
            int shared = 0;
            for (int j = 0; j < 8; j++) shared |= overlap(out[o], out_len[o], in[j], in_len[j]);
            for (int j = o + 1; j < 8; j++) shared |= overlap(out[o], out_len[o], out[j], out_len[j]);
            if (shared) {
                Py_XDECREF(o_slots);
                release_all(&bs);
                return PyErr_Format(PyExc_ValueError, "judge(): an array written shares memory with another array");
            }
        }
    }
    for (Py_ssize_t q = 0; q < k; q++)
        if (fish[q] < 0 || fish[q] >= n) return judge_bad(&bs, o_slots, "fish", fish[q]);
    static const int64_t DX[4] = {0, 0, -1, 1}, DY[4] = {-1, 1, 0, 0}; /* actions.MOVE_DXDY */
    /* a hexagonal tank's six ways on screen (grid.HEX.units) */
    const double S3 = sqrt(3.0) / 2, HX[6] = {1.0, 0.5, -0.5, -1.0, -0.5, 0.5}, HY[6] = {0.0, -S3, -S3, 0.0, S3, S3};
    const long long nd = v[JI_MOVES];
    if (nd != 4 && nd != 6) return judge_bad(&bs, o_slots, "moves", nd);
    long long holds = 0;
#define COL(c) table[(c) * n + i]
    for (Py_ssize_t q = 0; q < k; q++) {
        Py_ssize_t i = fish[q];
        slots[q] = -1;
        if (open[i]) { /* worddeed._close: judge the plan it had */
            open[i] = 0;
            int64_t g = COL(DC_GOAL), prm = COL(DC_PARAM), ticks = COL(DC_TICKS), moved = COL(DC_MOVED);
            holds -= g == G_HOLD;
            if (ticks > 0) {
                if (g < 0 || g >= goals_known) return judge_bad(&bs, o_slots, "goal", g);
                int done;
                switch (deed_of[g]) {
                case DEED_ATE: done = COL(DC_ATE) > 0; break;
                case DEED_COMPANY: done = 2 * COL(DC_COMPANY) >= ticks; break;
                case DEED_ALONG: {
                    int64_t half = moved / 2;
                    if (nd == 6) { /* worddeed._along_one: between the cells' centres on screen, in quarter cells */
                        double ux = prm >= 0 && prm < 6 ? HX[prm] : 0.0, uy = prm >= 0 && prm < 6 ? HY[prm] : 0.0;
                        int64_t y0 = COL(DC_Y0);
                        double cx = (double)x[i] + 0.5 * (double)(y[i] & 1), cx0 = (double)COL(DC_X0) + 0.5 * (double)(y0 & 1);
                        double a = nearbyint(((cx - cx0) * ux + (double)(y[i] - y0) * S3 * uy) * 4) / 4;
                        done = a >= (double)(half > 1 ? half : 1);
                        break;
                    }
                    int64_t dx = prm >= 0 && prm < 4 ? DX[prm] : 0, dy = prm >= 0 && prm < 4 ? DY[prm] : 0;
                    int64_t along = (x[i] - COL(DC_X0)) * dx + (y[i] - COL(DC_Y0)) * dy;
                    done = along >= (half > 1 ? half : 1);
                    break;
                }
                case DEED_STILL: done = 5 * moved <= ticks; break;
                case DEED_AWAY: done = ((prm % kinds) + kinds) % kinds == crowd ? nb_prev[i] <= COL(DC_NB0) : moved > 0;
                    break;
                case DEED_WORKED: done = COL(DC_WORKED) > 0; break;
                default: return judge_bad(&bs, o_slots, "deed", deed_of[g]);
                }
                if (ring_n[i] < 0) return judge_bad(&bs, o_slots, "plans judged", ring_n[i]);
                int64_t *c = counts + N_COUNTS * i;
                c[done ? 2 : 3] += 1;
                c[5] += 1;
                int64_t slot = ring_n[i] % recent, *r = ring + (i * recent + slot) * N_RING;
                r[0] = COL(DC_TICK), r[1] = tick, r[2] = g, r[3] = prm, r[4] = done, r[5] = -1, r[6] = 0;
                ring_n[i] += 1;
                slots[q] = slot;
            }
        }
        /* open the new plan (worddeed.WordDeed.observe) */
        COL(DC_TICK) = tick, COL(DC_GOAL) = goals[q], COL(DC_PARAM) = params[q], COL(DC_X0) = x[i], COL(DC_Y0) = y[i];
        COL(DC_NB0) = nb[i];
        for (int c = DC_TICKS; c < N_DC; c++) COL(c) = 0;
        open[i] = 1;
        said[i] = 0;
        food0[i] = -1;
        holds += goals[q] == G_HOLD;
    }
#undef COL
    release_all(&bs);
    return Py_BuildValue("(LN)", holds, o_slots);
fail:
    Py_XDECREF(o_slots);
    release_all(&bs);
    return NULL;
}

/* ------------------------------------------------------------------ summarize */

static const char summarize_doc[] =
    "summarize(arrays, ints) -> summaries written\n"
    "World._summarize's numpy (the reference), fish by fish: every fish with news since its last\n"
    "summary and at least ``anchors`` raw events gets a long-term record (memory.SUMMARY_FIELDS, then\n"
    "its newest ``anchors`` events as tick, code, arg) in ``records`` at ``long_count % kept``, and\n"
    "its counters at this summary in ``at_summary`` (memory.AT_SUMMARY). By name: exactly the names\n"
    "of SUMMARIZE_ARRAYS and SUMMARIZE_INTS.";

enum { SM_MEM_COUNT, SM_MEM_TICK, SM_MEM_CODE, SM_MEM_ARG, SM_AT_SUMMARY, SM_EATS, SM_REFUSALS, SM_MOVES, SM_COMPANY,
       SM_ENERGY, SM_RECORDS, SM_LONG_COUNT, N_SM };
static const char *SM_NAMES[N_SM] = {"mem_count", "mem_tick", "mem_code", "mem_arg", "at_summary", "eats", "refusals",
                                     "moves", "company", "energy", "records", "long_count"};
enum { SMI_TICK, SMI_SUMMARY_EVERY, SMI_MEM_SIZE, SMI_ANCHORS, SMI_KEPT, N_SMI };
static const char *SMI_NAMES[N_SMI] = {"tick", "summary_every", "mem_size", "anchors", "kept"};
#define N_AT 6     /* memory.AT_SUMMARY: memories, eats, refusals, moves, company, energy */
#define N_HEAD 8   /* memory.SUMMARY_FIELDS */

static long long floor_div(long long a, long long b) { /* Python's // (b > 0) */
    long long q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

static PyObject *summarize(PyObject *self, PyObject *args) {
    PyObject *arrays, *ints, *ma[N_SM];
    long long v[N_SMI];
    if (!PyArg_ParseTuple(args, "OO", &arrays, &ints)) return NULL;
    if (numbers_by_name(ints, SMI_NAMES, N_SMI, v, NULL, N_SMI, "summarize", "SUMMARIZE_INTS") < 0 ||
        by_name(arrays, SM_NAMES, N_SM, ma, "summarize", "array", "SUMMARIZE_ARRAYS") < 0)
        return NULL;
    const long long tick = v[SMI_TICK], every = v[SMI_SUMMARY_EVERY], size = v[SMI_MEM_SIZE], anchors = v[SMI_ANCHORS],
                    kept = v[SMI_KEPT];
    if (size < 1 || anchors < 1 || kept < 1 || every < 1)
        return PyErr_Format(PyExc_ValueError, "summarize(): mem_size, anchors, kept and summary_every must be >= 1");
    Bufs bs = {.n = 0};
    Py_ssize_t n = items(ma[SM_MEM_COUNT], 4, "mem_count");
    if (n < 0) return NULL;
    const Py_ssize_t width = N_HEAD + 3 * anchors;
    TAKE(mcount, int32_t, ma[SM_MEM_COUNT], n, 0);
    TAKE(mtick, int32_t, ma[SM_MEM_TICK], n * size, 0);
    TAKE(mcode, int8_t, ma[SM_MEM_CODE], n * size, 0);
    TAKE(marg, int16_t, ma[SM_MEM_ARG], n * size, 0);
    TAKE(at, int64_t, ma[SM_AT_SUMMARY], n * N_AT, 1);
    TAKE(eats, int32_t, ma[SM_EATS], n, 0);
    TAKE(refusals, int32_t, ma[SM_REFUSALS], n, 0);
    TAKE(moves, int32_t, ma[SM_MOVES], n, 0);
    TAKE(company, int32_t, ma[SM_COMPANY], n, 0);
    TAKE(energy, int32_t, ma[SM_ENERGY], n, 0);
    TAKE(records, int32_t, ma[SM_RECORDS], n * kept * width, 1);
    TAKE(lcount, int32_t, ma[SM_LONG_COUNT], n, 1);
    const long long since = tick - every > 0 ? tick - every : 0;
    long long written = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        long long c = mcount[i], held = c < size ? c : size;
        int64_t *prev = at + N_AT * i;
        if (!(held >= anchors && c > prev[0])) continue;
        if (lcount[i] < 0) return bad_index(&bs, "summaries written", lcount[i]);
        int32_t *r = records + (i * kept + lcount[i] % kept) * width;
        long long head[N_HEAD] = {tick, since, (long long)eats[i] - prev[1], (long long)refusals[i] - prev[2],
                                  (long long)moves[i] - prev[3], (long long)company[i] - prev[4],
                                  floor_div(prev[5], 100), floor_div(energy[i], 100)};
        for (int f = 0; f < N_HEAD; f++) r[f] = (int32_t)head[f]; /* (numpy's cast to the records' int32) */
        for (long long a = 0; a < anchors; a++) {
            long long slot = (c - anchors + a) % size; /* (c >= anchors: not negative) */
            r[N_HEAD + 3 * a] = mtick[i * size + slot];
            r[N_HEAD + 3 * a + 1] = mcode[i * size + slot];
            r[N_HEAD + 3 * a + 2] = marg[i * size + slot];
        }
        lcount[i] += 1;
        prev[0] = c, prev[1] = eats[i], prev[2] = refusals[i], prev[3] = moves[i], prev[4] = company[i];
        prev[5] = energy[i];
        written++;
    }
    release_all(&bs);
    return PyLong_FromLongLong(written);
fail:
    release_all(&bs);
    return NULL;
}

/* ------------------------------------------------------------------ keep */

static const char keep_doc[] =
    "keep(arrays, ints)\n"
    "A batch of decisions into a session's decision history (session/history.DecisionHistory.observe;\n"
    "its Python is the reference): per decision, its goal counted in the fish's row of ``counts``\n"
    "(goals past ``top`` in the last column) and its tick, goal, param, horizon, tier, status and the\n"
    "trigger that ended the plan before it made the fish's last. By name: exactly the names of\n"
    "KEEP_ARRAYS and KEEP_INTS.";

enum { K_FISH, K_GOALS, K_PARAMS, K_HORIZONS, K_TIER, K_STATUS, K_ENDED, K_COUNTS, K_TICK_OF, K_GOAL_OF, K_PARAM_OF,
       K_HORIZON_OF, K_TIER_OF, K_STATUS_OF, K_ENDED_OF, N_K };
static const char *K_NAMES[N_K] = {"fish", "goals", "params", "horizons", "tier", "status", "ended", "counts", "tick_of",
                                   "goal_of", "param_of", "horizon_of", "tier_of", "status_of", "ended_of"};
enum { KI_TICK, KI_TOP, N_KI };
static const char *KI_NAMES[N_KI] = {"tick", "top"};

static PyObject *keep(PyObject *self, PyObject *args) {
    PyObject *arrays, *ints, *ka[N_K];
    long long v[N_KI];
    if (!PyArg_ParseTuple(args, "OO", &arrays, &ints)) return NULL;
    if (numbers_by_name(ints, KI_NAMES, N_KI, v, NULL, N_KI, "keep", "KEEP_INTS") < 0 ||
        by_name(arrays, K_NAMES, N_K, ka, "keep", "array", "KEEP_ARRAYS") < 0)
        return NULL;
    const long long top = v[KI_TOP];
    if (top < 0) return PyErr_Format(PyExc_ValueError, "keep(): top must be >= 0");
    Bufs bs = {.n = 0};
    Py_ssize_t n = items(ka[K_TICK_OF], 8, "tick_of"), k = items(ka[K_FISH], 8, "fish");
    if (n < 0 || k < 0) return NULL;
    TAKE(fish, int64_t, ka[K_FISH], k, 0);
    TAKE(goals, int8_t, ka[K_GOALS], k, 0);
    TAKE(params, int16_t, ka[K_PARAMS], k, 0);
    TAKE(horizons, int16_t, ka[K_HORIZONS], k, 0);
    TAKE(tier, int8_t, ka[K_TIER], k, 0);
    TAKE(status, int8_t, ka[K_STATUS], k, 0);
    TAKE(ended, int8_t, ka[K_ENDED], k, 0);
    TAKE(counts, int64_t, ka[K_COUNTS], n * (top + 1), 1);
    TAKE(tick_of, int64_t, ka[K_TICK_OF], n, 1);
    TAKE(goal_of, int64_t, ka[K_GOAL_OF], n, 1);
    TAKE(param_of, int64_t, ka[K_PARAM_OF], n, 1);
    TAKE(horizon_of, int64_t, ka[K_HORIZON_OF], n, 1);
    TAKE(tier_of, int64_t, ka[K_TIER_OF], n, 1);
    TAKE(status_of, int64_t, ka[K_STATUS_OF], n, 1);
    TAKE(ended_of, int64_t, ka[K_ENDED_OF], n, 1);
    for (Py_ssize_t q = 0; q < k; q++) {
        int64_t f = fish[q];
        if (f < 0 || f >= n) return bad_index(&bs, "fish", f);
        if (goals[q] < 0) return bad_index(&bs, "goal", goals[q]);
        counts[f * (top + 1) + (goals[q] < top ? goals[q] : top)] += 1;
        tick_of[f] = v[KI_TICK], goal_of[f] = goals[q], param_of[f] = params[q], horizon_of[f] = horizons[q];
        tier_of[f] = tier[q], status_of[f] = status[q], ended_of[f] = ended[q];
    }
    release_all(&bs);
    Py_RETURN_NONE;
fail:
    release_all(&bs);
    return NULL;
}

/* ------------------------------------------------------------------ food */

static const char food_doc[] =
    "food(food_born, open_cells, cdf, draws, tick, rot_ticks, oldest[, index])\n"
    "Water.spawn_food and Water.rot_food after the draws: each uniform draw picks an open cell by the\n"
    "spawn weights (``cdf``, as numpy's searchsorted side='right'); a pick on a cell with food is lost;\n"
    "then food born ``rot_ticks`` or more ticks ago rots. ``oldest``: no food on the grid is older\n"
    "than this tick (a lower bound; None: not known), so the grid is scanned for rot only when\n"
    "something may be due. Returns (spawned, rotted, the new bound). ``index`` (int32[B + 1], B a\n"
    "power of two; Water.spawn_index): where each draw's search starts and ends, ``index[b]`` being\n"
    "searchsorted(cdf, b / B, 'right'), so a draw in [b / B, (b + 1) / B) is looked for only between\n"
    "index[b] and index[b + 1] — the same pick, without a binary search over a large tank's cdf\n"
    "(cache misses); None: the whole cdf. ``ring`` (int32[cap, 2]) and ``ring_at`` (int64[2]: its first\n"
    "entry and its length, updated): the food on the grid as (born tick, cell) pairs, oldest first\n"
    "(Water keeps it): rot pops the entries at or before the line, rotting a cell whose food is still\n"
    "that old, instead of scanning the grid; with ``oldest`` None (food was placed, the state\n"
    "loaded: not known) the grid is scanned and the ring rebuilt from it. The same rot either way.";

static int by_born(const void *a, const void *b) { /* (born, cell) pairs: oldest first, then by cell */
    const int32_t *x = a, *y = b;
    return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* One cell of the rot scan: food born at or before ``line`` rots; the oldest left is kept. */
#define ROT_CELL(c)                                   \
    do {                                              \
        if (born[c] == NO_FOOD_BORN) break;           \
        if (born[c] <= line) {                        \
            born[c] = NO_FOOD_BORN;                   \
            rotted += 1;                              \
        } else if (born[c] < oldest) {                \
            oldest = born[c];                         \
        }                                             \
    } while (0)
#if NO_FOOD_BORN != -1
#error "the rot scan passes over empty cells by AND-ing them: NO_FOOD_BORN must be -1 (all bits set)"
#endif

static PyObject *food(PyObject *self, PyObject *args) {
    PyObject *o_born, *o_open, *o_cdf, *o_draws, *o_oldest, *o_index = Py_None, *o_ring = Py_None, *o_at = Py_None;
    long long tick, rot_ticks, oldest = LLONG_MIN;
    if (!PyArg_ParseTuple(args, "OOOOLLO|OOO", &o_born, &o_open, &o_cdf, &o_draws, &tick, &rot_ticks, &o_oldest,
                          &o_index, &o_ring, &o_at))
        return NULL;
    const int known = o_oldest != Py_None;
    if (o_oldest != Py_None) {
        oldest = PyLong_AsLongLong(o_oldest);
        if (oldest == -1 && PyErr_Occurred()) return NULL;
    }
    if (tick < 0 || tick > INT32_MAX || rot_ticks < -INT32_MAX || rot_ticks > INT32_MAX) /* (born is int32) */
        return PyErr_Format(PyExc_ValueError, "food(): tick %lld or rot_ticks %lld out of range", tick, rot_ticks);
    Bufs bs = {.n = 0};
    Py_ssize_t grid = items(o_born, 4, "food_born"), m = items(o_open, 4, "open_cells"), k = items(o_draws, 8, "draws");
    if (grid < 0 || m < 0 || k < 0) return NULL;
    TAKE(born, int32_t, o_born, grid, 1);
    TAKE(open_cells, int32_t, o_open, m, 0);
    TAKE(cdf, double, o_cdf, m, 0);
    TAKE(draws, double, o_draws, k, 0);
    const int32_t *index = NULL;
    Py_ssize_t buckets = 0;
    if (o_index != Py_None) {
        Py_ssize_t ni = items(o_index, 4, "index");
        if (ni < 0) goto fail;
        buckets = ni - 1;
        if (buckets < 1 || (buckets & (buckets - 1))) {
            release_all(&bs);
            return PyErr_Format(PyExc_ValueError, "food(): index has %zd entries, not a power of two plus one", ni);
        }
        TAKE(index_, int32_t, o_index, ni, 0);
        index = index_;
    }
    int32_t *ring = NULL;
    int64_t *at = NULL;
    Py_ssize_t cap = 0;
    int ordered = 0; /* the ring is valid and oldest first */
    if (o_ring != Py_None) {
        cap = items(o_ring, 8, "ring");
        if (cap < 0) goto fail;
        TAKE(ring_, int32_t, o_ring, 2 * cap, 1);
        TAKE(at_, int64_t, o_at, 2, 1);
        ring = ring_, at = at_;
        ordered = known;
        if (known && (at[0] < 0 || at[0] >= (cap ? cap : 1) || at[1] < 0 || at[1] > cap)) {
            release_all(&bs);
            return PyErr_Format(PyExc_ValueError, "food(): ring_at (%lld, %lld) outside a ring of %zd",
                                (long long)at[0], (long long)at[1], cap);
        }
    }
    long long spawned = 0, rotted = 0;
    for (Py_ssize_t d = 0; d < k && m > 0; d++) {
        if (draws[d] != draws[d]) {
            release_all(&bs);
            return PyErr_Format(PyExc_ValueError, "food(): draw %zd is NaN", d);
        }
        Py_ssize_t lo = 0, hi = m; /* first index with cdf > draw */
        if (index && draws[d] >= 0.0 && draws[d] < 1.0) { /* (draw * B: exact, B a power of two) */
            Py_ssize_t b = (Py_ssize_t)(draws[d] * (double)buckets), a0 = index[b], a1 = index[b + 1];
            if (a0 >= 0 && a0 <= a1 && a1 <= m) lo = a0, hi = a1; /* (else: a damaged index, the whole cdf) */
        }
        int narrowed = lo > 0 || hi < m;
        while (lo < hi) {
            Py_ssize_t mid = lo + (hi - lo) / 2;
            if (cdf[mid] <= draws[d]) lo = mid + 1;
            else hi = mid;
        }
        if (narrowed && !(lo < m && cdf[lo] > draws[d] && (lo == 0 || cdf[lo - 1] <= draws[d]))) {
            lo = 0, hi = m; /* the index did not hold the answer (not this cdf's): the whole cdf */
            while (lo < hi) {
                Py_ssize_t mid = lo + (hi - lo) / 2;
                if (cdf[mid] <= draws[d]) lo = mid + 1;
                else hi = mid;
            }
        }
        if (lo >= m) return bad_index(&bs, "spawn draw", (long long)(draws[d] * 1e6));
        int64_t c = open_cells[lo];
        if (c < 0 || c >= grid) return bad_index(&bs, "open cell", c);
        if (born[c] == NO_FOOD_BORN) {
            born[c] = (int32_t)tick;
            spawned += 1;
            if (ring && ordered) { /* (rebuilt from the grid below when not known) */
                if (at[1] >= cap) return bad_index(&bs, "ring length", at[1] + 1);
                if (at[1] && ring[2 * ((at[0] + at[1] - 1) % cap)] > tick) {
                    ordered = 0; /* food born after this tick is on the grid (a state so loaded): the
                                    ring would not stay oldest first, so it is rebuilt below */
                } else {
                    int32_t *e = ring + 2 * ((at[0] + at[1]) % cap);
                    e[0] = (int32_t)tick, e[1] = (int32_t)c;
                    at[1] += 1;
                }
            }
        }
    }
    if (spawned && tick < oldest) oldest = tick;
    long long line = tick - rot_ticks;
    if (ring && ordered) { /* the ring holds every item on the grid, oldest first: pop what is due */
        while (at[1] > 0) {
            const int32_t *e = ring + 2 * at[0];
            if (e[0] > line) break;
            if (e[1] < 0 || e[1] >= grid) return bad_index(&bs, "ring cell", e[1]);
            if (born[e[1]] == e[0]) { /* (else eaten, or food born later is there now) */
                born[e[1]] = NO_FOOD_BORN;
                rotted += 1;
            }
            at[0] = (at[0] + 1) % cap, at[1] -= 1;
        }
        oldest = at[1] ? ring[2 * at[0]] : LLONG_MAX;
    } else if (oldest <= line || ring) { /* something may be due: scan, and find the oldest food left */
        oldest = LLONG_MAX;
        Py_ssize_t c = 0;
        /* most cells hold no food (-1, all bits set): eight at a time are passed over when the
           AND of their values is still -1 */
        for (; c + 8 <= grid; c += 8) {
            const int32_t *p = born + c;
            if ((p[0] & p[1] & p[2] & p[3] & p[4] & p[5] & p[6] & p[7]) == NO_FOOD_BORN) continue;
            for (Py_ssize_t e = c; e < c + 8; e++) ROT_CELL(e);
        }
        for (; c < grid; c++) ROT_CELL(c);
    }
    if (ring && !ordered) { /* rebuild the ring from the grid: every item, oldest first */
        Py_ssize_t len = 0;
        for (Py_ssize_t c = 0; c < grid; c++) {
            if (born[c] == NO_FOOD_BORN) continue;
            if (len >= cap) return bad_index(&bs, "ring length", len + 1);
            ring[2 * len] = born[c], ring[2 * len + 1] = (int32_t)c;
            len++;
        }
        qsort(ring, (size_t)len, 2 * sizeof(int32_t), by_born);
        at[0] = 0, at[1] = len;
        oldest = len ? ring[0] : LLONG_MAX;
    }
    release_all(&bs);
    return Py_BuildValue("LLL", spawned, rotted, oldest);
fail:
    release_all(&bs);
    return NULL;
}

/* ------------------------------------------------------------------ module */

/* A tuple of ``names`` as the module's attribute ``attr`` (the names a function takes its
   arguments by, or a layout's column names, for the tests to compare with the Python side). */
static int add_names(PyObject *m, const char *attr, const char **names, int count) {
    PyObject *t = PyTuple_New(count);
    if (!t) return -1;
    for (int k = 0; k < count; k++) {
        PyObject *u = PyUnicode_InternFromString(names[k]); /* (the same objects by_name walks with) */
        if (!u) {
            Py_DECREF(t);
            return -1;
        }
        PyTuple_SET_ITEM(t, k, u);
    }
    if (PyModule_AddObject(m, attr, t) < 0) {
        Py_DECREF(t);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ nth */

static const char nth_doc[] =
    "nth(values, k)\n"
    "The k-th smallest of ``values`` (float64, no NaN; k from 0): ``np.partition(values, k)[k]``, by\n"
    "a heap of the values above it when they are 256 or fewer, else a selection in a copy (the\n"
    "metrics' latency P95 over 2,048 decisions: Metrics.latency_p95).";

#define NTH_HEAP 256 /* up to this many values above the k-th: by a heap (below) */
static PyObject *nth(PyObject *self, PyObject *args) {
    PyObject *o;
    Py_ssize_t k;
    if (!PyArg_ParseTuple(args, "On", &o, &k)) return NULL;
    Bufs bs = {.n = 0};
    Py_ssize_t n = items(o, 8, "values");
    if (n < 0) return NULL;
    if (is_float64(o, "values") < 0) return NULL;
    if (k < 0 || k >= n) return PyErr_Format(PyExc_ValueError, "nth: k %zd is not an index of %zd values", k, n);
    TAKE(values, double, o, n, 0);
    Py_ssize_t m = n - k; /* the k-th smallest is the least of the m largest */
    if (m <= NTH_HEAP) {
        /* One pass keeping the m largest in a min-heap (the latency P95 of 2,048 decisions: m = 103,
           about a third of the selection's time and no copy): its root is then the answer. A value
           equal to the root is not taken in, which leaves the same values in the heap. */
        double heap[NTH_HEAP];
        Py_ssize_t size = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            double v = values[i];
            if (isnan(v)) {
                release_all(&bs);
                PyErr_SetString(PyExc_ValueError, "nth: a value is NaN");
                return NULL;
            }
            if (size < m) { /* sift up */
                Py_ssize_t c = size++;
                while (c > 0 && heap[(c - 1) / 2] > v) {
                    heap[c] = heap[(c - 1) / 2];
                    c = (c - 1) / 2;
                }
                heap[c] = v;
            } else if (v > heap[0]) { /* the root replaced, sifted down */
                Py_ssize_t c = 0;
                for (;;) {
                    Py_ssize_t l = 2 * c + 1;
                    if (l >= m) break;
                    if (l + 1 < m && heap[l + 1] < heap[l]) l++;
                    if (heap[l] >= v) break;
                    heap[c] = heap[l];
                    c = l;
                }
                heap[c] = v;
            }
        }
        release_all(&bs);
        return PyFloat_FromDouble(heap[0]);
    }
    double *a = PyMem_Malloc((size_t)n * sizeof(double));
    if (!a) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (isnan(values[i])) {
            PyMem_Free(a);
            PyErr_SetString(PyExc_ValueError, "nth: a value is NaN");
            goto fail;
        }
        a[i] = values[i];
    }
    release_all(&bs);
    /* Hoare's selection, the pivot the median of three: [lo, hi] holds the k-th smallest */
    Py_ssize_t lo = 0, hi = n - 1;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        double x = a[lo], y = a[mid], z = a[hi];
        double pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        Py_ssize_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot) i++;
            while (a[j] > pivot) j--;
            if (i <= j) {
                double t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                j--;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else break; /* between j and i: every value there equals the pivot */
    }
    double out = a[k];
    PyMem_Free(a);
    return PyFloat_FromDouble(out);
fail:
    release_all(&bs);
    return NULL;
}

static const char dict_counts_doc[] =
    "dict_counts() -> (dicts, looked_up)\n"
    "How many dicts of names the calls so far were given (a tuple of values in the table's order is\n"
    "not counted: kernel.positional makes a tick's calls give tuples), and how many of those were\n"
    "not in their table's order, each of their names then looked up one by one (tests/test_call_budget.py).";

static PyObject *dict_counts(PyObject *self, PyObject *args) {
    (void)self;
    (void)args;
    return Py_BuildValue("(LL)", dict_calls, slow_lookups);
}

static PyMethodDef methods[] = {
    {"dict_counts", dict_counts, METH_NOARGS, dict_counts_doc},
    {"steer", steer, METH_VARARGS, steer_doc},
    {"arbitrate", arbitrate, METH_VARARGS, arbitrate_doc},
    {"after", after, METH_VARARGS, after_doc},
    {"components", components, METH_VARARGS, components_doc},
    {"plan", plan, METH_VARARGS, plan_doc},
    {"formula", formula, METH_VARARGS, formula_doc},
    {"adopt", adopt, METH_VARARGS, adopt_doc},
    {"ask", ask, METH_VARARGS, ask_doc},
    {"neighbours", neighbours, METH_VARARGS, neighbours_doc},
    {"school", school, METH_VARARGS, school_doc},
    {"tally", tally, METH_VARARGS, tally_doc},
    {"tally_tanks", tally_tanks, METH_VARARGS, tally_tanks_doc},
    {"deeds", deeds, METH_VARARGS, deeds_doc},
    {"judge", judge, METH_VARARGS, judge_doc},
    {"summarize", summarize, METH_VARARGS, summarize_doc},
    {"keep", keep, METH_VARARGS, keep_doc},
    {"food", food, METH_VARARGS, food_doc},
    {"nth", nth, METH_VARARGS, nth_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_tick", "MiroFish's compiled tick (see _tick.c).", -1,
                                    methods};

PyMODINIT_FUNC PyInit__tick(void) {
    import_array(); /* (returns NULL with numpy's ImportError when numpy's C API cannot be had) */
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    PyObject *c = Py_BuildValue(
        "{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:d,s:d,"
        "s:i,s:i,s:i,s:i,s:i,s:i,s:i}",
        "EAT", A_EAT, "REST", A_REST, "MOVED", MOVED, "STAYED", STAYED, "BLOCKED", BLOCKED, "CROWDED", CROWDED,
        "OCCUPIED", OCCUPIED, "ATE", ATE, "NO_FOOD", NO_FOOD_R, "TAKEN", TAKEN, "V_WATER", V_WATER, "V_WALL", V_WALL,
        "V_FOOD", V_FOOD, "V_SELF", V_SELF, "V_FISH", V_FISH, "N_CODES", N_CODES, "G_HOLD", G_HOLD, "NO_FOOD_BORN",
        NO_FOOD_BORN, "N_FEATURES", N_FEATURES, "N_EVENTS", N_EVENTS, "F_BLOCKED", F_BLOCKED, "F_VISIBLE", F_VISIBLE,
        "F_FOOD_CLOSE", F_FOOD_CLOSE, "N_GOAL_FLAGS", N_GOAL_FLAGS, "NEG", NEG, "BOXED", BOXED, "F_OPEN", F_OPEN, "F_WALL",
        F_WALL, "F_CROWD", F_CROWD, "F_ALIGN", F_ALIGN, "F_FISH", F_FISH, "F_LOST", F_LOST, "F_FOOD", F_FOOD);
    if (!c || PyModule_AddObject(m, "CONSTANTS", c) < 0) {
        Py_XDECREF(c);
        Py_DECREF(m);
        return NULL;
    }
#ifdef _OPENMP
    int threads = omp_get_max_threads(); /* the cores a large tank's loops are split over */
#else
    int threads = 1;
#endif
    if (PyModule_AddIntConstant(m, "THREADS", threads) < 0 || PyModule_AddIntConstant(m, "PARALLEL_FISH", PARALLEL_FISH) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    if (add_names(m, "STEER_ARRAYS", S_NAMES, N_S) < 0 || add_names(m, "STEER_NUMBERS", SN_NAMES, N_SN) < 0 ||
        add_names(m, "STEER_TERMS", STEER_TERMS, 6) < 0 || add_names(m, "ARBITRATE_ARRAYS", R_NAMES, N_R) < 0 ||
        add_names(m, "ARBITRATE_INTS", RI_NAMES, N_RI) < 0 || add_names(m, "AFTER_ARRAYS", X_NAMES, N_X) < 0 ||
        add_names(m, "AFTER_INTS", I_NAMES, N_I) < 0 || add_names(m, "GOAL_FLAG_COLUMNS", GF_NAMES, N_GF) < 0 ||
        add_names(m, "PLAN_ARRAYS", P_NAMES, N_P) < 0 || add_names(m, "PLAN_NUMBERS", PN_NAMES, N_PN) < 0 ||
        add_names(m, "PLANNER_UTILITIES", U_NAMES, N_U) < 0 || add_names(m, "FORMULA_OPS", OP_NAMES, N_OPS) < 0 ||
        add_names(m, "FORMULA_FEATURES", FX_NAMES, N_FX) < 0 ||
        add_names(m, "ADOPT_ARRAYS", A_NAMES, N_A) < 0 || add_names(m, "ADOPT_NUMBERS", AN_NAMES, N_AN) < 0 ||
        add_names(m, "ASK_ARRAYS", Q_NAMES, N_Q) < 0 || add_names(m, "ASK_INTS", QI_NAMES, N_QI) < 0 ||
        add_names(m, "DEEDS_COLUMNS", DC_NAMES, N_DC) < 0 ||
        add_names(m, "TALLY_ARRAYS", T_NAMES, N_T) < 0 || add_names(m, "TALLY_INTS", TI_NAMES, N_TI) < 0 ||
        add_names(m, "TALLY_TANKS_ARRAYS", T_NAMES, N_TT) < 0 || add_names(m, "TALLY_TANKS_INTS", TI_NAMES, N_TTI) < 0 ||
        add_names(m, "DEEDS_ARRAYS", D_NAMES, N_D) < 0 || add_names(m, "DEEDS_INTS", DI_NAMES, N_DI) < 0 ||
        add_names(m, "JUDGE_ARRAYS", J_NAMES, N_J) < 0 || add_names(m, "JUDGE_INTS", JI_NAMES, N_JI) < 0 ||
        add_names(m, "JUDGE_DEEDS", DEED_NAMES, N_DEEDS) < 0 || add_names(m, "SUMMARIZE_ARRAYS", SM_NAMES, N_SM) < 0 ||
        add_names(m, "SUMMARIZE_INTS", SMI_NAMES, N_SMI) < 0 || add_names(m, "KEEP_ARRAYS", K_NAMES, N_K) < 0 ||
        add_names(m, "KEEP_INTS", KI_NAMES, N_KI) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
