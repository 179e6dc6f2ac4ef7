/*
 * Includes doca_ctx.h only; in DOCA 2.5 it includes doca_dev.h, so a program may open and close
 * devices with it alone. Compiled as C11 and, through a generated wrapper, as C++20.
 */
#include <doca_ctx.h>

doca_error_t headers_ctx_use(struct doca_devinfo *devinfo, const struct doca_ctx *ctx);

doca_error_t headers_ctx_use(struct doca_devinfo *devinfo, const struct doca_ctx *ctx)
{
	struct doca_dev *dev = 0;
	enum doca_ctx_states state = DOCA_CTX_STATE_IDLE;
	doca_error_t result = doca_dev_open(devinfo, &dev);

	if (result != DOCA_SUCCESS)
		return result;
	result = doca_ctx_get_state(ctx, &state);
	doca_dev_close(dev);
	return result;
}
