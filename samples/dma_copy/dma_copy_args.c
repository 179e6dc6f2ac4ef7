/*
 * DMA Copy: the command line, parsed with doca_argp (so -j <file.json> works as in DOCA apps).
 */
#include "dma_copy.h"
#include "sample_argp.h"

#include <limits.h>
#include <string.h>

#include <doca_argp.h>
#include <doca_log.h>

DOCA_LOG_REGISTER(DMA_COPY::ARGS);

static doca_error_t copy_string(char *into, size_t size, const char *value, const char *flag)
{
	if (strlen(value) >= size) {
		DOCA_LOG_ERR("--%s: value longer than %zu characters", flag, size - 1);
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(into, value);
	return DOCA_SUCCESS;
}

static doca_error_t role_cb(void *param, void *config)
{
	struct dma_copy_config *cfg = config;
	bool is_host;
	const doca_error_t result = sample_argp_parse_role(param, &is_host);

	if (result == DOCA_SUCCESS)
		cfg->role = is_host ? DMA_COPY_ROLE_HOST : DMA_COPY_ROLE_DPU;
	return result;
}

static doca_error_t direction_cb(void *param, void *config)
{
	struct dma_copy_config *cfg = config;
	const char *value = param;

	if (strcmp(value, "host-to-dpu") == 0)
		cfg->direction = DMA_COPY_HOST_TO_DPU;
	else if (strcmp(value, "dpu-to-host") == 0)
		cfg->direction = DMA_COPY_DPU_TO_HOST;
	else {
		DOCA_LOG_ERR("--direction: \"%s\" is neither host-to-dpu nor dpu-to-host", value);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

static doca_error_t file_cb(void *param, void *config)
{
	struct dma_copy_config *cfg = config;

	if (((const char *)param)[0] == '\0') {
		DOCA_LOG_ERR("--file: empty path");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return copy_string(cfg->file, sizeof(cfg->file), param, "file");
}

static doca_error_t socket_cb(void *param, void *config)
{
	struct dma_copy_config *cfg = config;

	/* sockaddr_un holds 108 bytes; checked here so that a long path is a usage error, not a late failure. */
	if (((const char *)param)[0] == '\0' || strlen(param) >= 108) {
		DOCA_LOG_ERR("--socket: the path must have 1 to 107 characters");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return copy_string(cfg->socket_path, sizeof(cfg->socket_path), param, "socket");
}

static doca_error_t pci_addr_cb(void *param, void *config)
{
	struct dma_copy_config *cfg = config;

	return copy_string(cfg->pci_addr, sizeof(cfg->pci_addr), param, "pci-addr");
}

static doca_error_t chunk_size_cb(void *param, void *config)
{
	int value;
	const doca_error_t result = sample_argp_int_in_range(param, "chunk-size", INT_MAX, "bytes", &value);

	if (result == DOCA_SUCCESS)
		((struct dma_copy_config *)config)->chunk_size = (uint64_t)value;
	return result;
}

static doca_error_t inflight_cb(void *param, void *config)
{
	int value;
	const doca_error_t result = sample_argp_int_in_range(param, "inflight", DMA_COPY_MAX_INFLIGHT, NULL, &value);

	if (result == DOCA_SUCCESS)
		((struct dma_copy_config *)config)->inflight = (uint32_t)value;
	return result;
}

static doca_error_t timeout_cb(void *param, void *config)
{
	return sample_argp_int_in_range(param, "timeout", DMA_COPY_MAX_TIMEOUT_SECONDS, "seconds",
					&((struct dma_copy_config *)config)->timeout_seconds);
}

/* Runs after every flag: the mandatory ones are checked by doca_argp already. */
static doca_error_t fill_role_defaults(void *config)
{
	struct dma_copy_config *cfg = config;

	if (cfg->pci_addr[0] == '\0')
		strcpy(cfg->pci_addr, cfg->role == DMA_COPY_ROLE_HOST ? DMA_COPY_DEFAULT_HOST_PCI_ADDR
								      : DMA_COPY_DEFAULT_DPU_PCI_ADDR);
	return DOCA_SUCCESS;
}

static doca_error_t register_flags(void)
{
	doca_error_t result;

	result = sample_argp_register_flag("r", "role", "<host|dpu>", "Which side this process plays (mandatory)",
					   DOCA_ARGP_TYPE_STRING, role_cb, true);
	if (result == DOCA_SUCCESS)
		result = sample_argp_register_flag(
		    "f", "file", "<path>", "File to send (sending side) or to write (receiving side) (mandatory)",
		    DOCA_ARGP_TYPE_STRING, file_cb, true);
	if (result == DOCA_SUCCESS)
		result =
		    sample_argp_register_flag("d", "direction", "<host-to-dpu|dpu-to-host>",
					      "Which way the file goes; both sides must agree (default host-to-dpu)",
					      DOCA_ARGP_TYPE_STRING, direction_cb, false);
	if (result == DOCA_SUCCESS)
		result = sample_argp_register_flag(
		    "s", "socket", "<path>",
		    "AF_UNIX socket: the DPU listens, the host connects (default " DMA_COPY_DEFAULT_SOCKET ")",
		    DOCA_ARGP_TYPE_STRING, socket_cb, false);
	if (result == DOCA_SUCCESS)
		result = sample_argp_register_flag("p", "pci-addr", "<address>",
						   "Device PCI address (default " DMA_COPY_DEFAULT_HOST_PCI_ADDR
						   " on the host, " DMA_COPY_DEFAULT_DPU_PCI_ADDR " on the DPU)",
						   DOCA_ARGP_TYPE_STRING, pci_addr_cb, false);
	if (result == DOCA_SUCCESS)
		result = sample_argp_register_flag("c", "chunk-size", "<bytes>",
						   "Bytes per DMA task, DPU side (default 1048576)", DOCA_ARGP_TYPE_INT,
						   chunk_size_cb, false);
	if (result == DOCA_SUCCESS)
		result = sample_argp_register_flag("q", "inflight", "<tasks>",
						   "DMA tasks in flight at once, DPU side (default 8)",
						   DOCA_ARGP_TYPE_INT, inflight_cb, false);
	if (result == DOCA_SUCCESS)
		result = sample_argp_register_flag("t", "timeout", "<seconds>",
						   "Longest wait for the peer or for DMA progress (default 10)",
						   DOCA_ARGP_TYPE_INT, timeout_cb, false);
	if (result == DOCA_SUCCESS)
		result = doca_argp_register_validation_callback(fill_role_defaults);
	return result;
}

doca_error_t dma_copy_parse_args(int argc, char **argv, struct dma_copy_config *config)
{
	doca_error_t result;

	memset(config, 0, sizeof(*config));
	config->direction = DMA_COPY_HOST_TO_DPU;
	strcpy(config->socket_path, DMA_COPY_DEFAULT_SOCKET);
	config->chunk_size = DMA_COPY_DEFAULT_CHUNK_SIZE;
	config->inflight = DMA_COPY_DEFAULT_INFLIGHT;
	config->timeout_seconds = DMA_COPY_DEFAULT_TIMEOUT_SECONDS;

	result = doca_argp_init("dma_copy", config);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to initialise the argument parser: %s", doca_error_get_descr(result));
		return result;
	}
	result = register_flags();
	if (result == DOCA_SUCCESS)
		result = doca_argp_start(argc, argv);
	doca_argp_destroy();
	return result;
}
