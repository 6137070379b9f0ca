/*
 * tidepool_kernel.h - the C ABI between tidepool and a kernel library,
 * version 1.
 *
 * A kernel library is a shared object (.so, .dylib, .dll) that tidepool
 * loads at run time with `Pool.loadKernels('/absolute/path/libname.so')`.
 * It exports one function, tidepool_kernels_v1(), which returns a
 * description of the kernels it contains: their names, their parameter
 * schemas and the functions tidepool calls to run them. This header declares
 * that interface for C, C++ and Zig (through @cImport).
 *
 * The authoritative definitions are the Rust ones in
 * crates/kernel-sdk/src/abi.rs; crates/kernel-sdk/tests/header.rs checks
 * every size, field offset, field type and constant of this header against
 * them.
 *
 * How a task runs a kernel
 * ------------------------
 *   1. When a task (or stream, or pool) is created with parameters, tidepool
 *      checks them against the kernel's schema, then calls make_params on
 *      the JavaScript thread. The object it returns is shared, read-only,
 *      by every task made with those parameters. A set made only of numbers
 *      and booleans is also kept (up to 256 sets) and given to later tasks
 *      of the same kernel with the same set, without another make_params
 *      call. make_params is also called once when the library is loaded,
 *      with every value absent: the parameters of tasks that give none (a
 *      refusal there only means such tasks are rejected).
 *   2. For every task, start makes a fresh state from the parameters.
 *   3. update is called with the input, chunk after chunk, in order.
 *   4. finish is called once at the end of the input.
 *   5. drop_state frees the state; later, drop_params frees the parameters
 *      once no task uses them and tidepool keeps them no longer.
 *   update and finish produce output through the tp_host they are given.
 *
 * Rules
 * -----
 * - One entry point per major ABI version. This is version 1, whose entry
 *   point is named tidepool_kernels_v1 and whose descriptor carries
 *   abi_version == TIDEPOOL_KERNEL_ABI_VERSION. An incompatible future ABI
 *   will get a new symbol (tidepool_kernels_v2, ...), so a tidepool that
 *   knows several versions can load libraries built for each.
 *
 * - Structs only grow at the end. Compatible (minor) revisions of version 1
 *   may append fields to these structs but never move, remove or change the
 *   existing ones. That is why each struct crossing the boundary states its
 *   own size: tp_library.size, tp_library.kernel_size (tidepool steps
 *   through the kernel array with that stride, not with its own sizeof) and
 *   tp_host.size in the other direction. Always fill them with sizeof() of
 *   the structs of this header; never read a tp_host field that lies beyond
 *   host->size.
 *
 * - Nothing is freed across the boundary. tidepool and the library may use
 *   different allocators (or different C runtimes). The library frees what
 *   it allocated itself (drop_params, drop_state). Output is written into
 *   memory owned by tidepool (host->write, host->unfilled), which is also
 *   where the task's output limit (maxOutputBytes) is enforced. Error codes
 *   and messages given to host->fail are copied before it returns, so they
 *   may live on the stack.
 *
 * - Nothing unwinds across the boundary. Every function reports its outcome
 *   with a status (TP_OK, TP_ERROR, ...). C++ code must catch every
 *   exception before returning to tidepool; a Rust or C++ library whose
 *   kernel panics or throws reports TP_PANIC (the message through
 *   host->fail), or TP_ERROR. A longjmp out of a kernel function is
 *   forbidden too.
 *
 * - Threads. make_params is called on the JavaScript thread; every other
 *   function may be called on any thread, including concurrently for
 *   different tasks of the same kernel. A parameter object is therefore read
 *   by several threads at once and must not be modified after make_params.
 *   A state is used by one thread at a time, though not always the same
 *   thread (a stream's chunks may be processed by different workers), so do
 *   not keep per-state data in thread-local storage. No function may call
 *   into Node-API or JavaScript. While a kernel function runs, the host
 *   functions it was given may be called from any thread (a kernel that
 *   splits its work may check for cancellation, or write, from each of its
 *   threads): tidepool serializes them. A room lent by unfilled ends with
 *   the next output call from any thread, and every thread must be done
 *   with the host before the kernel function returns.
 *
 * - Borrowed pointers. Everything tidepool passes to a function (input
 *   bytes, parameter values, output room, the tp_host and its ctx) is only
 *   valid until that function returns. Copy what you need to keep, but
 *   never the host: a host function called after its call returned (through
 *   a kept tp_host pointer, a copy of the struct, or its ctx) does nothing
 *   (TP_ERROR, NULL, TP_CANCELLED; fail and reserve are ignored), and the
 *   kernel the host was lent to fails its next call with
 *   ERR_TIDEPOOL_KERNEL_CONTRACT.
 *
 * - Cancellation. tidepool cannot interrupt native code: a task is only
 *   cancelled, or stopped at its deadline, when the kernel asks. Call
 *   host->check between pieces of work (every few hundred microseconds of
 *   work, e.g. every 64 KiB of input) and return its status when it is not
 *   TP_OK.
 *
 * - tidepool validates the descriptor when the library is loaded and refuses
 *   the whole library if any rule is broken (wrong version or sizes, a bad
 *   name or schema, a missing function, a name already taken). At run time
 *   it also checks that statuses match what happened (see the status codes).
 *
 * A library is native code running with the privileges of the Node process:
 * tidepool can catch an honest library's mistakes, not a malicious library.
 */

#ifndef TIDEPOOL_KERNEL_H
#define TIDEPOOL_KERNEL_H

#include <stddef.h>
#include <stdint.h>

/*
 * TIDEPOOL_KERNEL_EXPORT marks the entry point as exported from the shared
 * library, even when the library is built with -fvisibility=hidden.
 * Define it yourself before including this header to override it.
 */
#ifndef TIDEPOOL_KERNEL_EXPORT
#if defined(_WIN32) || defined(__CYGWIN__)
#define TIDEPOOL_KERNEL_EXPORT __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#define TIDEPOOL_KERNEL_EXPORT __attribute__((visibility("default")))
#else
#define TIDEPOOL_KERNEL_EXPORT
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Version and entry point
 * ------------------------------------------------------------------------ */

/* The major version of the ABI this header describes. Store it in
 * tp_library.abi_version. */
#define TIDEPOOL_KERNEL_ABI_VERSION 1

/* The name of the function a library exports for this version (see
 * tidepool_kernels_v1 at the end of this header). */
#define TIDEPOOL_KERNEL_ENTRY "tidepool_kernels_v1"

/*
 * A library may also live inside a Node addon that is already loaded, and
 * hand its descriptor to JavaScript instead of being opened by path: as an
 * External whose data is the tp_library pointer, tagged with this
 * napi_type_tag (the tag is how tidepool recognizes such a handle):
 *
 *     static const napi_type_tag tag = {
 *         TIDEPOOL_KERNEL_NAPI_TYPE_TAG_LOWER, TIDEPOOL_KERNEL_NAPI_TYPE_TAG_UPPER
 *     };
 *     napi_value handle;
 *     napi_create_external(env, (void *)tidepool_kernels_v1(), NULL, NULL, &handle);
 *     napi_type_tag_object(env, handle, &tag);
 *
 * JavaScript then passes `handle` to Pool.loadKernels(). The descriptor is
 * static data, so the External needs no finalizer.
 */
#define TIDEPOOL_KERNEL_NAPI_TYPE_TAG_LOWER 0x74696465706f6f6cULL
#define TIDEPOOL_KERNEL_NAPI_TYPE_TAG_UPPER 0x6b65726e656c7631ULL

/* ------------------------------------------------------------------------
 * Status codes, returned by kernel functions and by some host functions
 * ------------------------------------------------------------------------ */

/* Success. */
#define TP_OK 0
/* Failure. Before returning it, call host->fail with an error code and a
 * message; a TP_ERROR without them still fails the task, with a generic
 * code (ERR_TIDEPOOL_KERNEL_FAILED). */
#define TP_ERROR 1
/* The task was cancelled. Only return it when host->check returned it. */
#define TP_CANCELLED 2
/* The task's deadline passed. Only return it when host->check returned
 * it. */
#define TP_TIMED_OUT 3
/* The output would exceed the task's limit. Only return it when
 * host->write returned it, host->unfilled returned NULL, or host->unfilled
 * lent less room than asked (the limit was nearer) and the kernel cannot
 * use a smaller room (it writes whole units). */
#define TP_TOO_LARGE 4
/* The kernel panicked (or threw). Pass the message to host->fail first.
 * Meant for language runtimes that catch panics or exceptions at the
 * boundary. */
#define TP_PANIC 5

/*
 * tidepool cross-checks the status with what happened during the call:
 * TP_CANCELLED or TP_TIMED_OUT when the task was neither, TP_TOO_LARGE when
 * no write was refused nor room cut short, or any value not listed above,
 * makes the task fail with ERR_TIDEPOOL_KERNEL_CONTRACT. A write that was
 * refused (or an unfilled that returned NULL) fails the task with
 * ERR_BUFFER_TOO_LARGE whatever the kernel returns: its output would have
 * a piece missing. What a function handed over with TP_OK (parameters, a
 * state) is given back to drop_params / drop_state even when the call
 * broke a rule.
 */

/* ------------------------------------------------------------------------
 * Kernel flags (tp_kernel.flags)
 * ------------------------------------------------------------------------ */

/* The kernel's output may be much larger than its input (a decompressor,
 * a decoder): its tasks default to the pool's smaller output limit for
 * such kernels. */
#define TP_KERNEL_EXPANDS 1u

/* ------------------------------------------------------------------------
 * Parameter kinds (tp_param_spec.kind)
 * ------------------------------------------------------------------------ */

/* An integer in [int_min, int_max]: a JavaScript number with no fractional
 * part, or a bigint. Delivered in tp_value.integer. */
#define TP_PARAM_INTEGER 1u
/* A number in [num_min, num_max], never NaN. Delivered in
 * tp_value.number. */
#define TP_PARAM_NUMBER 2u
/* A boolean. Delivered in tp_value.boolean as 0 or 1. */
#define TP_PARAM_BOOLEAN 3u
/* A string, delivered as UTF-8 bytes in tp_value.data / tp_value.len.
 * The bytes are valid UTF-8 and NOT NUL-terminated. */
#define TP_PARAM_STRING 4u
/* Binary data (Buffer, TypedArray, DataView, ArrayBuffer) or a string
 * (as its UTF-8 bytes), in tp_value.data / tp_value.len. */
#define TP_PARAM_BYTES 5u

/* The len_hint start() receives when the input's total length is not known
 * in advance (a stream). */
#define TP_LEN_HINT_UNKNOWN UINT64_MAX

/* ------------------------------------------------------------------------
 * Types
 * ------------------------------------------------------------------------ */

typedef struct tp_library tp_library;
typedef struct tp_kernel tp_kernel;
typedef struct tp_param_spec tp_param_spec;
typedef struct tp_value tp_value;
typedef struct tp_host tp_host;

/*
 * Makes a kernel's parameter object from the values of one task, pool or
 * stream. Called on the JavaScript thread, after tidepool has checked the
 * values against the schema (names, kinds, ranges, required parameters).
 *
 *   values  `count` values, one per schema entry and in schema order
 *           (count == tp_kernel.param_count); a parameter that was not
 *           given has present == 0. Valid only during the call.
 *   out     Where to store the parameter object: any pointer, NULL
 *           included. tidepool hands it back to start() and, in the end,
 *           to drop_params().
 *   host    For host->fail. Output functions must not be used here.
 *
 * Returns TP_OK after storing *out, or calls host->fail (with a code of
 * the kernel's own) and returns TP_ERROR to refuse the values; the task is
 * then rejected with that message. On refusal tidepool ignores *out and
 * will not call drop_params: free anything allocated before returning.
 */
typedef int32_t (*tp_make_params_fn)(const tp_value *values, uint32_t count, void **out, const tp_host *host);

/*
 * Frees an object made by the library: drop_params gets what make_params
 * stored (possibly NULL), drop_state what start stored (possibly NULL).
 * Called exactly once per object, on any thread. It cannot fail and must
 * not call host functions (it gets no host).
 */
typedef void (*tp_drop_fn)(void *ptr);

/*
 * Makes the state of one task (or stream) from its parameter object.
 *
 *   params    What make_params stored, or NULL when the kernel has no
 *             make_params. Shared with other tasks: read it, never modify it.
 *   len_hint  The total input length in bytes when known, else
 *             TP_LEN_HINT_UNKNOWN. A hint for sizing buffers only.
 *   out       Where to store the state (any pointer).
 *   host      For host->fail and host->check. Output functions must not be
 *             used here.
 *
 * Returns TP_OK after storing *out, or TP_ERROR after host->fail. When start
 * fails, drop_state is not called: free anything allocated before returning.
 */
typedef int32_t (*tp_start_fn)(const void *params, uint64_t len_hint, void **out, const tp_host *host);

/*
 * Consumes the next chunk of input, in order, possibly writing output.
 *
 *   state  What start stored.
 *   data   The chunk: `len` bytes, read-only, valid only during the call.
 *          May be NULL when len == 0 (empty chunks can happen).
 *
 * Returns TP_OK, or a failure status (see the status codes). finish is
 * never called after a failed update; drop_state still is.
 */
typedef int32_t (*tp_update_fn)(void *state, const uint8_t *data, size_t len, const tp_host *host);

/*
 * Ends the input: writes whatever output is left. Called at most once, after
 * the last update, and never after an update failed. A task may also end
 * without it (cancelled, abandoned stream); drop_state is called either way.
 */
typedef int32_t (*tp_finish_fn)(void *state, const tp_host *host);

/*
 * The entry point's type, for hosts that look it up with dlsym() or
 * GetProcAddress().
 */
typedef const tp_library *(*tp_entry_point_fn)(void);

/*
 * What the entry point returns: the library's descriptor. It must stay
 * valid and unchanged for as long as the library is loaded (a library is
 * never unloaded), so make it static const data.
 */
struct tp_library {
    /* TIDEPOOL_KERNEL_ABI_VERSION. A tidepool of another major version
     * refuses the library. tidepool reads this field and `size` before any
     * other. */
    uint32_t abi_version;
    /* sizeof(tp_library) as this header defines it. */
    uint32_t size;
    /* How many kernels `kernels` points to: 1 to 256. */
    uint32_t kernel_count;
    /* sizeof(tp_kernel) as this header defines it: the distance in bytes
     * between consecutive entries of `kernels`. */
    uint32_t kernel_size;
    /* The kernels, an array of kernel_count entries. */
    const tp_kernel *kernels;
};

/*
 * One kernel. Within a library, names must be unique; across libraries and
 * tidepool's built-in kernels too (a clash refuses the whole library).
 */
struct tp_kernel {
    /* The name JavaScript passes as `kernel`, NUL-terminated, at most 128
     * bytes: "scope/name", where each of the two parts starts with a
     * lowercase ASCII letter or digit and contains only lowercase letters,
     * digits, '-', '_' and '.'. The scope keeps the name apart from the
     * built-in kernels and from other libraries. */
    const char *name;
    /* TP_KERNEL_EXPANDS, or 0. */
    uint32_t flags;
    /* How many entries `params` has: 0 to 64. */
    uint32_t param_count;
    /* The parameter schema (param_count entries; may be NULL when
     * param_count is 0). tidepool rejects a task whose parameters do not
     * match it before make_params is called. */
    const tp_param_spec *params;
    /* May be NULL only when param_count is 0; start then gets NULL
     * parameters. */
    tp_make_params_fn make_params;
    /* May be NULL when the parameter objects need no freeing. */
    tp_drop_fn drop_params;
    /* Required. */
    tp_start_fn start;
    /* Required. */
    tp_update_fn update;
    /* Required. */
    tp_finish_fn finish;
    /* Required: called once for every state start made, whatever happened
     * to its task. */
    tp_drop_fn drop_state;
};

/*
 * One entry of a kernel's parameter schema: a property of the `params`
 * object a JavaScript task passes.
 */
struct tp_param_spec {
    /* The property name, NUL-terminated, at most 64 bytes: an ASCII letter
     * followed by letters, digits or '_'. Unique within the kernel. */
    const char *name;
    /* One of TP_PARAM_INTEGER ... TP_PARAM_BYTES. */
    uint32_t kind;
    /* 1 when every task must give this parameter, 0 when it is optional.
     * (A kernel with a required parameter cannot run without
     * parameters.) */
    uint32_t required;
    /* The inclusive range of a TP_PARAM_INTEGER (int_min <= int_max);
     * ignored for other kinds. */
    int64_t int_min;
    int64_t int_max;
    /* The inclusive range of a TP_PARAM_NUMBER (num_min <= num_max, neither
     * NaN); ignored for other kinds. */
    double num_min;
    double num_max;
};

/*
 * One parameter value passed to make_params. Only the field matching the
 * schema entry's kind is meaningful, and only when `present` is 1.
 */
struct tp_value {
    /* 1 when the task gave this parameter, 0 when it did not. */
    uint32_t present;
    /* TP_PARAM_BOOLEAN: 0 or 1. */
    uint32_t boolean;
    /* TP_PARAM_INTEGER: already within [int_min, int_max]. */
    int64_t integer;
    /* TP_PARAM_NUMBER: already within [num_min, num_max]. */
    double number;
    /* TP_PARAM_STRING (valid UTF-8) and TP_PARAM_BYTES: `len` bytes, not
     * NUL-terminated, valid only until make_params returns (copy them into
     * the parameter object to keep them). May be NULL when len is 0. */
    const uint8_t *data;
    size_t len;
};

/*
 * What tidepool lends a kernel function for the duration of one call: where
 * output goes, whether to stop, how to report an error. Every host function
 * takes `ctx` as its first argument. The tp_host, ctx and every pointer a
 * host function returns are valid only until the kernel function returns.
 * The function pointers are never NULL. tidepool recognizes a ctx whose
 * call has returned: the host function then does nothing (see "Borrowed
 * pointers" above). A tp_host pointer kept past its call still points to
 * readable memory, but once the thread that lent it has made 64 more calls
 * it may read a later call's host, which the check cannot tell from its own.
 */
struct tp_host {
    /* sizeof(tp_host) as the calling tidepool defines it. A field added by
     * a later minor version exists only when host->size covers it. */
    uint32_t size;
    /* Always 0 in this version. */
    uint32_t reserved;
    /* tidepool's context for this call: pass it back, never interpret it
     * (it is a token naming the call, not an address to read). */
    void *ctx;
    /*
     * Says why the call is failing: `code` is an identifier such as
     * "ERR_MYLIB_BAD_RECORD" (ASCII letters, digits and '_', starting with a
     * letter, at most 64 bytes; anything else is replaced by
     * ERR_TIDEPOOL_KERNEL_FAILED) and `message` is UTF-8 text (cut at
     * 896 bytes). Both are byte ranges (no NUL needed) and are copied before
     * fail returns. If called several times, the last call counts. Then
     * return TP_ERROR (or TP_PANIC). The JavaScript promise rejects with an
     * Error carrying that code and message.
     */
    void (*fail)(void *ctx, const uint8_t *code, size_t code_len, const uint8_t *message, size_t message_len);
    /*
     * Appends `len` bytes to the task's output. Returns TP_OK, or
     * TP_TOO_LARGE when they would exceed the task's output limit (then
     * nothing was written: return TP_TOO_LARGE). Only usable in update and
     * finish; elsewhere it returns TP_ERROR and the task fails, as it does
     * for `data` NULL with `len` > 0.
     */
    int32_t (*write)(void *ctx, const uint8_t *data, size_t len);
    /*
     * Lends room right after the output, to write into in place: returns a
     * pointer to it and stores its length in *room. The room holds at least
     * `at_least` bytes (an `at_least` of 0 counts as 1) unless the output
     * limit is closer, in which case it holds what is left under the limit.
     * Returns NULL (and *room = 0) when no byte is left under the limit:
     * return TP_TOO_LARGE. The room is allocated and initialized when lent:
     * ask for what you will use, not for the whole limit. The bytes are
     * initialized memory but their values are unspecified. Write into the
     * front of the room, then call commit with the number of bytes written.
     * The room is valid only until the next call of write, unfilled, commit
     * or reserve. Only usable in update and finish.
     */
    uint8_t *(*unfilled)(void *ctx, size_t at_least, size_t *room);
    /*
     * Appends the first `n` bytes of the room the last unfilled lent to the
     * output. Returns TP_OK, or TP_ERROR when `n` exceeds that room (or no
     * room is lent): a bug, after which the task fails whatever is returned.
     */
    int32_t (*commit)(void *ctx, size_t n);
    /*
     * A hint that about `additional` more bytes of output will follow, so
     * tidepool can allocate once. Never fails; ends any lent room.
     */
    void (*reserve)(void *ctx, size_t additional);
    /*
     * Returns TP_OK to go on, or TP_CANCELLED or TP_TIMED_OUT when the task
     * was cancelled or passed its deadline: then stop and return that
     * status. Cheap enough to call every few hundred microseconds of work;
     * a kernel that never calls it cannot be stopped. Usable in every
     * function that gets a host.
     */
    int32_t (*check)(void *ctx);
};

/*
 * The entry point a kernel library defines and exports:
 *
 *     static const tp_kernel kernels[] = { ... };
 *     static const tp_library library = {
 *         TIDEPOOL_KERNEL_ABI_VERSION, sizeof(tp_library),
 *         sizeof kernels / sizeof kernels[0], sizeof(tp_kernel), kernels,
 *     };
 *     TIDEPOOL_KERNEL_EXPORT const tp_library *tidepool_kernels_v1(void) {
 *         return &library;
 *     }
 *
 * It takes nothing, may be called more than once and from any thread, and
 * returns the same descriptor every time (never NULL).
 */
TIDEPOOL_KERNEL_EXPORT const tp_library *tidepool_kernels_v1(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TIDEPOOL_KERNEL_H */
