/*
 * Includes doca_compat.h only and uses its struct-versioning helpers. DOCA 2.5 offers them when
 * DOCA_COMPAT_HELPERS is defined (doca_config.h), and then includes <string.h> and doca_version.h
 * for what they expand to. Compiled as C11 and, through a generated wrapper, as C++20.
 */
#include <doca_compat.h>

#ifndef DOCA_COMPAT_HELPERS
#error "doca_compat.h should define DOCA_COMPAT_HELPERS outside DPA device code"
#endif

struct headers_versioned {
	DOCA_STRUCT_START;
	int value;
};

int headers_compat_use(void);

int headers_compat_use(void)
{
	struct headers_versioned on_stack;
	struct headers_versioned other;
	struct headers_versioned *pointer = &other;
	struct headers_versioned listed = {DOCA_STRUCT_CTOR_LIST_START, .value = 7};
	int bad = 0;

	DOCA_STRUCT_MEMSET_CTOR(on_stack);
	DOCA_STRUCT_PTR_MEMSET_CTOR(pointer);
	bad += DOCA_STRUCT_GET_VERSION(&on_stack) != DOCA_CURRENT_VERSION_NUM || on_stack.value != 0;
	bad += DOCA_STRUCT_GET_VERSION(pointer) != DOCA_CURRENT_VERSION_NUM || pointer->value != 0;
	bad += DOCA_STRUCT_GET_VERSION(&listed) != DOCA_VERSION_NUM(DOCA_VER_MAJOR, DOCA_VER_MINOR, DOCA_VER_PATCH);

	other.value = 3;
	DOCA_STRUCT_CTOR(on_stack);
	DOCA_STRUCT_PTR_CTOR(pointer);
	bad += pointer->value != 3;

	/* <string.h> and doca_version.h are there for the program too, as with DOCA. */
	bad += strlen(doca_version()) != strlen(DOCA_VER_STRING);
	bad += memcmp(doca_version(), DOCA_VER_STRING, sizeof(DOCA_VER_STRING)) != 0;
	return bad;
}
