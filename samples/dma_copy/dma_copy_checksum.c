/*
 * CRC32C, slicing-by-8: eight tables let the loop consume 8 bytes per step. The tables are built on
 * first use, once (pthread_once), so the function is thread-safe without a constructor.
 */
#include "dma_copy_checksum.h"

#include <pthread.h>

#define CRC32C_POLY_REFLECTED 0x82F63B78u

static uint32_t crc_tables[8][256];
static pthread_once_t crc_tables_once = PTHREAD_ONCE_INIT;

static void build_crc_tables(void)
{
	for (uint32_t byte = 0; byte < 256; byte++) {
		uint32_t crc = byte;

		for (int bit = 0; bit < 8; bit++)
			crc = (crc & 1u) ? (crc >> 1) ^ CRC32C_POLY_REFLECTED : crc >> 1;
		crc_tables[0][byte] = crc;
	}
	for (uint32_t byte = 0; byte < 256; byte++)
		for (int slice = 1; slice < 8; slice++)
			crc_tables[slice][byte] =
			    (crc_tables[slice - 1][byte] >> 8) ^ crc_tables[0][crc_tables[slice - 1][byte] & 0xffu];
}

/* Little-endian load, whatever the host order: the slicing tables assume the first byte is lowest. */
static uint64_t load_le64(const uint8_t *bytes)
{
	uint64_t value = 0;

	for (int i = 7; i >= 0; i--)
		value = (value << 8) | bytes[i];
	return value;
}

uint32_t dma_copy_crc32c(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *bytes = data;

	pthread_once(&crc_tables_once, build_crc_tables);
	crc = ~crc;
	while (len >= 8) {
		const uint64_t word = load_le64(bytes) ^ crc;

		crc = crc_tables[7][word & 0xff] ^ crc_tables[6][(word >> 8) & 0xff] ^
		      crc_tables[5][(word >> 16) & 0xff] ^ crc_tables[4][(word >> 24) & 0xff] ^
		      crc_tables[3][(word >> 32) & 0xff] ^ crc_tables[2][(word >> 40) & 0xff] ^
		      crc_tables[1][(word >> 48) & 0xff] ^ crc_tables[0][word >> 56];
		bytes += 8;
		len -= 8;
	}
	while (len-- > 0)
		crc = (crc >> 8) ^ crc_tables[0][(crc ^ *bytes++) & 0xffu];
	return ~crc;
}
