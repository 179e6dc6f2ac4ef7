/*
 * The DMA Copy control protocol: encoding, checked decoding, and message I/O with timeouts.
 * See dma_copy_proto.h for the wire format.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, poll flags under -std=c11 */

#include "dma_copy_proto.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <doca_log.h>

DOCA_LOG_REGISTER(DMA_COPY::PROTO);

#define HELLO_PAYLOAD 24
#define HELLO_ACK_PAYLOAD 16
#define EXPORT_FIXED_PAYLOAD 24
#define PROGRESS_PAYLOAD 8
#define DONE_PAYLOAD 24
#define VERDICT_PAYLOAD 8
#define ERROR_FIXED_PAYLOAD 8

const char *dma_copy_msg_type_name(uint32_t type)
{
	switch (type) {
	case DMA_COPY_MSG_HELLO:
		return "HELLO";
	case DMA_COPY_MSG_HELLO_ACK:
		return "HELLO_ACK";
	case DMA_COPY_MSG_EXPORT:
		return "EXPORT";
	case DMA_COPY_MSG_PROGRESS:
		return "PROGRESS";
	case DMA_COPY_MSG_DONE:
		return "DONE";
	case DMA_COPY_MSG_VERDICT:
		return "VERDICT";
	case DMA_COPY_MSG_ERROR:
		return "ERROR";
	}
	return "unknown";
}

/* --- Little-endian fields, independent of the host's byte order and alignment. --- */

static void put_u16(uint8_t *at, uint16_t value)
{
	at[0] = (uint8_t)value;
	at[1] = (uint8_t)(value >> 8);
}

static void put_u32(uint8_t *at, uint32_t value)
{
	for (int i = 0; i < 4; i++)
		at[i] = (uint8_t)(value >> (8 * i));
}

static void put_u64(uint8_t *at, uint64_t value)
{
	for (int i = 0; i < 8; i++)
		at[i] = (uint8_t)(value >> (8 * i));
}

static uint16_t get_u16(const uint8_t *at)
{
	return (uint16_t)(at[0] | (at[1] << 8));
}

static uint32_t get_u32(const uint8_t *at)
{
	uint32_t value = 0;

	for (int i = 3; i >= 0; i--)
		value = (value << 8) | at[i];
	return value;
}

static uint64_t get_u64(const uint8_t *at)
{
	uint64_t value = 0;

	for (int i = 7; i >= 0; i--)
		value = (value << 8) | at[i];
	return value;
}

/* --- Encoding. --- */

static doca_error_t payload_size(const struct dma_copy_msg *msg, size_t *size)
{
	switch (msg->type) {
	case DMA_COPY_MSG_HELLO:
		*size = HELLO_PAYLOAD;
		return DOCA_SUCCESS;
	case DMA_COPY_MSG_HELLO_ACK:
		*size = HELLO_ACK_PAYLOAD;
		return DOCA_SUCCESS;
	case DMA_COPY_MSG_EXPORT:
		if (msg->u.export_desc.blob_len > DMA_COPY_PROTO_MAX_BLOB ||
		    (msg->u.export_desc.blob_len > 0 && msg->u.export_desc.blob == NULL))
			return DOCA_ERROR_INVALID_VALUE;
		*size = EXPORT_FIXED_PAYLOAD + (size_t)msg->u.export_desc.blob_len;
		return DOCA_SUCCESS;
	case DMA_COPY_MSG_PROGRESS:
		*size = PROGRESS_PAYLOAD;
		return DOCA_SUCCESS;
	case DMA_COPY_MSG_DONE:
		*size = DONE_PAYLOAD;
		return DOCA_SUCCESS;
	case DMA_COPY_MSG_VERDICT:
		*size = VERDICT_PAYLOAD;
		return DOCA_SUCCESS;
	case DMA_COPY_MSG_ERROR:
		if (msg->u.error.text_len > DMA_COPY_PROTO_MAX_TEXT ||
		    (msg->u.error.text_len > 0 && msg->u.error.text == NULL))
			return DOCA_ERROR_INVALID_VALUE;
		*size = ERROR_FIXED_PAYLOAD + (size_t)msg->u.error.text_len;
		return DOCA_SUCCESS;
	}
	return DOCA_ERROR_INVALID_VALUE;
}

doca_error_t dma_copy_msg_encode(const struct dma_copy_msg *msg, uint8_t *buf, size_t cap, size_t *len)
{
	uint8_t *payload = buf + DMA_COPY_PROTO_HEADER_SIZE;
	size_t size;
	doca_error_t result;

	if (msg == NULL || buf == NULL || len == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	result = payload_size(msg, &size);
	if (result != DOCA_SUCCESS)
		return result;
	if (cap < DMA_COPY_PROTO_HEADER_SIZE + size)
		return DOCA_ERROR_NO_MEMORY;

	memset(buf, 0, DMA_COPY_PROTO_HEADER_SIZE + size); /* reserved fields go out as 0 */
	put_u32(buf, DMA_COPY_PROTO_MAGIC);
	put_u16(buf + 4, DMA_COPY_PROTO_VERSION);
	put_u16(buf + 6, (uint16_t)msg->type);
	put_u32(buf + 8, (uint32_t)size);
	switch (msg->type) {
	case DMA_COPY_MSG_HELLO:
		put_u32(payload, msg->u.hello.direction);
		put_u64(payload + 8, msg->u.hello.file_size);
		put_u32(payload + 16, msg->u.hello.crc32c);
		break;
	case DMA_COPY_MSG_HELLO_ACK:
		put_u64(payload, msg->u.hello_ack.file_size);
		put_u32(payload + 8, msg->u.hello_ack.crc32c);
		break;
	case DMA_COPY_MSG_EXPORT:
		put_u64(payload, msg->u.export_desc.addr);
		put_u64(payload + 8, msg->u.export_desc.len);
		put_u32(payload + 16, msg->u.export_desc.blob_len);
		if (msg->u.export_desc.blob_len > 0)
			memcpy(payload + EXPORT_FIXED_PAYLOAD, msg->u.export_desc.blob, msg->u.export_desc.blob_len);
		break;
	case DMA_COPY_MSG_PROGRESS:
		put_u64(payload, msg->u.progress.bytes_done);
		break;
	case DMA_COPY_MSG_DONE:
		put_u32(payload, msg->u.done.status);
		put_u32(payload + 4, msg->u.done.crc32c);
		put_u64(payload + 8, msg->u.done.bytes);
		put_u64(payload + 16, msg->u.done.elapsed_ns);
		break;
	case DMA_COPY_MSG_VERDICT:
		put_u32(payload, msg->u.verdict.status);
		break;
	case DMA_COPY_MSG_ERROR:
		put_u32(payload, msg->u.error.status);
		put_u32(payload + 4, msg->u.error.text_len);
		if (msg->u.error.text_len > 0)
			memcpy(payload + ERROR_FIXED_PAYLOAD, msg->u.error.text, msg->u.error.text_len);
		break;
	}
	*len = DMA_COPY_PROTO_HEADER_SIZE + size;
	return DOCA_SUCCESS;
}

/* --- Decoding: nothing from the peer is trusted. --- */

static doca_error_t refuse(const char **reason, const char *why)
{
	if (reason != NULL)
		*reason = why;
	return DOCA_ERROR_INVALID_VALUE;
}

doca_error_t dma_copy_msg_check_header(const uint8_t header[DMA_COPY_PROTO_HEADER_SIZE], uint32_t *payload_len,
				       const char **reason)
{
	const uint32_t magic = get_u32(header);
	const uint16_t version = get_u16(header + 4);
	const uint16_t type = get_u16(header + 6);
	const uint32_t len = get_u32(header + 8);
	bool length_ok;

	if (magic != DMA_COPY_PROTO_MAGIC)
		return refuse(reason, "bad magic (not a DMA Copy peer)");
	if (version != DMA_COPY_PROTO_VERSION) {
		if (reason != NULL)
			*reason = "unsupported protocol version";
		return DOCA_ERROR_UNSUPPORTED_VERSION;
	}
	switch (type) {
	case DMA_COPY_MSG_HELLO:
		length_ok = len == HELLO_PAYLOAD;
		break;
	case DMA_COPY_MSG_HELLO_ACK:
		length_ok = len == HELLO_ACK_PAYLOAD;
		break;
	case DMA_COPY_MSG_EXPORT:
		length_ok = len >= EXPORT_FIXED_PAYLOAD && len - EXPORT_FIXED_PAYLOAD <= DMA_COPY_PROTO_MAX_BLOB;
		break;
	case DMA_COPY_MSG_PROGRESS:
		length_ok = len == PROGRESS_PAYLOAD;
		break;
	case DMA_COPY_MSG_DONE:
		length_ok = len == DONE_PAYLOAD;
		break;
	case DMA_COPY_MSG_VERDICT:
		length_ok = len == VERDICT_PAYLOAD;
		break;
	case DMA_COPY_MSG_ERROR:
		length_ok = len >= ERROR_FIXED_PAYLOAD && len - ERROR_FIXED_PAYLOAD <= DMA_COPY_PROTO_MAX_TEXT;
		break;
	default:
		return refuse(reason, "unknown message type");
	}
	if (!length_ok)
		return refuse(reason, "payload length does not fit the message type");
	if (payload_len != NULL)
		*payload_len = len;
	return DOCA_SUCCESS;
}

doca_error_t dma_copy_msg_decode(const uint8_t *buf, size_t len, struct dma_copy_msg *msg, const char **reason)
{
	const uint8_t *payload = buf + DMA_COPY_PROTO_HEADER_SIZE;
	uint32_t payload_len;
	doca_error_t result;

	if (buf == NULL || msg == NULL)
		return refuse(reason, "no message");
	if (len < DMA_COPY_PROTO_HEADER_SIZE)
		return refuse(reason, "truncated header");
	result = dma_copy_msg_check_header(buf, &payload_len, reason);
	if (result != DOCA_SUCCESS)
		return result;
	if (len - DMA_COPY_PROTO_HEADER_SIZE != payload_len)
		return refuse(reason, "message size does not match its payload length");

	memset(msg, 0, sizeof(*msg));
	msg->type = (enum dma_copy_msg_type)get_u16(buf + 6);
	switch (msg->type) {
	case DMA_COPY_MSG_HELLO:
		if (get_u32(payload + 4) != 0 || get_u32(payload + 20) != 0)
			return refuse(reason, "reserved field of HELLO is not 0");
		msg->u.hello.direction = get_u32(payload);
		msg->u.hello.file_size = get_u64(payload + 8);
		msg->u.hello.crc32c = get_u32(payload + 16);
		break;
	case DMA_COPY_MSG_HELLO_ACK:
		if (get_u32(payload + 12) != 0)
			return refuse(reason, "reserved field of HELLO_ACK is not 0");
		msg->u.hello_ack.file_size = get_u64(payload);
		msg->u.hello_ack.crc32c = get_u32(payload + 8);
		break;
	case DMA_COPY_MSG_EXPORT:
		if (get_u32(payload + 20) != 0)
			return refuse(reason, "reserved field of EXPORT is not 0");
		msg->u.export_desc.addr = get_u64(payload);
		msg->u.export_desc.len = get_u64(payload + 8);
		msg->u.export_desc.blob_len = get_u32(payload + 16);
		if (msg->u.export_desc.blob_len != payload_len - EXPORT_FIXED_PAYLOAD)
			return refuse(reason, "EXPORT blob length does not match the payload");
		msg->u.export_desc.blob = msg->u.export_desc.blob_len > 0 ? payload + EXPORT_FIXED_PAYLOAD : NULL;
		break;
	case DMA_COPY_MSG_PROGRESS:
		msg->u.progress.bytes_done = get_u64(payload);
		break;
	case DMA_COPY_MSG_DONE:
		msg->u.done.status = get_u32(payload);
		msg->u.done.crc32c = get_u32(payload + 4);
		msg->u.done.bytes = get_u64(payload + 8);
		msg->u.done.elapsed_ns = get_u64(payload + 16);
		break;
	case DMA_COPY_MSG_VERDICT:
		if (get_u32(payload + 4) != 0)
			return refuse(reason, "reserved field of VERDICT is not 0");
		msg->u.verdict.status = get_u32(payload);
		break;
	case DMA_COPY_MSG_ERROR:
		msg->u.error.status = get_u32(payload);
		msg->u.error.text_len = get_u32(payload + 4);
		if (msg->u.error.text_len != payload_len - ERROR_FIXED_PAYLOAD)
			return refuse(reason, "ERROR text length does not match the payload");
		msg->u.error.text = (const char *)(payload + ERROR_FIXED_PAYLOAD);
		break;
	}
	return DOCA_SUCCESS;
}

/* --- Socket I/O. --- */

static uint64_t monotonic_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u;
}

doca_error_t dma_copy_channel_init(struct dma_copy_channel *channel, int fd, int timeout_seconds, const char *peer_name)
{
	channel->fd = fd;
	channel->timeout_ms = timeout_seconds * 1000;
	channel->peer_name = peer_name;
	channel->buffer = malloc(DMA_COPY_PROTO_MAX_MESSAGE);
	if (channel->buffer == NULL) {
		DOCA_LOG_ERR("Failed to allocate the message buffer");
		return DOCA_ERROR_NO_MEMORY;
	}
	return DOCA_SUCCESS;
}

void dma_copy_channel_close(struct dma_copy_channel *channel)
{
	if (channel->fd >= 0)
		close(channel->fd);
	channel->fd = -1;
	free(channel->buffer);
	channel->buffer = NULL;
}

doca_error_t dma_copy_send(struct dma_copy_channel *channel, const struct dma_copy_msg *msg)
{
	size_t len;
	size_t sent = 0;
	doca_error_t result;

	result = dma_copy_msg_encode(msg, channel->buffer, DMA_COPY_PROTO_MAX_MESSAGE, &len);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to encode %s: %s", dma_copy_msg_type_name(msg->type),
			     doca_error_get_descr(result));
		return result;
	}
	while (sent < len) {
		/* MSG_NOSIGNAL: a vanished peer is an error to report, not a SIGPIPE that kills us silently. */
		const ssize_t n = send(channel->fd, channel->buffer + sent, len - sent, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			DOCA_LOG_ERR("Failed to send %s to the %s: %s (the %s closed the connection?)",
				     dma_copy_msg_type_name(msg->type), channel->peer_name, strerror(errno),
				     channel->peer_name);
			return DOCA_ERROR_CONNECTION_RESET;
		}
		sent += (size_t)n;
	}
	return DOCA_SUCCESS;
}

void dma_copy_send_error(struct dma_copy_channel *channel, doca_error_t status, const char *text)
{
	size_t text_len = text == NULL ? 0 : strlen(text);
	struct dma_copy_msg msg = {.type = DMA_COPY_MSG_ERROR};

	if (channel->fd < 0 || channel->buffer == NULL)
		return;
	if (text_len > DMA_COPY_PROTO_MAX_TEXT)
		text_len = DMA_COPY_PROTO_MAX_TEXT;
	msg.u.error.status = (uint32_t)status;
	msg.u.error.text = text;
	msg.u.error.text_len = (uint32_t)text_len;
	(void)dma_copy_send(channel, &msg);
}

/* Reads exactly len bytes before the deadline. what_started: whether a message is partly read. */
static doca_error_t read_exactly(struct dma_copy_channel *channel, uint8_t *into, size_t len, uint64_t deadline_ms,
				 bool message_started)
{
	size_t got = 0;

	while (got < len) {
		const uint64_t now = monotonic_ms();
		struct pollfd pfd = {.fd = channel->fd, .events = POLLIN};
		ssize_t n;
		int ready;

		if (now >= deadline_ms) {
			DOCA_LOG_ERR("Timed out after %d s waiting for the %s (%s)", channel->timeout_ms / 1000,
				     channel->peer_name,
				     message_started ? "a message arrived only in part" : "no message");
			return DOCA_ERROR_TIME_OUT;
		}
		ready = poll(&pfd, 1, (int)(deadline_ms - now));
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready < 0) {
			DOCA_LOG_ERR("poll on the %s's socket failed: %s", channel->peer_name, strerror(errno));
			return DOCA_ERROR_IO_FAILED;
		}
		if (ready == 0)
			continue; /* the deadline check above reports it */
		n = recv(channel->fd, into + got, len - got, 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0 && errno == ECONNRESET) {
			/* What a peer that dies (or quits) before reading all we sent leaves behind. */
			DOCA_LOG_ERR("The %s closed the connection abruptly (%s)", channel->peer_name, strerror(errno));
			return DOCA_ERROR_CONNECTION_RESET;
		}
		if (n < 0) {
			DOCA_LOG_ERR("The connection to the %s failed: %s", channel->peer_name, strerror(errno));
			return DOCA_ERROR_CONNECTION_RESET;
		}
		if (n == 0) {
			DOCA_LOG_ERR("The %s closed the connection%s", channel->peer_name,
				     message_started || got > 0 ? " in the middle of a message" : "");
			return DOCA_ERROR_CONNECTION_RESET;
		}
		got += (size_t)n;
	}
	return DOCA_SUCCESS;
}

doca_error_t dma_copy_recv(struct dma_copy_channel *channel, struct dma_copy_msg *msg)
{
	const uint64_t deadline_ms = monotonic_ms() + (uint64_t)channel->timeout_ms;
	const char *reason = NULL;
	uint32_t payload_len;
	doca_error_t result;

	result = read_exactly(channel, channel->buffer, DMA_COPY_PROTO_HEADER_SIZE, deadline_ms, false);
	if (result != DOCA_SUCCESS)
		return result;
	/* Refuse garbage before reading on: its "length" must not make us wait or read further. */
	result = dma_copy_msg_check_header(channel->buffer, &payload_len, &reason);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Protocol error from the %s: %s", channel->peer_name, reason);
		return result;
	}
	result = read_exactly(channel, channel->buffer + DMA_COPY_PROTO_HEADER_SIZE, payload_len, deadline_ms, true);
	if (result != DOCA_SUCCESS)
		return result;
	result = dma_copy_msg_decode(channel->buffer, DMA_COPY_PROTO_HEADER_SIZE + payload_len, msg, &reason);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Protocol error from the %s: %s", channel->peer_name, reason);
	return result;
}

/* Keeps only printable ASCII of the peer's text, so it cannot mess up our terminal or logs. */
static void sanitize_text(const char *text, uint32_t text_len, char *out, size_t out_size)
{
	size_t n = 0;

	for (uint32_t i = 0; i < text_len && n + 1 < out_size; i++)
		out[n++] = (text[i] >= 0x20 && text[i] < 0x7f) ? text[i] : '?';
	out[n] = '\0';
}

doca_error_t dma_copy_expect(struct dma_copy_channel *channel, enum dma_copy_msg_type type, struct dma_copy_msg *msg)
{
	doca_error_t result;

	for (;;) {
		result = dma_copy_recv(channel, msg);
		if (result != DOCA_SUCCESS)
			return result;
		if (msg->type == DMA_COPY_MSG_PROGRESS && type != DMA_COPY_MSG_PROGRESS)
			continue; /* the peer is alive and working; the timeout starts again */
		break;
	}
	if (msg->type == DMA_COPY_MSG_ERROR) {
		char text[DMA_COPY_PROTO_MAX_TEXT + 1];
		doca_error_t status = (doca_error_t)msg->u.error.status;

		sanitize_text(msg->u.error.text, msg->u.error.text_len, text, sizeof(text));
		if (status == DOCA_SUCCESS || msg->u.error.status > DOCA_ERROR_TOO_BIG)
			status = DOCA_ERROR_CONNECTION_ABORTED;
		DOCA_LOG_ERR("The %s gave up: %s (%s)", channel->peer_name, text, doca_error_get_name(status));
		return status;
	}
	if (msg->type != type) {
		DOCA_LOG_ERR("Protocol error from the %s: expected %s, got %s", channel->peer_name,
			     dma_copy_msg_type_name(type), dma_copy_msg_type_name(msg->type));
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}
