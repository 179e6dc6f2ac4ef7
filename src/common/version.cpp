// doca_version.h: the version of the library loaded at run time.
#include <doca_version.h>

extern "C" const char *doca_version_runtime(void)
{
	return DOCA_VER_STRING;
}
