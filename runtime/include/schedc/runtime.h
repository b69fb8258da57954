/* schedc/runtime.h — the C ABI between compiled schedules and the schedc runtime.
 *
 * `schedc build` lowers a schedule to LLVM IR that calls these functions; the executable
 * links them from the runtime library (`schedc run` resolves them in-process). A compiled
 * program is described by one `schedc_program` (its source files and locations,
 * parameters, storage arrays, and two functions: parameter defaults and the per-rank
 * entry); its `main` calls `schedc_main`. Every call takes the rank it runs on and a
 * location: an index into the program's location table, so a run-time error says
 * `fsdp.sched:14:5: error: ...`.
 *
 * Handles: a `schedc_value` (a weight, activation, gradient, ...) is valid until the rank's
 * next `schedc_step`; values outlive a statement only in storage. A `schedc_set` is
 * reference counted: functions that make a set return a new reference, the caller releases
 * it; 0 is "no set". Functions never unwind: after a fatal error they report it, and
 * `schedc_step` returns 0 so the compiled code returns to its caller.
 */
#ifndef SCHEDC_RUNTIME_H
#define SCHEDC_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SCHEDC_ABI_VERSION 9

typedef struct schedc_rank schedc_rank;
typedef int64_t schedc_value;
typedef int64_t schedc_set;

/* ---- The description of a compiled program (emitted by schedc) ------------------------ */

typedef struct {
  uint32_t file; /* index into files */
  uint32_t line, col, end_line, end_col;
} schedc_location;

typedef struct {
  const char *path;
  const char *text; /* the source, for diagnostics that show the line */
} schedc_file;

/* The kinds of value (ops/ValueKinds.def), and an array's kind before run time. */
enum schedc_value_kind {
#define VALUE_KIND(Name, name, plural) SCHEDC_KIND_##Name,
#include "ops/ValueKinds.def"
  SCHEDC_KIND_UNKNOWN = -1 /* known only at run time (arrays only ever received into) */
};

typedef struct {
  const char *name;
  int32_t kind; /* an enum schedc_value_kind */
} schedc_array;

typedef struct {
  const char *name;
  int32_t has_default;
  uint32_t loc;
} schedc_param;

typedef struct schedc_program {
  uint32_t abi_version;
  const char *schedule;
  uint32_t schedule_loc;
  const schedc_file *files;
  uint32_t num_files;
  const schedc_location *locations;
  uint32_t num_locations;
  const schedc_param *params;
  uint32_t num_params;
  const schedc_array *arrays;
  uint32_t num_arrays;
  const char *const *axes;
  uint32_t num_axes;
  int64_t target_steps, target_memory; /* -1: none */
  /* Computes the defaults of the parameters, in order; values[i] is kept where overridden[i]. */
  void (*parameters)(schedc_rank *context, int64_t *values, const uint8_t *overridden);
  /* Runs the schedule on one rank. */
  void (*entry)(schedc_rank *rank, const int64_t *params);
  /* 1: `@p2p(ordered)`, its sends and receives meet per pair in the order they were sent. */
  uint32_t ordered_p2p;
} schedc_program;

/* Runs a compiled program: reads the command line (--backend=sim, -D name=value,
   --format=text|json, --events=FILE, --max-steps=N, --help), runs every rank and prints
   the report exactly as `schedc check` does. Returns the exit code. */
int schedc_main(const schedc_program *program, int argc, char **argv);

/* ---- Calls compiled code makes ------------------------------------------------------------ */

/* Before every statement and loop iteration: 0 means stop and return. */
int32_t schedc_step(schedc_rank *r, uint32_t loc);
/* `a op b` for op in '+', '-', '*', '/', '%' when inline arithmetic overflowed or divides. */
int64_t schedc_arith(schedc_rank *r, uint32_t loc, int32_t op, int64_t a, int64_t b);
int64_t schedc_rank_id(schedc_rank *r);
enum schedc_model_size { SCHEDC_MODEL_RANKS, SCHEDC_MODEL_LAYERS, SCHEDC_MODEL_BATCHES };
/* which: an enum schedc_model_size. */
int64_t schedc_model(schedc_rank *r, int32_t which);

schedc_set schedc_set_range(schedc_rank *r, int64_t lo, int64_t hi);
schedc_set schedc_set_new(schedc_rank *r);
void schedc_set_add(schedc_rank *r, uint32_t loc, schedc_set s, int64_t v);
void schedc_set_add_set(schedc_rank *r, uint32_t loc, schedc_set s, schedc_set t);
int64_t schedc_set_size(schedc_rank *r, schedc_set s);
int64_t schedc_set_at(schedc_rank *r, schedc_set s, int64_t i);
int32_t schedc_set_contains(schedc_rank *r, schedc_set s, int64_t v);
int32_t schedc_set_equal(schedc_rank *r, uint32_t loc, schedc_set a, schedc_set b);
void schedc_set_retain(schedc_rank *r, schedc_set s);
void schedc_set_release(schedc_rank *r, schedc_set s);

void schedc_mesh(schedc_rank *r, uint32_t loc, const int64_t *sizes, const uint32_t *size_locs, uint32_t n);
int64_t schedc_axis_coord(schedc_rank *r, uint32_t loc, uint32_t axis);
int64_t schedc_axis_size(schedc_rank *r, uint32_t loc, uint32_t axis);
/* The rank at mesh coordinates coords[0..n) (one per axis); an error stops the run if one
   is off the mesh. */
int64_t schedc_rank_at(schedc_rank *r, uint32_t loc, uint32_t n, const int64_t *coords);
/* `require(cond, "message")`: where `holds` is 0, an error with the message stops the run;
   `same_on_every_rank` (1): the condition reads nothing that differs between ranks, so the
   error names no rank. */
void schedc_require(schedc_rank *r, uint32_t loc, int64_t holds, uint32_t same_on_every_rank, const char *message);
/* `overlap { first } with { second }`: phase 0 opens the pair, 1 starts its second side, 2
   closes it (sim::Rank::overlap). */
void schedc_overlap(schedc_rank *r, uint32_t loc, uint32_t phase);
/* `group { ... }`: phase 0 before its operations, 1 after. */
void schedc_group(schedc_rank *r, uint32_t loc, uint32_t phase);

void schedc_store(schedc_rank *r, uint32_t loc, uint32_t array, const int64_t *index, uint32_t n, schedc_value v);
schedc_value schedc_read(schedc_rank *r, uint32_t loc, uint32_t array, const int64_t *index, uint32_t n);
void schedc_free(schedc_rank *r, uint32_t loc, uint32_t array, const int64_t *index, uint32_t n);
/* `held(array[index])`: 1 if this rank holds a value in that slot, else 0. */
int32_t schedc_held(schedc_rank *r, uint32_t array, const int64_t *index, uint32_t n);

/* ---- Operations ---------------------------------------------------------------------------- */

/* Every operation of the language (ops/Operations.def; its parameters in call order and its
   results are there). SCHEDC_OP_Read is a storage read: use schedc_read. */
enum schedc_op {
#define OPERATION(Name, spelling, form, event) SCHEDC_OP_##Name,
#include "ops/Operations.def"
};

/* Which ranks a collective spans. */
enum schedc_group_kind { SCHEDC_GROUP_ALL, SCHEDC_GROUP_AXIS, SCHEDC_GROUP_RANKS };

/* One argument of an operation, for its parameter: an integer parameter's value; a set's
   handle; a training value's handle; or a group (`group` an enum schedc_group_kind, `value`
   the axis for SCHEDC_GROUP_AXIS, the set of ranks for SCHEDC_GROUP_RANKS). `loc` locates
   the argument (a set's or a group's errors point there). */
typedef struct {
  int64_t value;
  int32_t group;
  uint32_t loc;
} schedc_operand;

/* Runs operation `op` (an enum schedc_op) with its arguments, one per parameter in call
   order, and writes its results (as many as it has) to results[0], results[1]. */
void schedc_operation(schedc_rank *r, uint32_t loc, int32_t op, const schedc_operand *args, schedc_value *results);

/* Every function above but schedc_main, with its signature, for codegen to declare and a JIT
   to register: X(name, result, (parameters)), in the types rank (schedc_rank *), i32, u32,
   i64, handle (a schedc_value or schedc_set), i64s (const int64_t *), u32s (const uint32_t
   *), str (const char *), args (const schedc_operand *), out (schedc_value *) and none. rt/Abi.cpp checks each
   prototype above against it. */
#define SCHEDC_RUNTIME_FUNCTIONS(X)                                                                                    \
  X(schedc_step, i32, (rank, u32))                                                                                     \
  X(schedc_arith, i64, (rank, u32, i32, i64, i64))                                                                     \
  X(schedc_rank_id, i64, (rank))                                                                                       \
  X(schedc_model, i64, (rank, i32))                                                                                    \
  X(schedc_set_range, handle, (rank, i64, i64))                                                                        \
  X(schedc_set_new, handle, (rank))                                                                                    \
  X(schedc_set_add, none, (rank, u32, handle, i64))                                                                    \
  X(schedc_set_add_set, none, (rank, u32, handle, handle))                                                             \
  X(schedc_set_size, i64, (rank, handle))                                                                              \
  X(schedc_set_at, i64, (rank, handle, i64))                                                                           \
  X(schedc_set_contains, i32, (rank, handle, i64))                                                                     \
  X(schedc_set_equal, i32, (rank, u32, handle, handle))                                                                \
  X(schedc_set_retain, none, (rank, handle))                                                                           \
  X(schedc_set_release, none, (rank, handle))                                                                          \
  X(schedc_mesh, none, (rank, u32, i64s, u32s, u32))                                                                   \
  X(schedc_axis_coord, i64, (rank, u32, u32))                                                                          \
  X(schedc_axis_size, i64, (rank, u32, u32))                                                                           \
  X(schedc_rank_at, i64, (rank, u32, u32, i64s))                                                                       \
  X(schedc_require, none, (rank, u32, i64, u32, str))                                                                  \
  X(schedc_overlap, none, (rank, u32, u32))                                                                            \
  X(schedc_group, none, (rank, u32, u32))                                                                              \
  X(schedc_store, none, (rank, u32, u32, i64s, u32, handle))                                                           \
  X(schedc_read, handle, (rank, u32, u32, i64s, u32))                                                                  \
  X(schedc_free, none, (rank, u32, u32, i64s, u32))                                                                    \
  X(schedc_held, i32, (rank, u32, i64s, u32))                                                                          \
  X(schedc_operation, none, (rank, u32, i32, args, out))

#ifdef __cplusplus
}
#endif

#endif /* SCHEDC_RUNTIME_H */
