/*
 * Includes doca_buf.h only; in DOCA 2.5 it includes <stdbool.h>, <stddef.h> and <stdint.h>.
 * Compiled as C11 and, through a generated wrapper, as C++20.
 */
#include <doca_buf.h>

bool headers_buf_is_empty(const struct doca_buf *buf);

bool headers_buf_is_empty(const struct doca_buf *buf)
{
	size_t data_len = 0;

	return doca_buf_get_data_len(buf, &data_len) == DOCA_SUCCESS && data_len == 0;
}
