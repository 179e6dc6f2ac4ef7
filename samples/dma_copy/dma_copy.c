// pkg-config: doca-common doca-dma doca-argp
/*
 * DMA Copy application: copies a file from the host to the DPU or from the DPU to the host.
 *
 * Run it twice, once per side (each process picks its side of the emulated system with
 * SOFTDPU_SIDE=host|dpu):
 *
 *   SOFTDPU_SIDE=dpu  dma_copy --role dpu  --direction host-to-dpu --file /tmp/received
 *   SOFTDPU_SIDE=host dma_copy --role host --direction host-to-dpu --file /tmp/to-send
 *
 * The host exports its memory; the DPU copies with DMA tasks. See docs/dma-copy.md.
 */
#include <stdlib.h>

#include <doca_log.h>

#include "dma_copy.h"
#include "sample_common.h"

DOCA_LOG_REGISTER(DMA_COPY);

int main(int argc, char **argv)
{
	struct dma_copy_config config;
	doca_error_t result;

	if (sample_log_init() != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = dma_copy_parse_args(argc, argv, &config);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Invalid command line: %s", doca_error_get_descr(result));
		return EXIT_FAILURE;
	}
	if (config.role == DMA_COPY_ROLE_HOST)
		result = dma_copy_run_host(&config);
	else
		result = dma_copy_run_dpu(&config);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("DMA copy (%s side, %s) failed: %s", dma_copy_role_name(config.role),
			     dma_copy_direction_name(config.direction), doca_error_get_descr(result));
		return EXIT_FAILURE;
	}
	DOCA_LOG_INFO("DMA copy (%s side, %s) finished successfully", dma_copy_role_name(config.role),
		      dma_copy_direction_name(config.direction));
	return EXIT_SUCCESS;
}
