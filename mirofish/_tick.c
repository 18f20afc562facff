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
 *
 * Everything but steering's utilities is integer arithmetic and identical by construction.
 * Steering's floats follow the numpy code operation by operation (no fused multiply-add:
 * built with -ffp-contract=off); the feature sums and exp() may differ from numpy's in the
 * last bit, which could change a sampled action only if a uniform draw fell within an ulp of
 * a cumulative probability (tests/test_kernel.py compares both paths tick by tick).
 *
 * Arrays come in through the buffer protocol (C-contiguous numpy arrays); each is checked for
 * its size, and every index read from an array is checked before use, so a damaged keyframe
 * raises ValueError instead of reading outside an array.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Codes shared with the Python modules; exported as CONSTANTS and checked by the tests. */
enum { A_EAT = 4, A_REST = 5 };                                   /* actions.Action */
enum { MOVED = 0, STAYED = 1, BLOCKED = 2, CROWDED = 3, OCCUPIED = 4 }; /* arbiter outcomes */
enum { ATE = 0, NO_FOOD_R = 1, TAKEN = 2, NOT_EATING = -1 };      /* arbiter meal results */
enum { V_WATER = 0, V_WALL = 1, V_FOOD = 2, V_SELF = 3, V_FISH = 4, N_CODES = 8 }; /* perception */
enum { G_HOLD = 0 };                                               /* plans.Goal */
#define NO_FOOD_BORN (-1)                                          /* water.NO_FOOD */
#define N_FEATURES 36
#define N_EVENTS 9                                                 /* world.EVENT_ORDER */
#define N_GOALS 6
#define N_GOAL_FLAGS 7                                             /* world._GOAL_FLAGS */
#define NEG (-1e9)
#define BOXED (-1e8)
/* steering feature columns */
enum { F_OPEN = 0, F_WALL = 4, F_CROWD = 8, F_ALIGN = 12, F_FISH = 16, F_LOST = 20, F_FOOD = 24, F_BLOCKED = 28,
       F_VISIBLE = 32, F_FOOD_CLOSE = 33 };

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

/* Byte length of ``obj``'s buffer divided by ``itemsize`` (the array's item count). */
static Py_ssize_t items(PyObject *obj, Py_ssize_t itemsize, const char *name) {
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

/* ------------------------------------------------------------------ arguments by name */

/* Look every one of ``names`` up in ``d`` (a dict of exactly those names) into ``out``;
   ``fn`` and ``what`` name the call in the error ("after(): no array named 'moves'"). */
static int by_name(PyObject *d, const char **names, int count, PyObject **out, const char *fn, const char *what,
                   const char *table) {
    for (int k = 0; k < count; k++) {
        out[k] = PyDict_GetItemString(d, names[k]);
        if (!out[k]) {
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
    for (int k = 0; k < count; k++) {
        if (k < n_ints) {
            ints[k] = PyLong_AsLongLong(o[k]);
            if (ints[k] == -1 && PyErr_Occurred()) return -1;
        } else {
            floats[k - n_ints] = PyFloat_AsDouble(o[k]);
            if (floats[k - n_ints] == -1.0 && PyErr_Occurred()) return -1;
        }
    }
    return 0;
}

/* rng.seeded_softmax for one row of ``n`` utilities and its uniform draw ``unit`` in [0, 1):
   the same sums in the same order as the numpy code (steering, the planner). */
static int seeded_softmax(const double *u, int n, double temperature, double unit) {
    double z[8], cdf[8], top, acc = 0.0;
    for (int a = 0; a < n; a++) z[a] = u[a] / temperature;
    top = z[0];
    for (int a = 1; a < n; a++)
        if (z[a] > top) top = z[a];
    for (int a = 0; a < n; a++) {
        acc += exp(z[a] - top);
        cdf[a] = acc;
    }
    double draw = unit * cdf[n - 1];
    int pick = 0;
    for (int a = 0; a < n; a++) pick += cdf[a] <= draw;
    return pick < n - 1 ? pick : n - 1;
}

/* steering.view_features for one fish: the matrix rows of its ``nc`` view codes summed into
   ``f`` (zeroed first); -1 with the bad code in ``*bad`` when a code is out of range. */
static int view_features(double *f, const int8_t *view, Py_ssize_t nc, const double *matrix, int *bad) {
    memset(f, 0, sizeof(double) * N_FEATURES);
    for (Py_ssize_t p = 0; p < nc; p++) {
        int code = view[p];
        if (code < 0 || code >= N_CODES) {
            *bad = code;
            return -1;
        }
        const double *row = matrix + (code * nc + p) * N_FEATURES;
        for (int q = 0; q < N_FEATURES; q++) f[q] += row[q];
    }
    return 0;
}

/* ------------------------------------------------------------------ steer */

static const char steer_doc[] =
    "steer(arrays, numbers)\n"
    "Write every fish's action this tick into ``arrays['out']`` (int8): hold plans their action, the\n"
    "others by steering (World.steer, Steering.utilities and Steering.choose); exhausted fish rest.\n"
    "By name: exactly the names of STEER_ARRAYS and STEER_NUMBERS.";

enum { S_OUT, S_GOAL, S_PARAM, S_CODES, S_HEADING, S_ENERGY, S_FOOD_BORN, S_CELL, S_REFUSED_AT, S_STUCK, S_W, S_BIAS,
       S_FORAGE, S_SNACKS, S_RESTS, S_KEYS, S_MATRIX, N_S };
static const char *S_NAMES[N_S] = {"out", "goal", "param", "codes", "heading", "energy", "food_born", "cell",
                                   "refused_at", "stuck", "w", "bias", "forage", "snacks", "rests", "keys", "matrix"};
enum { SN_TICK, N_SN_INTS, SN_HUNGER_SCALE = N_SN_INTS, SN_PERSISTENCE, SN_REFUSED, SN_EAT, SN_REST, SN_TEMPERATURE,
       N_SN };
static const char *SN_NAMES[N_SN] = {"tick", "hunger_scale", "persistence", "refused", "eat", "rest", "temperature"};
/* the six weighted terms of a move's utility, in the order of a fish's weights (Steering.w) */
static const char *STEER_TERMS[6] = {"open", "glass", "crowd", "align", "cohesion", "food"};

static PyObject *steer(PyObject *self, PyObject *args) {
    PyObject *arrays, *numbers, *sa[N_S];
    long long tick;
    double fl[N_SN - N_SN_INTS];
    if (!PyArg_ParseTuple(args, "O!O!", &PyDict_Type, &arrays, &PyDict_Type, &numbers)) return NULL;
    if (by_name(arrays, S_NAMES, N_S, sa, "steer", "array", "STEER_ARRAYS") < 0 ||
        numbers_by_name(numbers, SN_NAMES, N_SN, &tick, fl, N_SN_INTS, "steer", "STEER_NUMBERS") < 0)
        return NULL;
    double hunger_scale = fl[SN_HUNGER_SCALE - N_SN_INTS], persistence = fl[SN_PERSISTENCE - N_SN_INTS],
           refused_w = fl[SN_REFUSED - N_SN_INTS], eat_w = fl[SN_EAT - N_SN_INTS], rest_w = fl[SN_REST - N_SN_INTS],
           temperature = fl[SN_TEMPERATURE - N_SN_INTS];
    PyObject *o_out = sa[S_OUT], *o_goal = sa[S_GOAL], *o_param = sa[S_PARAM], *o_codes = sa[S_CODES],
             *o_heading = sa[S_HEADING], *o_energy = sa[S_ENERGY], *o_food = sa[S_FOOD_BORN], *o_cell = sa[S_CELL],
             *o_refused = sa[S_REFUSED_AT], *o_stuck = sa[S_STUCK], *o_w = sa[S_W], *o_bias = sa[S_BIAS],
             *o_forage = sa[S_FORAGE], *o_snacks = sa[S_SNACKS], *o_rests = sa[S_RESTS], *o_keys = sa[S_KEYS],
             *o_matrix = sa[S_MATRIX];
    Bufs bs = {.n = 0};
    Py_ssize_t n = items(o_goal, 1, "goal"), grid = items(o_food, 4, "food_born");
    if (n < 0 || grid < 0) return NULL;
    Py_ssize_t nc = n ? items(o_codes, 1, "codes") / n : 0;
    if (nc <= 0 && n) return PyErr_Format(PyExc_ValueError, "array codes: empty");
    TAKE(out, int8_t, o_out, n, 1);
    TAKE(goal, int8_t, o_goal, n, 0);
    TAKE(param, int16_t, o_param, n, 0);
    TAKE(codes, int8_t, o_codes, n * nc, 0);
    TAKE(heading, int8_t, o_heading, n, 0);
    TAKE(energy, int32_t, o_energy, n, 0);
    TAKE(food_born, int32_t, o_food, grid, 0);
    TAKE(cell, int64_t, o_cell, n, 0);
    TAKE(refused_at, int32_t, o_refused, 4 * n, 0);
    TAKE(stuck, int32_t, o_stuck, n, 0);
    TAKE(w, double, o_w, 6 * n, 0);
    TAKE(bias, double, o_bias, 4 * n, 0);
    TAKE(forage, uint8_t, o_forage, n, 0);
    TAKE(snacks, uint8_t, o_snacks, n, 0);
    TAKE(rests, uint8_t, o_rests, n, 0);
    TAKE(keys, uint64_t, o_keys, n, 0);
    TAKE(matrix, double, o_matrix, N_CODES * nc * N_FEATURES, 0);

    for (Py_ssize_t i = 0; i < n; i++) {
        if (goal[i] == G_HOLD) {
            out[i] = (int8_t)param[i];
        } else {
            if (cell[i] < 0 || cell[i] >= grid) return bad_index(&bs, "fish cell", cell[i]);
            double f[N_FEATURES];
            int bad;
            if (view_features(f, codes + i * nc, nc, matrix, &bad) < 0) return bad_index(&bs, "view code", bad);
            double hungry = 1.0 - (double)energy[i] * hunger_scale;
            hungry = hungry < 0.0 ? 0.0 : (hungry > 1.0 ? 1.0 : hungry);
            double inv = 1.0 / (f[F_VISIBLE] > 1.0 ? f[F_VISIBLE] : 1.0);
            const double *wi = w + 6 * i;
            double u[6];
            int h = heading[i];
            for (int d = 0; d < 4; d++) {
                double crowd = f[F_CROWD + d] - 1.0;
                double terms[6] = {
                    f[F_OPEN + d],
                    f[F_WALL + d],
                    crowd > 0.0 ? crowd : 0.0,
                    f[F_ALIGN + d] * inv,
                    f[F_FISH + d] - f[F_LOST + d] * inv,
                    f[F_FOOD + d],
                };
                double m = 0.0;
                for (int j = 0; j < 6; j++) m += wi[j] * terms[j];
                m += bias[4 * i + d];
                if (d == h) m += persistence;
                if (refused_at[4 * i + d] >= tick - 2) m -= refused_w;
                if (f[F_BLOCKED + d] > 0.0) m = NEG;
                u[d] = m;
            }
            int food_here = food_born[cell[i]] != NO_FOOD_BORN;
            int can_eat = (f[F_FOOD_CLOSE] > 0.0 || food_here) && (forage[i] || (hungry > 0.0 && snacks[i]));
            u[A_EAT] = can_eat ? eat_w * (1.0 + hungry) : NEG;
            u[A_REST] = rests[i] ? rest_w : (stuck[i] >= 2 ? refused_w * ((double)stuck[i] - 1.0) : BOXED);
            out[i] = (int8_t)seeded_softmax(u, 6, temperature, to_unit(at_tick(keys[i], tick)));  /* Steering.choose */
        }
        if (energy[i] <= 0) out[i] = A_REST;
    }
    release_all(&bs);
    Py_RETURN_NONE;
fail:
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
    "arbitrate(arrays, ints)\n"
    "Resolve this tick's moves and meals (arbiter.py) and apply them: fish move (cell, heading,\n"
    "occupant), eaten food disappears. Writes each fish's move outcome and meal result (-1: did not\n"
    "eat). ``best`` is a scratch grid of -1 the size of the tank, left as it was found. By name:\n"
    "exactly the names of ARBITRATE_ARRAYS and ARBITRATE_INTS.";

enum { R_EXECUTED, R_CELL, R_HEADING, R_AGE, R_ENERGY, R_ID_KEYS, R_BLOCKED, R_OCCUPANT, R_FOOD_BORN, R_BEST,
       R_DELTA, R_EAT_OFFSETS, R_OUTCOME, R_MEAL, N_R };
static const char *R_NAMES[N_R] = {"executed", "cell", "heading", "age", "energy", "id_keys", "blocked", "occupant",
                                   "food_born", "best", "delta", "eat_offsets", "outcome", "meal"};
enum { RI_TICK, RI_MAX_ENERGY, RI_AGE_WEIGHT, RI_ENERGY_WEIGHT, RI_AGE_CAP, N_RI };
static const char *RI_NAMES[N_RI] = {"tick", "max_energy", "age_weight", "energy_weight", "age_cap"};

static PyObject *arbitrate(PyObject *self, PyObject *args) {
    PyObject *arrays, *ints, *ra[N_R];
    long long ri[N_RI];
    if (!PyArg_ParseTuple(args, "O!O!", &PyDict_Type, &arrays, &PyDict_Type, &ints)) return NULL;
    if (by_name(arrays, R_NAMES, N_R, ra, "arbitrate", "array", "ARBITRATE_ARRAYS") < 0 ||
        numbers_by_name(ints, RI_NAMES, N_RI, ri, NULL, N_RI, "arbitrate", "ARBITRATE_INTS") < 0)
        return NULL;
    long long tick = ri[RI_TICK], max_energy = ri[RI_MAX_ENERGY], age_weight = ri[RI_AGE_WEIGHT],
              energy_weight = ri[RI_ENERGY_WEIGHT], age_cap = ri[RI_AGE_CAP];
    PyObject *o_exec = ra[R_EXECUTED], *o_cell = ra[R_CELL], *o_heading = ra[R_HEADING], *o_age = ra[R_AGE],
             *o_energy = ra[R_ENERGY], *o_keys = ra[R_ID_KEYS], *o_blocked = ra[R_BLOCKED], *o_occ = ra[R_OCCUPANT],
             *o_food = ra[R_FOOD_BORN], *o_best = ra[R_BEST], *o_delta = ra[R_DELTA], *o_eatoff = ra[R_EAT_OFFSETS],
             *o_outcome = ra[R_OUTCOME], *o_meal = ra[R_MEAL];
    if (max_energy <= 0 || age_cap <= 0) return PyErr_Format(PyExc_ValueError, "max_energy and age_cap must be > 0");
    Bufs bs = {.n = 0};
    PyObject *result = NULL;
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
    TAKE(occupant, int64_t, o_occ, grid, 1);
    TAKE(food_born, int32_t, o_food, grid, 1);
    TAKE(best, int64_t, o_best, grid, 1);
    TAKE(delta, int64_t, o_delta, 4, 0);
    TAKE(eat_off, int64_t, o_eatoff, 5, 0);
    TAKE(outcome, int8_t, o_outcome, n, 1);
    TAKE(meal, int8_t, o_meal, n, 1);
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
        if (e >= 0 && e < 4) {
            int64_t t = cell[i] + delta[e];
            if (t < 0 || t >= grid) {
                out_of_range("move target", t);
                goto fail;
            }
        } else if (e == A_EAT) {
            for (int j = 0; j < 5; j++) {
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
        if (e < 0 || e >= 4) continue;
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
        if (executed[i] != A_EAT) continue;
        meal[i] = NO_FOOD_R;
        for (int j = 0; j < 5; j++) {
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
            occupant[cell[i]] = i;
            heading[i] = executed[i];
        }
    result = Py_None;
    Py_INCREF(result);
fail: /* and done: result is NULL on an error */
    free(score);
    free(tie);
    free(target);
    free(state);
    release_all(&bs);
    return result;
}

/* ------------------------------------------------------------------ after */

static const char after_doc[] =
    "after(arrays, ints)\n"
    "Everything World.step does after the food spawned and rotted: energy, age, counters, the\n"
    "new views and their counts, plan triggers (when ``ints['plan_events']``) and memories.\n"
    "``arrays`` and ``ints`` are dicts by name: exactly the names of AFTER_ARRAYS and AFTER_INTS\n"
    "(World._step_compiled); a missing, unknown or misspelt name is an error, never a silent swap.";

enum {
    /* arrays, in the order World._step_compiled passes them */
    X_EXECUTED, X_OUTCOME, X_MEAL, X_BEFORE, X_ENERGY, X_AGE, X_STUCK, X_REFUSED_AT, X_MAX_STUCK, X_ACTION_COUNTS,
    X_MOVES, X_REFUSALS, X_EATS, X_FAILED, X_CELL, X_HEADING, X_BLOCKED, X_OCCUPANT, X_FOOD_BORN, X_WINDOW,
    X_CODES, X_FOOD_SEEN_OLD, X_NEIGHBOURS_OLD, X_FOOD_SEEN, X_NEIGHBOURS, X_FOOD_ROSE, X_NEIGHBOURS_CHANGED,
    X_COMPANY_TICKS, X_PLAN_GOAL, X_PLAN_PARAM, X_PLAN_END, X_PLAN_TRIGGER, X_NO_FOOD, X_ALONE, X_CROWDED,
    X_HUNGRY_FOOD, X_GOAL_FLAGS, X_MEM_TICK, X_MEM_CODE, X_MEM_ARG, X_MEM_COUNT, X_EVENT_ORDER, N_X
};
enum {
    /* ints, in the order World._step_compiled passes them */
    I_TICK, I_DECAY, I_MOVE_COST, I_FOOD_GAIN, I_REST_GAIN, I_REST_CEILING, I_MAX_ENERGY, I_LOW_LINE, I_HUNGRY_LINE,
    I_PLAN_EVENTS, I_ALONE_TICKS, I_CROWD_LINE, I_FORAGE_PATIENCE, I_STUCK_TICKS, I_MEM_SIZE,
    I_T_HORIZON, I_T_FOUND_COMPANY, I_T_CROWDED, I_T_HUNGRY_FOOD, I_T_LOST_COMPANY, I_T_FOOD_GONE,
    I_T_ENERGY_REACHED, I_T_ATE, I_T_STUCK, I_T_LOW_ENERGY, I_SATED_LINE, N_I
};
/* the names after() takes its arguments by, in the order of the enums (exported as AFTER_ARRAYS, AFTER_INTS) */
static const char *X_NAMES[N_X] = {
    "executed", "outcome", "meal", "before", "energy", "age", "stuck", "refused_at", "max_stuck", "action_counts",
    "moves", "refusals", "eats", "failed", "cell", "heading", "blocked", "occupant", "food_born", "window",
    "codes", "food_seen_old", "neighbours_old", "food_seen", "neighbours", "food_rose", "neighbours_changed",
    "company_ticks", "plan_goal", "plan_param", "plan_end", "plan_trigger", "no_food", "alone", "crowded",
    "hungry_food", "goal_flags", "mem_tick", "mem_code", "mem_arg", "mem_count", "event_order"};
static const char *I_NAMES[N_I] = {
    "tick", "decay", "move_cost", "food_gain", "rest_gain", "rest_ceiling", "max_energy", "low_line", "hungry_line",
    "plan_events", "alone_ticks", "crowd_line", "forage_patience", "stuck_ticks", "mem_size",
    "t_horizon", "t_found_company", "t_crowded", "t_hungry_food", "t_lost_company", "t_food_gone",
    "t_energy_reached", "t_ate", "t_stuck", "t_low_energy", "sated_line"};

/* goal flag columns (world._GOAL_FLAGS; exported as GOAL_FLAG_COLUMNS) */
enum { GF_PLANNED, GF_FORAGE, GF_SCHOOL, GF_REST, GF_ROAMING, GF_CROWD, GF_HUNGRY, N_GF };
static const char *GF_NAMES[N_GF] = {"planned", "forage", "school", "rest", "roaming", "crowd", "hungry"};

static PyObject *after(PyObject *self, PyObject *args) {
    PyObject *arrays, *ints, *xa[N_X];
    long long v[N_I];
    if (!PyArg_ParseTuple(args, "O!O!", &PyDict_Type, &arrays, &PyDict_Type, &ints)) return NULL;
    if (by_name(arrays, X_NAMES, N_X, xa, "after", "array", "AFTER_ARRAYS") < 0 ||
        numbers_by_name(ints, I_NAMES, N_I, v, NULL, N_I, "after", "AFTER_INTS") < 0)
        return NULL;
    if (v[I_MEM_SIZE] <= 0 || v[I_STUCK_TICKS] <= 0)
        return PyErr_Format(PyExc_ValueError, "memory size and stuck_ticks must be > 0");
    Bufs bs = {.n = 0};
#define ARR(k) xa[k]
    Py_ssize_t n = items(ARR(X_EXECUTED), 1, "executed"), grid = items(ARR(X_BLOCKED), 1, "blocked");
    Py_ssize_t nc = items(ARR(X_WINDOW), 8, "window"), ms = (Py_ssize_t)v[I_MEM_SIZE];
    if (n < 0 || grid < 0 || nc < 0) return NULL;
    TAKE(executed, int8_t, ARR(X_EXECUTED), n, 0);
    TAKE(outcome, int8_t, ARR(X_OUTCOME), n, 0);
    TAKE(meal, int8_t, ARR(X_MEAL), n, 0);
    TAKE(before, int32_t, ARR(X_BEFORE), n, 0);
    TAKE(energy, int32_t, ARR(X_ENERGY), n, 1);
    TAKE(age, int32_t, ARR(X_AGE), n, 1);
    TAKE(stuck, int32_t, ARR(X_STUCK), n, 1);
    TAKE(refused_at, int32_t, ARR(X_REFUSED_AT), 4 * n, 1);
    TAKE(max_stuck, int32_t, ARR(X_MAX_STUCK), n, 1);
    TAKE(action_counts, int32_t, ARR(X_ACTION_COUNTS), 6 * n, 1);
    TAKE(moves, int32_t, ARR(X_MOVES), n, 1);
    TAKE(refusals, int32_t, ARR(X_REFUSALS), n, 1);
    TAKE(eats, int32_t, ARR(X_EATS), n, 1);
    TAKE(failed, uint8_t, ARR(X_FAILED), n, 1);
    TAKE(cell, int64_t, ARR(X_CELL), n, 0);
    TAKE(heading, int8_t, ARR(X_HEADING), n, 0);
    TAKE(blocked, uint8_t, ARR(X_BLOCKED), grid, 0);
    TAKE(occupant, int64_t, ARR(X_OCCUPANT), grid, 0);
    TAKE(food_born, int32_t, ARR(X_FOOD_BORN), grid, 0);
    TAKE(window, int64_t, ARR(X_WINDOW), nc, 0);
    TAKE(codes, int8_t, ARR(X_CODES), n * nc, 1);
    TAKE(food_old, int16_t, ARR(X_FOOD_SEEN_OLD), n, 0);
    TAKE(nb_old, int16_t, ARR(X_NEIGHBOURS_OLD), n, 0);
    TAKE(food_seen, int16_t, ARR(X_FOOD_SEEN), n, 1);
    TAKE(neighbours, int16_t, ARR(X_NEIGHBOURS), n, 1);
    TAKE(food_rose, uint8_t, ARR(X_FOOD_ROSE), n, 1);
    TAKE(nb_changed, uint8_t, ARR(X_NEIGHBOURS_CHANGED), n, 1);
    TAKE(company_ticks, int32_t, ARR(X_COMPANY_TICKS), n, 1);
    TAKE(plan_goal, int8_t, ARR(X_PLAN_GOAL), n, 0);
    TAKE(plan_param, int16_t, ARR(X_PLAN_PARAM), n, 0);
    TAKE(plan_end, int32_t, ARR(X_PLAN_END), n, 0);
    TAKE(plan_trigger, int8_t, ARR(X_PLAN_TRIGGER), n, 1);
    TAKE(no_food, int32_t, ARR(X_NO_FOOD), n, 1);
    TAKE(alone, int32_t, ARR(X_ALONE), n, 1);
    TAKE(crowded, uint8_t, ARR(X_CROWDED), n, 1);
    TAKE(hungry_food, uint8_t, ARR(X_HUNGRY_FOOD), n, 1);
    TAKE(goal_flags, uint8_t, ARR(X_GOAL_FLAGS), N_GOALS * N_GOAL_FLAGS, 0);
    TAKE(mem_tick, int32_t, ARR(X_MEM_TICK), n * ms, 1);
    TAKE(mem_code, int8_t, ARR(X_MEM_CODE), n * ms, 1);
    TAKE(mem_arg, int16_t, ARR(X_MEM_ARG), n * ms, 1);
    TAKE(mem_count, int32_t, ARR(X_MEM_COUNT), n, 1);
    TAKE(event_order, int8_t, ARR(X_EVENT_ORDER), N_EVENTS, 0);
#undef ARR
    const int64_t t = v[I_TICK], low = v[I_LOW_LINE];
    const Py_ssize_t centre = nc / 2;
    for (Py_ssize_t i = 0; i < n; i++) {
        int e = executed[i], oc = outcome[i];
        if (e < 0 || e > 5) return bad_index(&bs, "action", e);
        int moved = oc == MOVED, ate = meal[i] == ATE;
        int refused = oc == CROWDED || oc == OCCUPIED, bumped = oc == BLOCKED, is_stuck = refused || bumped;
        /* energy and age */
        int64_t en = (int64_t)before[i] - v[I_DECAY];
        if (moved) en -= v[I_MOVE_COST];
        if (ate) en += v[I_FOOD_GAIN];
        if (e == A_REST && before[i] < v[I_REST_CEILING]) en += v[I_REST_GAIN];
        en = en < 0 ? 0 : (en > v[I_MAX_ENERGY] ? v[I_MAX_ENERGY] : en);
        energy[i] = (int32_t)en;
        age[i] += 1;
        /* counters */
        if (is_stuck) {
            stuck[i] += 1;
            refused_at[4 * i + e] = (int32_t)t; /* a stuck fish tried a move: e < 4 */
        } else {
            stuck[i] = 0;
        }
        if (stuck[i] > max_stuck[i]) max_stuck[i] = stuck[i];
        action_counts[6 * i + e] += 1;
        moves[i] += moved;
        refusals[i] += is_stuck;
        eats[i] += ate;
        int taken = meal[i] == TAKEN, nothing = meal[i] == NO_FOOD_R;
        failed[i] = is_stuck || taken || nothing;
        /* the new view (perception.cell_codes + view_codes): glass, then a fish by heading, then food */
        if (cell[i] < 0 || cell[i] >= grid) return bad_index(&bs, "fish cell", cell[i]);
        int8_t *view = codes + i * nc;
        int fs = 0, nb = 0;
        for (Py_ssize_t p = 0; p < nc; p++) {
            int64_t c = cell[i] + window[p];
            if (c < 0 || c >= grid) return bad_index(&bs, "view cell", c);
            int8_t code;
            if (blocked[c]) {
                code = V_WALL;
            } else if (occupant[c] >= 0) {
                int64_t o = occupant[c];
                if (o >= n) return bad_index(&bs, "occupant", o);
                code = (int8_t)(V_FISH + heading[o]);
            } else {
                code = food_born[c] != NO_FOOD_BORN ? V_FOOD : V_WATER;
            }
            if (p == centre) code = V_SELF;
            view[p] = code;
            fs += code == V_FOOD;
            nb += code >= V_FISH;
        }
        food_seen[i] = (int16_t)fs;
        neighbours[i] = (int16_t)nb;
        food_rose[i] = fs > food_old[i];
        nb_changed[i] = nb != nb_old[i];
        company_ticks[i] += nb > 0;
        /* plan triggers (World._plan_events): later lines win */
        if (v[I_PLAN_EVENTS]) {
            int g = plan_goal[i];
            if (g < 0 || g >= N_GOALS) return bad_index(&bs, "plan goal", g);
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
        int argv[N_EVENTS] = {0, e, e, level, 0, 0, level, fs, nb};
        if (mem_count[i] < 0) return bad_index(&bs, "memory count", mem_count[i]);
        for (int k = 0; k < N_EVENTS; k++) {
            if (!flags[k]) continue;
            Py_ssize_t slot = i * ms + mem_count[i] % ms;
            mem_tick[slot] = (int32_t)t;
            mem_code[slot] = event_order[k];
            mem_arg[slot] = (int16_t)argv[k];
            mem_count[i] += 1;
        }
    }
    release_all(&bs);
    Py_RETURN_NONE;
fail:
    release_all(&bs);
    return NULL;
}

/* ------------------------------------------------------------------ plan */

static const char plan_doc[] =
    "plan(arrays, numbers)\n"
    "The instinct planner (brains/instinct.InstinctPlanner.decide) for a batch of fish: view features,\n"
    "goal utilities, the seeded softmax over them, each goal's parameter and the horizon. Writes\n"
    "``pick`` (the goal's column: forage, school, explore, rest, keep away), ``param`` and ``horizon``.\n"
    "By name: exactly the names of PLAN_ARRAYS and PLAN_NUMBERS.";

enum { P_CODES, P_MATRIX, P_TRAITS, P_ENERGY, P_HEADING, P_DRAWS, P_BASE, P_PICK, P_PARAM, P_HORIZON, N_P };
static const char *P_NAMES[N_P] = {"codes", "matrix", "traits", "energy", "heading", "draws", "base", "pick", "param",
                                   "horizon"};
enum { PN_REST_CEILING, PN_NEVER_SCHOOL, N_PN_INTS, PN_MAX_ENERGY = N_PN_INTS, PN_LOW, PN_HUNGRY, PN_CROWD_LINE,
       PN_FORAGE, PN_SCHOOL, PN_EXPLORE, PN_REST, PN_KEEP_AWAY, PN_TEMPERATURE, N_PN };
static const char *PN_NAMES[N_PN] = {"rest_ceiling", "never_school", "max_energy", "low_energy_fraction",
                                     "hungry_fraction", "crowd_line", "forage", "school", "explore", "rest",
                                     "keep_away", "temperature"};
enum { F_FOOD_SEEN = 34, F_WALLS = 35 };

static PyObject *plan(PyObject *self, PyObject *args) {
    PyObject *arrays, *numbers, *pa[N_P];
    long long ints[N_PN_INTS];
    double fl[N_PN - N_PN_INTS];
    if (!PyArg_ParseTuple(args, "O!O!", &PyDict_Type, &arrays, &PyDict_Type, &numbers)) return NULL;
    if (by_name(arrays, P_NAMES, N_P, pa, "plan", "array", "PLAN_ARRAYS") < 0 ||
        numbers_by_name(numbers, PN_NAMES, N_PN, ints, fl, N_PN_INTS, "plan", "PLAN_NUMBERS") < 0)
        return NULL;
#define NUM(k) fl[(k) - N_PN_INTS]
    double max_energy = NUM(PN_MAX_ENERGY), low_f = NUM(PN_LOW), hungry_f = NUM(PN_HUNGRY),
           crowd_line = NUM(PN_CROWD_LINE), temperature = NUM(PN_TEMPERATURE);
    double cw[5] = {NUM(PN_FORAGE), NUM(PN_SCHOOL), NUM(PN_EXPLORE), NUM(PN_REST), NUM(PN_KEEP_AWAY)};
#undef NUM
    long long rest_ceiling = ints[PN_REST_CEILING];
    Bufs bs = {.n = 0};
    Py_ssize_t k = items(pa[P_ENERGY], 4, "energy");
    if (k < 0) return NULL;
    Py_ssize_t nc = k ? items(pa[P_CODES], 1, "codes") / k : 0;
    if (nc <= 0 && k) return PyErr_Format(PyExc_ValueError, "array codes: empty");
    TAKE(codes, int8_t, pa[P_CODES], k * nc, 0);
    TAKE(matrix, double, pa[P_MATRIX], N_CODES * nc * N_FEATURES, 0);
    TAKE(traits, int16_t, pa[P_TRAITS], 5 * k, 0);
    TAKE(energy, int32_t, pa[P_ENERGY], k, 0);
    TAKE(heading, int8_t, pa[P_HEADING], k, 0);
    TAKE(draws, double, pa[P_DRAWS], 5 * k, 0);
    TAKE(base, double, pa[P_BASE], 5, 0);
    TAKE(pick, int64_t, pa[P_PICK], k, 1);
    TAKE(param, int64_t, pa[P_PARAM], k, 1);
    TAKE(horizon, double, pa[P_HORIZON], k, 1);
    for (Py_ssize_t i = 0; i < k; i++) {
        double f[N_FEATURES];
        int bad;
        if (view_features(f, codes + i * nc, nc, matrix, &bad) < 0) return bad_index(&bs, "view code", bad);
        double soc = traits[5 * i] / 100.0, cur = traits[5 * i + 1] / 100.0, cau = traits[5 * i + 2] / 100.0,
               app = traits[5 * i + 3] / 100.0, calm = traits[5 * i + 4] / 100.0;
        double e = (double)energy[i];
        double hunger = 1.0 - e / (0.8 * max_energy);
        hunger = hunger < 0.0 ? 0.0 : (hunger > 1.0 ? 1.0 : hunger);
        double visible = f[F_VISIBLE];
        int food = f[F_FOOD_SEEN] > 0;
        double company = (visible < 3.0 ? visible : 3.0) / 3.0;
        int low = e < max_energy * low_f;
        int hungry_food = (e < max_energy * hungry_f) && food;
        double crowd = visible - crowd_line + 2;
        crowd = (crowd > 0.0 ? crowd : 0.0) / 3.0;
        double u[5];
        u[0] = cw[0] * (0.5 + app) * hunger * (1.5 + 0.5 * food) + 6.0 * low + 2.0 * hungry_food;
        double fade = 1.0 - 1.5 * hunger;
        u[1] = cw[1] * (0.3 + soc) * company * (fade > 0.0 ? fade : 0.0);
        u[2] = cw[2] * ((0.5 + cur) * (1.0 - 0.6 * company) + soc * (visible == 0));
        u[3] = hungry_food ? NEG
                           : cw[3] * (calm - 0.4 - 3.0 * hunger - 0.3 * company) + 4.0 * ((e < rest_ceiling) && !food);
        u[4] = cw[4] * (0.3 + cau) * (crowd + 0.5 * (f[F_WALLS] >= 10)) - 0.5;
        if (ints[PN_NEVER_SCHOOL]) u[1] = NEG;
        const double *d = draws + 5 * i;
        int g = seeded_softmax(u, 5, temperature, d[0]);
        /* explore: the open way, favouring the course and where others swim */
        double vis1 = visible > 1.0 ? visible : 1.0;
        int best = 0;
        double bestv = 0.0;
        for (int w = 0; w < 4; w++) {
            double v = f[F_OPEN + w] + 0.5 * f[F_ALIGN + w] / vis1;
            if (w == heading[i]) v += 0.3;
            v += 0.6 * d[1 + w];
            if (w == 0 || v > bestv) {
                bestv = v;
                best = w;
            }
        }
        int64_t choices[5] = {0, 0, best, energy[i] < rest_ceiling ? rest_ceiling / 100 : 100,
                              visible < crowd_line - 2};
        double stretch[5] = {1.0, 0.5 + soc, 0.5 + cur, 0.5 + calm, 1.0};
        pick[i] = g;
        param[i] = choices[g];
        horizon[i] = nearbyint(base[g] * stretch[g]);
    }
    release_all(&bs);
    Py_RETURN_NONE;
fail:
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
        int64_t a = find_root(labels, ii[k]), b = find_root(labels, jj[k]);
        if (a < b) labels[b] = a;
        else if (b < a) labels[a] = b;
    }
    for (Py_ssize_t k = 0; k < n; k++) labels[k] = find_root(labels, k);
    release_all(&bs);
    Py_RETURN_NONE;
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
        PyObject *u = PyUnicode_FromString(names[k]);
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

static PyMethodDef methods[] = {
    {"steer", steer, METH_VARARGS, steer_doc},
    {"arbitrate", arbitrate, METH_VARARGS, arbitrate_doc},
    {"after", after, METH_VARARGS, after_doc},
    {"components", components, METH_VARARGS, components_doc},
    {"plan", plan, METH_VARARGS, plan_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_tick", "MiroFish's compiled tick (see _tick.c).", -1,
                                    methods};

PyMODINIT_FUNC PyInit__tick(void) {
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    PyObject *c = Py_BuildValue(
        "{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:d,s:d,"
        "s:i,s:i,s:i,s:i,s:i,s:i,s:i}",
        "EAT", A_EAT, "REST", A_REST, "MOVED", MOVED, "STAYED", STAYED, "BLOCKED", BLOCKED, "CROWDED", CROWDED,
        "OCCUPIED", OCCUPIED, "ATE", ATE, "NO_FOOD", NO_FOOD_R, "TAKEN", TAKEN, "V_WATER", V_WATER, "V_WALL", V_WALL,
        "V_FOOD", V_FOOD, "V_SELF", V_SELF, "V_FISH", V_FISH, "N_CODES", N_CODES, "G_HOLD", G_HOLD, "NO_FOOD_BORN",
        NO_FOOD_BORN, "N_FEATURES", N_FEATURES, "N_EVENTS", N_EVENTS, "F_BLOCKED", F_BLOCKED, "F_VISIBLE", F_VISIBLE,
        "F_FOOD_CLOSE", F_FOOD_CLOSE, "N_GOALS", N_GOALS, "N_GOAL_FLAGS", N_GOAL_FLAGS, "NEG", NEG, "BOXED", BOXED, "F_OPEN", F_OPEN, "F_WALL",
        F_WALL, "F_CROWD", F_CROWD, "F_ALIGN", F_ALIGN, "F_FISH", F_FISH, "F_LOST", F_LOST, "F_FOOD", F_FOOD);
    if (!c || PyModule_AddObject(m, "CONSTANTS", c) < 0) {
        Py_XDECREF(c);
        Py_DECREF(m);
        return NULL;
    }
    if (add_names(m, "STEER_ARRAYS", S_NAMES, N_S) < 0 || add_names(m, "STEER_NUMBERS", SN_NAMES, N_SN) < 0 ||
        add_names(m, "STEER_TERMS", STEER_TERMS, 6) < 0 || add_names(m, "ARBITRATE_ARRAYS", R_NAMES, N_R) < 0 ||
        add_names(m, "ARBITRATE_INTS", RI_NAMES, N_RI) < 0 || add_names(m, "AFTER_ARRAYS", X_NAMES, N_X) < 0 ||
        add_names(m, "AFTER_INTS", I_NAMES, N_I) < 0 || add_names(m, "GOAL_FLAG_COLUMNS", GF_NAMES, N_GF) < 0 ||
        add_names(m, "PLAN_ARRAYS", P_NAMES, N_P) < 0 || add_names(m, "PLAN_NUMBERS", PN_NAMES, N_PN) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
