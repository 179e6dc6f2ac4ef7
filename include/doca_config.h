/*
 * softdpu: feature switches for the DOCA headers.
 */
#ifndef DOCA_CONFIG_H_
#define DOCA_CONFIG_H_

#include <doca_build_config.h>

#ifndef DOCA_DPA_DEVICE
#define DOCA_COMPAT_HELPERS
#endif

#endif /* DOCA_CONFIG_H_ */
