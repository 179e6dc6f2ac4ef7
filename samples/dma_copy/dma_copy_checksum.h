/*
 * CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum both sides of the DMA Copy
 * application compute over the file. Software only, slicing-by-8, so it runs anywhere.
 */
#ifndef DMA_COPY_CHECKSUM_H_
#define DMA_COPY_CHECKSUM_H_

#include <stddef.h>
#include <stdint.h>

/* Continues a CRC32C: start with crc = 0; crc32c(crc32c(0, a), b) == crc32c(0, a followed by b). */
uint32_t dma_copy_crc32c(uint32_t crc, const void *data, size_t len);

#endif /* DMA_COPY_CHECKSUM_H_ */
