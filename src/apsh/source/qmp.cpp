#include "apsh/source/qmp.hpp"

#include "common/bytes.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

namespace softdpu::apsh::source {

namespace {

Status error(doca_error_t code, std::string reason)
{
	return Status{code, std::move(reason)};
}

} // namespace

Status error_status(doca_error_t code, std::string reason)
{
	return error(code, std::move(reason));
}

namespace {

// The start of a text for an error message: at most 80 characters, control characters shown as '?'.
std::string excerpt(std::string_view text)
{
	std::string out(text.substr(0, 80));
	for (char &c : out)
		if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
			c = '?';
	return "\"" + out + (text.size() > 80 ? "...\"" : "\"");
}

} // namespace

Status parse_qmp_message(std::string_view line, QmpMessage &out)
{
	out = {};
	if (line.ends_with('\r'))
		line.remove_suffix(1);
	const auto json = nlohmann::json::parse(line, nullptr, false);
	if (json.is_discarded() || !json.is_object())
		return error(DOCA_ERROR_IO_FAILED, "QMP sent something that is not a JSON object: " + excerpt(line));
	if (json.contains("QMP") && json["QMP"].is_object()) {
		out.kind = QmpMessage::Kind::greeting;
		return Status::success();
	}
	if (json.contains("return")) {
		out.kind = QmpMessage::Kind::success;
		out.value = json["return"].dump();
		return Status::success();
	}
	if (json.contains("error") && json["error"].is_object()) {
		const auto &failure = json["error"];
		out.kind = QmpMessage::Kind::failure;
		if (failure.contains("class") && failure["class"].is_string())
			out.error_class = failure["class"].get<std::string>();
		if (failure.contains("desc") && failure["desc"].is_string())
			out.error_text = failure["desc"].get<std::string>();
		if (out.error_text.empty())
			out.error_text = failure.dump();
		return Status::success();
	}
	if (json.contains("event") && json["event"].is_string()) {
		out.kind = QmpMessage::Kind::event;
		out.value = json["event"].get<std::string>();
		return Status::success();
	}
	return error(DOCA_ERROR_IO_FAILED, "QMP sent a JSON object that is no QMP message: " + excerpt(line));
}

Status parse_qmp_run_state(std::string_view return_json, bool &running)
{
	const auto json = nlohmann::json::parse(return_json, nullptr, false);
	if (!json.is_object() || !json.contains("running") || !json["running"].is_boolean())
		return error(DOCA_ERROR_IO_FAILED, "QMP query-status answered " + excerpt(return_json));
	running = json["running"].get<bool>();
	return Status::success();
}

// A connected QMP socket that reads line-delimited JSON replies with a deadline.
class QmpConnection {
public:
	~QmpConnection()
	{
		if (fd_ >= 0)
			::close(fd_);
	}

	Status connect(const std::string &path)
	{
		sockaddr_un address{};
		address.sun_family = AF_UNIX;
		if (path.size() >= sizeof(address.sun_path))
			return error(DOCA_ERROR_INVALID_VALUE, "QMP socket path is too long: " + path);
		std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
		fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd_ < 0)
			return error(DOCA_ERROR_OPERATING_SYSTEM, std::string("socket: ") + std::strerror(errno));
		// Non-blocking: a QMP server that has a client already (libvirt's monitor) stops accepting,
		// and a connect beyond its backlog would wait for ever.
		const int flags = ::fcntl(fd_, F_GETFL);
		if (flags < 0 || ::fcntl(fd_, F_SETFL, flags | O_NONBLOCK) != 0)
			return error(DOCA_ERROR_OPERATING_SYSTEM, std::string("fcntl: ") + std::strerror(errno));
		// A UNIX socket's connect fails with EAGAIN while the server's backlog is full: retry
		// until the deadline.
		const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kQmpReplyTimeoutMs);
		while (::connect(fd_, reinterpret_cast<sockaddr *>(&address), sizeof(address)) != 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return error(DOCA_ERROR_NOT_CONNECTED,
					     "cannot connect to QMP socket " + path + ": " + std::strerror(errno));
			if (std::chrono::steady_clock::now() >= deadline)
				return error(DOCA_ERROR_TIME_OUT,
					     "QMP socket " + path +
						 " accepts no connection (another client holds it: libvirt's monitor "
						 "takes the only one)");
			std::this_thread::sleep_for(std::chrono::milliseconds(20));
		}
		if (::fcntl(fd_, F_SETFL, flags) != 0)
			return error(DOCA_ERROR_OPERATING_SYSTEM, std::string("fcntl: ") + std::strerror(errno));
		return Status::success();
	}

	Status send(const std::string &command)
	{
		std::string line = command + "\n";
		size_t sent = 0;
		while (sent < line.size()) {
			ssize_t n = ::send(fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return error(DOCA_ERROR_IO_FAILED, std::string("QMP send: ") + std::strerror(errno));
			sent += static_cast<size_t>(n);
		}
		return Status::success();
	}

	// The next message that is not an asynchronous event, within kQmpReplyTimeoutMs in all (a
	// peer that drips bytes or floods events cannot hold the caller longer).
	Status receive(QmpMessage &reply)
	{
		const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kQmpReplyTimeoutMs);
		for (;;) {
			std::string line;
			Status status = read_line(line, deadline);
			if (!status.ok())
				return status;
			status = parse_qmp_message(line, reply);
			if (!status.ok())
				return status;
			if (reply.kind != QmpMessage::Kind::event)
				return Status::success();
		}
	}

private:
	Status read_line(std::string &line, std::chrono::steady_clock::time_point deadline)
	{
		constexpr size_t max_reply = 16u << 20;
		for (;;) {
			auto newline = buffer_.find('\n');
			if (newline != std::string::npos) {
				line = buffer_.substr(0, newline);
				buffer_.erase(0, newline + 1);
				return Status::success();
			}
			if (buffer_.size() > max_reply)
				return error(DOCA_ERROR_IO_FAILED,
					     "QMP reply is too long (over 16 MiB without a line end)");
			const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
					      deadline - std::chrono::steady_clock::now())
					      .count();
			pollfd waiter{fd_, POLLIN, 0};
			const int ready = left <= 0 ? 0 : ::poll(&waiter, 1, static_cast<int>(left));
			if (ready < 0 && errno == EINTR)
				continue;
			if (ready == 0)
				return error(DOCA_ERROR_TIME_OUT, "QMP did not answer within " +
								      std::to_string(kQmpReplyTimeoutMs / 1000) +
								      " s (is it a QMP socket? is QEMU hung?)");
			char chunk[65536];
			ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return error(DOCA_ERROR_CONNECTION_RESET, "QMP closed the connection");
			buffer_.append(chunk, static_cast<size_t>(n));
		}
	}

	int fd_ = -1;
	std::string buffer_;
};

namespace {

struct MtreePiece {
	uint64_t start, end; // end exclusive
	uint64_t offset;
	std::string type, name;
};

// "  0000000000000000-000000000009ffff (prio 0, ram): ram0 @0000000000000000 ..."
bool parse_piece(std::string_view line, MtreePiece &piece)
{
	size_t first = line.find_first_not_of(' ');
	if (first == std::string_view::npos)
		return false;
	line.remove_prefix(first);
	size_t dash = line.find('-');
	size_t space = line.find(' ');
	if (dash == std::string_view::npos || space == std::string_view::npos || dash > space)
		return false;
	const auto start = common::parse_hex(line.substr(0, dash));
	const auto last = common::parse_hex(line.substr(dash + 1, space - dash - 1));
	if (!start || !last || *last < *start || *last == UINT64_MAX)
		return false;
	piece.start = *start;
	piece.end = *last + 1;
	size_t comma = line.find(", ", space);
	size_t close = line.find("): ", space);
	if (comma == std::string_view::npos || close == std::string_view::npos || close < comma)
		return false;
	piece.type = std::string(line.substr(comma + 2, close - comma - 2));
	std::string_view rest = line.substr(close + 3);
	size_t name_end = rest.find(' ');
	piece.name = std::string(rest.substr(0, name_end));
	piece.offset = 0;
	size_t at = rest.find(" @");
	if (at != std::string_view::npos) {
		std::string_view offset = rest.substr(at + 2);
		offset = offset.substr(0, offset.find(' '));
		const auto parsed = common::parse_hex(offset);
		if (!parsed)
			return false;
		piece.offset = *parsed;
	}
	return true;
}

} // namespace

namespace {

Status parse_mtree_pieces(std::string_view text, std::vector<MtreePiece> &pieces)
{
	bool in_memory_view = false, seen_memory_view = false;
	while (!text.empty()) {
		size_t newline = text.find('\n');
		std::string_view line = text.substr(0, newline);
		text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
		if (line.ends_with('\r')) // the human monitor ends lines with CR LF
			line.remove_suffix(1);
		if (line.starts_with("FlatView")) {
			if (seen_memory_view)
				break;
			in_memory_view = false;
			continue;
		}
		if (line.find("AS \"memory\"") != std::string_view::npos) {
			in_memory_view = seen_memory_view = true;
			continue;
		}
		MtreePiece piece;
		if (in_memory_view && parse_piece(line, piece) && (piece.type == "ram" || piece.type == "rom"))
			pieces.push_back(piece);
		if (pieces.size() > 1000000)
			return error(DOCA_ERROR_INVALID_VALUE, "QMP memory tree lists more than 1,000,000 pieces");
	}
	if (!seen_memory_view)
		return error(DOCA_ERROR_INVALID_VALUE, "QMP memory tree has no view of the \"memory\" address space");
	// A flat view's ranges never overlap: where they do, the text is not QEMU's.
	std::vector<std::pair<uint64_t, uint64_t>> spans;
	spans.reserve(pieces.size());
	for (const MtreePiece &piece : pieces)
		spans.emplace_back(piece.start, piece.end);
	std::sort(spans.begin(), spans.end());
	for (size_t i = 1; i < spans.size(); i++)
		if (spans[i].first < spans[i - 1].second)
			return error(DOCA_ERROR_INVALID_VALUE, "QMP memory tree is not a flat view: RAM pieces " +
								   common::hex(spans[i - 1].first) + "-" +
								   common::hex(spans[i - 1].second - 1) + " and " +
								   common::hex(spans[i].first) + "-" +
								   common::hex(spans[i].second - 1) + " overlap");
	return Status::success();
}

// The RAM region covering the most bytes.
std::string largest_ram(const std::vector<MtreePiece> &pieces)
{
	std::map<std::string, uint64_t> ram_bytes;
	for (const MtreePiece &piece : pieces)
		if (piece.type == "ram")
			ram_bytes[piece.name] += piece.end - piece.start;
	if (ram_bytes.empty())
		return {};
	return std::max_element(ram_bytes.begin(), ram_bytes.end(),
				[](const auto &a, const auto &b) { return a.second < b.second; })
	    ->first;
}

} // namespace

Status parse_mtree_ram_ranges(std::string_view text, std::vector<RamRange> &out, std::string *backend_name)
{
	out.clear();
	std::vector<MtreePiece> pieces;
	Status status = parse_mtree_pieces(text, pieces);
	if (!status.ok())
		return status;
	// The guest's RAM backend is the RAM region covering the most bytes; ROM aliases of the same
	// backend (the legacy BIOS window) hold RAM bytes too.
	const std::string backend = largest_ram(pieces);
	if (backend.empty())
		return error(DOCA_ERROR_INVALID_VALUE, "QMP memory tree lists no RAM");
	if (backend_name != nullptr)
		*backend_name = backend;
	for (const MtreePiece &piece : pieces) {
		if (piece.name != backend)
			continue;
		if (!out.empty() && out.back().gpa_end == piece.start &&
		    out.back().file_offset + (out.back().gpa_end - out.back().gpa_start) == piece.offset)
			out.back().gpa_end = piece.end;
		else
			out.push_back({piece.start, piece.end, piece.offset});
	}
	return Status::success();
}

Status parse_mtree_ram_pieces(std::string_view text, const std::vector<std::string> &backends,
			      std::vector<RamBlockPiece> &out, std::string *main_block)
{
	out.clear();
	std::vector<MtreePiece> pieces;
	Status status = parse_mtree_pieces(text, pieces);
	if (!status.ok())
		return status;
	const std::string main = largest_ram(pieces);
	if (main.empty())
		return error(DOCA_ERROR_INVALID_VALUE, "QMP memory tree lists no RAM");
	if (main_block != nullptr)
		*main_block = main;
	for (const MtreePiece &piece : pieces) {
		if (piece.name != main && std::find(backends.begin(), backends.end(), piece.name) == backends.end())
			continue;
		if (!out.empty() && out.back().block == piece.name && out.back().gpa_end == piece.start &&
		    out.back().offset + (out.back().gpa_end - out.back().gpa_start) == piece.offset)
			out.back().gpa_end = piece.end;
		else
			out.push_back({piece.name, piece.start, piece.end, piece.offset});
	}
	return Status::success();
}

Status parse_qmp_memdev_ids(std::string_view return_json, std::vector<std::string> &out)
{
	out.clear();
	const auto json = nlohmann::json::parse(return_json, nullptr, false);
	if (!json.is_array())
		return error(DOCA_ERROR_IO_FAILED, "QMP query-memdev answered " + excerpt(return_json));
	for (const auto &memdev : json) {
		if (!memdev.is_object())
			return error(DOCA_ERROR_IO_FAILED, "QMP query-memdev answered " + excerpt(return_json));
		// "id" is optional in QMP's schema (a backend created without one has none).
		if (memdev.contains("id") && memdev["id"].is_string())
			out.push_back(memdev["id"].get<std::string>());
	}
	return Status::success();
}

Status parse_hmp_xp_words(std::string_view text, std::vector<uint8_t> &out)
{
	out.clear();
	while (!text.empty()) {
		const size_t newline = text.find('\n');
		std::string_view line = text.substr(0, newline);
		text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
		if (line.ends_with('\r'))
			line.remove_suffix(1);
		if (line.empty())
			continue;
		const size_t colon = line.find(": ");
		if (colon == std::string_view::npos || !common::parse_hex(line.substr(0, colon)))
			return error(DOCA_ERROR_INVALID_VALUE, "`xp` line is malformed: " + excerpt(line));
		line.remove_prefix(colon + 2);
		while (!line.empty()) {
			const size_t start = line.find_first_not_of(' ');
			if (start == std::string_view::npos)
				break;
			line.remove_prefix(start);
			const size_t end = std::min(line.find(' '), line.size());
			const std::string_view word = line.substr(0, end);
			line.remove_prefix(end);
			const auto value = word.starts_with("0x") ? common::parse_hex(word.substr(2)) : std::nullopt;
			if (!value || word.size() > 18)
				return error(DOCA_ERROR_INVALID_VALUE, "`xp` word is malformed: " + excerpt(word));
			for (int i = 0; i < 8; i++)
				out.push_back(static_cast<uint8_t>(*value >> (8 * i)));
			if (out.size() > (16u << 20))
				return error(DOCA_ERROR_INVALID_VALUE, "`xp` output is too long");
		}
	}
	return Status::success();
}

QmpSession::QmpSession() = default;
QmpSession::~QmpSession() = default;

Status QmpSession::open(const std::string &socket_path)
{
	socket_path_ = socket_path;
	connection_ = std::make_unique<QmpConnection>();
	QmpConnection &qmp = *connection_;
	Status status = qmp.connect(socket_path);
	QmpMessage reply;
	if (status.ok()) {
		status = qmp.receive(reply); // greeting
		if (status.code == DOCA_ERROR_TIME_OUT)
			status.reason = "QMP did not greet within " + std::to_string(kQmpReplyTimeoutMs / 1000) +
					" s: another client holds the monitor (QEMU serves one QMP client at a time; "
					"libvirt keeps its own), or it is not a QMP socket";
	}
	if (status.ok() && reply.kind != QmpMessage::Kind::greeting)
		status = error(DOCA_ERROR_IO_FAILED, "QMP socket " + socket_path + " did not greet with QMP");
	if (status.ok())
		status = qmp.send(R"({"execute":"qmp_capabilities"})");
	if (status.ok())
		status = qmp.receive(reply);
	if (status.ok() && reply.kind != QmpMessage::Kind::success)
		status = error(DOCA_ERROR_IO_FAILED, "QMP refused qmp_capabilities: " + reply.error_text);
	if (!status.ok()) {
		connection_.reset();
		if (status.reason.find(socket_path) == std::string::npos)
			status.reason = "QMP socket " + socket_path + ": " + status.reason;
	}
	return status;
}

Status QmpSession::hmp(const std::string &command_line, std::string &out)
{
	if (!connection_)
		return error(DOCA_ERROR_BAD_STATE, "QMP session is not open");
	nlohmann::json command = {{"execute", "human-monitor-command"},
				  {"arguments", {{"command-line", command_line}}}};
	QmpMessage reply;
	Status status = connection_->send(command.dump());
	if (status.ok())
		status = connection_->receive(reply);
	if (!status.ok())
		return status;
	if (reply.kind != QmpMessage::Kind::success)
		return error(DOCA_ERROR_IO_FAILED, "QMP refused `" + command_line + "`: " + reply.error_text);
	const auto text = nlohmann::json::parse(reply.value, nullptr, false);
	if (!text.is_string())
		return error(DOCA_ERROR_IO_FAILED, "QMP answered `" + command_line + "` with " + excerpt(reply.value));
	out = text.get<std::string>();
	return Status::success();
}

Status QmpSession::execute(const std::string &name, std::string *out)
{
	if (!connection_)
		return error(DOCA_ERROR_BAD_STATE, "QMP session is not open");
	nlohmann::json command = {{"execute", name}};
	QmpMessage reply;
	Status status = connection_->send(command.dump());
	if (status.ok())
		status = connection_->receive(reply);
	if (!status.ok())
		return status;
	if (reply.kind != QmpMessage::Kind::success)
		return error(DOCA_ERROR_IO_FAILED, "QMP refused `" + name + "`: " + reply.error_text);
	if (out != nullptr)
		*out = reply.value;
	return Status::success();
}

Status query_qmp_ram_ranges(const std::string &socket_path, std::vector<RamRange> &out)
{
	QmpSession qmp;
	Status status = qmp.open(socket_path);
	std::string text;
	if (status.ok())
		status = qmp.hmp("info mtree -f", text);
	if (!status.ok())
		return status;
	return parse_mtree_ram_ranges(text, out);
}

} // namespace softdpu::apsh::source

namespace softdpu::apsh {

Status pause_qemu_guest(const std::string &qmp_socket, bool &was_running)
{
	was_running = false;
	source::QmpSession qmp;
	Status status = qmp.open(qmp_socket);
	std::string reply;
	if (status.ok())
		status = qmp.execute("query-status", &reply);
	if (!status.ok())
		return status;
	bool running = false;
	status = source::parse_qmp_run_state(reply, running);
	if (!status.ok() || !running)
		return status;
	status = qmp.execute("stop");
	if (status.ok())
		was_running = true;
	return status;
}

Status resume_qemu_guest(const std::string &qmp_socket)
{
	source::QmpSession qmp;
	Status status = qmp.open(qmp_socket);
	if (status.ok())
		status = qmp.execute("cont");
	return status;
}

} // namespace softdpu::apsh
