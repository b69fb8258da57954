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

#define SCHEDC_ABI_VERSION 2

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

typedef struct {
  const char *name;
  int32_t kind; /* -1 unknown until run time; else weight, optimizer state, activation,
                   activation gradient, weight gradient = 0..4 */
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
/* 0: ranks, 1: layers, 2: batches. */
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

void schedc_store(schedc_rank *r, uint32_t loc, uint32_t array, const int64_t *index, uint32_t n, schedc_value v);
schedc_value schedc_read(schedc_rank *r, uint32_t loc, uint32_t array, const int64_t *index, uint32_t n);
void schedc_free(schedc_rank *r, uint32_t loc, uint32_t array, const int64_t *index, uint32_t n);

/* Operations with two results write them to out[0] and out[1]. */
void schedc_load(schedc_rank *r, uint32_t loc, int64_t layer, int64_t shard, int64_t of, schedc_value *out);
schedc_value schedc_input(schedc_rank *r, uint32_t loc, schedc_set batches, uint32_t batches_loc);
schedc_value schedc_forward(schedc_rank *r, uint32_t loc, int64_t layer, schedc_value input, schedc_value weight);
void schedc_backward(schedc_rank *r, uint32_t loc, int64_t layer, schedc_value input, schedc_value grad,
                     schedc_value weight, schedc_value *out);
/* part: 0 backward_input (yields the activation gradient), 1 backward_weight (the weight gradient). */
schedc_value schedc_backward_part(schedc_rank *r, uint32_t loc, int32_t part, int64_t layer, schedc_value input,
                                  schedc_value grad, schedc_value weight);
schedc_value schedc_loss(schedc_rank *r, uint32_t loc, schedc_value input);
void schedc_update(schedc_rank *r, uint32_t loc, int64_t layer, schedc_value grad, schedc_value weight,
                   schedc_value opt, schedc_value *out);
schedc_value schedc_add_grad(schedc_rank *r, uint32_t loc, schedc_value a, schedc_value b);
schedc_value schedc_fake_grad(schedc_rank *r, uint32_t loc, int64_t layer, schedc_set batches,
                              uint32_t batches_loc);
schedc_value schedc_shard(schedc_rank *r, uint32_t loc, schedc_value v, int64_t shard, int64_t of);
/* kind: 0 allreduce, 1 allgather, 2 reducescatter. group_kind: 0 all ranks, 1 a mesh axis
   (group is its index), 2 a set of ranks (group is the set; group_loc locates it). */
schedc_value schedc_collective(schedc_rank *r, uint32_t loc, int32_t kind, schedc_value v, int32_t group_kind,
                               int64_t group, uint32_t group_loc);
/* Messages are matched per (source, tag), first in first out; tags are 0 to 32767. */
void schedc_send(schedc_rank *r, uint32_t loc, int64_t to, schedc_value v, int64_t tag);
schedc_value schedc_recv(schedc_rank *r, uint32_t loc, int64_t from, int64_t tag);

/* Every function above but schedc_main, for a JIT to register: X(name). */
#define SCHEDC_RUNTIME_FUNCTIONS(X)                                                                            \
  X(schedc_step) X(schedc_arith) X(schedc_rank_id) X(schedc_model) X(schedc_set_range) X(schedc_set_new)         \
  X(schedc_set_add) X(schedc_set_add_set) X(schedc_set_size) X(schedc_set_at) X(schedc_set_contains)             \
  X(schedc_set_equal) X(schedc_set_retain) X(schedc_set_release) X(schedc_mesh) X(schedc_axis_coord)             \
  X(schedc_axis_size) X(schedc_rank_at) X(schedc_store) X(schedc_read) X(schedc_free) X(schedc_load) X(schedc_input)               \
  X(schedc_forward) X(schedc_backward) X(schedc_loss) X(schedc_update) X(schedc_add_grad) X(schedc_fake_grad)   \
  X(schedc_shard) X(schedc_backward_part) X(schedc_collective) X(schedc_send) X(schedc_recv)

#ifdef __cplusplus
}
#endif

#endif /* SCHEDC_RUNTIME_H */
