/*
 * The DMA Copy control protocol, spoken over a stream socket between the host and the DPU process.
 *
 * Every message is a 12-byte header followed by its payload; all integers are little-endian:
 *
 *   offset 0  u32 magic        0x434D4453 ("SDMC" in memory)
 *   offset 4  u16 version      DMA_COPY_PROTO_VERSION
 *   offset 6  u16 type         enum dma_copy_msg_type
 *   offset 8  u32 payload_len  exact size of the type's payload (at most DMA_COPY_PROTO_MAX_PAYLOAD)
 *
 * The header is checked before any payload is read, so a peer that sends garbage is refused after
 * at most 12 bytes, and a length can never make the receiver allocate or wait for more than the
 * limit. Payloads (reserved fields are sent as 0 and must be 0):
 *
 *   HELLO      host -> DPU  u32 direction, u32 reserved, u64 file_size, u32 crc32c, u32 reserved
 *   HELLO_ACK  DPU -> host  u64 file_size, u32 crc32c, u32 reserved
 *   EXPORT     host -> DPU  u64 addr, u64 len, u32 blob_len, u32 reserved, blob_len bytes of blob
 *   PROGRESS   DPU -> host  u64 bytes_done
 *   DONE       DPU -> host  u32 status, u32 crc32c, u64 bytes, u64 elapsed_ns
 *   VERDICT    host -> DPU  u32 status, u32 reserved
 *   ERROR      either       u32 status, u32 text_len, text_len bytes of text (no NUL)
 *
 * A session: HELLO, HELLO_ACK, EXPORT, PROGRESS*, DONE, VERDICT. Either side may send ERROR instead
 * of its next message and then closes. The full description is in docs/dma-copy.md.
 */
#ifndef DMA_COPY_PROTO_H_
#define DMA_COPY_PROTO_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_error.h>

#define DMA_COPY_PROTO_MAGIC 0x434D4453u
#define DMA_COPY_PROTO_VERSION 1
#define DMA_COPY_PROTO_HEADER_SIZE 12
/* Largest export blob accepted: far above what a descriptor needs, and it bounds the receive buffer. */
#define DMA_COPY_PROTO_MAX_BLOB (256 * 1024)
#define DMA_COPY_PROTO_MAX_TEXT 512
#define DMA_COPY_PROTO_MAX_PAYLOAD (24 + DMA_COPY_PROTO_MAX_BLOB)
#define DMA_COPY_PROTO_MAX_MESSAGE (DMA_COPY_PROTO_HEADER_SIZE + DMA_COPY_PROTO_MAX_PAYLOAD)

enum dma_copy_msg_type {
	DMA_COPY_MSG_HELLO = 1,
	DMA_COPY_MSG_HELLO_ACK = 2,
	DMA_COPY_MSG_EXPORT = 3,
	DMA_COPY_MSG_PROGRESS = 4,
	DMA_COPY_MSG_DONE = 5,
	DMA_COPY_MSG_VERDICT = 6,
	DMA_COPY_MSG_ERROR = 7,
};

/* A decoded message. Pointers (blob, text) point into the buffer it was decoded from. */
struct dma_copy_msg {
	enum dma_copy_msg_type type;
	union {
		struct {
			uint32_t direction;
			uint64_t file_size;
			uint32_t crc32c;
		} hello;
		struct {
			uint64_t file_size;
			uint32_t crc32c;
		} hello_ack;
		struct {
			uint64_t addr;
			uint64_t len;
			const void *blob;
			uint32_t blob_len;
		} export_desc;
		struct {
			uint64_t bytes_done;
		} progress;
		struct {
			uint32_t status;
			uint32_t crc32c;
			uint64_t bytes;
			uint64_t elapsed_ns;
		} done;
		struct {
			uint32_t status;
		} verdict;
		struct {
			uint32_t status;
			const char *text;
			uint32_t text_len;
		} error;
	} u;
};

const char *dma_copy_msg_type_name(uint32_t type);

/*
 * Encodes msg into buf (capacity cap); *len receives the message size.
 * INVALID_VALUE: unknown type, blob or text over its limit; NO_MEMORY: cap too small.
 */
doca_error_t dma_copy_msg_encode(const struct dma_copy_msg *msg, uint8_t *buf, size_t cap, size_t *len);

/*
 * Checks a header: magic, version, known type, payload length within the limit and consistent with
 * the type. *payload_len receives the length to read next. On failure, reason (may be NULL) gets a
 * static description. UNSUPPORTED_VERSION for another version, INVALID_VALUE for anything else.
 */
doca_error_t dma_copy_msg_check_header(const uint8_t header[DMA_COPY_PROTO_HEADER_SIZE], uint32_t *payload_len,
				       const char **reason);

/* Decodes a whole message (header + payload, exactly len bytes). Errors as dma_copy_msg_check_header,
 * plus INVALID_VALUE for a payload that does not match its type (length, reserved fields). */
doca_error_t dma_copy_msg_decode(const uint8_t *buf, size_t len, struct dma_copy_msg *msg, const char **reason);

/* --- Over a connected stream socket. --- */

struct dma_copy_channel {
	int fd;
	int timeout_ms;  /* longest wait for one whole message */
	uint8_t *buffer; /* DMA_COPY_PROTO_MAX_MESSAGE bytes, for both directions */
	const char *peer_name;
};

/* Wraps a connected socket; allocates the buffer. The channel owns fd from now on. */
doca_error_t dma_copy_channel_init(struct dma_copy_channel *channel, int fd, int timeout_seconds,
				   const char *peer_name);
void dma_copy_channel_close(struct dma_copy_channel *channel);

/* Sends one message, all of it (never raises SIGPIPE). CONNECTION_RESET if the peer went away. */
doca_error_t dma_copy_send(struct dma_copy_channel *channel, const struct dma_copy_msg *msg);

/* Sends ERROR(status, text), best effort: for telling the peer why this side gives up. */
void dma_copy_send_error(struct dma_copy_channel *channel, doca_error_t status, const char *text);

/*
 * Receives one message within the channel's timeout. Logs and returns: TIME_OUT (nothing, or only
 * part of a message, arrived in time), CONNECTION_RESET (peer closed or reset the connection),
 * INVALID_VALUE / UNSUPPORTED_VERSION (garbage). msg's pointers stay valid until the next call.
 */
doca_error_t dma_copy_recv(struct dma_copy_channel *channel, struct dma_copy_msg *msg);

/*
 * Receives the message of the expected type, skipping PROGRESS messages unless PROGRESS is expected.
 * An ERROR from the peer is logged with its text and its status is returned (CONNECTION_ABORTED if
 * it carried none); any other type is a protocol error (INVALID_VALUE).
 */
doca_error_t dma_copy_expect(struct dma_copy_channel *channel, enum dma_copy_msg_type type, struct dma_copy_msg *msg);

#endif /* DMA_COPY_PROTO_H_ */
