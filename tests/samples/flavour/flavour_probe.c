/*
 * Built against an installed softdpu through one of its pkg-config directories (flavour_test.sh):
 * prints which flavour doca_build_config.h gave it (DOCA_ARCH_HOST or DOCA_ARCH_DPU), which side of
 * the emulated system the process runs on (found from the devices it sees: the DPU's first PF is
 * 03:00.0, the host's 0b:00.0, in the built-in topology) and the version string of doca_version.h.
 * The test compares these with what each pkg-config directory must give.
 */
#include <stdio.h>
#include <stdlib.h>

#include <doca_build_config.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_version.h>

#if defined(DOCA_ARCH_HOST) == defined(DOCA_ARCH_DPU)
#error "doca_build_config.h must define exactly one of DOCA_ARCH_HOST and DOCA_ARCH_DPU"
#endif

static int count_devices_at(struct doca_devinfo **list, uint32_t count, const char *pci)
{
	int found = 0;
	for (uint32_t i = 0; i < count; i++) {
		uint8_t equal = 0;
		if (doca_devinfo_is_equal_pci_addr(list[i], pci, &equal) == DOCA_SUCCESS && equal)
			found++;
	}
	return found;
}

int main(void)
{
	struct doca_devinfo **list = NULL;
	uint32_t count = 0;
	doca_error_t result = doca_devinfo_create_list(&list, &count);
	if (result != DOCA_SUCCESS) {
		fprintf(stderr, "doca_devinfo_create_list: %s\n", doca_error_get_descr(result));
		return EXIT_FAILURE;
	}
	int dpu = count_devices_at(list, count, "03:00.0");
	int host = count_devices_at(list, count, "0b:00.0");
	doca_devinfo_destroy_list(list);
	const char *side = dpu > 0 && host == 0 ? "dpu" : host > 0 && dpu == 0 ? "host" : "unknown";
#ifdef DOCA_ARCH_DPU
	const char *flavour = "dpu";
#else
	const char *flavour = "host";
#endif
	printf("flavour=%s side=%s version=%s\n", flavour, side, DOCA_VER_STRING);
	return EXIT_SUCCESS;
}
