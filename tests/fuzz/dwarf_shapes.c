// SPDX-License-Identifier: Apache-2.0
/*
 * Not a test: compiled with -g by run.sh into small DWARF seeds for
 * fuzz_dwarf_offsets. CPython's struct names with CPython's shapes
 * (typedefs of tagged structs, nested and anonymous members, qualifiers,
 * bit fields, a declaration before the definition), few enough bytes that
 * mutations reach every part of the resolver.
 */
#include <stdint.h>

typedef struct _object PyObject;
struct _typeobject;
struct _object {
	intptr_t ob_refcnt;
	struct _typeobject *ob_type;
};
typedef struct {
	PyObject ob_base;
	intptr_t ob_size;
} PyVarObject;
typedef struct {
	PyVarObject ob_base;
	intptr_t ob_shash;
	char ob_sval[1];
} PyBytesObject;
typedef struct {
	PyObject ob_base;
	intptr_t length;
	intptr_t hash;
	struct {
		unsigned int interned : 2;
		unsigned int kind : 3;
		unsigned int compact : 1;
		unsigned int ascii : 1;
	} state;
} PyASCIIObject;
typedef struct {
	PyASCIIObject _base;
	intptr_t utf8_length;
	char *utf8;
} PyCompactUnicodeObject;

typedef struct {
	PyObject ob_base;
	int co_firstlineno;
	PyObject *co_filename, *co_name, *co_qualname, *co_linetable, *co_lnotab;
	char co_code_adaptive[1];
} PyCodeObject;

struct _frame {
	PyVarObject ob_base;
	struct _frame *f_back;
	PyCodeObject *f_code;
	int f_lasti;
};
typedef struct _frame PyFrameObject;
typedef struct _PyInterpreterFrame {
	PyCodeObject *f_code;
	struct _PyInterpreterFrame *previous;
	const volatile uint16_t *prev_instr;
	char owner;
	char is_entry;
} _PyInterpreterFrame;
typedef struct _PyCFrame {
	_PyInterpreterFrame *current_frame;
	struct _PyCFrame *previous;
} _PyCFrame;

struct _is;
typedef struct _ts {
	struct _ts *prev, *next;
	struct _is *interp;
	union {
		PyFrameObject *frame;
		_PyCFrame *cframe;
	};
	unsigned long thread_id, native_thread_id;
} PyThreadState;

struct _gil_runtime_state {
	unsigned long interval;
	_Atomic(PyThreadState *) last_holder;
	_Atomic int locked;
	unsigned long switch_number;
};
struct _ceval_state {
	struct _gil_runtime_state *gil;
};
typedef struct _is {
	struct _is *next;
	PyThreadState *tstate_head;
	struct {
		PyThreadState *head;
	} threads;
	struct _ceval_state ceval;
} PyInterpreterState;

typedef struct pyruntimestate {
	int initialized;
	struct pyinterpreters {
		PyInterpreterState *head, *main;
	} interpreters;
	struct {
		int recursion_limit;
		struct _gil_runtime_state gil;
	} ceval;
} _PyRuntimeState;

/* the same names as the unit test's probe */
struct probe_inner {
	int kind;
	void *head;
};
typedef const struct probe_state {
	char pad[24];
	struct probe_inner interpreters;
	union {
		long anon_a;
		short anon_b;
	};
} probe_state_t;

_PyRuntimeState _PyRuntime;
PyThreadState ts;
PyFrameObject frame;
_PyInterpreterFrame iframe;
PyCodeObject code;
PyBytesObject bytes;
PyCompactUnicodeObject str;
probe_state_t probe;
