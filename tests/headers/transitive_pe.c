/*
 * Includes doca_pe.h only; in DOCA 2.5 it includes <stdlib.h> (and doca_ctx.h). Compiled as C11
 * and, through a generated wrapper, as C++20.
 */
#include <doca_pe.h>

doca_error_t headers_pe_use(void);

doca_error_t headers_pe_use(void)
{
	struct doca_pe *pe = NULL;
	size_t inflight = 0;
	void *scratch = malloc(64); /* <stdlib.h> */
	doca_error_t result = doca_pe_create(&pe);

	if (result == DOCA_SUCCESS) {
		result = doca_pe_get_num_inflight_tasks(pe, &inflight);
		doca_pe_destroy(pe);
	}
	free(scratch);
	return result;
}
