/*
 * softdpu: symbol visibility and API stability markers, as DOCA 2.5 defines them.
 *
 * DOCA_EXPERIMENTAL functions warn when called unless DOCA_ALLOW_EXPERIMENTAL_API is defined;
 * DOCA_DEPRECATED ones unless DOCA_ALLOW_DEPRECATED_API is defined.
 *
 * With DOCA_COMPAT_HELPERS defined (doca_config.h defines it unless DOCA_DPA_DEVICE is) this header
 * also offers the struct-versioning helpers DOCA_STRUCT_*, and includes what they expand to: memset
 * from <string.h> and DOCA_CURRENT_VERSION_NUM from doca_version.h.
 */
#ifndef DOCA_COMPAT_H_
#define DOCA_COMPAT_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_config.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DOCA_USED __attribute__((used))

#define DOCA_STABLE __attribute__((visibility("default"))) DOCA_USED

#ifndef DOCA_ALLOW_EXPERIMENTAL_API
#define DOCA_EXPERIMENTAL                                                                                              \
	__attribute__((deprecated("Symbol is defined as experimental"), section(".text.experimental"))) DOCA_STABLE
#else
#define DOCA_EXPERIMENTAL __attribute__((section(".text.experimental"))) DOCA_STABLE
#endif

#ifndef DOCA_ALLOW_DEPRECATED_API
#define DOCA_DEPRECATED __attribute__((deprecated("Symbol is defined as deprecated"))) DOCA_STABLE
#else
#define DOCA_DEPRECATED DOCA_STABLE
#endif

#ifdef DOCA_COMPAT_HELPERS
/* Struct versioning: a versioned struct starts with a member stamped with the API version. */
#define DOCA_STRUCT_START uint32_t __doca_api_version
#define DOCA_STRUCT_GET_VERSION(x) ((x)->__doca_api_version)
#define DOCA_STRUCT_CTOR(x) ((x).__doca_api_version = DOCA_CURRENT_VERSION_NUM)
#define DOCA_STRUCT_PTR_CTOR(x) ((x)->__doca_api_version = DOCA_CURRENT_VERSION_NUM)
#define DOCA_STRUCT_MEMSET_CTOR(x)                                                                                     \
	do {                                                                                                           \
		memset(&(x), 0, sizeof(x));                                                                            \
		DOCA_STRUCT_CTOR(x);                                                                                   \
	} while (0)
#define DOCA_STRUCT_PTR_MEMSET_CTOR(x)                                                                                 \
	do {                                                                                                           \
		memset((x), 0, sizeof(*(x)));                                                                          \
		DOCA_STRUCT_PTR_CTOR(x);                                                                               \
	} while (0)
#define DOCA_STRUCT_CTOR_LIST_START .__doca_api_version = DOCA_CURRENT_VERSION_NUM
#endif /* DOCA_COMPAT_HELPERS */

#ifdef __cplusplus
}
#endif

#ifdef DOCA_COMPAT_HELPERS
/* Last, so that doca_version.h, which includes this header, finds every marker above defined. */
#include <string.h>

#include "doca_version.h"
#endif

#endif /* DOCA_COMPAT_H_ */
